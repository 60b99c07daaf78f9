"""BM25 alignment and n-gram overlap judges (lexical, order-aware in different ways).

``bm25_alignment`` scores the claim as a query against every evidence sentence,
with IDF computed over the pair's own evidence sentences, and normalises the best
sentence's score by the claim's score against itself: rare claim words that the
evidence never states weigh most. ``bigram_overlap`` is the share of the claim's
word bigrams found in the evidence: sensitive to word order and swapped
relations that bag-of-words judges miss.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence

import numpy as np

from auditor.judges._text import sentences, stem, stop_words, tokens
from auditor.judges.base import LocalJudge, register_judge
from auditor.types import ABSTAIN, JudgePair

Result = tuple[float, dict[str, float], str]


def _band(value: float, support_at: float, reject_below: float) -> float:
    if value >= support_at:
        return 0.0
    if value < reject_below:
        return 1.0
    return ABSTAIN


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


@register_judge("bm25_alignment")
class BM25AlignmentJudge(LocalJudge):
    """BM25 of the claim against its best evidence sentence, relative to a perfect match."""

    name = "bm25_alignment"
    version = "3"  # 2: Snowball stems; 3: a line is a sentence

    def __init__(self, support_at: float = 0.6, reject_below: float = 0.35) -> None:
        super().__init__(support_at=support_at, reject_below=reject_below)
        self.support_at, self.reject_below = support_at, reject_below

    def score(self, pair: JudgePair) -> Result:
        if not pair.evidence:
            return ABSTAIN, {}, json.dumps({"reason": "no evidence"})
        ratio, sentence = bm25_ratio(pair.claim, pair.evidence)
        if not sentence:
            return ABSTAIN, {}, json.dumps({"reason": "no terms"})
        vote = _band(ratio, self.support_at, self.reject_below)
        return (
            vote,
            {"support": ratio},
            json.dumps({"ratio": round(ratio, 4), "sentence": sentence}, sort_keys=True),
        )


def _bigrams(text: str) -> set[tuple[str, str]]:
    words = [stem(t) for t in tokens(text)]
    stops = stop_words()
    return {(a, b) for a, b in itertools.pairwise(words) if not (a in stops and b in stops)}


@register_judge("bigram_overlap")
class BigramOverlapJudge(LocalJudge):
    """Share of the claim's word bigrams (not both stop words) found in one evidence passage."""

    name = "bigram_overlap"
    version = "2"  # 2: Snowball stems

    def __init__(self, support_at: float = 0.6, reject_below: float = 0.3) -> None:
        super().__init__(support_at=support_at, reject_below=reject_below)
        self.support_at, self.reject_below = support_at, reject_below

    def score(self, pair: JudgePair) -> Result:
        grams = _bigrams(pair.claim)
        if not pair.evidence or not grams:
            return ABSTAIN, {}, json.dumps({"reason": "no evidence" if grams else "no bigrams"})
        evidence = set().union(*(_bigrams(text) for text in pair.evidence))
        share = len(grams & evidence) / len(grams)
        vote = _band(share, self.support_at, self.reject_below)
        return vote, {"support": share}, json.dumps({"share": round(share, 4)})
