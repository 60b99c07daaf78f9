"""Session-13 rules: polarity read per clause, compass antonyms, support withdrawn, a
weekday claim anchored without its weekday, "a single X", names qualifying one noun,
sentence openers, and the Snowball stems every local judge compares."""

from __future__ import annotations

import pytest

from auditor.extract import build_extractor
from auditor.text import content_words, stem
from auditor.types import ABSTAIN, Answer
from tests.test_judges_slots import judge

UNIVERSITY = (
    "Halvorsen University was established in 1911 as a teacher training college. "
    "Today it enrols about 18,500 students across six faculties. "
    "The main campus lies on the northern bank of the river Leden. "
    "Tuition is free for students from the region, while international students pay "
    "9,000 euros a year."
)
OBSERVATORY = (
    "The Corvid Observatory sits at an altitude of 2,300 metres in the Sierra Alta. "
    "The observatory is funded jointly by three universities and employs 64 staff. "
    "Public tours run on Saturdays from April to October."
)
RELEASE = (
    "Pinewood 4.0 was released on 18 February 2025. It drops support for Python 3.8 and "
    "requires Python 3.10 or newer. The project is maintained by a team of eleven "
    "volunteers and is licensed under the Apache 2.0 licence."
)


def test_plural_and_singular_share_a_stem() -> None:
    assert stem("ferries") == stem("ferry")
    assert stem("universities") == stem("university")
    assert stem("minutes") == stem("minute")
    assert content_words("Ferries depart every two hours") <= content_words(
        "The ferry departs every two hours"
    )


@pytest.mark.parametrize(
    "claim,vote",
    [
        # "do not pay" and "free" agree in the clause about the region's students
        ("Students from the region do not pay tuition.", 0.0),
        ("Students from the region pay tuition.", 1.0),
    ],
)
def test_polarity_is_read_in_the_clause_about_the_claim(claim: str, vote: float) -> None:
    value, _, _ = judge("negation_polarity", claim, UNIVERSITY)
    assert value == vote


def test_south_against_northern_is_a_clear_conflict() -> None:
    value, scores, raw = judge(
        "negation_polarity", "The campus is on the south bank of the Leden.", UNIVERSITY
    )
    assert value == 1.0 and scores.get("conflict") == 1.0
    assert raw["antonyms"] == ["south"]
    value, _, _ = judge(
        "negation_polarity", "The campus is on the north bank of the Leden.", UNIVERSITY
    )
    assert value == 0.0


def test_a_weekday_claim_is_anchored_without_its_weekday() -> None:
    # "offered" is "run" in other words: all but one of the other words are there
    value, scores, raw = judge(
        "negation_polarity", "Public tours are offered on Sundays.", OBSERVATORY
    )
    assert value == 1.0 and scores.get("conflict") == 1.0
    assert raw["antonyms"] == [stem("sundays")]
    # the sentence is about tours, not lectures: nothing about the claim, no vote
    value, _, _ = judge("negation_polarity", "Public lectures are given on Sundays.", OBSERVATORY)
    assert value == ABSTAIN


def test_a_name_qualifying_the_same_noun_is_a_conflict() -> None:
    value, scores, raw = judge(
        "entity_consistency", "The project is released under the MIT licence.", RELEASE
    )
    assert value == 1.0 and scores["contradiction"] == 1.0 and raw["conflicts"] == ["apache"]
    # an acronym and a name before the same verb are no conflict (not one noun's qualifier)
    value, scores, _ = judge(
        "entity_consistency",
        "NASA maintains the project.",
        "Pinewood is maintained by a team of volunteers. Brightside Data maintains the site.",
    )
    assert scores.get("contradiction", 0.0) == 0.0


def test_a_sentence_opener_is_no_name() -> None:
    value, _, raw = judge("entity_consistency", "Roughly 18,500 students study there.", UNIVERSITY)
    assert value == ABSTAIN and raw["reason"] == "no names in claim"


def test_it_after_a_described_named_referent_is_that_referent() -> None:
    answer = (
        "The Corvid Observatory is located 2,300 metres above sea level. The telescope "
        "was completed in 2014. The observatory has a staff of 64. It is funded by a "
        "single university."
    )
    texts = [c.text for c in build_extractor("rules").extract(Answer("a", "", answer))]
    assert "The Corvid Observatory has a staff of 64" in texts
    assert "The Corvid Observatory is funded by a single university" in texts


LIBRARY = (
    "Fenwick Public Library holds 210,000 books and lends e-readers to members. "
    "Membership is free for residents of Fenwick."
)


def test_one_shared_word_does_not_make_a_name_swap() -> None:
    # "Kids" and "Membership" open their sentences and share only "free" (and a plural
    # opening a sentence is no name: the judge finds no name in the claim)
    value, scores, raw = judge("entity_consistency", "Kids under three get in free.", LIBRARY)
    assert raw.get("conflicts", []) == [] and scores.get("contradiction", 0.0) == 0.0
    value, scores, raw = judge(
        "entity_consistency",
        "Irene Joliot won the Nobel Prize in Physics.",
        "Marie Curie won the Nobel Prize in Physics in 1903.",
    )
    assert value == 1.0 and scores["contradiction"] == 1.0


def test_how_often_stated_once_in_the_passage_is_the_slot() -> None:
    ferry = (
        "The Kestrel Bay ferry links the port of Ardmore with Tollan Island. The crossing "
        "takes 45 minutes and boats leave every hour from 7am."
    )
    value, scores, raw = judge("numeric_consistency", "Ferries depart every two hours.", ferry)
    assert value == 1.0 and scores["conflict"] == 1.0
    assert raw["conflicts"] == ["120 interval vs 60 interval"]
    # an interval in a passage about something else is no rival
    value, scores, raw = judge(
        "numeric_consistency",
        "Ferries depart every two hours.",
        "Trams run every 10 minutes during the day.",
        "The Kestrel Bay ferry links the port of Ardmore with Tollan Island.",
    )
    assert scores.get("conflict", 0.0) == 0.0 and raw["missing"] == ["120 interval"]
