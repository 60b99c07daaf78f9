"""Session-14 rules: a name renamed within (same last word, other words of its own), who
owns a thing, a role given with a possessive ("the museum's director"), permission said
in other words, and "Its <noun>" leaving the referent to what "Its" stood for."""

from __future__ import annotations

import pytest

from auditor.extract import build_extractor
from auditor.judges.entity import role_facts
from auditor.types import Answer
from tests.test_judges_slots import judge

TEAM = (
    "The Kestrel Bay Rivercats are a professional basketball team that plays in the "
    "National Basketball League. Their home arena is the Harbourside Centre, which seats "
    "5,200 spectators. The team is coached by Lena Whitaker, who replaced Tom Ferris in "
    "2024. The club's owner is the Mbeki family."
)
MUSEUM = (
    "The Port Ellery Maritime Museum opened in 1962 in a former customs house. Its "
    "collection includes the lifeboat Grace Darling II. Hannah Okoro retired in 2024; the "
    "museum is now directed by Samuel Price."
)
GREENWAY = (
    "The Ashford Greenway is a 14-kilometre walking and cycling path along a disused "
    "railway line. Horses are not permitted on the greenway."
)


@pytest.mark.parametrize(
    "claim,page,renamed",
    [
        (
            "The Rivercats play in the Premier Basketball League.",
            TEAM,
            "basketball league national",
        ),
        ("The Rivercats are coached by Anna Whitaker.", TEAM, "lena whitaker"),
    ],
)
def test_a_name_renamed_within_is_a_clear_conflict(claim: str, page: str, renamed: str) -> None:
    value, scores, raw = judge("entity_consistency", claim, page)
    assert renamed in raw["conflicts"]
    assert value == 1.0 and scores["conflict"] == 1.0


@pytest.mark.parametrize(
    "claim,page",
    [
        # the evidence names it shorter or longer: no other name
        ("The Kestrel Bay Rivercats won the league.", "The Rivercats won the league in 2019."),
        ("Its collection includes the lifeboat Grace Darling II.", MUSEUM),
        ("The museum's collection includes the lifeboat Grace Darling.", MUSEUM),
        # the same last word in a sentence about something else
        (
            "The Rivercats play in the Premier Basketball League.",
            "The Premier Hockey League was founded in 1990. The National Basketball League "
            "has twelve teams.",
        ),
    ],
)
def test_a_shortened_or_unrelated_name_is_no_renaming(claim: str, page: str) -> None:
    _, scores, raw = judge("entity_consistency", claim, page)
    assert raw["conflicts"] == [] and "conflict" not in scores


def test_a_holder_sharing_only_a_surname_is_another_holder() -> None:
    # every word of "Tom Whitaker" is in the page ("Tom Ferris", "Lena Whitaker")
    value, scores, raw = judge(
        "entity_consistency", "The Rivercats are coached by Tom Whitaker.", TEAM
    )
    assert value == 1.0
    assert raw["role_conflicts"] == ["coach: lena whitaker"] and scores["conflict"] == 1.0
    _, scores, raw = judge("entity_consistency", "The Rivercats are coached by Whitaker.", TEAM)
    assert raw["role_conflicts"] == [] and "conflict" not in scores


def test_who_owns_it_is_a_role() -> None:
    assert [(f.role, f.holder) for f in role_facts("The club's owner is the Mbeki family.")] == [
        ("by:oper", frozenset({"mbeki"}))
    ]
    _, scores, raw = judge("entity_consistency", "The team is owned by the Whitaker family.", TEAM)
    assert raw["role_conflicts"] == ["by:oper: mbeki"] and scores["conflict"] == 1.0
    _, scores, raw = judge("entity_consistency", "The team is owned by the Mbeki family.", TEAM)
    assert raw["role_conflicts"] == [] and "conflict" not in scores


def test_a_role_after_a_possessive() -> None:
    # "the museum's director": the holder stands before "is"
    facts = role_facts("Hannah Okoro is the museum's director.")
    assert [(f.role, f.holder) for f in facts] == [("director", frozenset({"hannah", "okoro"}))]
    _, scores, raw = judge("entity_consistency", "Hannah Okoro is the museum's director.", MUSEUM)
    assert raw["role_conflicts"] == ["director: price samuel"] and scores["conflict"] == 1.0
    _, scores, raw = judge("entity_consistency", "Samuel Price is the museum's director.", MUSEUM)
    assert raw["role_conflicts"] == [] and "conflict" not in scores


def test_permission_said_in_other_words() -> None:
    # "welcome" is "permitted": the sentence is about the claim, and says the opposite
    value, scores, raw = judge(
        "negation_polarity", "Horse riders are welcome on the greenway.", GREENWAY
    )
    assert value == 1.0 and scores["contradiction"] == 1.0 and raw["negation_flip"]
    value, _, _ = judge("negation_polarity", "Horses are not allowed on the greenway.", GREENWAY)
    assert value == 0.0
    # one claim word ("riders") the sentence does not hold: a flip, not a clear conflict
    _, scores, _ = judge("negation_polarity", "Horse riders are welcome on the greenway.", GREENWAY)
    assert "conflict" not in scores


def test_its_noun_leaves_the_referent_to_what_its_stood_for() -> None:
    text = (
        "The Lumen Observatory stands on Mount Corran. Its main telescope has a 2.4-metre "
        "mirror. It was built in 1988 with money from three universities."
    )
    claims = [
        c.text for c in build_extractor("rules").extract(Answer(id="a", question="", answer=text))
    ]
    assert "The Lumen Observatory was built in 1988 with money from three universities" in claims
    assert "The Lumen Observatory's main telescope has a 2.4-metre mirror" in claims
    # a possessive of another number is not what the next "It" stands for
    text = (
        "The Rivercats play basketball. Their home arena is the Harbourside Centre. "
        "It seats 5,200 fans."
    )
    claims = [
        c.text for c in build_extractor("rules").extract(Answer(id="a", question="", answer=text))
    ]
    assert "The Harbourside Centre seats 5,200 fans" in claims
