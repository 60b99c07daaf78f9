"""The LLM claim extractor: any OpenAI-compatible endpoint, through :mod:`auditor.llm.client`.

The answer is cut into sentences by the rule-based pipeline and the sentences are
numbered in the prompt (``prompts/extract_claims.md``); the model returns
``{"claims": [{"sentences": [n, ...], "text": ..., "kind": ...}]}`` so that every
claim maps back to the character spans of its sentences. The output is
constrained where the server supports it (a GBNF grammar for llama.cpp via
``constraint="gbnf"``, a JSON schema for vLLM/OpenAI via ``"json_schema"``) and
always validated: JSON, known kinds, sentence numbers in range. A long answer is
sent in consecutive chunks of sentences (``max_sentences``, ``max_chars``). An
invalid output is asked for again (``max_attempts``); an answer with a chunk that
still fails (or a single sentence longer than ``max_chars``) falls back to the
rule-based extractor and the fallback is recorded in its
:class:`~auditor.extract.base.Extraction` (``fallback`` names the reason,
``extractor`` is then the rule-based component). Sentences the model
left out are covered by the rule-based claims of those sentences (noted in
``Extraction.notes``), so nothing is dropped.

The prompt's sha256 digest is in the component config (``prompt_digest``) and so
travels with every claim.
"""

from __future__ import annotations

import asyncio
import functools
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from auditor.digest import sha256_text
from auditor.errors import ConfigError
from auditor.extract.base import (
    KINDS,
    Extraction,
    Extractor,
    check_answers,
    clean_text,
    make_claim,
)
from auditor.extract.rules import RuleExtractor, sentence_spans_many
from auditor.judges.llm import FENCE_CLOSE, FENCE_OPEN, fence_safe, fence_tag, prompts_dir
from auditor.types import Answer, Claim, Span

PROMPT_NAME = "extract_claims"
DEFAULT_PROMPT = prompts_dir() / f"{PROMPT_NAME}.md"
USER_MARK = "<<<USER>>>"

GRAMMAR = r"""
root      ::= "{" ws "\"claims\"" ws ":" ws "[" ws ( claim ( ws "," ws claim )* )? ws "]" ws "}"
claim     ::= "{" ws sentences ws "," ws text ws "," ws kindfield ws "}"
sentences ::= "\"sentences\"" ws ":" ws "[" ws int ( ws "," ws int )* ws "]"
text      ::= "\"text\"" ws ":" ws string
kindfield ::= "\"kind\"" ws ":" ws kind
kind      ::= "\"claim\"" | "\"question\"" | "\"opinion\"" | "\"greeting\"" | "\"refusal\"" |
              "\"instruction\"" | "\"hedge\"" | "\"meta\""
int       ::= [1-9] [0-9]{0,3}
string    ::= "\"" ( [^"\\\x00-\x1f] | "\\" ["\\/bfnrt] | "\\u" [0-9a-fA-F]{4} )* "\""
ws        ::= [ \t\n]{0,8}
""".strip()
"""GBNF grammar of the output (llama.cpp ``grammar``)."""

JSON_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "claims": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "sentences": {
                        "type": "array",
                        "items": {"type": "integer", "minimum": 1},
                        "minItems": 1,
                    },
                    "text": {"type": "string"},
                    "kind": {"type": "string", "enum": list(KINDS)},
                },
                "required": ["sentences", "text", "kind"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["claims"],
    "additionalProperties": False,
}
"""JSON schema of the output (vLLM / OpenAI ``response_format``)."""


def load_prompt(path: str | Path | None = None) -> tuple[str, str, str]:
    """``(system, user_template, sha256)`` of a prompt file split at ``<<<USER>>>``."""
    prompt_path = Path(path) if path is not None else DEFAULT_PROMPT
    try:
        text = prompt_path.read_text(encoding="utf-8")
    except (FileNotFoundError, IsADirectoryError, UnicodeDecodeError) as exc:
        raise ConfigError(f"prompt file {prompt_path}: cannot read ({exc})") from None
    if USER_MARK not in text:
        raise ConfigError(f"prompt file {prompt_path}: no {USER_MARK} line")
    system, user = text.split(USER_MARK, 1)
    if "{sentences}" not in user:
        raise ConfigError(f"prompt file {prompt_path}: user part lacks {{sentences}}")
    return system.strip(), user.strip(), sha256_text(text)


