"""Built-in local judges: cheap, offline, and failing in different ways.

Each returns a vote (0 supported, 1 unsupported, 0.5 abstain), named scores and
a raw JSON string saying why. ``scores["contradiction"]`` (0..1) is the signal
the labelling step uses to tell ``contradicted`` from ``not_supported``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np

from auditor.judges._text import content_words, negation_count, numbers, sentences, stem, tokens
from auditor.judges.base import LocalJudge, register_judge
from auditor.types import ABSTAIN, JudgePair

Result = tuple[float, dict[str, float], str]


def _raw(**fields: object) -> str:
    return json.dumps(fields, sort_keys=True, default=sorted)


def _coverage(claim_words: frozenset[str], text: str) -> float:
    if not claim_words:
        return 0.0
    return len(claim_words & content_words(text)) / len(claim_words)


def _anchor_sentences(pair: JudgePair, min_coverage: float) -> list[tuple[float, str]]:
    """Evidence sentences sorted by content-word coverage of the claim (best first)."""
    claim_words = content_words(pair.claim)
    scored = [(_coverage(claim_words, s), s) for text in pair.evidence for s in sentences(text)]
    scored = [item for item in scored if item[0] >= min_coverage]
    return sorted(scored, key=lambda item: -item[0])


def _band(value: float, support_at: float, reject_below: float, higher_is_support: bool = True
          ) -> float:
    if not higher_is_support:
        value = -value
        support_at, reject_below = -support_at, -reject_below
    if value >= support_at:
        return 0.0
    if value < reject_below:
        return 1.0
    return ABSTAIN


@register_judge("content_overlap")
class ContentOverlapJudge(LocalJudge):
    """Share of the claim's content words found in the best evidence passage."""

    name = "content_overlap"
    version = "1"

    def __init__(self, support_at: float = 0.75, reject_below: float = 0.45) -> None:
        super().__init__(support_at=support_at, reject_below=reject_below)
        self.support_at, self.reject_below = support_at, reject_below

    def score(self, pair: JudgePair) -> Result:
        words = content_words(pair.claim)
        if not pair.evidence or not words:
            return ABSTAIN, {}, _raw(reason="no evidence" if words else "no content words")
        per_passage = [(_coverage(words, text), text) for text in pair.evidence]
        best, text = max(per_passage, key=lambda item: item[0])
        missing = sorted(words - content_words(text))
        vote = _band(best, self.support_at, self.reject_below)
        return vote, {"support": best}, _raw(coverage=round(best, 4), missing=missing)


@register_judge("embedding_similarity")
class EmbeddingSimilarityJudge(LocalJudge):
    """Cosine similarity (MiniLM) between the claim and its best evidence sentence."""

    name = "embedding_similarity"
    version = "1"

    def __init__(self, support_at: float = 0.72, reject_below: float = 0.5) -> None:
        super().__init__(support_at=support_at, reject_below=reject_below,
                         model="sentence-transformers/all-MiniLM-L6-v2")
        self.support_at, self.reject_below = support_at, reject_below

    def score_batch(self, pairs: Sequence[JudgePair]) -> list[Result]:
        from auditor.embedding import encode

        evidence = [[s for text in pair.evidence for s in sentences(text)] for pair in pairs]
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
            results.append((_band(value, self.support_at, self.reject_below),
                            {"support": value}, _raw(max_cosine=round(value, 4))))
        return results


@register_judge("numeric_consistency")
class NumericConsistencyJudge(LocalJudge):
    """Numbers, dates and quantities of the claim against the evidence (normalised forms).

    Abstains when the claim holds no number. Votes 1 with a contradiction signal
    when the evidence sentence about the same thing states a different number.
    """

    name = "numeric_consistency"
    version = "1"

    def __init__(self, anchor_coverage: float = 0.4) -> None:
        super().__init__(anchor_coverage=anchor_coverage)
        self.anchor_coverage = anchor_coverage

    def score(self, pair: JudgePair) -> Result:
        claimed = numbers(pair.claim)
        if not claimed:
            return ABSTAIN, {}, _raw(reason="no numbers in claim")
        if not pair.evidence:
            return ABSTAIN, {}, _raw(reason="no evidence")
        everywhere = frozenset().union(*(numbers(text) for text in pair.evidence))
        anchors = _anchor_sentences(pair, self.anchor_coverage)[:3]
        anchor_numbers = frozenset().union(*(numbers(s) for _, s in anchors)) if anchors else (
            frozenset())
        if claimed <= anchor_numbers or (not anchor_numbers and claimed <= everywhere):
            return 0.0, {"support": 1.0, "contradiction": 0.0}, _raw(matched=claimed)
        missing = claimed - (anchor_numbers or everywhere)
        if anchor_numbers:
            return 1.0, {"support": 0.0, "contradiction": 1.0}, _raw(
                missing=missing, evidence_numbers=anchor_numbers)
        return 1.0, {"support": 0.0, "contradiction": 0.0}, _raw(missing=missing)


_ANTONYMS = {
    "increase": "decrease", "rise": "fall", "rose": "fell", "higher": "lower", "more": "less",
    "gain": "loss", "won": "lost", "win": "lose", "approve": "reject", "before": "after",
    "above": "below", "larger": "smaller", "early": "late", "first": "last", "open": "close",
    "allow": "forbid", "accept": "decline", "safe": "unsafe", "effective": "ineffective",
    "legal": "illegal", "true": "false", "male": "female", "north": "south", "east": "west",
    "maximum": "minimum", "majority": "minority", "start": "end", "expand": "shrink",
}
_ANTONYM_PAIRS = {stem(a): stem(b) for a, b in _ANTONYMS.items()} | {
    stem(b): stem(a) for a, b in _ANTONYMS.items()}


@register_judge("negation_polarity")
class NegationPolarityJudge(LocalJudge):
    """Polarity conflict (negation or antonym) with the evidence sentence about the same thing.

    Abstains unless some evidence sentence shares most of the claim's content words.
    """

    name = "negation_polarity"
    version = "1"

    def __init__(self, anchor_coverage: float = 0.6) -> None:
        super().__init__(anchor_coverage=anchor_coverage)
        self.anchor_coverage = anchor_coverage

    def score(self, pair: JudgePair) -> Result:
        anchors = _anchor_sentences(pair, self.anchor_coverage)
        if not anchors:
            return ABSTAIN, {}, _raw(reason="no evidence sentence about the claim")
        coverage, sentence = anchors[0]
        claim_stems = {stem(t) for t in tokens(pair.claim)}
        sent_stems = {stem(t) for t in tokens(sentence)}
        antonym = sorted(w for w in claim_stems
                         if w in _ANTONYM_PAIRS and _ANTONYM_PAIRS[w] in sent_stems
                         and w not in sent_stems)
        flipped = (negation_count(pair.claim) % 2) != (negation_count(sentence) % 2)
        if flipped != bool(antonym):
            return 1.0, {"support": 0.0, "contradiction": 1.0}, _raw(
                negation_flip=flipped, antonyms=antonym, sentence=sentence)
        return 0.0, {"support": coverage, "contradiction": 0.0}, _raw(sentence=sentence)
