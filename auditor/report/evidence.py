"""The evidence sentence that decided a claim's label, read back from stored rows.

Reviewers act on flagged claims by reading the one evidence sentence the verdict
rests on. It is taken, in this order, from:

1. the sentence a judge reported in its raw output (``{"sentence": ...}``: the
   polarity and BM25 judges name the evidence sentence they compared), the judges
   the label's reason names first, when that sentence occurs in one of the passages
   the label rests on;
2. otherwise the sentence of those passages that holds the largest share of the
   claim's content words (ties: the better-ranked passage, then the earlier sentence).

The passages a label rests on: the superseded versions for ``stale`` (the claim
matches an old version), the current ones for every other label (all passages when
there is none of that kind). Offsets are character offsets into the passage text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from auditor.judges._text import content_words, sentences

_FIRED = re.compile(r"from ([a-z0-9_, ]+)\)")


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


def _passages(label: str | None, evidence: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    want_superseded = label == "stale"
    chosen = [e for e in evidence if bool(e.get("superseded")) == want_superseded]
    return sorted(chosen or list(evidence), key=lambda e: int(e.get("rank") or 0))


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


def deciding_sentence(
    claim: str,
    label: str | None,
    reason: str | None,
    evidence: Sequence[Mapping[str, Any]],
    votes: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any] | None:
    """The evidence sentence a claim's label rests on (module doc), or None without evidence.

    ``evidence``: the claim's passages as :meth:`ledger.Ledger.claim_evidence` returns
    them (``text``, ``rank``, ``superseded``, ``doc_id``, ``version``, ``chunk_id``);
    ``votes``: its votes as :meth:`ledger.Ledger.claim_votes` returns them
    (``judge_name``, ``raw``). Returns ``{"text", "doc_id", "version", "chunk_id",
    "rank", "superseded", "start", "end", "via"}`` with offsets into the passage text.
    """
    passages = [p for p in _passages(label, evidence) if p.get("text")]
    if not passages:
        return None
    named = _judges_in_reason(reason)
    ordered = sorted(
        votes,
        key=lambda v: (
            v.get("judge_name") not in named,
            named.index(v["judge_name"]) if v.get("judge_name") in named else 0,
            str(v.get("judge_name")),
        ),
    )
    for vote in ordered:
        sentence = _raw_sentence(vote.get("raw"))
        if sentence is None:
            continue
        for passage in passages:
            at = str(passage["text"]).find(sentence)
            if at >= 0:
                return _result(passage, sentence, at, f"judge {vote.get('judge_name')}")
    words = content_words(claim)
    best: tuple[float, int, int] | None = None
    found: dict[str, Any] | None = None
    for i, passage in enumerate(passages):
        text = str(passage["text"])
        cursor = 0
        for j, sentence in enumerate(sentences(text)):
            at = text.find(sentence, cursor)
            if at < 0:
                continue
            cursor = at + len(sentence)
            share = len(words & content_words(sentence)) / len(words) if words else 0.0
            key = (-share, i, j)
            if best is None or key < best:
                best, found = key, _result(passage, sentence, at, "content-word overlap")
    return found
