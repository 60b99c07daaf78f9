"""The evidence sentence that decided a claim's label, read back from stored rows; or,
when none decided it, the nearest passages, said to be nearest and not deciding.

A claim shows a deciding sentence only when a sentence decided it: its label is one that
evidence decides (supported, contradicted, not_supported, stale) and it has evidence the
label step flagged ``deciding`` (``retrieval.deciding``, the one relevance rule of
:mod:`auditor.decision`; :meth:`ledger.Ledger.claim_evidence` reads it). The sentence is
taken from those passages only: the superseded ones for ``stale`` (the claim matches an
old version), the current ones for every other label (all deciding passages when there is
none of that kind). Among their sentences it is the one that fills the claim's slots:

1. the sentence is about the claim's subject: it shares a name or a content word of the
   claim outside its numbers (a sentence that shares only "14 days" with a claim about a
   "14-day return window" is about something else);
2. then the most of the claim's quantities (number, date, amount with its unit or noun)
   stated in the same slot (:func:`same_slot`: the same unit, whatever the amount, so
   the contradicting figure is found as well as the supporting one);
3. then a sentence a judge reported comparing (``{"sentence": ...}`` in its raw output;
   the judges the label's reason names first);
4. then the most shared names, then the largest share of the claim's content words;
   ties: the better-ranked passage, then the earlier sentence.

Without a deciding sentence (``unknown``, or no deciding evidence) a claim shows its
nearest passages (:func:`nearest_evidence`: the highest-scored retrieved passages with
their best sentence by the same order), each flagged ``relevant`` or not, so a reader
sees "nearest, not relevant" instead of a sentence from an unrelated document. Offsets
are character offsets into the passage text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from auditor.text import Quantity, content_words, entities, quantities, same_slot, sentence_spans
from auditor.types import Label

_FIRED = re.compile(r"from ([a-z0-9_, ]+)\)")

DECIDED_LABELS = frozenset(
    {
        Label.SUPPORTED.value,
        Label.CONTRADICTED.value,
        Label.NOT_SUPPORTED.value,
        Label.STALE.value,
    }
)
"""Labels evidence decides: only these show a deciding sentence."""

NEAREST = 2
"""Passages :func:`nearest_evidence` shows when no sentence decided a claim."""


def _judges_in_reason(reason: str | None) -> list[str]:
    """Judge names a label's reason credits ("... contradiction 1.00 from a, b)")."""
    match = _FIRED.search(reason or "")
    if match is None:
        return []
    return [name.strip() for name in match.group(1).split(",") if name.strip()]


def _raw_sentence(raw: str | None) -> str | None:
    if not raw:
        return None
    try:
        data = json.loads(raw)
    except (ValueError, TypeError):
        return None
    sentence = data.get("sentence") if isinstance(data, dict) else None
    return sentence if isinstance(sentence, str) and sentence.strip() else None


def is_deciding(passage: Mapping[str, Any]) -> bool:
    """Whether a claim's label can rest on ``passage`` (its stored ``deciding`` flag; a
    passage given without one, by a caller that does not read the ledger, counts)."""
    flag = passage.get("deciding", True)
    return True if flag is None else bool(flag)


