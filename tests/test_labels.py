"""The labelling rules of auditor.labels, one by one."""

from __future__ import annotations

import pytest

from auditor.labels import ClaimSignals, LabelPolicy, contradiction_signal, decide_label
from auditor.types import Label, Vote

SUPPORTING = (Vote("a", 0.0), Vote("b", 0.0))
REFUTING = (Vote("a", 1.0, scores={"contradiction": 1.0}), Vote("b", 1.0))
LACKING = (Vote("a", 1.0, scores={"contradiction": 0.0}), Vote("b", 1.0))


def label(**kw: object) -> Label:
    signals = ClaimSignals(**{"factual": True, "relevance": 0.8, "p_current": 0.2,
                              "votes": SUPPORTING, **kw})  # type: ignore[arg-type]
    return decide_label(signals)[0]


def test_non_factual_claims_are_not_factual_whatever_the_evidence() -> None:
    assert label(factual=False, p_current=0.99) is Label.NOT_FACTUAL


def test_supported_when_current_evidence_supports() -> None:
    assert label() is Label.SUPPORTED


def test_unknown_when_nothing_relevant_was_retrieved() -> None:
    assert label(relevance=0.1, p_current=0.9, votes=REFUTING) is Label.UNKNOWN
    assert label(relevance=None, p_current=None, votes=()) is Label.UNKNOWN


def test_unknown_when_the_panel_is_undecided() -> None:
    abstaining = (Vote("a", 0.5), Vote("b", 0.5), Vote("c", 0.0))
    assert label(p_current=0.1, votes=abstaining) is Label.UNKNOWN
    # one abstention of three is not an undecided panel
    assert label(p_current=0.1, votes=(*abstaining[1:], Vote("d", 0.0))) is Label.SUPPORTED
    # a probability exactly at the threshold decides nothing
    assert label(p_current=0.5, votes=REFUTING) is Label.UNKNOWN
    # an optional band around the threshold
    banded = decide_label(ClaimSignals(True, 0.8, 0.52, REFUTING), LabelPolicy(undecided_band=0.05))
    assert banded[0] is Label.UNKNOWN


def test_contradicted_needs_a_contradiction_signal() -> None:
    assert label(p_current=0.9, votes=REFUTING) is Label.CONTRADICTED
    assert label(p_current=0.9, votes=LACKING) is Label.NOT_SUPPORTED


def test_stale_when_only_a_superseded_version_supports() -> None:
    assert label(p_current=0.9, votes=REFUTING, stale_relevance=0.9,
                 p_superseded=0.1) is Label.STALE
    assert label(relevance=None, p_current=None, votes=(), stale_relevance=0.9,
                 p_superseded=0.1) is Label.STALE
    # superseded evidence that does not support the claim changes nothing
    assert label(p_current=0.9, votes=REFUTING, stale_relevance=0.9,
                 p_superseded=0.9) is Label.CONTRADICTED
    # current support wins over old support
    assert label(stale_relevance=0.9, p_superseded=0.1) is Label.SUPPORTED


def test_contradiction_signal_ignores_abstentions_and_errors() -> None:
    votes = [Vote("a", 0.5, scores={"contradiction": 1.0}),
             Vote("b", 1.0, error="timeout", scores={"contradiction": 1.0}),
             Vote("c", 1.0, scores={"contradiction": 0.3})]
    assert contradiction_signal(votes) == pytest.approx(0.3)


@pytest.mark.parametrize("field,value", [("threshold", 1.5), ("min_relevance", -0.1),
                                         ("undecided_band", 0.5)])
def test_policy_validation_names_the_parameter(field: str, value: float) -> None:
    with pytest.raises(ValueError, match=field):
        LabelPolicy(**{field: value})
