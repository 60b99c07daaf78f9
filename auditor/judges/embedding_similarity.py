"""The ``embedding_similarity`` judge: the MiniLM cosine between the claim and its best
evidence sentence."""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np

from auditor.errors import ConfigError
from auditor.judges.base import LocalJudge, band
from auditor.text import content_words, sentences, word_coverage
from auditor.types import ABSTAIN, JudgePair

Result = tuple[float, dict[str, float], str]


def _raw(**fields: object) -> str:
    return json.dumps(fields, sort_keys=True, default=sorted)


class EmbeddingSimilarityJudge(LocalJudge):
    """Cosine similarity (MiniLM) between the claim and its best evidence sentence.

    Only the ``candidates`` evidence sentences sharing the most content words with the
    claim are encoded (0: all of them): on a long document the rest are unlikely to be
    its best match, and encoding every sentence of every article is what made
    calibration on long documents encoder-bound.
    """

    name = "embedding_similarity"
    version = "4"  # 3: Snowball stems; 4: a line is a sentence
    # the digest names the class where it was first published (local.py): moving it
    # changed no digest, no run id and no stored vote
    class_path = "auditor.judges.local.EmbeddingSimilarityJudge"

    def __init__(
        self, support_at: float = 0.72, reject_below: float = 0.5, candidates: int = 16
    ) -> None:
        if candidates < 0:
            raise ConfigError(f"embedding_similarity: candidates must be >= 0, got {candidates}")
        super().__init__(
            support_at=support_at,
            reject_below=reject_below,
            candidates=candidates,
            model="sentence-transformers/all-MiniLM-L6-v2",
        )
        self.support_at, self.reject_below = support_at, reject_below
        self.candidates = candidates

    def _candidates(self, pair: JudgePair) -> list[str]:
        group = [s for text in pair.evidence for s in sentences(text)]
        if not self.candidates or len(group) <= self.candidates:
            return group
        words = content_words(pair.claim)
        order = sorted(range(len(group)), key=lambda i: -word_coverage(words, group[i]))
        return [group[i] for i in sorted(order[: self.candidates])]

    def score_batch(self, pairs: Sequence[JudgePair]) -> list[Result]:
        from auditor.embedding import encode

        evidence = [self._candidates(pair) for pair in pairs]
        flat = [s for group in evidence for s in group]
        claim_vecs = encode([pair.claim for pair in pairs])
        # encode each distinct sentence once (pairs often share their evidence)
        unique, inverse = np.unique(np.array(flat, dtype=object), return_inverse=True)
        sent_vecs = encode(list(unique))[inverse] if flat else encode([])
        owner = np.repeat(np.arange(len(pairs)), [len(group) for group in evidence])
        sims = np.einsum("ij,ij->i", sent_vecs, claim_vecs[owner]) if flat else np.zeros(0)
        best = np.full(len(pairs), -1.0)
        np.maximum.at(best, owner, sims)
        results: list[Result] = []
        for i, group in enumerate(evidence):
            if not group:
                results.append((ABSTAIN, {}, _raw(reason="no evidence")))
                continue
            value = float(best[i])
            results.append(
                (
                    band(value, self.support_at, self.reject_below),
                    {"support": value},
                    _raw(max_cosine=round(value, 4)),
                )
            )
        return results
