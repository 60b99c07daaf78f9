"""The ``bigram_overlap`` judge: the share of the claim's word bigrams found in one
evidence passage, sensitive to word order and swapped relations that bag-of-words
judges miss."""

from __future__ import annotations

import itertools
import json

from auditor.judges.base import LocalJudge, band
from auditor.text import stem, stop_words, tokens
from auditor.types import ABSTAIN, JudgePair

Result = tuple[float, dict[str, float], str]


def _bigrams(text: str) -> set[tuple[str, str]]:
    words = [stem(t) for t in tokens(text)]
    stops = stop_words()
    return {(a, b) for a, b in itertools.pairwise(words) if not (a in stops and b in stops)}


class BigramOverlapJudge(LocalJudge):
    """Share of the claim's word bigrams (not both stop words) found in one evidence passage."""

    name = "bigram_overlap"
    version = "2"  # 2: Snowball stems
    # the digest names the class where it was first published (lexical_bm25.py): moving it
    # changed no digest, no run id and no stored vote
    class_path = "auditor.judges.lexical_bm25.BigramOverlapJudge"

    def __init__(self, support_at: float = 0.6, reject_below: float = 0.3) -> None:
        super().__init__(support_at=support_at, reject_below=reject_below)
        self.support_at, self.reject_below = support_at, reject_below

    def score(self, pair: JudgePair) -> Result:
        grams = _bigrams(pair.claim)
        if not pair.evidence or not grams:
            return ABSTAIN, {}, json.dumps({"reason": "no evidence" if grams else "no bigrams"})
        evidence = set().union(*(_bigrams(text) for text in pair.evidence))
        share = len(grams & evidence) / len(grams)
        vote = band(share, self.support_at, self.reject_below)
        return vote, {"support": share}, json.dumps({"share": round(share, 4)})
