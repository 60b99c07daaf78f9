"""The labelling rules of auditor.labels, one by one."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from auditor.labels import (
    ClaimSignals,
    LabelPolicy,
    contradiction_signal,
    decide_label,
)
from auditor.text import stated_period, strip_period
from auditor.types import Label, Vote

SUPPORTING = (Vote("a", 0.0), Vote("b", 0.0))
REFUTING = (Vote("a", 1.0, scores={"contradiction": 1.0}), Vote("b", 1.0))
LACKING = (Vote("a", 1.0, scores={"contradiction": 0.0}), Vote("b", 1.0))


def label(**kw: object) -> Label:
    signals = ClaimSignals(
        **{"factual": True, "relevance": 0.8, "p_current": 0.2, "votes": SUPPORTING, **kw}
    )  # type: ignore[arg-type]
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


def test_contradicted_reason_names_the_judges_that_fired() -> None:
    votes = (
        Vote("entailment", 1.0, scores={"contradiction": 0.93}),
        Vote("numeric_consistency", 1.0, scores={"contradiction": 1.0}),
        Vote("bm25_alignment", 1.0, scores={"contradiction": 0.2}),
        Vote("negation_polarity", 0.5, scores={"contradiction": 1.0}),
    )
    verdict, reason = decide_label(ClaimSignals(True, 0.8, 0.9, votes))
    assert verdict is Label.CONTRADICTED
    assert "contradiction 1.00 from entailment, numeric_consistency)" in reason


def test_stale_when_only_a_superseded_version_supports() -> None:
    assert (
        label(p_current=0.9, votes=REFUTING, stale_relevance=0.9, p_superseded=0.1) is Label.STALE
    )
    assert (
        label(relevance=None, p_current=None, votes=(), stale_relevance=0.9, p_superseded=0.1)
        is Label.STALE
    )
    # superseded evidence that does not support the claim changes nothing
    assert (
        label(p_current=0.9, votes=REFUTING, stale_relevance=0.9, p_superseded=0.9)
        is Label.CONTRADICTED
    )
    # current support wins over old support
    assert label(stale_relevance=0.9, p_superseded=0.1) is Label.SUPPORTED


def test_contradiction_signal_ignores_abstentions_and_errors() -> None:
    votes = [
        Vote("a", 0.5, scores={"contradiction": 1.0}),
        Vote("b", 1.0, error="timeout", scores={"contradiction": 1.0}),
        Vote("c", 1.0, scores={"contradiction": 0.3}),
    ]
    assert contradiction_signal(votes) == pytest.approx(0.3)


@pytest.mark.parametrize(
    "field,value", [("threshold", 1.5), ("min_relevance", -0.1), ("undecided_band", 0.5)]
)
def test_policy_validation_names_the_parameter(field: str, value: float) -> None:
    with pytest.raises(ValueError, match=field):
        LabelPolicy(**{field: value})


def test_stated_period_reads_time_scopes_not_answer_years() -> None:
    assert stated_period("From 2004 to 2005, she worked at Arizona.") == (
        datetime(2004, 1, 1, tzinfo=UTC),
        datetime(2006, 1, 1, tzinfo=UTC),
    )
    assert stated_period("He was mayor between March 1990 and 1994.") == (
        datetime(1990, 1, 1, tzinfo=UTC),
        datetime(1995, 1, 1, tzinfo=UTC),
    )
    assert stated_period("As of 2010, the line had 12 stations.") == (
        datetime(2010, 1, 1, tzinfo=UTC),
        datetime(2011, 1, 1, tzinfo=UTC),
    )
    assert stated_period("In 1998, the mayor was Bob Smith.") is not None
    # a year that is the content of the claim is not a time scope
    assert stated_period("England last reached a World Cup semi-final in 1990.") is None
    assert stated_period("The bridge opened in 1932 and carries 4 lanes.") is None


def test_strip_period_removes_only_the_time_scope() -> None:
    assert strip_period("From 1811 to 1827, the house was owned by George Peter.") == (
        "The house was owned by George Peter."
    )
    assert strip_period("She worked at Arizona from 2004 to 2005.") == "She worked at Arizona."
    assert strip_period("The answer is 1990.") == "The answer is 1990."


def test_a_claim_about_its_own_past_period_is_supported_by_the_version_valid_then() -> None:
    # the current version says otherwise, the version valid in the claimed period supports
    old_support = {"p_current": 0.9, "votes": REFUTING, "stale_relevance": 0.9, "p_superseded": 0.1}
    assert label(**old_support, superseded_valid_at_claim_time=True) is Label.SUPPORTED
    assert label(**old_support) is Label.STALE
    assert (
        label(
            relevance=None,
            p_current=None,
            votes=(),
            stale_relevance=0.9,
            p_superseded=0.1,
            superseded_valid_at_claim_time=True,
        )
        is Label.SUPPORTED
    )


def test_stale_when_a_superseded_version_matches_clearly_better() -> None:
    # the panel finds the current version supporting, but the claim is much closer to the
    # superseded version of the same document, which supports it at least as well
    closer = {"p_current": 0.4, "stale_relevance": 0.95, "p_superseded": 0.3}
    assert label(**closer, superseded_margin=0.08) is Label.STALE
    assert label(**closer, superseded_margin=0.01) is Label.SUPPORTED
    assert label(**closer, superseded_margin=None) is Label.SUPPORTED
    # the old version must support at least as well as the current one
    assert (
        label(p_current=0.2, stale_relevance=0.95, p_superseded=0.3, superseded_margin=0.2)
        is Label.SUPPORTED
    )
    # ... and a claim scoped to the old version's period is history, not stale
    assert (
        label(**closer, superseded_margin=0.08, superseded_valid_at_claim_time=True)
        is Label.SUPPORTED
    )
    # the margin is a policy setting
    strict = decide_label(
        ClaimSignals(True, 0.8, 0.4, SUPPORTING, 0.95, 0.3, superseded_margin=0.08),
        LabelPolicy(stale_margin=0.1),
    )
    assert strict[0] is Label.SUPPORTED


def test_an_equally_judged_current_version_holding_every_word_is_not_outdated() -> None:
    # "St Oswin's Hospital has 640 beds": the current version says it inside a longer
    # sentence (a lower cosine) and the panel judges both versions the same
    same = {"p_current": 0.24, "stale_relevance": 0.95, "p_superseded": 0.24}
    kept = {"current_scores": [(0.7, 1.0)], "superseded_scores": [(0.95, 1.0)]}
    assert label(**same, **kept, superseded_margin=0.16) is Label.SUPPORTED
    # judged the same but the current version lost some of the claim's words: stale
    lost = {"current_scores": [(0.7, 0.6)], "superseded_scores": [(0.95, 1.0)]}
    assert label(**same, **lost, superseded_margin=0.16) is Label.STALE
    # the superseded version judged better and the current one lost words: stale
    better = {**same, "p_superseded": 0.2}
    assert label(**better, **lost, superseded_margin=0.16) is Label.STALE
    # judged better, but a current version holding every word and judged supporting still
    # states the claim ("Loganair still flies to Aberdeen"): supported
    assert label(**better, **kept, superseded_margin=0.16) is Label.SUPPORTED
    # ... unless the panel does not find it supporting, or one member finds it hallucinated
    # ("replacing Colin Marsh" holds every word of "Colin Marsh is the director")
    doubted = {**better, "p_current": 0.6}
    assert label(**doubted, **kept, superseded_margin=0.16) is Label.STALE
    dissent = (Vote("a", 0.0), Vote("b", 0.0), Vote("c", 1.0))
    assert label(**better, **kept, superseded_margin=0.16, votes=dissent) is Label.STALE


def test_a_clear_match_decides_support_unless_a_conflict_reader_objects() -> None:
    match = Vote("numeric", 0.0, scores={"support": 1.0, "contradiction": 0.0, "match": 1.0})
    lexical = (Vote("overlap", 1.0, scores={"support": 0.3}), Vote("bigram", 1.0))
    quiet = tuple(Vote(f"q{i}", 0.5) for i in range(4))
    # lexical dissent and a stacked probability above the threshold: still supported
    assert label(p_current=0.6, votes=(match, *lexical, *quiet)) is Label.SUPPORTED
    # most members abstaining: supported, not an undecided panel
    assert label(p_current=0.55, votes=(match, *quiet, Vote("q9", 0.5))) is Label.SUPPORTED
    # the reader (a member reporting a contradiction score) voting against: p decides
    reader = Vote("entailment", 1.0, scores={"entailment": 0.1, "contradiction": 0.3})
    assert label(p_current=0.6, votes=(match, reader, *lexical)) is Label.NOT_SUPPORTED
    # a conflict-reading member reaching contradiction_at while abstaining blocks it too
    doubt = Vote("entailment", 0.5, scores={"entailment": 0.3, "contradiction": 0.6})
    assert label(p_current=0.6, votes=(match, doubt, *lexical)) is not Label.SUPPORTED
    # support without a match score (a bare number, a year) is no clear match
    plain = Vote("numeric", 0.0, scores={"support": 1.0, "contradiction": 0.0})
    assert label(p_current=0.6, votes=(plain, *lexical, *quiet)) is Label.UNKNOWN


def test_a_unanimous_minority_of_the_panel_decides_support_only() -> None:
    # five members without an opinion, three finding it supported: supported
    quiet = tuple(Vote(f"q{i}", 0.5) for i in range(5))
    agree = (Vote("a", 0.0), Vote("b", 0.0), Vote("c", 0.0))
    assert label(p_current=0.43, votes=(*quiet, *agree)) is Label.SUPPORTED
    # two agreeing members are too few; a dissenting one breaks unanimity
    assert label(p_current=0.43, votes=(*quiet, *agree[:2])) is Label.UNKNOWN
    split = (*quiet, *agree[:2], Vote("c", 1.0))
    assert label(p_current=0.43, votes=split) is Label.UNKNOWN
    # the stacked probability must say supported too
    assert label(p_current=0.6, votes=(*quiet, *agree)) is Label.UNKNOWN
    # three "hallucinated" votes beside five abstentions decide nothing
    against = (Vote("a", 1.0), Vote("b", 1.0), Vote("c", 1.0))
    assert label(p_current=0.88, votes=(*quiet, *against)) is Label.UNKNOWN
    # a failed member is no vote
    failed = (*quiet, *agree[:2], Vote("c", 0.0, error="timeout"))
    assert label(p_current=0.43, votes=failed) is Label.UNKNOWN
    # the count is a policy setting
    four = decide_label(
        ClaimSignals(True, 0.8, 0.43, (*quiet, *agree)), LabelPolicy(unanimous_members=4)
    )
    assert four[0] is Label.UNKNOWN
    with pytest.raises(ValueError, match="unanimous_members"):
        LabelPolicy(unanimous_members=0)


def test_stale_margin_is_validated() -> None:
    with pytest.raises(ValueError, match="stale_margin"):
        LabelPolicy(stale_margin=0.0)


def test_relevance_needs_cosine_anchored_in_the_claims_words() -> None:
    # same-shaped text about something else: cosine passes, few claim words: unknown
    assert label(current_scores=[(0.5, 0.2)], p_current=0.9, votes=LACKING) is Label.UNKNOWN
    assert label(current_scores=[(0.5, 0.2), (0.4, 0.8)]) is Label.SUPPORTED
    assert label(current_scores=[(0.7, 0.1)]) is Label.SUPPORTED  # strongly similar
    assert label(current_scores=[(0.3, 1.0)]) is Label.UNKNOWN  # below min_relevance
    # the same test for superseded evidence
    assert (
        label(
            relevance=None,
            p_current=None,
            votes=(),
            stale_relevance=0.5,
            superseded_scores=[(0.5, 0.1)],
            p_superseded=0.1,
        )
        is Label.UNKNOWN
    )
    loose = LabelPolicy(min_coverage=0.1)
    assert (
        decide_label(ClaimSignals(True, 0.5, 0.2, SUPPORTING, current_scores=[(0.5, 0.2)]), loose)[
            0
        ]
        is Label.SUPPORTED
    )


CONFLICT = Vote("numeric_consistency", 1.0, scores={"contradiction": 1.0, "conflict": 1.0})
MISSING = Vote("entity_consistency", 1.0, scores={"contradiction": 0.0, "missing_detail": 1.0})


def test_a_clear_conflict_is_weighed_before_support() -> None:
    # the stacked probability says supported, a same-slot conflict says otherwise
    verdict, reason = decide_label(ClaimSignals(True, 0.8, 0.3, (*SUPPORTING, CONFLICT)))
    assert verdict is Label.CONTRADICTED
    assert "numeric_consistency" in reason and "p=0.30" in reason
    # ... and decides an undecided panel too
    abstaining = (Vote("a", 0.5), Vote("b", 0.5), Vote("c", 0.5), CONFLICT)
    assert label(p_current=0.5, votes=abstaining) is Label.CONTRADICTED
    # an ordinary contradiction score (no same-slot conflict) does not outvote support
    assert (
        label(votes=(*SUPPORTING, Vote("x", 1.0, scores={"contradiction": 1.0}))) is Label.SUPPORTED
    )
    # a conflict from an abstaining or failed judge counts for nothing
    assert label(votes=(*SUPPORTING, Vote("n", 0.5, scores={"conflict": 1.0}))) is Label.SUPPORTED
    assert (
        label(votes=(*SUPPORTING, Vote("n", 1.0, error="boom", scores={"conflict": 1.0})))
        is Label.SUPPORTED
    )


def test_a_missing_detail_is_not_supported_not_unknown_or_supported() -> None:
    assert label(votes=(*SUPPORTING, MISSING)) is Label.NOT_SUPPORTED
    abstaining = (Vote("a", 0.5), Vote("b", 0.5), Vote("c", 0.5), MISSING)
    assert label(p_current=0.6, votes=abstaining) is Label.NOT_SUPPORTED
    # the policy can leave it to the stacked probability
    off = LabelPolicy(missing_detail_at=1.5)
    assert decide_label(ClaimSignals(True, 0.8, 0.2, (*SUPPORTING, MISSING)), off)[0] is (
        Label.SUPPORTED
    )


def test_evidence_naming_the_claims_subject_is_relevant() -> None:
    # few of the claim's words (an invented designer), cosine 0.55: relevant only when
    # the evidence names the subject
    weak = {"current_scores": [(0.55, 0.4)], "p_current": 0.9, "votes": LACKING}
    assert label(**weak) is Label.UNKNOWN
    assert label(**weak, subject_covered=True) is Label.NOT_SUPPORTED
    # the subject alone is not enough below subject_relevance
    assert (
        label(**{**weak, "current_scores": [(0.4, 0.4)], "relevance": 0.4}, subject_covered=True)
        is Label.UNKNOWN
    )


def test_stale_when_the_current_version_contradicts_or_no_longer_states_it() -> None:
    old = {"stale_relevance": 0.9, "p_superseded": 0.2}
    # the panel finds the reworded current version supporting (p 0.3), but it states a
    # different value in the same slot: the update changed what the claim states
    assert label(p_current=0.3, votes=(*SUPPORTING, CONFLICT), **old) is Label.STALE
    assert label(p_current=0.3, votes=(*SUPPORTING, MISSING), **old) is Label.STALE
    # a claim scoped to the old version's time is a true statement about the past
    assert (
        label(
            p_current=0.3, votes=(*SUPPORTING, CONFLICT), **old, superseded_valid_at_claim_time=True
        )
        is Label.SUPPORTED
    )
    # without superseded support a conflict is a contradiction
    assert (
        label(p_current=0.3, votes=(*SUPPORTING, CONFLICT), stale_relevance=0.9, p_superseded=0.8)
        is Label.CONTRADICTED
    )
    # a superseded version in the same conflict ("six lanes" then and now against "25
    # lanes") supports nothing, however low the stacked probability against it
    both = (*SUPPORTING, CONFLICT)
    assert label(p_current=0.3, votes=both, **old, superseded_votes=both) is Label.CONTRADICTED
    # unless the claim states its own time, valid in the old version's ("From 1189 to 1201,
    # ..." against "As of 1189, ...": the years are the claim's period)
    scoped = {"superseded_valid_at_claim_time": True, "superseded_votes": both}
    assert label(p_current=0.3, votes=both, **old, **scoped, states_time=True) is Label.SUPPORTED
    scoped = {"superseded_votes": both, "states_time": True}
    assert label(p_current=0.3, votes=both, **old, **scoped) is Label.STALE
    # a detail the old version lacks as well is no update ("Around 35 stallholders"
    # against "Around 35 stalls" in both versions): not supported, not stale
    lacking = (*SUPPORTING, MISSING)
    assert label(p_current=0.3, votes=lacking, **old, superseded_votes=lacking) is (
        Label.NOT_SUPPORTED
    )
    assert label(p_current=0.3, votes=lacking, **old, superseded_votes=SUPPORTING) is (Label.STALE)


def test_subject_in_evidence_reads_the_first_name() -> None:
    from auditor.labels import subject_in_evidence

    evidence = ["The Kestrel Bridge opened in 1932 and spans the river Avon."]
    assert subject_in_evidence("The Kestrel Bridge was designed by Maria Lopez.", evidence)
    assert not subject_in_evidence("The Falcon Bridge was designed by Maria Lopez.", evidence)
    assert not subject_in_evidence("the bridge was designed by an engineer.", evidence)


def test_a_clear_match_in_a_superseded_version_is_its_support() -> None:
    match = Vote("numeric", 0.0, scores={"support": 1.0, "contradiction": 0.0, "match": 1.0})
    lexical = (Vote("overlap", 1.0, scores={"support": 0.3}), Vote("bigram", 1.0))
    conflict = Vote("numeric", 1.0, scores={"contradiction": 1.0, "conflict": 1.0})
    # "£30 per night" against the old "£30 for non-members" (lexical members doubting the
    # paraphrase, stacked p above the threshold) and the current "£34": stale
    assert (
        label(
            p_current=0.6,
            votes=(conflict, *lexical),
            stale_relevance=0.8,
            p_superseded=0.6,
            superseded_votes=(match, *lexical),
        )
        is Label.STALE
    )
    # without the match, the old version's p decides: contradicted
    assert (
        label(
            p_current=0.6,
            votes=(conflict, *lexical),
            stale_relevance=0.8,
            p_superseded=0.6,
            superseded_votes=lexical,
        )
        is Label.CONTRADICTED
    )


def test_the_label_rules_are_named_said_and_each_decides_some_claim() -> None:
    import random

    from auditor.labels import LABEL_RULES, deciding_rule
    from auditor.types import ABSTAIN, CONFLICT, CONTRADICTION, MATCH, MISSING_DETAIL

    names = [r.name for r in LABEL_RULES]
    assert len(set(names)) == len(names) and all(r.says for r in LABEL_RULES)
    rng = random.Random(7)

    def votes() -> tuple[Vote, ...]:
        return tuple(
            Vote(
                judge=f"j{j}",
                value=rng.choice([0.0, 1.0, ABSTAIN, 0.3, 0.7]),
                scores={
                    k: rng.choice([0.0, 0.5, 1.0])
                    for k in (CONTRADICTION, CONFLICT, MISSING_DETAIL, MATCH)
                    if rng.random() < 0.4
                },
            )
            for j in range(rng.randrange(9))
        )

    def scores() -> tuple[tuple[float, float], ...]:
        return tuple(
            (rng.choice([0.2, 0.4, 0.5, 0.7]), rng.choice([0.3, 0.5, 1.0]))
            for _ in range(rng.randrange(3))
        )

    fired: set[str] = set()
    for _ in range(20000):
        signals = ClaimSignals(
            factual=rng.random() > 0.05,
            relevance=rng.choice([None, 0.2, 0.36, 0.5, 0.65, 0.9]),
            p_current=rng.choice([None, 0.1, 0.4, 0.5, 0.6, 0.9]),
            votes=votes(),
            stale_relevance=rng.choice([None, 0.2, 0.4, 0.7]),
            p_superseded=rng.choice([None, 0.1, 0.5, 0.6, 0.9]),
            superseded_votes=votes(),
            superseded_valid_at_claim_time=rng.random() < 0.2,
            states_time=rng.random() < 0.2,
            current_scores=scores(),
            superseded_scores=scores(),
            superseded_margin=rng.choice([None, 0.0, 0.03, 0.1]),
            subject_covered=rng.random() < 0.3,
            role_stated=rng.random() < 0.2,
            topic_unnamed=rng.random() < 0.05,
        )
        rule, (label, reason) = deciding_rule(signals, LabelPolicy(undecided_band=0.05))
        assert reason and decide_label(signals, LabelPolicy(undecided_band=0.05)) == (
            label,
            reason,
        )
        fired.add(rule.name)
    assert fired == set(names)  # no rule is dead