def parse_output(text: str, n_sentences: int) -> list[dict[str, Any]]:
    """Validate a model output: ``[{"sentences": [...], "text", "kind"}]``, or raise
    ``ValueError`` saying what is wrong."""
    from auditor.llm.client import first_json_object

    value = first_json_object(text)
    if not isinstance(value, dict) or not isinstance(value.get("claims"), list):
        raise ValueError("output lacks a 'claims' list")
    claims = []
    for k, item in enumerate(value["claims"]):
        if not isinstance(item, dict):
            raise ValueError(f"claims[{k}] is not an object")
        sentences = item.get("sentences", item.get("sentence"))
        if isinstance(sentences, int) and not isinstance(sentences, bool):
            sentences = [sentences]
        if (
            not isinstance(sentences, list)
            or not sentences
            or not all(isinstance(s, int) and not isinstance(s, bool) for s in sentences)
        ):
            raise ValueError(f"claims[{k}].sentences: expected a list of sentence numbers")
        bad = [s for s in sentences if not 1 <= s <= n_sentences]
        if bad:
            raise ValueError(f"claims[{k}].sentences: {bad} out of range 1..{n_sentences}")
        claim_text = item.get("text")
        if not isinstance(claim_text, str) or not claim_text.strip():
            raise ValueError(f"claims[{k}].text: expected a non-empty string")
        kind = item.get("kind", "claim")
        if kind not in KINDS:
            raise ValueError(f"claims[{k}].kind: unknown kind {kind!r}")
        claims.append(
            {
                "sentences": sorted(set(sentences)),
                "text": re.sub(r"\s+", " ", clean_text(claim_text)).strip(),
                "kind": kind,
            }
        )
    return claims


