"""The labelling step: stacked probability + retrieval outcome + contradiction + time -> label.

Rules, in order (DESIGN.md §2.5; README "How labels are decided"):

1. a non-factual claim is ``not_factual``;
2. no evidence at all, or none whose relevance reaches ``min_relevance``: ``unknown``;
3. an undecided panel (more than ``max_abstain_share`` of the members abstained, or
   the stacked probability within ``undecided_band`` of the threshold): ``unknown``;
4. supported by current evidence (p < threshold): ``supported``;
5. not supported by current evidence but supported by a version superseded at the
   as-of date: ``stale``;
6. otherwise ``contradicted`` when the contradiction signal reaches
   ``contradiction_at``, else ``not_supported``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from auditor.types import ABSTAIN, Label, Vote


@dataclass(frozen=True)
class LabelPolicy:
    """Thresholds of the labelling step (recorded with every run)."""

    threshold: float = 0.5
    min_relevance: float = 0.35
    undecided_band: float = 0.0
    max_abstain_share: float = 0.5
    contradiction_at: float = 0.5

    def __post_init__(self) -> None:
        for name in ("threshold", "min_relevance", "contradiction_at", "max_abstain_share"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name}: must be in [0, 1], got {value}")
        if not 0.0 <= self.undecided_band < 0.5:
            raise ValueError(f"undecided_band: must be in [0, 0.5), got {self.undecided_band}")


@dataclass(frozen=True)
class ClaimSignals:
    """What the labelling step knows about one claim."""

    factual: bool
    relevance: float | None
    """Best relevance (cosine) of any current evidence; None when there is none."""
    p_current: float | None
    """Stacked P(hallucinated) against current evidence; None when not judged."""
    votes: Sequence[Vote] = ()
    stale_relevance: float | None = None
    p_superseded: float | None = None
    """Stacked P(hallucinated) against superseded evidence only; None when there is none."""


def contradiction_signal(votes: Sequence[Vote]) -> float:
    """The strongest contradiction score among non-abstaining votes (0 when none)."""
    scores = [float(v.scores.get("contradiction", 0.0)) for v in votes
              if v.value != ABSTAIN and v.error is None]
    return max(scores, default=0.0)


def decide_label(signals: ClaimSignals, policy: LabelPolicy | None = None) -> tuple[Label, str]:
    """The label of one claim and a one-line reason."""
    policy = policy or LabelPolicy()
    if not signals.factual:
        return Label.NOT_FACTUAL, "not a factual claim"
    current_ok = signals.relevance is not None and signals.relevance >= policy.min_relevance
    stale_ok = (signals.stale_relevance is not None
                and signals.stale_relevance >= policy.min_relevance)
    if not current_ok and not stale_ok:
        best = max((r for r in (signals.relevance, signals.stale_relevance) if r is not None),
                   default=None)
        shown = "none" if best is None else f"{best:.2f}"
        return Label.UNKNOWN, (f"no relevant evidence (best relevance {shown} < "
                               f"{policy.min_relevance:.2f})")
    stale_support = (stale_ok and signals.p_superseded is not None
                     and signals.p_superseded < policy.threshold)
    if not current_ok:
        if stale_support:
            return Label.STALE, "supported only by superseded evidence"
        return Label.UNKNOWN, "no relevant current evidence"
    p = signals.p_current
    if p is None or not signals.votes:
        return Label.UNKNOWN, "not judged"
    abstained = sum(v.value == ABSTAIN for v in signals.votes)
    if abstained > policy.max_abstain_share * len(signals.votes):
        return Label.UNKNOWN, (f"panel undecided: {abstained} of {len(signals.votes)} members "
                               "abstained")
    if p == policy.threshold:  # e.g. a non-admissible stacker's fallback member abstained
        return Label.UNKNOWN, f"panel undecided: p={p:.2f} is at the threshold"
    if abs(p - policy.threshold) < policy.undecided_band:
        return Label.UNKNOWN, f"panel undecided: p={p:.2f}"
    if p < policy.threshold:
        return Label.SUPPORTED, f"supported by current evidence (p={p:.2f})"
    if stale_support:
        assert signals.p_superseded is not None
        return Label.STALE, (f"not supported by current evidence (p={p:.2f}) but supported by "
                             f"a superseded version (p={signals.p_superseded:.2f})")
    contradiction = contradiction_signal(signals.votes)
    if contradiction >= policy.contradiction_at:
        return Label.CONTRADICTED, f"contradicted by current evidence (p={p:.2f})"
    return Label.NOT_SUPPORTED, f"not supported by current evidence (p={p:.2f})"
