"""The ``lettucedetect`` judge and span source: LettuceDetect (KRLabs;
github.com/KRLabsOrg/LettuceDetect), a token classifier marking the answer tokens its
context does not support.

Input, as ``lettucedetect/detectors/transformer.py`` and its prompt files: the
context prompt (:data:`QA_PROMPT` with the question and the numbered passages
``passage 1: ...``, or :data:`SUMMARY_PROMPT` without a question) and the answer, read
as a pair (``max_length`` = 4096 tokens, the prompt truncated first). A token of the
answer is hallucinated when its probability of a non-support class reaches
``threshold`` (0.5); consecutive hallucinated tokens make one span, from the first
token's start to the last one's end, in characters of the answer. When the prompt and
answer do not fit, the passages are grouped greedily into prompts that do, each is read,
and a token's hallucination probability is the **maximum over the groups** (as
published). The model is ModernBERT in the original; any token-classification
checkpoint with a fast tokenizer works (classes by ``config.id2label``: class 0
supported, class 1 hallucinated for unnamed heads).

As a **judge** the answer is the claim: the vote is 1 when any claim token is
hallucinated, else 0 (never an abstention, except without evidence); scores:
``hallucination`` (the largest token probability) and ``hallucinated_share`` (of the
claim's characters); ``raw`` lists the spans. As a **span source**,
:class:`LettuceDetectLocalizer` is a :class:`~auditor.spans.reader.Localizer`: the whole
answer is read against the claim's evidence (a localiser is not given the question: the
summary prompt), and its spans inside the claim's answer spans are the error spans; with
none there, the lexical localiser's (:func:`~auditor.spans.localize.localize_error`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from auditor.digest import content_digest
from auditor.errors import ConfigError
from auditor.judges._checkpoint import (
    CheckpointJudge,
    Result,
    forward_probs,
    load_checkpoint,
    no_evidence,
)
from auditor.types import Component, JudgePair, Span

DEFAULT_CHECKPOINT = "KRLabsOrg/lettucedect-base-modernbert-en-v1"
QA_PROMPT = (
    "Briefly answer the following question:\n{question}\nBear in mind that your response "
    "should be strictly based on the following {num_passages} passages:\n{context}\n"
    "In case the passages do not contain the necessary information to answer the question, "
    'please reply with: "Unable to answer based on given passages."\noutput:'
)
SUMMARY_PROMPT = "Summarize the following text:\n{text}\noutput:"
TOKEN_HEAD = {"LABEL_0": "support", "LABEL_1": "neither"}
"""An unnamed head: class 1 is hallucinated."""


def lettuce_prompt(passages: Sequence[str], question: str | None) -> str:
    """The context prompt LettuceDetect reads before the answer."""
    context = "\n".join(f"passage {i + 1}: {p}" for i, p in enumerate(passages))
    if question is None:
        return SUMMARY_PROMPT.format(text=context)
    return QA_PROMPT.format(question=question, num_passages=len(passages), context=context)


def token_spans(offsets: Sequence[tuple[int, int]], flagged: Sequence[bool]) -> list[Span]:
    """Character spans of the runs of consecutive flagged tokens (empty tokens skipped)."""
    spans: list[Span] = []
    current: list[int] | None = None
    for (start, end), hit in zip(offsets, flagged, strict=True):
        if start == end:
            continue
        if hit:
            if current is None:
                current = [start, end]
            else:
                current[1] = end
        elif current is not None:
            spans.append((current[0], current[1]))
            current = None
    if current is not None:
        spans.append((current[0], current[1]))
    return spans


class LettuceDetectJudge(CheckpointJudge):
    """A token classifier flagging unsupported answer tokens (module docstring)."""

    name = "lettucedetect"
    version = "1"

    def __init__(
        self,
        checkpoint: str = DEFAULT_CHECKPOINT,
        threshold: float = 0.5,
        max_length: int = 4096,
        label_map: Mapping[str, str] | None = None,
        revision: str | None = None,
        allow_download: bool = False,
    ) -> None:
        if not 0.0 < threshold <= 1.0:
            raise ConfigError(f"{self.name}: threshold must be in (0, 1], got {threshold}")
        if max_length <= 8:
            raise ConfigError(f"{self.name}: max_length must be > 8, got {max_length}")
        self._resolve(checkpoint, revision, allow_download)
        self._read_labels(label_map, TOKEN_HEAD)
        self.threshold, self.max_length = threshold, max_length

    def _load(self) -> tuple[Any, Any]:
        model, tokenizer = load_checkpoint(str(self.folder), self._info.weights_sha256, "token")
        if not getattr(tokenizer, "is_fast", False):
            raise ConfigError(f"{self.name}: {self.folder}: needs a fast tokenizer (offsets)")
        return model, tokenizer

    def prompts(self, answer: str, passages: Sequence[str], question: str | None) -> list[str]:
        """The context prompts read with ``answer``: one when everything fits in
        ``max_length``, else the passages grouped greedily into prompts that do."""
        _, tokenizer = self._load()

        def size(text: str) -> int:
            return len(tokenizer(text, add_special_tokens=False)["input_ids"])

        budget = self.max_length - size(answer) - 3
        whole = lettuce_prompt(passages, question)
        if size(whole) <= budget:
            return [whole]
        room = budget - size(lettuce_prompt([""], question))
        if room <= 0:
            return [whole]
        groups: list[list[str]] = []
        current: list[str] = []
        used = 0
        for i, passage in enumerate(passages):
            cost = size(f"passage {i + 1}: {passage}")
            step = cost + (1 if current else 0)  # the newline between passages
            if current and used + step > room:
                groups.append(current)
                current, used, step = [], 0, cost
            current.append(passage)
            used += step
        groups.append(current)
        return [lettuce_prompt(group, question) for group in groups]

    def read(
        self, answer: str, passages: Sequence[str], question: str | None = None
    ) -> tuple[list[tuple[int, int]], np.ndarray]:
        """The answer tokens' character spans and hallucination probabilities (the maximum
        over the prompts of :meth:`prompts`)."""
        model, tokenizer = self._load()
        offsets: list[tuple[int, int]] = []
        worst: np.ndarray | None = None
        support = [i for i, role in enumerate(self._roles) if role == "support"]
        for prompt in self.prompts(answer, passages, question):
            encoded = tokenizer(
                prompt,
                answer,
                truncation="only_first",
                max_length=self.max_length,
                return_offsets_mapping=True,
            )
            mine = [i for i, s in enumerate(encoded.sequence_ids()) if s == 1]
            (probs,) = forward_probs(model, tokenizer, [encoded], 1)
            if probs.shape[-1] != len(self._roles):
                raise ConfigError(
                    f"{self.name}: {self.folder}: the model has {probs.shape[-1]} classes, "
                    f"config.id2label names {len(self._roles)}"
                )
            hallucinated = 1.0 - probs[mine][:, support].sum(axis=1)
            offsets = [tuple(encoded["offset_mapping"][i]) for i in mine]
            worst = hallucinated if worst is None else np.maximum(worst, hallucinated)
        return offsets, worst if worst is not None else np.zeros(0)

    def spans(
        self, answer: str, passages: Sequence[str], question: str | None = None
    ) -> list[Span]:
        """Hallucinated character spans of ``answer`` against ``passages``."""
        offsets, probs = self.read(answer, passages, question)
        return token_spans(offsets, [bool(p >= self.threshold) for p in probs])

    def score_batch(self, pairs: Sequence[JudgePair]) -> list[Result]:
        results: list[Result] = []
        for pair in pairs:
            passages = sorted({t.strip() for t in pair.evidence if t.strip()})
            if not passages:
                results.append(no_evidence())
                continue
            offsets, probs = self.read(pair.claim, passages, pair.question)
            spans = token_spans(offsets, [bool(p >= self.threshold) for p in probs])
            covered = sum(e - s for s, e in spans)
            scores = {
                "hallucination": float(probs.max()) if probs.size else 0.0,
                "hallucinated_share": covered / max(len(pair.claim), 1),
            }
            raw = json.dumps({"spans": spans})
            results.append((1.0 if spans else 0.0, scores, raw))
        return results


class LettuceDetectLocalizer:
    """Error spans from a :class:`LettuceDetectJudge`'s token spans (module docstring);
    a :class:`~auditor.spans.reader.Localizer` for ``AuditComponents(localizer=...)``."""

    name = "lettucedetect-localizer"
    version = "1"

    def __init__(self, judge: LettuceDetectJudge) -> None:
        self.judge = judge

    def localize(
        self, answer_text: str, claim_spans: Sequence[Span], evidence_texts: Sequence[str]
    ) -> tuple[Span, ...]:
        """The detector's spans of ``answer_text`` inside ``claim_spans`` (clipped to them),
        else the lexical localiser's."""
        from auditor.spans._canonical import canonicalize
        from auditor.spans.localize import localize_error

        passages = sorted({t.strip() for t in evidence_texts if t.strip()})
        claim = canonicalize(list(claim_spans), text_length=len(answer_text), name="claim_spans")
        found = self.judge.spans(answer_text, passages) if passages else []
        inside = [
            (max(s, cs), min(e, ce)) for s, e in found for cs, ce in claim if s < ce and cs < e
        ]
        if not inside:
            return localize_error(answer_text, claim_spans, evidence_texts)
        return canonicalize(inside)

    def component(self) -> Component:
        """The localiser as a run component: the detector judge's digest and parameters."""
        config = {"judge_digest": self.judge.digest, **self.judge.params}
        digest = content_digest({"name": self.name, "version": self.version, **config})
        return Component(
            kind="localizer", name=self.name, version=self.version, digest=digest, config=config
        )