class LLMExtractor(Extractor):
    """Atomic claims from an LLM behind an OpenAI-compatible endpoint, with fallback.

    Parameters mirror :class:`auditor.llm.client.LLMConfig` (``base_url``, ``model``,
    ``api_key_env``, ``temperature``, ``max_tokens``, ``constraint``, ``timeout_s``,
    ``max_concurrency``, ``max_retries``, ...); ``max_attempts`` is how often an
    invalid output is asked for again, ``max_chars``/``max_sentences`` bound what goes
    into one prompt (longer answers go in chunks of sentences), ``prompt_path`` overrides the
    prompt file. ``client`` may be a ready :class:`~auditor.llm.client.LLMClient`.
    """

    name = "llm"
    version = "2"

    def __init__(
        self,
        *,
        base_url: str | None = None,
        model: str | None = None,
        api_key_env: str | None = "OPENAI_API_KEY",
        max_attempts: int = 2,
        max_chars: int = 4_000,
        max_sentences: int = 20,
        prompt_path: str | Path | None = None,
        client: Any = None,
        fallback: Extractor | None = None,
        **llm: Any,
    ) -> None:
        from auditor.llm.client import LLMClient, LLMConfig

        for label, value, low in (
            ("max_attempts", max_attempts, 1),
            ("max_chars", max_chars, 1),
            ("max_sentences", max_sentences, 1),
        ):
            if not isinstance(value, int) or isinstance(value, bool) or value < low:
                raise ValueError(f"{label}: expected an int >= {low}, got {value!r}")
        if client is None:
            if not base_url:
                raise ConfigError(
                    "llm extractor: 'base_url' is required (--base-url or AUDITOR_LLM_BASE_URL)"
                )
            if not model:
                raise ConfigError(
                    "llm extractor: 'model' is required (--model or AUDITOR_LLM_MODEL)"
                )
            llm.setdefault("max_tokens", 1536)
            client = LLMClient(
                LLMConfig(base_url=base_url, model=model, api_key_env=api_key_env, **llm)
            )
        self.client = client
        self.max_attempts = max_attempts
        self.max_chars = max_chars
        self.max_sentences = max_sentences
        self.system, self.user_template, self.prompt_digest = load_prompt(prompt_path)
        self.fallback = fallback if fallback is not None else RuleExtractor()

    def config(self) -> dict[str, Any]:
        cfg = self.client.config
        public = cfg.public() if hasattr(cfg, "public") else {}
        public.pop("api_key_env", None)
        return {
            "llm": public,
            "prompt": PROMPT_NAME,
            "prompt_digest": self.prompt_digest,
            "grammar_digest": sha256_text(GRAMMAR),
            "max_attempts": self.max_attempts,
            "max_chars": self.max_chars,
            "max_sentences": self.max_sentences,
            "fallback": {
                "name": self.fallback.name,
                "version": self.fallback.version,
                "digest": self.fallback.digest,
            },
        }

    def messages(self, answer: Answer, spans: Sequence[Span]) -> list[dict[str, str]]:
        """The chat messages for one answer whose sentences have ``spans``."""
        text = clean_text(answer.answer)
        lines = [re.sub(r"\s+", " ", text[s:e]) for s, e in spans]
        numbered = "\n".join(f"[{k}] {fence_safe(line)}" for k, line in enumerate(lines, start=1))
        question = fence_safe(re.sub(r"\s+", " ", clean_text(answer.question)).strip() or "(none)")
        tag = fence_tag({"question": question, "sentences": numbered})
        template = self.user_template.replace(FENCE_OPEN, f"{FENCE_OPEN}-{tag}").replace(
            FENCE_CLOSE, f"DATA-{tag}>>>"
        )
        values = {"question": question, "sentences": numbered}  # one pass: no re-expansion
        user = re.sub(r"\{(question|sentences)\}", lambda m: values[m.group(1)], template)
        return [{"role": "system", "content": self.system}, {"role": "user", "content": user}]

    def extract_detailed(self, answers: Sequence[Answer]) -> list[Extraction]:
        """Blocking :meth:`aextract_detailed` (do not call from a running event loop)."""
        return asyncio.run(self._run_sync(answers))

    async def _run_sync(self, answers: Sequence[Answer]) -> list[Extraction]:
        try:
            return await self.aextract_detailed(answers)
        finally:
            await self.client.aclose()

    def chunks(self, spans: Sequence[Span]) -> list[tuple[int, int]] | None:
        """Consecutive sentence ranges ``[first, last)`` that fit one prompt each
        (``max_sentences``, ``max_chars``); ``None`` when one sentence alone is too long."""
        out: list[tuple[int, int]] = []
        first, chars = 0, 0
        for k, (s, e) in enumerate(spans):
            if e - s > self.max_chars:
                return None
            if k > first and (k - first >= self.max_sentences or chars + e - s > self.max_chars):
                out.append((first, k))
                first, chars = k, 0
            chars += e - s
        if spans:
            out.append((first, len(spans)))
        return out

    async def aextract_detailed(self, answers: Sequence[Answer]) -> list[Extraction]:
        """One :class:`Extraction` per answer: model claims, or the recorded fallback.

        A long answer is sent in consecutive chunks of sentences (each numbered from 1);
        if any chunk still fails after ``max_attempts``, the whole answer falls back.
        """
        from auditor.llm.client import Request

        check_answers(answers)
        all_spans = sentence_spans_many([a.answer for a in answers])
        component = self.component
        results: list[Extraction | None] = [None] * len(answers)
        failures: dict[int, str] = {}
        parsed: dict[tuple[int, int], list[dict[str, Any]]] = {}
        pending: list[tuple[int, int, int]] = []  # (answer, first, last) sentence ranges
        for i, (answer, spans) in enumerate(zip(answers, all_spans, strict=True)):
            if not spans:
                results[i] = Extraction(answer.id, (), component)
                continue
            ranges = self.chunks(spans)
            if ranges is None:
                failures[i] = f"a sentence is longer than max_chars={self.max_chars}"
                continue
            pending.extend((i, a, b) for a, b in ranges)
        raw: dict[int, list[str]] = {}
        usage: dict[int, dict[str, int]] = {}
        last_error: dict[int, str] = {}
        for _attempt in range(self.max_attempts):
            if not pending:
                break
            requests = [
                Request(
                    messages=self.messages(answers[i], all_spans[i][a:b]),
                    grammar=GRAMMAR,
                    json_schema=JSON_SCHEMA,
                    prompt_digest=self.prompt_digest,
                    validate=functools.partial(parse_output, n_sentences=b - a),
                )
                for i, a, b in pending
            ]
            done = await self.client.complete_many(requests)
            retry = []
            for (i, a, b), completion in zip(pending, done, strict=True):
                raw.setdefault(i, []).append(completion.text or "")
                count = usage.setdefault(
                    i, {"prompt_tokens": 0, "completion_tokens": 0, "attempts": 0, "requests": 0}
                )
                count["prompt_tokens"] += completion.prompt_tokens
                count["completion_tokens"] += completion.completion_tokens
                count["attempts"] += completion.attempts
                count["requests"] += 1
                if completion.error is None:
                    parsed[(i, a)] = [
                        {**item, "sentences": [k + a for k in item["sentences"]]}
                        for item in completion.parsed
                    ]
                else:
                    last_error[i] = completion.error
                    retry.append((i, a, b))
            pending = retry
        for i, _, _ in pending:  # chunks still without a valid output
            failures[i] = last_error.get(i, "no valid output")
        for i in range(len(answers)):
            if results[i] is None and i not in failures:
                items = [
                    item for (j, _), chunk in sorted(parsed.items()) if j == i for item in chunk
                ]
                results[i] = self._build(
                    answers[i],
                    all_spans[i],
                    items,
                    component,
                    "\n".join(raw.get(i, [])),
                    usage.get(i, {}),
                )
        if failures:
            order = sorted(failures)
            fallback = self.fallback.extract_detailed([answers[i] for i in order])
            for i, extraction in zip(order, fallback, strict=True):
                results[i] = Extraction(
                    answers[i].id,
                    extraction.claims,
                    extraction.extractor,
                    fallback=f"{self.name}: {failures[i]}",
                    raw="\n".join(raw.get(i, [])),
                    usage=usage.get(i, {}),
                )
        return [r for r in results if r is not None]

    def _build(
        self,
        answer: Answer,
        spans: Sequence[Span],
        parsed: list[dict[str, Any]],
        component: Any,
        raw: str,
        usage: Mapping[str, int],
    ) -> Extraction:
        claims: list[Claim] = []
        covered: set[int] = set()
        seen: set[str] = set()
        for item in parsed:
            claim_spans = [spans[k - 1] for k in item["sentences"]]
            covered.update(item["sentences"])
            claim = make_claim(
                answer.id,
                item["text"],
                claim_spans,
                factual=item["kind"] == "claim",
                kind=item["kind"],
            )
            if claim.id not in seen:
                seen.add(claim.id)
                claims.append(claim)
        notes: tuple[str, ...] = ()
        missing = [k for k in range(1, len(spans) + 1) if k not in covered]
        if missing:
            rule_claims = self.fallback.extract(answer)
            lost = [spans[k - 1] for k in missing]
            for claim in rule_claims:
                if any(s <= claim.spans[0][0] < e for s, e in lost) and claim.id not in seen:
                    seen.add(claim.id)
                    claims.append(claim)
            notes = (
                f"sentences {missing} left out by the model: covered by "
                f"{self.fallback.name} claims",
            )
        claims.sort(key=lambda c: (c.spans[0], c.text))
        return Extraction(
            answer.id, tuple(claims), component, raw=raw, usage=dict(usage), notes=notes
        )
