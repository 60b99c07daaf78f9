"""Coordination split only where each part stands alone, and reference lines that are no
claims (issue 37, item 1; docs/extraction.md). Every sentence here is written for these
tests."""

from __future__ import annotations

import pytest

from auditor.extract.rules import RuleExtractor, load_nlp
from tests.extracted import claims_of, factual_texts

# ------------------------------------------------------------------ splits that must happen


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            # an object and an adverbial clause, twice after one verb
            "The ferry carried 310 passengers on the outward trip and 285 passengers on "
            "the return.",
            [
                "The ferry carried 285 passengers on the return",
                "The ferry carried 310 passengers on the outward trip",
            ],
        ),
        (
            # two prepositional phrases, twice
            "The library opens at 8am on weekdays and at 11am on Saturdays.",
            [
                "The library opens at 11am on Saturdays",
                "The library opens at 8am on weekdays",
            ],
        ),
        (
            # verb shared, object and place coordinated (gapping)
            "The orchestra played Mahler in Vienna and Brahms in Berlin.",
            ["The orchestra played Brahms in Berlin", "The orchestra played Mahler in Vienna"],
        ),
        (
            # the shared preposition stays with the verb
            "The bill was passed by the House in May and the Senate in June.",
            [
                "The bill was passed by the House in May",
                "The bill was passed by the Senate in June",
            ],
        ),
        (
            # a list of three
            "The pool charges £4 for adults, £2 for children and £1 for pensioners.",
            [
                "The pool charges £1 for pensioners",
                "The pool charges £2 for children",
                "The pool charges £4 for adults",
            ],
        ),
    ],
)
def test_parts_that_stand_alone_are_split(
    rules: RuleExtractor, text: str, expected: list[str]
) -> None:
    assert factual_texts(rules, text) == sorted(expected)


def test_the_submarine_sentence_of_the_issue_is_split(rules: RuleExtractor) -> None:
    claims = factual_texts(
        rules,
        "The Nautilus was launched in 1954. It displaced 3,180 tons when surfaced and "
        "3,500 tons when submerged.",
    )
    # each part is its own claim, and the pronoun is resolved in both
    assert "The Nautilus displaced 3,180 tons when surfaced" in claims
    assert "The Nautilus displaced 3,500 tons when submerged" in claims


# ------------------------------------------------------- conditions and modality on every part


def test_a_condition_holds_for_every_part(rules: RuleExtractor) -> None:
    assert factual_texts(
        rules, "If you renew online, you pay £12 for a year and £20 for two years."
    ) == [
        "If you renew online, you pay £12 for a year",
        "If you renew online, you pay £20 for two years",
    ]


def test_a_modal_and_an_opening_time_scope_hold_for_every_part(rules: RuleExtractor) -> None:
    assert factual_texts(
        rules, "Visitors must show a ticket at the gate and a photo ID at the desk."
    ) == [
        "Visitors must show a photo ID at the desk",
        "Visitors must show a ticket at the gate",
    ]
    assert factual_texts(
        rules,
        "Since 2015, the charity has planted 4,000 trees in Wales and 2,500 trees in Cornwall.",
    ) == [
        "Since 2015, the charity has planted 2,500 trees in Cornwall",
        "Since 2015, the charity has planted 4,000 trees in Wales",
    ]


def test_a_condition_after_the_parts_keeps_the_sentence_whole(rules: RuleExtractor) -> None:
    # which part "if you book early" scopes is not known: no part may lose it
    claims = factual_texts(rules, "You pay £5 on weekdays and £7 at weekends if you book early.")
    assert all("if you book early" in c for c in claims), claims


def test_every_split_part_reparses_and_points_at_its_words(rules: RuleExtractor) -> None:
    text = "Marta trained as a nurse in Glasgow and as a midwife in Dundee."
    claims = [c for c in claims_of(rules, text) if c.factual]
    assert sorted(c.text for c in claims) == [
        "Marta trained as a midwife in Dundee",
        "Marta trained as a nurse in Glasgow",
    ]
    for claim, doc in zip(claims, load_nlp().pipe(c.text for c in claims), strict=True):
        assert any(t.dep_ in {"nsubj", "nsubjpass"} for t in doc), claim.text
        assert any(t.pos_ in {"VERB", "AUX"} for t in doc), claim.text
        # the claim's spans are the answer's words it is made of, in order
        assert " ".join(text[s:e] for s, e in claim.spans) == claim.text


