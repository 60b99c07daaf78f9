"""Named-entity consistency: proper names in the claim must appear in the evidence.

A cheap, model-free entity finder: runs of capitalised words (not sentence-initial
stop words), acronyms and the normalised numbers are left to ``numeric_consistency``.
The judge fails differently from the content-word judges: it ignores common words
and only looks at names, so a swapped person, place or organisation is caught even
when every other word matches.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from auditor.judges._text import STOP_WORDS, content_words, sentences, stem
from auditor.judges.base import LocalJudge, register_judge
from auditor.types import ABSTAIN, JudgePair

Result = tuple[float, dict[str, float], str]

_CAP_RUN = re.compile(r"\b(?:[A-Z][A-Za-z'\-]*[A-Za-z]|[A-Z]{2,})(?:\s+(?:of|de|the|van|von|"
                      r"la|du|del|and|&)?\s*(?:[A-Z][A-Za-z'\-]*[A-Za-z]|[A-Z]{2,}))*")
_MONTHS = frozenset({"january", "february", "march", "april", "may", "june", "july", "august",
                     "september", "october", "november", "december", "monday", "tuesday",
                     "wednesday", "thursday", "friday", "saturday", "sunday"})
_SKIP = STOP_WORDS | _MONTHS | {"i", "mr", "mrs", "ms", "dr"}


def entities(text: str) -> frozenset[str]:
    """Lower-cased name tokens of the capitalised runs in ``text``.

    A run's first word is dropped when it is a stop word (sentence-initial "The",
    "In", ...); each remaining word of the run is one token, so "Barack Obama" and
    "Obama" share "obama".
    """
    found: set[str] = set()
    for sentence in sentences(text):
        for match in _CAP_RUN.finditer(sentence):
            words = [w.lower().strip("'-") for w in match.group(0).split()]
            found.update(w for w in words if w and w not in _SKIP and len(w) > 1)
    return frozenset(found)


@register_judge("entity_consistency")
class EntityConsistencyJudge(LocalJudge):
    """Share of the claim's name tokens found in the evidence.

    Abstains when the claim names nothing. Votes 0 when at least ``support_at`` of
    the names are present, 1 below ``reject_below``, abstains in between.
    ``scores["contradiction"]`` is set only when a missing name is *replaced*: an
    evidence sentence about the same thing (sharing most of the claim's other content
    words) names something else of the same kind (acronym vs. proper name) in the same
    slot (next to the same content word). A name that the evidence merely never
    mentions is missing support, not a refutation.
    """

    name = "entity_consistency"
    version = "1"

    def __init__(self, support_at: float = 1.0, reject_below: float = 0.75) -> None:
        super().__init__(support_at=support_at, reject_below=reject_below)
        self.support_at, self.reject_below = support_at, reject_below

    def score(self, pair: JudgePair) -> Result:
        claimed = entities(pair.claim)
        if not claimed:
            return ABSTAIN, {}, json.dumps({"reason": "no names in claim"})
        if not pair.evidence:
            return ABSTAIN, {}, json.dumps({"reason": "no evidence"})
        evidence_lower = " ".join(pair.evidence).lower()
        evidence_words = set(re.findall(r"[a-z0-9'\-]+", evidence_lower))
        present = {e for e in claimed if e in evidence_words}
        share = len(present) / len(claimed)
        missing = sorted(claimed - present)
        if share >= self.support_at:
            vote = 0.0
        elif share < self.reject_below:
            vote = 1.0
        else:
            vote = ABSTAIN
        conflicts = (_conflicts(pair.claim, pair.evidence, claimed, frozenset(missing))
                     if vote == 1.0 else [])
        contradiction = 1.0 if conflicts else 0.0
        return vote, {"support": share, "contradiction": contradiction}, json.dumps(
            {"share": round(share, 4), "missing": missing, "conflicts": conflicts},
            sort_keys=True)


_WORD_POS = re.compile(r"[A-Za-z0-9][A-Za-z0-9'\-]*")
_ANCHOR_COVERAGE = 0.4
"""Share of the claim's other content words an evidence sentence needs to be about it."""


@dataclass(frozen=True)
class _Run:
    tokens: frozenset[str]
    kind: str
    left: str | None
    right: str | None


def _name_runs(sentence: str) -> list[_Run]:
    """The capitalised runs of one sentence with their kind and neighbouring content words."""
    matches = [m for m in _CAP_RUN.finditer(sentence)]
    spans = [(m.start(), m.end()) for m in matches]
    words = [(w.start(), w.end(), stem(w.group(0).lower())) for w in _WORD_POS.finditer(sentence)
             if not any(s <= w.start() < e for s, e in spans)
             and w.group(0).lower() not in _SKIP]
    runs = []
    for m in matches:
        parts = [w.strip("'-") for w in m.group(0).split()]
        names = frozenset(w.lower() for w in parts if w and w.lower() not in _SKIP and len(w) > 1)
        if not names:
            continue
        kept = [w for w in parts if w.lower() in names]
        kind = "acronym" if all(w.isupper() for w in kept) else "name"
        left = next((t for s, e, t in reversed(words) if e <= m.start()), None)
        right = next((t for s, e, t in words if s >= m.end()), None)
        runs.append(_Run(names, kind, left, right))
    return runs


def _conflicts(claim: str, evidence: Sequence[str], claimed: frozenset[str],
               missing: frozenset[str]) -> list[str]:
    """Evidence names that take the place of a missing claim name (see the judge's doc)."""
    lost = [r for r in _name_runs(claim) if r.tokens & missing]
    if not lost:
        return []
    about = content_words(claim) - {stem(m) for m in missing} - missing
    if not about:
        return []
    found: list[str] = []
    for text in evidence:
        for sentence in sentences(text):
            words = content_words(sentence)
            if len(about & words) / len(about) < _ANCHOR_COVERAGE:
                continue
            for run in _name_runs(sentence):
                if run.tokens & claimed:
                    continue
                if any(run.kind == r.kind and ((run.left is not None and run.left == r.left)
                                               or (run.right is not None
                                                   and run.right == r.right))
                       for r in lost):
                    found.append(" ".join(sorted(run.tokens)))
    return sorted(set(found))
