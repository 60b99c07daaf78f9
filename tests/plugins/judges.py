"""A plugin judge in another package: used as ``name = "tests.plugins.judges:KeywordJudge"``
in a panel file, or registered under the ``rag_auditor.judges`` entry-point group."""

from __future__ import annotations

from auditor.judges.base import LocalJudge
from auditor.types import ABSTAIN, JudgePair


class KeywordJudge(LocalJudge):
    """Supports a claim when every one of its words of ``min_length`` letters or more
    appears in the evidence; abstains without evidence."""

    name = "keyword_plugin"
    version = "1"

    def __init__(self, min_length: int = 5) -> None:
        super().__init__()
        if min_length < 1:
            raise ValueError("min_length: must be >= 1")
        self.min_length = min_length

    def score(self, pair: JudgePair) -> tuple[float, dict[str, float], str]:
        if not pair.evidence:
            return ABSTAIN, {}, "no evidence"
        evidence = " ".join(pair.evidence).lower()
        words = [w.strip(".,;:!?") for w in pair.claim.lower().split()]
        long = [w for w in words if len(w) >= self.min_length]
        missing = [w for w in long if w not in evidence]
        share = 1 - len(missing) / len(long) if long else 1.0
        return (0.0 if not missing else 1.0), {"support": share}, ",".join(missing)