# -------------------------------------------------------- coordinations that are not split


@pytest.mark.parametrize(
    "text",
    [
        # a range
        "The fare is between £3 at off-peak times and £6 at peak times.",
        # joint action
        "Rossi and Quint co-wrote the screenplay in 1994.",
        # one name: the verb agrees with a singular subject
        "Barrow and Finch sells antique maps.",
        # symmetric verbs: what is said of the pair is said of neither alone
        "The exhibition compares paintings from Spain and sculptures from Italy.",
        "The glaze mixes ash from the kiln and clay from the river.",
        "Rosa and Ivo married in 2003.",
        # respectively
        "The twins scored 12 points in the first half and 9 points in the second half "
        "respectively.",
        # one thing of two parts
        "The sauce is made with butter and flour.",
        # both ... and ...
        "The museum has both a café on the ground floor and a shop by the entrance.",
        # a year and a name are no list
        "He visited Norway in 1987 and Finland.",
        # parts of different shapes: "12" stands for "12 trains an hour", not "an hour"
        "The depot handles 40 buses an hour at peak times and 12 at night.",
    ],
)
def test_joint_or_unparallel_coordination_stays_one_claim(rules: RuleExtractor, text: str) -> None:
    assert factual_texts(rules, text) == [text.rstrip(".")]


# ------------------------------------------------------------------ reference lines


_WITH_REFERENCES = (
    "The Orwell Bridge opened in 1982 [1]. It carries the A14 over the river [2].\n\n"
    "References:\n"
    "[1] Pike, R. (2009). Bridges of Suffolk. Ipswich: Estuary Press.\n"
    '[2] "A14 improvements", Highways Review, 14(2), 33-41.\n'
    "Source: https://www.bridges.example/orwell"
)


def test_reference_lines_are_no_claims_and_keep_their_markers(rules: RuleExtractor) -> None:
    claims = claims_of(rules, _WITH_REFERENCES)
    factual = {c.text: c.cited_sources for c in claims if c.factual}
    assert factual == {
        "The Orwell Bridge opened in 1982": ("1",),
        "The Orwell Bridge carries the A14 over the river": ("2",),
    }
    other = {c.text: (c.kind, c.cited_sources) for c in claims if not c.factual}
    assert other == {
        "References:": ("meta", ()),
        "Pike, R. (2009). Bridges of Suffolk. Ipswich: Estuary Press.": ("meta", ("1",)),
        '"A14 improvements", Highways Review, 14(2), 33-41.': ("meta", ("2",)),
        "Source: https://www.bridges.example/orwell": ("meta", ()),
    }


def test_a_heading_and_unmarked_references_under_it_are_no_claims(rules: RuleExtractor) -> None:
    text = (
        "The mill was built in 1790.\n\n**Further reading**\n"
        "- Dale, K. and Moss, P. (1998). Mills of the North. Northern Press.\n"
        "- https://doi.org/10.1234/mills.2001.77"
    )
    claims = claims_of(rules, text)
    assert [c.text for c in claims if c.factual] == ["The mill was built in 1790"]
    assert len([c for c in claims if not c.factual]) == 3


def test_facts_with_a_year_or_a_link_are_still_claims(rules: RuleExtractor) -> None:
    text = (
        "Key facts:\n- The Orwell Bridge (1982) is 1,287 metres long.\n"
        "- Halden, Norway (1665) has a star fort.\n"
        "[3] The bridge was designed by Ove Arup and Partners."
    )
    factual = {c.text: c.cited_sources for c in claims_of(rules, text) if c.factual}
    assert "The Orwell Bridge (1982) is 1,287 metres long" in factual
    assert any(t.startswith("Halden, Norway (1665) has a star fort") for t in factual), factual
    # a marker that opens a line labels that line, not the one before it; "Ove Arup and
    # Partners" is one name
    assert factual["The Orwell Bridge was designed by Ove Arup and Partners"] == ("3",)
