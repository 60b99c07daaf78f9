"""Restrictive modifiers stay with their noun, and pronouns are resolved only to a noun
phrase from outside their sentence (issue 37, item 1; docs/extraction.md, extractor v25).
Every sentence here is written for these tests; each case fails on extractor v24."""

from __future__ import annotations

import pytest

from auditor.extract.rules import RuleExtractor, load_nlp
from tests.extracted import factual_texts

# ------------------------------------------------------ a restriction stays with its noun


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            # a participle on the subject that the parser reads as the main verb, with the
            # real verb coordinated to it (v24: "Drivers stopped by police", "Drivers lose
            # points", which says that every driver loses points)
            "Drivers stopped by police lose points.",
            ["Drivers stopped by police lose points"],
        ),
        (
            # a relative clause on the subject (v24: "Pupils lose their place")
            "Pupils who miss the bus lose their place.",
            ["Pupils who miss the bus lose their place"],
        ),
        (
            # a relative clause on the object (v24: "The council fines drivers")
            "The council fines drivers who park on the verge.",
            ["The council fines drivers who park on the verge"],
        ),
        (
            # verbs coordinated inside the restriction are not split off either (v24: "The
            # council fines drivers block the road")
            "The council fines drivers who park on the verge and block the road.",
            ["The council fines drivers who park on the verge and block the road"],
        ),
        (
            # a list inside the restriction is not distributed (v24: "Members live in
            # Leeds", "Members live in York", "The fund pays members")
            "The fund pays members who live in Leeds or York.",
            ["The fund pays members who live in Leeds or York"],
        ),
        (
            # a participle set off by commas may stay or go; the object's relative clause
            # stays (v24: "Trains run to Leeds")
            "The viaduct, built in 1874, carries trains that run to Leeds.",
            ["The viaduct, built in 1874, carries trains that run to Leeds"],
        ),
    ],
)
def test_a_restrictive_modifier_stays_with_its_noun(
    rules: RuleExtractor, text: str, expected: list[str]
) -> None:
    assert factual_texts(rules, text) == sorted(expected)


def test_a_borrowed_subject_keeps_its_restriction(rules: RuleExtractor) -> None:
    # v24: "Staff hired after 2015", "Staff receive lower pay", "Staff pay higher fees"
    text = "Staff hired after 2015 receive lower pay and pay higher fees."
    assert factual_texts(rules, text) == [
        "Staff hired after 2015 pay higher fees",
        "Staff hired after 2015 receive lower pay",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            # v24: "Maria Lopez praised staff", "Staff volunteer"
            "Maria Lopez, who chairs the board, praised staff who volunteer.",
            ["Maria Lopez chairs the board", "Maria Lopez praised staff who volunteer"],
        ),
        (
            # v24: one claim, the non-restrictive clause left inside it
            "Ashby Rovers, which was founded in 1890, fines players who miss training.",
            ["Ashby Rovers fines players who miss training", "Ashby Rovers was founded in 1890"],
        ),
    ],
)
def test_a_clause_set_off_by_commas_on_a_name_is_split(
    rules: RuleExtractor, text: str, expected: list[str]
) -> None:
    assert factual_texts(rules, text) == sorted(expected)


@pytest.mark.parametrize(
    "text",
    [
        # v24: "Members" (and "Members volunteer repaint its railings")
        "Tamsford Bridge opened in 1931. Members who volunteer repaint its railings.",
        # v24: "Carl Jenner" (the parser reads "Jenner" as the sentence's root)
        "Carl Jenner, who founded the firm, hired staff who speak Welsh.",
    ],
)
def test_no_claim_is_a_fragment_without_a_finite_verb(rules: RuleExtractor, text: str) -> None:
    claims = factual_texts(rules, text)
    assert claims
    for doc in load_nlp().pipe(claims):
        # a finite form, or a base form with a subject (the small model tags "lose" so)
        assert any(
            t.tag_ in {"VBZ", "VBD", "VBP", "MD"}
            or (t.tag_ == "VB" and any(c.dep_ == "nsubj" for c in t.children))
            for t in doc
        ), doc.text


# ------------------------------------------------------------------------------- pronouns


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            # v24: "Tenants evicted for arrears lose the flats' deposit"
            "The flats were built in 1990. Tenants evicted for arrears lose their deposit.",
            "Tenants evicted for arrears lose their deposit",
        ),
        (
            # v24: "Actors pay the Harbour Players' own travel costs"
            "The Harbour Players staged six plays in 2023. Actors who join pay their own "
            "travel costs.",
            "Actors who join pay their own travel costs",
        ),
    ],
)
def test_a_pronoun_that_refers_within_its_sentence_is_kept(
    rules: RuleExtractor, text: str, expected: str
) -> None:
    assert expected in factual_texts(rules, text)


def test_a_clause_is_never_an_antecedent(rules: RuleExtractor) -> None:
    # the parser reads "If you're laid off, all the employer money vests straight away" as a
    # noun phrase headed by "vests"; v24 wrote "If you're laid off, all the employer money
    # vests straight away's pensions are paid monthly". Nor does the subject before it,
    # "Retired members", take its place.
    text = (
        "Retired members keep their benefits. If you're laid off, all the employer money "
        "vests straight away however long you've been a member. Their pensions are paid "
        "monthly."
    )
    claims = factual_texts(rules, text)
    assert "Their pensions are paid monthly" in claims
    assert not any("away's" in c or "members'" in c.lower() for c in claims)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            # v24 dropped the restriction: "Nurses also pay higher fees"
            "Nurses hired after 2015 receive lower pay. They also pay higher fees.",
            "Nurses hired after 2015 also pay higher fees",
        ),
        (
            # v24: "... rebuilt by engineers", "Engineers served in the army"; a noun
            # phrase in what opens the sentence ("After the war") takes no pronoun
            "Tamsford Bridge opened in 1931. After the war, its deck was rebuilt by engineers "
            "who served in the army.",
            "After the war, Tamsford Bridge's deck was rebuilt by engineers who served in the army",
        ),
        (
            # v24 left "It" (its rewrite was split from the relative clause)
            "The Avon Trust owns 40 farms. It lets them to tenants who farm organically.",
            "The Avon Trust lets them to tenants who farm organically",
        ),
    ],
)
def test_a_pronoun_with_one_antecedent_before_its_sentence_is_resolved(
    rules: RuleExtractor, text: str, expected: str
) -> None:
    assert expected in factual_texts(rules, text)


def test_no_possessive_is_made_of_a_restricted_noun(rules: RuleExtractor) -> None:
    # "Cyclists caught without lights' bikes" is no English; v24 wrote "Cyclists' bikes",
    # which drops the restriction
    claims = factual_texts(
        rules, "Cyclists caught without lights pay a fine. Their bikes can be seized."
    )
    assert claims == ["Cyclists caught without lights pay a fine", "Their bikes can be seized"]
