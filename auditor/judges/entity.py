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

from auditor.judges._text import STOP_WORDS, sentences
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
    ``scores["contradiction"]`` is set when a name is missing while the evidence
    sentence most about the claim names someone/something else.
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
        contradiction = 1.0 if missing and vote == 1.0 and present else 0.0
        return vote, {"support": share, "contradiction": contradiction}, json.dumps(
            {"share": round(share, 4), "missing": missing}, sort_keys=True)
