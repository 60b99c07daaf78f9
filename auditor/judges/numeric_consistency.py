"""The ``numeric_consistency`` judge: numbers, dates and quantities of the claim against
the evidence, slot by slot; ranks ("finished second") too."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from auditor.judges.base import LocalJudge
from auditor.text import (
    CLOCK_UNITS,
    DURATION_UNITS,
    Quantity,
    anchor_sentences,
    content_words,
    quantities,
    same_amount,
    same_noun,
    sentences,
    stem,
    stop_words,
    strip_period,
    tokens,
    unit_stems,
)
from auditor.types import ABSTAIN, JudgePair

Result = tuple[float, dict[str, float], str]


def _raw(**fields: object) -> str:
    return json.dumps(fields, sort_keys=True, default=sorted)


class NumericConsistencyJudge(LocalJudge):
    """Numbers, dates and quantities of the claim against the evidence, slot by slot.

    A number counts only in its slot (:func:`auditor.text.quantities`): "operates
    eight branches" is supported by "8 branches" in an evidence sentence about the claim
    (sharing ``anchor_coverage`` of its content words), never by "up 8 percent" or
    "8 metres". A number is *contradicted* when such a sentence states a different value in
    the same slot (same unit or noun: "a one-hour session" against "a two-hour session";
    two bare years) and no evidence sentence states the claimed one; that is a clear
    conflict (``scores["conflict"]``) which the labelling step weighs before support. A
    number whose slot no evidence fills is missing support (``scores["missing_detail"]``
    when some sentence is about the claim), not a refutation. A rank in digits ("finished
    2nd") is contradicted when a sentence about the claim gives another rank in the same
    slot (the same word before or after it: "finished 4th") and none gives the claimed one
    (:func:`ordinals`; ranks are never missing support). Abstains when the claim holds no
    number and no rank in conflict.
    """

    name = "numeric_consistency"
    # 22: a line is a sentence; 23: 14 word-list groups that changed no held-out vote and
    # no authored dev label removed (ranks in words, "free", event classes, slot cues,
    # counted classes, "twice a day", ...): votes identical to their ablation
    version = "23"
    # the digest names the class where it was first published (local.py): moving it
    # changed no digest, no run id and no stored vote
    class_path = "auditor.judges.local.NumericConsistencyJudge"

    def __init__(self, anchor_coverage: float = 0.4) -> None:
        super().__init__(anchor_coverage=anchor_coverage)
        self.anchor_coverage = anchor_coverage

    def score(self, pair: JudgePair) -> Result:
        # the years of a claim's own time scope ("From 2004 to 2005, ...") say when, not
        # what: the labelling step checks them against the versions' validity
        claim_text = strip_period(pair.claim)
        claimed = quantities(claim_text)
        ranks = ordinals(pair.claim)
        if not claimed and not ranks:
            return ABSTAIN, {}, _raw(reason="no numbers in claim")
        if not pair.evidence:
            return ABSTAIN, {}, _raw(reason="no evidence")
        # a unit in any of its spellings is one word ("3 km" against "3 kilometres"); the
        # words that write a number or a time ("four in the afternoon") are not what the
        # sentence about the claim must share
        anchors = [
            s
            for _, s in anchor_sentences(
                pair.claim,
                pair.evidence,
                self.anchor_coverage,
                ignore=_number_words(claim_text, claimed),
                meanings=unit_stems(),
            )
        ]
        rank_conflicts = _rank_conflicts(ranks, anchors[:3], pair.evidence)
        if rank_conflicts:
            return (
                1.0,
                {"support": 0.0, "contradiction": 1.0, "conflict": 1.0},
                _raw(conflicts=rank_conflicts),
            )
        if not claimed:
            return ABSTAIN, {}, _raw(reason="no numbers in claim")
        anchor_q = [quantities(s) for s in anchors]
        every_q = [q for text in pair.evidence for q in quantities(text)]
        matched, conflicts, missing = [], [], []
        anchored = True
        for q in claimed:
            shown = _show(q)
            in_anchor = any(same_amount(q, e) for qs in anchor_q for e in qs)
            # outside the sentences about the claim, only the very same unit counts
            elsewhere = q.unit is not None and any(
                e.unit is not None and same_amount(q, e) for e in every_q
            )
            if in_anchor or (not anchors and elsewhere):
                matched.append(shown)
                anchored = anchored and in_anchor
                continue
            event = _event_words(claim_text, q) if q.unit == "year" else frozenset()
            rivals = [
                _show(e)
                for sentence, qs in zip(anchors[:3], anchor_q[:3], strict=False)
                for e in qs
                if not same_amount(q, e)
                and _conflicting(q, e)
                and (not event or event & _event_words(sentence, e))
            ]
            if not rivals and q.unit == "interval":
                # how often a service runs, stated once in the passage ("Ferries depart
                # every two hours" against "... boats leave every hour from 7am")
                intervals = {
                    e.value
                    for text in _passages_about(pair, claim_text, q)
                    for e in quantities(text)
                    if e.unit == "interval"
                }
                if len(intervals) == 1 and not intervals & {q.value}:
                    rivals = [f"{next(iter(intervals)):g} interval"]
            if rivals and not elsewhere:
                conflicts.append(f"{shown} vs {', '.join(sorted(set(rivals)))}")
            else:
                missing.append(shown)
        if conflicts:
            return (
                1.0,
                {"support": 0.0, "contradiction": 1.0, "conflict": 1.0},
                _raw(matched=matched, conflicts=conflicts, missing=missing),
            )
        if missing:
            return (
                1.0,
                {"support": 0.0, "contradiction": 0.0, "missing_detail": 1.0 if anchors else 0.0},
                _raw(matched=matched, missing=missing),
            )
        scores = {"support": 1.0, "contradiction": 0.0}
        if anchored and all(q.unit is not None and q.unit != "year" for q in claimed):
            # every number of the claim stated in its slot by a sentence about the claim,
            # each counting something ("four dentists", not a bare "is 6" or a year)
            scores["match"] = 1.0
        return 0.0, scores, _raw(matched=matched)


def _amount_stems(claim: str, amounts: Sequence[Quantity]) -> frozenset[str]:
    """The stems of the words that state ``amounts`` in ``claim`` ("20", "pound")."""
    return frozenset(stem(t) for q in amounts for t in tokens(claim[q.start : q.end]))


def _passages_about(pair: JudgePair, claim: str, q: Quantity) -> list[str]:
    """Evidence passages holding at least half of the claim's content words outside its
    quantity ``q`` ("ferri", "depart" of "Ferries depart every two hours")."""
    words = content_words(claim) - _amount_stems(claim, [q])
    if not words:
        return []
    return [t for t in pair.evidence if 2 * len(words & content_words(t)) >= len(words)]


def _number_words(text: str, found: Sequence[Quantity]) -> frozenset[str]:
    """Content words (stems) that write the quantities' numbers or times of day in words
    ("forty-five" of "forty-five pounds", "afternoon" of "four in the afternoon"), not
    their unit."""
    words: set[str] = set()
    for q in found:
        span = text[q.start : q.end]
        if q.unit is not None and q.unit not in CLOCK_UNITS:
            span = span.rsplit(maxsplit=1)[0] if len(span.split()) > 1 else ""
        words |= {w for w in content_words(span) if w.isalpha()}
    return frozenset(words)


_ORDINAL = re.compile(r"\b(\d{1,3})(?:st|nd|rd|th)\b(?!\s*,)", re.I)
"""A rank in digits ("3rd"), not before a comma."""


_WORD_RE = re.compile(r"[A-Za-z0-9]+")
Rank = tuple[int, str | None, str | None]
"""A rank's value and the content words before and after it (stemmed)."""


def ordinals(sentence: str) -> list[Rank]:
    """The ranks in ``sentence`` ("finished 4th", "the 3rd largest") with their slot: the
    nearest content word before and after (stemmed). A rank right after a number and one
    before a comma ("1st, ...": an enumeration) are no ranks."""
    out = []
    stops = stop_words()
    for m in _ORDINAL.finditer(sentence):
        before = _WORD_RE.findall(sentence[: m.start()])
        if before and before[-1][0].isdigit():
            continue
        value = int(m.group(1))
        left = next((stem(w.lower()) for w in reversed(before) if w.lower() not in stops), None)
        after = _WORD_RE.findall(sentence[m.end() :])
        right = next((stem(w.lower()) for w in after if w.lower() not in stops), None)
        out.append((value, left, right))
    return out


def _same_rank_slot(a: Rank, b: Rank) -> bool:
    """The same word before or after both ranks."""
    return (a[1] is not None and a[1] == b[1]) or (a[2] is not None and a[2] == b[2])


def _rank_conflicts(ranks: list[Rank], anchors: list[str], evidence: Sequence[str]) -> list[str]:
    """Ranks of the claim that an evidence sentence about it gives another value in the
    same slot (the same word before or after: "finished 2nd" against "finished 4th"), when
    no evidence sentence gives the claimed one there."""
    if not ranks:
        return []
    stated = [r for text in evidence for s in sentences(text) for r in ordinals(s)]
    about = [r for s in anchors for r in ordinals(s)]
    found = []
    for rank in ranks:
        if any(r[0] == rank[0] and _same_rank_slot(rank, r) for r in stated):
            continue
        rivals = {r[0] for r in about if _same_rank_slot(rank, r)}
        if rivals - {rank[0]}:
            found.append(f"rank {rank[0]} vs {', '.join(map(str, sorted(rivals - {rank[0]})))}")
    return found


_CLAUSE_END = re.compile(r"[,;:()]|\band\b|\bbut\b|\bwhile\b|\bwho\b|\bwhich\b")


def _event_words(sentence: str, q: Quantity, before: int = 2, after: int = 2) -> frozenset[str]:
    """What a year dates: the nearest ``before`` lower-case content words before it and
    ``after`` after it in its clause, stemmed ("was founded by Petra Lind in 2009" ->
    {"found"}; names, months and numbers are skipped). Two years conflict only when their
    clauses share one: "founded in 2009" is not contradicted by "stepped down as chair in
    March 2025"."""

    stops = stop_words()

    def kept(text: str) -> list[str]:
        return [w for w in _WORD_RE.findall(text) if w.islower() and w not in stops]

    left = kept(_CLAUSE_END.split(sentence[: q.start])[-1])[-before:]
    right = kept(_CLAUSE_END.split(sentence[q.end :])[0])[:after]
    return frozenset(stem(w) for w in left + right)


def _show(q: Quantity) -> str:
    value = f"{q.value:.0f}" if q.unit == "year" else f"{q.value:,.6f}".rstrip("0").rstrip(".")
    return value + (f" {q.unit}" if q.unit else "")


def _conflicting(claim: Quantity, other: Quantity) -> bool:
    """Two values in the same slot: the same unit, named on both sides (a bare number
    beside a bare number is too weak to call a conflict, except two bare years), or two
    durations (hours against minutes)."""
    durations = {claim.unit, other.unit} <= set(DURATION_UNITS)
    return claim.unit is not None and (same_noun(claim, other) or durations)
