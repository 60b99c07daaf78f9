"""The ``content_overlap`` judge: the share of the claim's content words in the best
evidence passage."""

from __future__ import annotations

import json

from auditor.judges.base import LocalJudge, band
from auditor.text import content_words, word_coverage
from auditor.types import ABSTAIN, JudgePair

Result = tuple[float, dict[str, float], str]


def _raw(**fields: object) -> str:
    return json.dumps(fields, sort_keys=True, default=sorted)


class ContentOverlapJudge(LocalJudge):
    """Share of the claim's content words found in the best evidence passage."""

    name = "content_overlap"
    version = "2"  # 2: Snowball stems
    # the digest names the class where it was first published (local.py): moving it
    # changed no digest, no run id and no stored vote
    class_path = "auditor.judges.local.ContentOverlapJudge"

    def __init__(self, support_at: float = 0.75, reject_below: float = 0.45) -> None:
        super().__init__(support_at=support_at, reject_below=reject_below)
        self.support_at, self.reject_below = support_at, reject_below

    def score(self, pair: JudgePair) -> Result:
        words = content_words(pair.claim)
        if not pair.evidence or not words:
            return ABSTAIN, {}, _raw(reason="no evidence" if words else "no content words")
        per_passage = [(word_coverage(words, text), text) for text in pair.evidence]
        best, text = max(per_passage, key=lambda item: item[0])
        missing = sorted(words - content_words(text))
        vote = band(best, self.support_at, self.reject_below)
        return vote, {"support": best}, _raw(coverage=round(best, 4), missing=missing)
