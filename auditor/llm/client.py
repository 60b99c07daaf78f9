"""The one OpenAI-compatible chat client serving every LLM endpoint.

vLLM, Ollama, a llama.cpp server or a cloud API: anything that speaks
``POST {base_url}/chat/completions``, spoken through the official ``openai`` SDK (its
own retries off: the policy below is ours). Created from configuration, never at
import time. It gives every caller the same guarantees:

- bounded concurrency (an ``asyncio.Semaphore`` of ``max_concurrency`` per event loop);
- retry with exponential backoff (and ``Retry-After``) on HTTP 429, 5xx, timeouts,
  connection errors and malformed (non-JSON) response bodies;
- output constraints: ``constraint="gbnf"`` sends ``extra_body={"grammar": GBNF}``
  (llama.cpp: its ``response_format`` json_schema is NOT honoured),
  ``"json_schema"`` sends ``response_format`` json_schema (vLLM, OpenAI),
  ``"json_object"`` sends ``response_format={"type": "json_object"}``, ``"none"`` nothing;
- parse validation: a ``validate`` callable turns the text into a value or raises
  ``ValueError``; a failure is returned as an error, never raised;
- a response cache (:class:`ResponseCache`) keyed on model, prompt digest, decoding
  parameters, constraint and input digest, so a re-run costs nothing;
- token and call accounting (:attr:`LLMClient.usage`).

Nothing raises for an endpoint failure: :meth:`LLMClient.complete` always returns a
:class:`Completion` whose ``error`` says why (the caller records an abstention).

Usage::

    from auditor.llm.client import LLMClient, LLMConfig, InMemoryResponseCache, json_validator

    config = LLMConfig(base_url="http://127.0.0.1:8080/v1", model="smollm2",
                       api_key_env="OPENAI_API_KEY", temperature=0.0, max_tokens=128,
                       max_concurrency=4, constraint="gbnf")
    client = LLMClient(config, cache=InMemoryResponseCache())
    messages = [{"role": "system", "content": "..."}, {"role": "user", "content": "..."}]
    done = client.complete_sync(messages, grammar=GBNF, validate=json_validator(["claims"]),
                                prompt_digest=PROMPT_DIGEST)
    if done.error is None:
        use(done.parsed)            # validated value; done.text is the raw output
    # many requests at once (bounded by max_concurrency):
    results = client.complete_many_sync([Request(messages=m, validate=...) for m in batch])
    client.usage                    # calls, cache hits, retries, failures, tokens

In async code use ``await client.complete(...)`` / ``await client.complete_many(...)``
and ``await client.aclose()`` at the end. ``LLMConfig.from_mapping`` builds a config
from a TOML/YAML table (unknown keys are a :class:`ConfigError`).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from auditor.digest import content_digest
from auditor.errors import ConfigError

Constraint = Literal["none", "gbnf", "json_schema", "json_object"]
Message = Mapping[str, str]
Validator = Callable[[str], Any]

if TYPE_CHECKING:  # imported when a client first talks to a server: ``import openai``
    # takes about two seconds, which every offline audit would otherwise pay at start-up
    import httpx
    import openai

RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


@runtime_checkable
class ResponseCache(Protocol):
    """Where validated responses are kept (the ledger implements it for real runs)."""

    def get(self, key: str) -> str | None:
        """The cached raw output text for ``key``, or None."""

    def put(self, key: str, value: str, meta: Mapping[str, Any]) -> None:
        """Store the raw output text with metadata (model, tokens, params)."""


class InMemoryResponseCache:
    """A dict-backed :class:`ResponseCache` (tests, single runs)."""

    def __init__(self) -> None:
        self.entries: dict[str, tuple[str, dict[str, Any]]] = {}

    def get(self, key: str) -> str | None:
        entry = self.entries.get(key)
        return entry[0] if entry else None

    def put(self, key: str, value: str, meta: Mapping[str, Any]) -> None:
        self.entries[key] = (value, dict(meta))

    def __len__(self) -> int:
        return len(self.entries)


@dataclass(frozen=True)
class LLMConfig:
    """An endpoint and its decoding parameters."""

    base_url: str
    model: str
    api_key_env: str | None = None
    """Name of the environment variable holding the API key (never the key itself)."""
    temperature: float = 0.0
    max_tokens: int = 256
    top_p: float | None = None
    seed: int | None = None
    stop: tuple[str, ...] = ()
    constraint: Constraint = "none"
    timeout_s: float = 60.0
    max_concurrency: int = 4
    max_retries: int = 4
    backoff_base_s: float = 0.5
    backoff_max_s: float = 8.0
    extra_body: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.base_url:
            raise ConfigError("llm: field 'base_url': must not be empty")
        if not self.model:
            raise ConfigError("llm: field 'model': must not be empty")
        if self.constraint not in ("none", "gbnf", "json_schema", "json_object"):
            raise ConfigError(f"llm: field 'constraint': unknown {self.constraint!r}")
        if self.max_concurrency < 1:
            raise ConfigError("llm: field 'max_concurrency': must be >= 1")
        if self.max_retries < 0:
            raise ConfigError("llm: field 'max_retries': must be >= 0")
        if self.timeout_s <= 0:
            raise ConfigError("llm: field 'timeout_s': must be > 0")

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> LLMConfig:
        """A config from a parsed TOML/YAML table; unknown keys are a ConfigError."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(f"llm: unknown field(s) {unknown}; known: {sorted(known)}")
        values = dict(data)
        if "stop" in values:
            values["stop"] = tuple(values["stop"])
        try:
            return cls(**values)
        except TypeError as exc:
            raise ConfigError(f"llm: {exc}") from None

    def decoding_params(self) -> dict[str, Any]:
        """The parameters that change the output (part of the cache key)."""
        params: dict[str, Any] = {"temperature": self.temperature, "max_tokens": self.max_tokens}
        if self.top_p is not None:
            params["top_p"] = self.top_p
        if self.seed is not None:
            params["seed"] = self.seed
        if self.stop:
            params["stop"] = list(self.stop)
        if self.extra_body:
            params["extra_body"] = dict(self.extra_body)
        return params

    def public(self) -> dict[str, Any]:
        """The config as a JSON-able dict (for digests and the ledger; holds no secret)."""
        data = asdict(self)
        data["stop"] = list(self.stop)
        data["extra_body"] = dict(self.extra_body)
        return data


