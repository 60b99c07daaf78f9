"""Error spans from the reader: the phrase whose removal most raises entailment.

For each claim span (a sentence of the answer) the reader (the entailment
cross-encoder, through :meth:`auditor.entailment.model.EntailmentModel.predict`, or any
``scorer`` with the same shape) is asked, at most ``max_calls`` times per span:

1. how well the best evidence window entails the whole sentence (one call per window,
   at most ``max_windows`` windows, chosen by content-word overlap); a sentence the
   evidence entails (``supported_at``) carries no error and gets no span;
2. how well that window entails the sentence with one candidate phrase deleted: the
   numbers and names the evidence does not state in their slot, and the sentence's
   phrases (cut at commas, conjunctions, relative pronouns and prepositions), those
   holding unaligned words first. The phrase whose removal raises entailment most, by at
   least ``min_gain``, is the reader's span.

:func:`localize_with_reader` combines it with the lexical localiser
(:func:`auditor.spans.localize.localize_error`): for a sentence the reader finds
entailed, nothing; where the reader names a phrase, that phrase plus the lexically
unaligned numbers and names inside the sentence; otherwise the lexical spans.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence

import numpy as np

from auditor.judges._text import content_words
from auditor.spans._canonical import canonicalize
from auditor.spans.localize import localize_error
from auditor.types import Span

Scorer = Callable[[Sequence[str], Sequence[str]], np.ndarray]
"""``scorer(premises, hypotheses) -> P(entailment)`` per pair."""

_BOUNDARY = re.compile(
    r"[,;:()]|\s(?:and|but|or|which|who|whom|whose|that|while|whereas|because|after|before|"
    r"in|on|at|for|with|by|from|to|of|as|during|since|under|over|about|into|than)\s",
    re.IGNORECASE,
)
_NAME_OR_NUMBER = re.compile(r"\d[\d,.]*|(?<![.!?]\s)(?<!^)\b[A-Z][\w'\-]*(?:\s+[A-Z][\w'\-]*)*")


def entailment_scorer(batch_size: int = 32) -> Scorer:
    """P(entailment) from the shipped cross-encoder (read-only use of its public API)."""
    from auditor.entailment.model import load_model

    model = load_model()
    column = model.labels.index("entailment")

    def score(premises: Sequence[str], hypotheses: Sequence[str]) -> np.ndarray:
        return model.predict(premises, hypotheses, batch_size=batch_size)[:, column]

    return score


def _windows(evidence: Sequence[str], sentence: str, limit: int) -> list[str]:
    from auditor.entailment.model import evidence_windows

    words = content_words(sentence)
    windows = [w for text in evidence for w in evidence_windows(text)]
    windows.sort(key=lambda w: -len(words & content_words(w)))
    return windows[:limit]


def candidate_phrases(text: str, start: int, end: int) -> list[Span]:
    """Phrases of ``text[start:end]`` (absolute offsets): the stretches between phrase
    boundaries, and the numbers and capitalised names inside, longest first."""
    cuts = [start] + [m.start() + start for m in _BOUNDARY.finditer(text[start:end])] + [end]
    out: set[Span] = set()
    for a, b in itertools.pairwise(cuts):
        seg = text[a:b]
        lead = len(seg) - len(seg.lstrip(" ,;:()"))
        trail = len(seg.rstrip(" .!?,;:()"))
        if trail - lead >= 2 and b - a < end - start:
            out.add((a + lead, a + trail))
    pieces = sorted(out)
    for (a, _), (_, b) in itertools.pairwise(pieces):  # two adjacent phrases
        if b - a < end - start - 2:
            out.add((a, b))
    for m in _NAME_OR_NUMBER.finditer(text[start:end]):
        out.add((m.start() + start, m.end() + start))
    return sorted(out, key=lambda s: (-(s[1] - s[0]), s[0]))


def _without(text: str, start: int, end: int, span: Span) -> str:
    out = text[start : span[0]] + " " + text[span[1] : end]
    return re.sub(r"\s+([,.;:!?])", r"\1", re.sub(r"\s{2,}", " ", out)).strip()


def reader_spans(
    answer_text: str,
    claim_spans: Sequence[Span],
    evidence_texts: Sequence[str],
    *,
    scorer: Scorer | None = None,
    max_calls: int = 10,
    max_windows: int = 2,
    supported_at: float = 0.5,
    min_gain: float = 0.15,
) -> list[tuple[Span, float, Span | None]]:
    """Per claim span: ``(span, entailment of the whole span, phrase or None)``.

    At most ``max_calls`` reader calls per span (``max_windows`` for the whole span, the
    rest for deletions). The phrase is the candidate whose deletion raises entailment the
    most, by at least ``min_gain``; None when the span is entailed (``supported_at``) or no
    deletion helps enough.
    """
    score = scorer or entailment_scorer()
    claim = canonicalize(list(claim_spans), text_length=len(answer_text), name="claim_spans")
    evidence = [t for t in evidence_texts if t.strip()]
    out: list[tuple[Span, float, Span | None]] = []
    if not evidence:
        return [(span, 0.0, None) for span in claim]
    lexical = {span: localize_error(answer_text, [span], evidence) for span in claim}
    for cs, ce in claim:
        sentence = answer_text[cs:ce]
        windows = _windows(evidence, sentence, max_windows)
        base = score(windows, [sentence] * len(windows))
        best = int(np.argmax(base))
        whole = float(base[best])
        if whole >= supported_at:
            out.append(((cs, ce), whole, None))
            continue
        marked = [s for s in lexical[(cs, ce)] if s != (cs, ce)]
        phrases = candidate_phrases(answer_text, cs, ce)
        phrases.sort(
            key=lambda p: (not any(s < p[1] and p[0] < e for s, e in marked), -(p[1] - p[0]))
        )
        phrases = phrases[: max(max_calls - len(windows), 0)]
        if not phrases:
            out.append(((cs, ce), whole, None))
            continue
        hyps = [_without(answer_text, cs, ce, p) for p in phrases]
        gains = score([windows[best]] * len(hyps), hyps) - whole
        j = int(np.argmax(gains))
        out.append(((cs, ce), whole, phrases[j] if gains[j] >= min_gain else None))
    return out


def localize_with_reader(
    answer_text: str,
    claim_spans: Sequence[Span],
    evidence_texts: Sequence[str],
    *,
    scorer: Scorer | None = None,
    max_calls: int = 10,
    supported_at: float = 0.5,
    min_gain: float = 0.15,
) -> tuple[Span, ...]:
    """Error spans from the reader combined with the lexical localiser (module docstring).

    Sentences the reader finds entailed get no span; when every claim span is entailed the
    result is empty (the audit calls this only for claims labelled unsupported, where it
    falls back to the claim span)."""
    found = reader_spans(
        answer_text,
        claim_spans,
        evidence_texts,
        scorer=scorer,
        max_calls=max_calls,
        supported_at=supported_at,
        min_gain=min_gain,
    )
    out: list[Span] = []
    for span, whole, phrase in found:
        if whole >= supported_at:
            continue
        lexical = [s for s in localize_error(answer_text, [span], evidence_texts)]
        if phrase is None:
            out += lexical
            continue
        out.append(phrase)
        out += [s for s in lexical if s != span and _name_or_number(answer_text[s[0] : s[1]])]
    return canonicalize(out) if out else ()


def _name_or_number(text: str) -> bool:
    return bool(re.search(r"\d", text)) or text[:1].isupper()