def _passages(label: str | None, evidence: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The deciding passages a label rests on, by rank (module doc)."""
    deciding = [e for e in evidence if is_deciding(e) and e.get("text")]
    want_superseded = label == Label.STALE.value
    chosen = [e for e in deciding if bool(e.get("superseded")) == want_superseded]
    return sorted(chosen or deciding, key=lambda e: int(e.get("rank") or 0))


def _result(passage: Mapping[str, Any], sentence: str, start: int, via: str) -> dict[str, Any]:
    return {
        "text": sentence,
        "doc_id": passage.get("doc_id"),
        "version": passage.get("version"),
        "chunk_id": passage.get("chunk_id"),
        "rank": passage.get("rank"),
        "superseded": bool(passage.get("superseded")),
        "start": start,
        "end": start + len(sentence),
        "via": via,
    }


@dataclass(frozen=True)
class _Slots:
    """What of a claim a sentence must state to be the one that decided it."""

    quantities: tuple[Quantity, ...]
    names: frozenset[str]
    subject: frozenset[str]
    """Content words outside the claim's numbers (the quantities' own words removed)."""
    words: frozenset[str]

    @classmethod
    def of(cls, claim: str) -> _Slots:
        found = tuple(quantities(claim))
        blanked = claim
        for q in found:
            blanked = blanked[: q.start] + " " * (q.end - q.start) + blanked[q.end :]
        return cls(found, entities(claim), content_words(blanked), content_words(claim))


@dataclass(frozen=True)
class _Candidate:
    passage: int
    sentence: int
    start: int
    text: str


def _score(
    slots: _Slots, candidate: _Candidate, judged: int | None
) -> tuple[int, int, int, int, float, int, int]:
    """Sort key (smallest first) of a candidate sentence, the order of the module doc."""
    words = content_words(candidate.text)
    names = len(slots.names & entities(candidate.text))
    anchored = names > 0 or bool(slots.subject & words)
    stated = quantities(candidate.text)
    filled = sum(1 for q in slots.quantities if any(same_slot(q, s) for s in stated))
    share = len(slots.words & words) / len(slots.words) if slots.words else 0.0
    return (
        0 if anchored else 1,
        -filled if anchored else 0,
        judged if judged is not None else 1_000,
        -names,
        -share,
        candidate.passage,
        candidate.sentence,
    )


def _best(
    claim: str,
    passages: Sequence[Mapping[str, Any]],
    reported: Sequence[tuple[str, str]] = (),
) -> tuple[dict[str, Any], tuple[int, int, int, int, float, int, int]] | None:
    """The best sentence of ``passages`` for ``claim`` (module doc) and its key;
    ``reported``: ``(judge, sentence)`` pairs in the order the judges count."""
    slots = _Slots.of(claim)
    best: tuple[tuple[int, int, int, int, float, int, int], dict[str, Any]] | None = None
    for i, passage in enumerate(passages):
        text = str(passage.get("text") or "")
        candidates: dict[int, tuple[_Candidate, int | None, str | None]] = {}
        for j, (a, b) in enumerate(sentence_spans(text)):
            candidates[a] = (_Candidate(i, j, a, text[a:b]), None, None)
        for order, (name, sentence) in enumerate(reported):
            at = text.find(sentence)
            if at < 0:
                continue
            known = candidates.get(at)
            if known is not None and known[1] is not None:
                continue
            j = known[0].sentence if known is not None else -1
            candidates[at] = (_Candidate(i, j, at, sentence), order, name)
        for candidate, judged, judge in candidates.values():
            key = _score(slots, candidate, judged)
            if best is None or key < best[0]:
                via = "content-word overlap"
                if judge is not None:
                    via = f"judge {judge}"
                elif key[1] < 0:
                    via = "slot match"
                best = (key, _result(passage, candidate.text, candidate.start, via))
    return None if best is None else (best[1], best[0])


def _reported(reason: str | None, votes: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """``(judge, sentence)`` each judge reported, the judges the reason names first."""
    named = _judges_in_reason(reason)
    ordered = sorted(
        votes,
        key=lambda v: (
            v.get("judge_name") not in named,
            named.index(v["judge_name"]) if v.get("judge_name") in named else 0,
            str(v.get("judge_name")),
        ),
    )
    out = []
    for vote in ordered:
        sentence = _raw_sentence(vote.get("raw"))
        if sentence is not None:
            out.append((str(vote.get("judge_name")), sentence))
    return out


def deciding_sentence(
    claim: str,
    label: str | None,
    reason: str | None,
    evidence: Sequence[Mapping[str, Any]],
    votes: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any] | None:
    """The evidence sentence a claim's label rests on (module doc), or None when no
    sentence decided it (a label evidence does not decide, or no deciding evidence).

    ``evidence``: the claim's passages as :meth:`ledger.Ledger.claim_evidence` returns
    them (``text``, ``rank``, ``superseded``, ``deciding``, ``doc_id``, ``version``,
    ``chunk_id``); ``votes``: its votes as :meth:`ledger.Ledger.claim_votes` returns them
    (``judge_name``, ``raw``). Returns ``{"text", "doc_id", "version", "chunk_id",
    "rank", "superseded", "start", "end", "via"}`` with offsets into the passage text.
    """
    if label not in DECIDED_LABELS:
        return None
    passages = _passages(label, evidence)
    if not passages:
        return None
    found = _best(claim, passages, _reported(reason, votes))
    return None if found is None else found[0]


def nearest_evidence(
    claim: str, evidence: Sequence[Mapping[str, Any]], *, limit: int = NEAREST
) -> list[dict[str, Any]]:
    """The ``limit`` nearest passages of a claim no sentence decided: the highest stored
    relevance scores (ties: rank), each with its best sentence (module doc) and
    ``relevant`` (whether it is deciding evidence: False for a claim that is ``unknown``
    for lack of relevant evidence, True for one the panel left undecided). Each item
    holds the fields of :func:`deciding_sentence`'s result, ``via`` ``"nearest"``."""
    ranked = sorted(
        (e for e in evidence if e.get("text")),
        key=lambda e: (-float(e.get("score") or 0.0), int(e.get("rank") or 0)),
    )
    out = []
    for passage in ranked[:limit]:
        found = _best(claim, [passage])
        if found is None:
            continue
        item = {**found[0], "via": "nearest", "relevant": is_deciding(passage)}
        out.append(item)
    return out


def claim_evidence_view(
    claim: str,
    label: str | None,
    reason: str | None,
    evidence: Sequence[Mapping[str, Any]],
    votes: Sequence[Mapping[str, Any]] = (),
) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """``(deciding, nearest)`` of a claim: the deciding sentence
    (:func:`deciding_sentence`) and, only when there is none, the nearest passages
    (:func:`nearest_evidence`; empty without evidence)."""
    decided = deciding_sentence(claim, label, reason, evidence, votes)
    return decided, ([] if decided is not None else nearest_evidence(claim, evidence))