@dataclass
class Usage:
    """Call and token accounting of one client."""

    calls: int = 0
    """HTTP requests sent (retries included)."""
    requests: int = 0
    """Completions asked for (cache hits included)."""
    cache_hits: int = 0
    retries: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


@dataclass(frozen=True)
class Completion:
    """The outcome of one request: ``text``/``parsed`` on success, else ``error``."""

    text: str | None
    parsed: Any = None
    error: str | None = None
    cached: bool = False
    attempts: int = 0
    latency_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_key: str = ""

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class Request:
    """One chat request for :meth:`LLMClient.complete_many`."""

    messages: Sequence[Message]
    grammar: str | None = None
    json_schema: Mapping[str, Any] | None = None
    validate: Validator | None = None
    prompt_digest: str | None = None
    input_digest: str | None = None


def first_json_object(text: str) -> Any:
    """The JSON value spanning the first ``{`` to the last ``}`` of a model output.

    Raises ``ValueError`` saying what is wrong (no object, malformed JSON).
    """
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        raise ValueError("no JSON object in the output")
    try:
        return json.loads(text[start : end + 1])
    except json.JSONDecodeError as exc:
        raise ValueError(f"malformed JSON: {exc.msg}") from None


def json_validator(required: Sequence[str] = ()) -> Validator:
    """A validator parsing a JSON object (the first ``{...}`` in the text) with ``required`` keys.

    Raises ``ValueError`` for anything else.
    """

    def validate(text: str) -> Any:
        value = first_json_object(text)
        if not isinstance(value, dict):
            raise ValueError("output is not a JSON object")
        missing = [k for k in required if k not in value]
        if missing:
            raise ValueError(f"output lacks key(s) {missing}")
        return value

    return validate


class _Retryable(Exception):
    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.retry_after = retry_after


class _Fatal(Exception):
    pass


