"""Claims keep what their sentence means (issue 37): conditions, modality, citations,
unresolved subjects, and factual-or-not by the label definitions (docs/labels.md)."""

from __future__ import annotations

import pytest

from auditor.extract.rules import RuleExtractor, load_nlp
from tests.extracted import claims_of, factual_texts


def test_a_conditional_stays_conditional(rules: RuleExtractor) -> None:
    assert factual_texts(rules, "If you join before June, you pay half the fee.") == [
        "If you join before June, you pay half the fee"
    ]


def test_two_conditions_and_the_modality_hold_for_each_part(rules: RuleExtractor) -> None:
    claims = factual_texts(rules, "To apply you must be over 18 and hold a driving licence.")
    assert claims == ["To apply you must be over 18", "To apply you must hold a driving licence"]


def test_a_deadline_opening_the_sentence_holds_for_both_clauses(rules: RuleExtractor) -> None:
    claims = factual_texts(rules, "After 31 March, the fee rises to $40 and members pay double.")
    assert claims == [
        "After 31 March, members pay double",
        "After 31 March, the fee rises to $40",
    ]


def test_a_deadline_at_the_end_stays_with_its_claim(rules: RuleExtractor) -> None:
    assert factual_texts(rules, "A penalty of $15 applies after the 1 May deadline.") == [
        "A penalty of $15 applies after the 1 May deadline"
    ]


def test_coordination_split_where_each_part_stands_alone(rules: RuleExtractor) -> None:
    assert factual_texts(rules, "The gallery opens at 10am and closes at 4pm.") == [
        "The gallery closes at 4pm",
        "The gallery opens at 10am",
    ]


def test_a_joint_coordination_stays_one_claim(rules: RuleExtractor) -> None:
    assert factual_texts(rules, "The treaty was signed between Norway and Sweden.") == [
        "The treaty was signed between Norway and Sweden"
    ]


def test_a_trailing_citation_is_no_claim_and_is_kept_as_a_source(rules: RuleExtractor) -> None:
    text = "The ferry takes 40 minutes. [3]."
    claims = claims_of(rules, text)
    assert [(c.text, c.factual, c.cited_sources) for c in claims] == [
        ("The ferry takes 40 minutes", True, ("3",))
    ]
    assert text[slice(*claims[0].spans[0])] == "The ferry takes 40 minutes"


def test_an_inline_citation_leaves_the_text_and_the_span_points_at_the_answer(
    rules: RuleExtractor,
) -> None:
    text = "The ferry takes 40 minutes [1, 2] and carries 300 passengers."
    claims = claims_of(rules, text)
    assert sorted(c.text for c in claims) == [
        "The ferry carries 300 passengers",
        "The ferry takes 40 minutes",
    ]
    for claim in claims:
        assert "[" not in claim.text
        assert claim.cited_sources == ("1", "2")
        for start, end in claim.spans:
            assert "[" not in text[start:end]


def test_an_author_year_citation_is_a_source_and_et_al_splits_no_sentence(
    rules: RuleExtractor,
) -> None:
    text = (
        "The lake is 40 metres deep (Berg & Lind, 1998). "
        "Its water is warmest in August (Okafor et al., 2011; Marsh 2019). "
        "Berg (1998) measured 12 inflows."
    )
    claims = claims_of(rules, text)
    assert [(c.text, c.cited_sources) for c in claims] == [
        ("The lake is 40 metres deep", ("Berg & Lind, 1998",)),
        ("The lake's water is warmest in August", ("Okafor et al., 2011", "Marsh 2019")),
        ("Berg (1998) measured 12 inflows", ()),  # a narrative citation: Berg is its subject
    ]
    for claim in claims[:2]:
        assert "(" not in text[slice(*claim.spans[0])]


def test_according_to_is_a_source_not_a_name(rules: RuleExtractor) -> None:
    text = "According to the timetable, the last bus leaves at 11pm."
    (claim,) = claims_of(rules, text)
    assert claim.text == "The last bus leaves at 11pm"
    assert claim.cited_sources == ("the timetable",)
    assert text[slice(*claim.spans[0])] == "the last bus leaves at 11pm"


def test_a_trailing_according_to_is_a_source(rules: RuleExtractor) -> None:
    (claim,) = claims_of(rules, "The museum holds 2,000 paintings, according to its website.")
    assert (claim.text, claim.cited_sources) == (
        "The museum holds 2,000 paintings",
        ("its website",),
    )


def test_the_docs_say_is_a_source(rules: RuleExtractor) -> None:
    (claim,) = claims_of(rules, "The handbook states that staff get 25 days of leave.")
    assert (claim.text, claim.cited_sources) == (
        "Staff get 25 days of leave",
        ("The handbook",),
    )


def test_a_person_saying_something_in_the_past_is_what_the_claim_states(
    rules: RuleExtractor,
) -> None:
    (claim,) = claims_of(rules, "Einstein said that imagination matters more than knowledge.")
    assert claim.text.startswith("Einstein said") and claim.cited_sources == ()


