"""docs/labels.md: swapping the order of supporting and contradicting evidence must not change
verdicts. Every local judge of the default panel is order-invariant by construction;
this checks it on passages that support, contradict and ignore the claim."""

from __future__ import annotations

import itertools

import pytest

from auditor.judges.panel import load_panel
from auditor.types import JudgePair

pytestmark = pytest.mark.slow  # the embedding judge loads MiniLM

CLAIMS = [
    "The trial enrolled 3,200 participants in 2019.",
    "The drug did not reduce mortality in the trial.",
    "Marie Curie moved to Paris in 1891.",
]
EVIDENCE = (
    "The trial enrolled 3,200 participants in 2019 across twelve hospitals.",
    "A later report said the trial enrolled 5,000 participants and that the drug reduced "
    "mortality.",
    "Marie Curie moved to Warsaw in 1891. The weather in Paris was mild.",
)


def test_votes_do_not_depend_on_evidence_order() -> None:
    panel = load_panel()
    orders = list(itertools.permutations(EVIDENCE))
    pairs = [JudgePair(claim, order) for claim in CLAIMS for order in orders]
    votes = panel.judge_sync(pairs)
    for i, claim in enumerate(CLAIMS):
        rows = votes[i * len(orders) : (i + 1) * len(orders)]
        first = [(v.judge, v.value, round(v.scores.get("contradiction", 0.0), 6)) for v in rows[0]]
        for row in rows[1:]:
            assert [
                (v.judge, v.value, round(v.scores.get("contradiction", 0.0), 6)) for v in row
            ] == first, claim