class LLMClient:
    """An OpenAI-compatible chat-completions client (see the module docstring)."""

    def __init__(
        self,
        config: LLMConfig,
        *,
        cache: ResponseCache | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.config = config
        self.cache = cache
        self.usage = Usage()
        self._transport = transport
        self._rng = rng or random.Random(0)
        self._per_loop: dict[
            int, tuple[asyncio.AbstractEventLoop, openai.AsyncOpenAI, asyncio.Semaphore]
        ] = {}

    # ----------------------------------------------------------------- plumbing
    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        if self.config.api_key_env:
            key = os.environ.get(self.config.api_key_env)
            if key:
                headers["Authorization"] = f"Bearer {key}"
        return headers

    def _session(self) -> tuple[openai.AsyncOpenAI, asyncio.Semaphore]:
        loop = asyncio.get_running_loop()
        state = self._per_loop.get(id(loop))
        if state is None or state[0] is not loop:
            import httpx
            import openai

            # the official SDK speaks the protocol; retries, backoff and caching are ours
            # (max_retries=0), so every attempt is counted and recorded
            headers = self._headers()
            key = headers.pop("Authorization", "").removeprefix("Bearer ")
            client = openai.AsyncOpenAI(
                base_url=self.config.base_url.rstrip("/") + "/",
                api_key=key or "none",
                max_retries=0,
                timeout=self.config.timeout_s,
                default_headers=headers,
                http_client=httpx.AsyncClient(transport=self._transport)
                if self._transport is not None
                else None,
            )
            state = (loop, client, asyncio.Semaphore(self.config.max_concurrency))
            self._per_loop[id(loop)] = state
        return state[1], state[2]

    async def aclose(self) -> None:
        """Close the HTTP connections opened on the running event loop."""
        loop = asyncio.get_running_loop()
        state = self._per_loop.pop(id(loop), None)
        if state is not None:
            await state[1].close()

    def cache_key(
        self,
        messages: Sequence[Message],
        *,
        grammar: str | None = None,
        json_schema: Mapping[str, Any] | None = None,
        prompt_digest: str | None = None,
        input_digest: str | None = None,
    ) -> str:
        """Digest of model, prompt digest, decoding parameters, constraint and input digest.

        Without explicit digests the messages themselves are the input.
        """
        return content_digest(
            {
                "model": self.config.model,
                "prompt": prompt_digest,
                "params": self.config.decoding_params(),
                "constraint": {
                    "kind": self.config.constraint,
                    "grammar": grammar,
                    "schema": json_schema,
                },
                "input": input_digest or content_digest([dict(m) for m in messages]),
            }
        )

    def _body(
        self,
        messages: Sequence[Message],
        grammar: str | None,
        json_schema: Mapping[str, Any] | None,
    ) -> dict[str, Any]:
        cfg = self.config
        body: dict[str, Any] = {
            "model": cfg.model,
            "messages": [dict(m) for m in messages],
            "temperature": cfg.temperature,
            "max_tokens": cfg.max_tokens,
            "stream": False,
        }
        if cfg.top_p is not None:
            body["top_p"] = cfg.top_p
        if cfg.seed is not None:
            body["seed"] = cfg.seed
        if cfg.stop:
            body["stop"] = list(cfg.stop)
        if cfg.constraint == "gbnf" and grammar:
            body["grammar"] = grammar
        elif cfg.constraint == "json_schema" and json_schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "output", "schema": dict(json_schema), "strict": True},
            }
        elif cfg.constraint == "json_object":
            body["response_format"] = {"type": "json_object"}
        body.update(cfg.extra_body)
        return body

    async def _post_once(self, body: dict[str, Any]) -> tuple[str, int, int]:
        import openai

        client, _ = self._session()
        self.usage.calls += 1
        standard = {"model", "messages"}
        try:
            raw = await client.chat.completions.with_raw_response.create(
                model=body["model"],
                messages=body["messages"],
                extra_body={k: v for k, v in body.items() if k not in standard},
            )
        except openai.APITimeoutError:
            raise _Retryable("timeout") from None
        except openai.APIConnectionError as exc:
            raise _Retryable(f"connection error: {type(exc).__name__}") from None
        except openai.APIStatusError as exc:
            status = exc.status_code
            if status in RETRY_STATUS:
                retry_after = _parse_retry_after(exc.response.headers.get("retry-after"))
                raise _Retryable(f"HTTP {status}", retry_after) from None
            raise _Fatal(f"HTTP {status}: {exc.response.text[:200]}") from None
        response = raw.http_response
        try:
            payload = response.json()
            text = payload["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise _Retryable("malformed response body") from None
        if not isinstance(text, str):
            raise _Retryable("malformed response body: no text content")
        usage = payload.get("usage") or {}
        return text, int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        cfg = self.config
        delay = min(cfg.backoff_max_s, cfg.backoff_base_s * (2**attempt))
        delay *= 0.5 + self._rng.random() / 2  # jitter in [0.5, 1) x
        if retry_after is not None:
            delay = max(delay, min(retry_after, cfg.backoff_max_s))
        return delay

    # ----------------------------------------------------------------- public
    async def complete(
        self,
        messages: Sequence[Message],
        *,
        grammar: str | None = None,
        json_schema: Mapping[str, Any] | None = None,
        validate: Validator | None = None,
        prompt_digest: str | None = None,
        input_digest: str | None = None,
    ) -> Completion:
        """One chat completion; never raises for endpoint or output failures."""
        self.usage.requests += 1
        key = self.cache_key(
            messages,
            grammar=grammar,
            json_schema=json_schema,
            prompt_digest=prompt_digest,
            input_digest=input_digest,
        )
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                try:
                    parsed = validate(hit) if validate else hit
                except ValueError:
                    parsed = None  # a stale entry that no longer validates: ask again
                else:
                    self.usage.cache_hits += 1
                    return Completion(text=hit, parsed=parsed, cached=True, cache_key=key)
        body = self._body(messages, grammar, json_schema)
        _, semaphore = self._session()
        attempts = 0
        error = "no attempt made"
        async with semaphore:
            start = time.perf_counter()  # latency excludes the wait for a concurrency slot
            for attempt in range(self.config.max_retries + 1):
                attempts += 1
                try:
                    text, p_tok, c_tok = await self._post_once(body)
                except _Retryable as exc:
                    error = str(exc)
                    if attempt < self.config.max_retries:
                        self.usage.retries += 1
                        await asyncio.sleep(self._backoff(attempt, exc.retry_after))
                    continue
                except _Fatal as exc:
                    error = str(exc)
                    break
                latency = time.perf_counter() - start
                self.usage.prompt_tokens += p_tok
                self.usage.completion_tokens += c_tok
                self.usage.latency_s += latency
                try:
                    parsed = validate(text) if validate else text
                except ValueError as exc:
                    self.usage.failures += 1
                    return Completion(
                        text=text,
                        error=f"unparseable output: {exc}",
                        attempts=attempts,
                        latency_s=latency,
                        prompt_tokens=p_tok,
                        completion_tokens=c_tok,
                        cache_key=key,
                    )
                if self.cache is not None:
                    self.cache.put(
                        key,
                        text,
                        {
                            "model": self.config.model,
                            "params": self.config.decoding_params(),
                            "prompt_tokens": p_tok,
                            "completion_tokens": c_tok,
                        },
                    )
                return Completion(
                    text=text,
                    parsed=parsed,
                    attempts=attempts,
                    latency_s=latency,
                    prompt_tokens=p_tok,
                    completion_tokens=c_tok,
                    cache_key=key,
                )
        latency = time.perf_counter() - start
        self.usage.failures += 1
        self.usage.latency_s += latency
        if attempts > 1:
            error = f"{error} after {attempts} attempts"
        return Completion(
            text=None, error=error, attempts=attempts, latency_s=latency, cache_key=key
        )

    async def complete_many(self, requests: Sequence[Request]) -> list[Completion]:
        """Run requests concurrently (at most ``max_concurrency`` in flight), in order."""
        return list(
            await asyncio.gather(
                *(
                    self.complete(
                        r.messages,
                        grammar=r.grammar,
                        json_schema=r.json_schema,
                        validate=r.validate,
                        prompt_digest=r.prompt_digest,
                        input_digest=r.input_digest,
                    )
                    for r in requests
                )
            )
        )

    def complete_sync(self, messages: Sequence[Message], **kwargs: Any) -> Completion:
        """Blocking :meth:`complete` (runs its own event loop; do not call from async code)."""

        async def run() -> Completion:
            try:
                return await self.complete(messages, **kwargs)
            finally:
                await self.aclose()

        return asyncio.run(run())

    def complete_many_sync(self, requests: Sequence[Request]) -> list[Completion]:
        """Blocking :meth:`complete_many`."""

        async def run() -> list[Completion]:
            try:
                return await self.complete_many(requests)
            finally:
                await self.aclose()

        return asyncio.run(run())


def _parse_retry_after(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None
