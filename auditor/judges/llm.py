"""LLM judges on any OpenAI-compatible endpoint (one shared client class, one prompt frame
per task).

Task frames (prompt files in the repository's ``prompts/`` folder, or ``prompt_dir``,
or env ``AUDITOR_PROMPTS``):

- ``grounded``: question / evidence / candidate;
- ``claim_verification``: document / claim.

The judge asks for ``{"label": "supported" | "not_supported" | "contradicted"}``,
constrained by a GBNF grammar (llama.cpp), a JSON schema (vLLM, OpenAI) or nothing,
as the ``constraint`` parameter says. ``supported`` -> vote 0; ``not_supported`` ->
1; ``contradicted`` -> 1 with ``scores["contradiction"] = 1``. Timeouts, HTTP errors
and unparseable output are abstentions (0.5) with the reason in ``Vote.error``.
Evidence is fenced as data (``<<<DATA ... DATA>>>``; fence markers inside it are
neutralised) and the system prompt tells the judge not to follow it.

Panel config example::

    [[judges]]
    name = "llm"
    [judges.params]
    name = "smollm2"            # the member name (unique in the panel)
    base_url = "http://127.0.0.1:8080/v1"
    model = "smollm2-135m"
    api_key_env = "OPENAI_API_KEY"
    frame = "claim_verification"
    constraint = "gbnf"
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from auditor.digest import content_digest, sha256_text
from auditor.errors import ConfigError
from auditor.judges.base import Judge
from auditor.llm.client import (
    LLMClient,
    LLMConfig,
    Request,
    ResponseCache,
    first_json_object,
)
from auditor.types import ABSTAIN, JudgePair, Vote

FRAMES = ("grounded", "claim_verification")
LABELS = ("supported", "not_supported", "contradicted")

LABEL_GBNF = (
    'root ::= "{" ws "\\"label\\"" ws ":" ws label ws "}"\n'
    'label ::= "\\"supported\\"" | "\\"not_supported\\"" | "\\"contradicted\\""\n'
    "ws ::= [ \\t\\n]*\n"
)
LABEL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"label": {"type": "string", "enum": list(LABELS)}},
    "required": ["label"],
    "additionalProperties": False,
}
FENCE_OPEN, FENCE_CLOSE = "<<<DATA", "DATA>>>"


_LT, _GT = "<\uff1c\ufe64\u2329\u3008\u2039\u00ab", ">\uff1e\ufe65\u232a\u3009\u203a\u00bb"
# anything that looks like a fence marker (any case, spaces, look-alike angle brackets,
# with or without a tag) and anything that looks like the judge's JSON reply
_FENCE_LIKE = re.compile(
    f"[{_LT}]{{2,}}\\s*/?\\s*data[\\w-]*|data[\\w-]*\\s*/?\\s*[{_GT}]{{2,}}", re.IGNORECASE
)
_REPLY_LIKE = re.compile(
    r"""\{\s*[\"'\u201c\u201d]?\s*label\s*[\"'\u201c\u201d]?\s*:""", re.IGNORECASE
)


def fence_safe(text: str) -> str:
    """Neutralise, inside data, anything that could close its fence or forge a reply.

    Fence-like markers (``DATA>>>``, ``<<<data``, ``DATA >>>``, look-alike brackets, a
    tagged ``DATA-x>>>``) become ``[fence]``; a JSON-looking ``{"label":`` becomes
    ``(label:`` so an echoed piece of data can never parse as the judge's reply. The
    fences themselves carry a tag derived from the data (see :meth:`Prompt.render`),
    which data cannot predict.
    """
    text = _FENCE_LIKE.sub("[fence]", text)
    return _REPLY_LIKE.sub("(label:", text)


def fence_tag(fields: dict[str, str]) -> str:
    """A tag for this request's fences: a digest of the data it fences (deterministic,
    so cached replies stay valid, and unpredictable from inside the data)."""
    return content_digest(sorted(fields.items()))[:12]


def prompts_dir() -> Path:
    """The bundled prompts (``prompts/`` of the repository), through importlib.resources."""
    return Path(str(resources.files("auditor").joinpath("prompts")))


def default_prompt_dir() -> Path:
    """``$AUDITOR_PROMPTS`` or the repository's ``prompts/`` folder (shipped inside the
    package as ``auditor/prompts``)."""
    env = os.environ.get("AUDITOR_PROMPTS")
    if env:
        return Path(env)
    return prompts_dir()


@dataclass(frozen=True)
class Prompt:
    """A prompt template with a system and a user section; ``{{name}}`` placeholders."""

    name: str
    system: str
    user: str

    @property
    def digest(self) -> str:
        return content_digest({"name": self.name, "system": self.system, "user": self.user})

    def render(self, **fields: str) -> list[dict[str, str]]:
        """Chat messages with every placeholder filled (data is fence-neutralised, and the
        template's fences are tagged ``<<<DATA-tag`` ... ``DATA-tag>>>``)."""
        tag = fence_tag(fields)
        system = self.system.replace(FENCE_OPEN, f"{FENCE_OPEN}-{tag}").replace(
            FENCE_CLOSE, f"DATA-{tag}>>>"
        )
        user = self.user.replace(FENCE_OPEN, f"{FENCE_OPEN}-{tag}").replace(
            FENCE_CLOSE, f"DATA-{tag}>>>"
        )
        safe = {key: fence_safe(value) for key, value in fields.items()}
        user = re.sub(r"\{\{(\w+)\}\}", lambda m: safe.get(m.group(1), m.group()), user)
        if "{{" in user:
            missing = user[user.index("{{") :].split("}}")[0] + "}}"
            raise ConfigError(f"prompt {self.name!r}: placeholder {missing} not filled")
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def load_prompt(name: str, prompt_dir: str | Path | None = None) -> Prompt:
    """Read ``<prompt_dir>/<name>.txt`` (``#`` comment lines before ``### system`` ignored)."""
    path = Path(prompt_dir or default_prompt_dir()) / f"{name}.txt"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read prompt: {exc.strerror}") from None
    lines = text.splitlines()
    marks = [i for i, line in enumerate(lines) if line.strip() in ("### system", "### user")]
    if [lines[i].strip() for i in marks] != ["### system", "### user"]:
        raise ConfigError(f"{path}: a prompt needs one '### system' line, then one '### user' line")
    system = "\n".join(lines[marks[0] + 1 : marks[1]]).strip()
    user = "\n".join(lines[marks[1] + 1 :]).strip()
    return Prompt(name=name, system=system, user=user)


def parse_label(text: str) -> str:
    """The label of a judge reply (a JSON object with ``label``); ValueError otherwise."""
    value = first_json_object(text)
    label = value.get("label") if isinstance(value, dict) else None
    if label not in LABELS:
        raise ValueError(f"label must be one of {list(LABELS)}, got {label!r}")
    return str(label)


class LLMJudge(Judge):
    """A judge behind an OpenAI-compatible endpoint (see the module docstring)."""

    version = "1"
    volatile_params = frozenset(
        {
            "api_key_env",
            "max_concurrency",
            "max_retries",
            "timeout_s",
            "backoff_base_s",
            "backoff_max_s",
            "cache",
            "transport",
            "prompt",
            "prompt_dir",
        }
    )  # the prompt enters the digest as its name and digest

    def __init__(
        self,
        name: str = "llm",
        *,
        base_url: str,
        model: str,
        api_key_env: str | None = None,
        frame: str = "claim_verification",
        prompt: str | None = None,
        prompt_dir: str | None = None,
        temperature: float = 0.0,
        max_tokens: int = 32,
        constraint: str = "gbnf",
        max_concurrency: int = 4,
        max_retries: int = 4,
        timeout_s: float = 60.0,
        backoff_base_s: float = 0.5,
        backoff_max_s: float = 8.0,
        seed: int | None = None,
        max_evidence_chars: int = 6000,
        cache: ResponseCache | None = None,
        transport: Any = None,
    ) -> None:
        if frame not in FRAMES:
            raise ConfigError(f"llm judge {name!r}: field 'frame': expected one of {FRAMES}")
        self.prompt = load_prompt(prompt or frame, prompt_dir)
        self.config = LLMConfig.from_mapping(
            {
                "base_url": base_url,
                "model": model,
                "api_key_env": api_key_env,
                "temperature": temperature,
                "max_tokens": max_tokens,
                "constraint": constraint,
                "max_concurrency": max_concurrency,
                "max_retries": max_retries,
                "timeout_s": timeout_s,
                "backoff_base_s": backoff_base_s,
                "backoff_max_s": backoff_max_s,
                "seed": seed,
            }
        )
        super().__init__(
            name=name,
            model=model,
            base_url=base_url,
            frame=frame,
            prompt=self.prompt.name,
            prompt_digest=self.prompt.digest,
            decoding=self.config.decoding_params(),
            constraint=constraint,
            max_evidence_chars=max_evidence_chars,
        )
        self.name = name
        self.frame = frame
        self.max_evidence_chars = max_evidence_chars
        self.base_url, self.model, self.constraint = base_url, model, constraint
        self.temperature, self.max_tokens, self.seed = temperature, max_tokens, seed
        self.client = LLMClient(self.config, cache=cache, transport=transport)

    def set_cache(self, cache: ResponseCache | None) -> None:
        """Plug a response cache (the ledger's) into the client."""
        self.client.cache = cache

    def messages(self, pair: JudgePair) -> tuple[list[dict[str, str]], str]:
        """The chat messages for a pair and the digest of its inputs."""
        evidence = "\n\n".join(pair.evidence)
        if len(evidence) > self.max_evidence_chars:
            evidence = evidence[: self.max_evidence_chars] + " [...]"
        if self.frame == "grounded":
            fields = {
                "question": pair.question or "",
                "evidence": evidence,
                "candidate": pair.claim,
            }
        else:
            fields = {"document": evidence, "claim": pair.claim}
        return self.prompt.render(**fields), content_digest(fields)

    async def judge(self, pairs: Sequence[JudgePair]) -> list[Vote]:
        requests = []
        skip = []
        for pair in pairs:
            messages, input_digest = self.messages(pair)
            skip.append(not pair.evidence)
            requests.append(
                Request(
                    messages=messages,
                    grammar=LABEL_GBNF,
                    json_schema=LABEL_SCHEMA,
                    validate=parse_label,
                    prompt_digest=self.prompt.digest,
                    input_digest=input_digest,
                )
            )
        todo = [r for r, s in zip(requests, skip, strict=True) if not s]
        start = time.perf_counter()
        try:
            done = iter(await self.client.complete_many(todo))
        finally:
            await self.client.aclose()
        elapsed = time.perf_counter() - start
        votes = []
        for s in skip:
            if s:
                votes.append(Vote(judge=self.name, value=ABSTAIN, raw="", error="no evidence"))
                continue
            result = next(done)
            if result.error is not None:
                votes.append(
                    Vote(
                        judge=self.name,
                        value=ABSTAIN,
                        raw=result.text or "",
                        latency_s=result.latency_s,
                        error=result.error,
                    )
                )
                continue
            label = str(result.parsed)
            value = 0.0 if label == "supported" else 1.0
            votes.append(
                Vote(
                    judge=self.name,
                    value=value,
                    raw=result.text or "",
                    latency_s=result.latency_s or elapsed / max(len(todo), 1),
                    scores={
                        "support": 1.0 - value,
                        "contradiction": float(label == "contradicted"),
                    },
                )
            )
        return votes

    def usage(self) -> dict[str, float]:
        """Calls, cache hits, retries, failures and tokens so far."""
        return self.client.usage.as_dict()


def prompt_digest(name: str, prompt_dir: str | Path | None = None) -> str:
    """Digest of a prompt file's sections (for the ledger)."""
    return load_prompt(name, prompt_dir).digest


__all__ = [
    "FRAMES",
    "LABEL_GBNF",
    "LABEL_SCHEMA",
    "LLMJudge",
    "Prompt",
    "fence_safe",
    "load_prompt",
    "parse_label",
    "prompt_digest",
    "sha256_text",
]
