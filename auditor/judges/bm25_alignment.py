"""The ``bm25_alignment`` judge: BM25 of the claim against its best evidence sentence,
relative to a perfect match.

The claim is scored as a query against every evidence sentence, with IDF computed over
the pair's own evidence sentences, and the best sentence's score is normalised by the
claim's score against itself: rare claim words that the evidence never states weigh
most.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np

from auditor.judges.base import LocalJudge, band
from auditor.text import sentences, stem, stop_words, tokens
from auditor.types import ABSTAIN, JudgePair

Result = tuple[float, dict[str, float], str]


def _terms(text: str) -> list[str]:
    stops = stop_words()
    return [stem(t) for t in tokens(text) if t not in stops]


def bm25_ratio(
    claim: str, evidence: Sequence[str], k1: float = 1.2, b: float = 0.75
) -> tuple[float, str]:
    """Best-sentence BM25 score of ``claim`` over the claim's self-score, and that sentence.

    IDF comes from the evidence sentences plus the claim itself (so every claim
    term has a finite, positive IDF). Returns ``(0.0, "")`` without evidence.
    """
    sents = [s for text in evidence for s in sentences(text)]
    query = sorted(set(_terms(claim)))
    if not sents or not query:
        return 0.0, ""
    docs = [_terms(s) for s in sents] + [_terms(claim)]
    index = {t: i for i, t in enumerate(query)}
    tf = np.zeros((len(docs), len(query)))
    for row, doc in enumerate(docs):
        for term in doc:
            col = index.get(term)
            if col is not None:
                tf[row, col] += 1
    lengths = np.array([max(len(d), 1) for d in docs], dtype=np.float64)
    df = (tf > 0).sum(axis=0)
    n_docs = len(docs)
    idf = np.log1p((n_docs - df + 0.5) / (df + 0.5))
    norm = k1 * (1 - b + b * lengths / lengths.mean())
    scores = (idf * tf * (k1 + 1) / (tf + norm[:, None])).sum(axis=1)
    self_score = scores[-1]
    best = int(np.argmax(scores[:-1]))
    if self_score <= 0:
        return 0.0, sents[best]
    return float(min(scores[best] / self_score, 1.5)), sents[best]


class BM25AlignmentJudge(LocalJudge):
    """BM25 of the claim against its best evidence sentence, relative to a perfect match."""

    name = "bm25_alignment"
    version = "3"  # 2: Snowball stems; 3: a line is a sentence
    # the digest names the class where it was first published (lexical_bm25.py): moving it
    # changed no digest, no run id and no stored vote
    class_path = "auditor.judges.lexical_bm25.BM25AlignmentJudge"

    def __init__(self, support_at: float = 0.6, reject_below: float = 0.35) -> None:
        super().__init__(support_at=support_at, reject_below=reject_below)
        self.support_at, self.reject_below = support_at, reject_below

    def score(self, pair: JudgePair) -> Result:
        if not pair.evidence:
            return ABSTAIN, {}, json.dumps({"reason": "no evidence"})
        ratio, sentence = bm25_ratio(pair.claim, pair.evidence)
        if not sentence:
            return ABSTAIN, {}, json.dumps({"reason": "no terms"})
        vote = band(ratio, self.support_at, self.reject_below)
        return (
            vote,
            {"support": ratio},
            json.dumps({"ratio": round(ratio, 4), "sentence": sentence}, sort_keys=True),
        )