def test_an_ambiguous_pronoun_is_kept_and_marked_unresolved(rules: RuleExtractor) -> None:
    claims = claims_of(rules, "Maria Lopez interviewed Helen Carter. She was 42 at the time.")
    last = claims[-1]
    assert last.text == "She was 42 at the time"
    assert last.subject_unresolved and last.topic is None


def test_an_unambiguous_pronoun_is_resolved(rules: RuleExtractor) -> None:
    claims = claims_of(rules, "Maria Lopez was born in Lima. She moved to Madrid in 1990.")
    assert claims[-1].text == "Maria Lopez moved to Madrid in 1990"
    assert not claims[-1].subject_unresolved


def test_a_missing_subject_is_marked_unresolved(rules: RuleExtractor) -> None:
    (claim,) = claims_of(rules, "Has two swimming pools.")
    assert claim.text == "Has two swimming pools" and claim.subject_unresolved


def test_an_opinion_beside_a_fact_is_not_factual(rules: RuleExtractor) -> None:
    claims = claims_of(rules, "The Silver pass includes a locker, which is a handy extra.")
    assert [(c.text, c.factual, c.kind) for c in claims] == [
        ("The Silver pass includes a locker", True, "claim"),
        ("A locker is a handy extra", False, "opinion"),
    ]


def test_a_sentence_that_only_evaluates_is_an_opinion(rules: RuleExtractor) -> None:
    (claim,) = claims_of(rules, "The view from the tower is truly stunning.")
    assert (claim.factual, claim.kind) == (False, "opinion")


def test_a_closing_hedge_about_the_answer_is_one_non_factual_claim(rules: RuleExtractor) -> None:
    text = "I might not have the newest prices, so do confirm them with the venue."
    (claim,) = claims_of(rules, text)
    assert (claim.factual, claim.kind) == (False, "hedge")


def test_advice_without_checkable_content_is_not_factual(rules: RuleExtractor) -> None:
    (claim,) = claims_of(rules, "You should ask your landlord first.")
    assert (claim.factual, claim.kind) == (False, "instruction")


@pytest.mark.parametrize(
    "text",
    [
        "You should register the birth within 42 days.",
        "Visitors must show a ticket at the gate.",
        "Applicants need to pay a $25 fee.",
    ],
)
def test_obligations_are_judged_by_content(rules: RuleExtractor, text: str) -> None:
    claims = claims_of(rules, text)
    assert claims and all(c.factual for c in claims)


@pytest.mark.parametrize(
    "text",
    [
        "The castle was probably built around 1250.",
        "The pier may be the longest in Wales.",
    ],
)
def test_hedged_facts_are_judged(rules: RuleExtractor, text: str) -> None:
    claims = claims_of(rules, text)
    assert [c.factual for c in claims] == [True]
    assert claims[0].text == text.rstrip(".")


SUBJECTS = frozenset({"nsubj", "nsubjpass", "expl", "csubj", "csubjpass"})
"""spaCy's subject relations."""

SENTENCES = [
    "If you join before June, you pay half the fee.",
    "To apply you must be over 18 and hold a driving licence.",
    "After 31 March, the fee rises to $40 and members pay double.",
    "From 1 May, the gym opens at 6am and the pool closes at 9pm.",
    "Ravi Patel is a chemist. He won the Davy Medal in 2004 and his lab is in Leeds.",
    "The Orion Theatre, which seats 400 people, reopened in 2015.",
    "The gallery opens at 10am and closes at 4pm.",
    "The ferry takes 40 minutes [1, 2] and carries 300 passengers.",
    "The handbook states that staff get 25 days of leave.",
    "Maria Lopez was born in Lima. She moved to Madrid in 1990.",
    "The Silver pass includes a locker, which is a handy extra.",
    "Windows users need a newer release of Windows.",
    "The club, founded in 1901, plays at Mill Park and trains at Lee Road.",
    "Tamsford Bridge opened in 1931. The bridge was closed in 2019 for repairs.",
    "Kessock Garden has 3 glasshouses and its cafe opens at 9am.",
]


def test_every_rewritten_claim_reparses_with_a_subject_and_a_verb(rules: RuleExtractor) -> None:
    nlp = load_nlp()
    checked = 0
    for text in SENTENCES:
        for claim in claims_of(rules, text):
            verbatim = " ".join(text[s:e] for s, e in claim.spans)
            rewritten = len(claim.spans) > 1 or claim.text != verbatim[:1].upper() + verbatim[1:]
            if not claim.factual or not rewritten:
                continue
            checked += 1
            doc = nlp(claim.text)
            assert any(t.dep_ in SUBJECTS for t in doc), claim.text
            assert any(t.pos_ in {"VERB", "AUX"} for t in doc), claim.text
    assert checked >= 8
