"""Error localisation: the minimal answer spans of an unsupported claim."""

from __future__ import annotations

import pytest

from auditor.spans import SpanValidationError, localize_error


def _texts(answer: str, spans: tuple[tuple[int, int], ...]) -> list[str]:
    return [answer[s:e] for s, e in spans]


def test_marks_the_wrong_number_only() -> None:
    answer = "The bridge opened in 1932 and cost 3,200 dollars."
    out = localize_error(
        answer, [(0, len(answer))], ["Opened in 1931, the bridge cost 3200 dollars."]
    )
    assert _texts(answer, out) == ["1932"]


def test_number_normalisation_accepts_separators_decimals_and_words() -> None:
    answer = "It had 3,200 seats, 2.50 metres wide, and three gates."
    out = localize_error(
        answer, [(0, len(answer))], ["It had 3200 seats", "2.5 metres wide", "with 3 gates"]
    )
    assert out == ((0, len(answer)),)  # nothing unaligned: fall back to the claim


def test_marks_an_unaligned_entity_and_joins_phrases() -> None:
    answer = "Petra van Stoveren won gold in the Summer Olympics in Beijing."
    evidence = ["Petra van Stoveren won gold at the Summer Olympics in Los Angeles."]
    out = localize_error(answer, [(0, len(answer))], evidence)
    assert _texts(answer, out) == ["Beijing"]
    out2 = localize_error("She moved to New York City.", [(0, 27)], ["She moved to Boston."])
    assert _texts("She moved to New York City.", out2) == ["New York City"]


def test_stays_inside_the_claim_spans() -> None:
    answer = "Paris is in France. Lyon has 900 bridges. Rome is in Italy."
    claim = [(20, 41)]
    out = localize_error(answer, claim, ["Lyon has 30 bridges. Paris is in France."])
    assert _texts(answer, out) == ["900"]
    assert all(20 <= s < e <= 41 for s, e in out)
    # several claim spans: every result lies inside one of them
    out = localize_error(answer, [(0, 19), (42, 59)], ["Paris is in Spain."])
    assert all((s >= 0 and e <= 19) or (s >= 42 and e <= 59) for s, e in out)
    # "Rome" and "Italy" are joined across the two stopwords between them
    assert _texts(answer, out) == ["France", "Rome is in Italy"]


def test_falls_back_to_the_claim_without_evidence() -> None:
    answer = "Water boils at 90 degrees."
    assert localize_error(answer, [(0, 25)], []) == ((0, 25),)
    assert localize_error(answer, [(0, 25)], ["   "]) == ((0, 25),)
    assert localize_error(answer, [], ["anything"]) == ()


def test_inflection_is_not_an_error() -> None:
    answer = "The companies merged in 2001."
    out = localize_error(answer, [(0, len(answer))], ["The company merges were in 2001."])
    assert out == ((0, len(answer)),)


def test_validation_names_the_bad_parameter() -> None:
    with pytest.raises(SpanValidationError, match="claim_spans"):
        localize_error("short", [(0, 40)], ["e"])
    with pytest.raises(SpanValidationError, match="evidence_texts"):
        localize_error("short", [(0, 5)], "not a list")
    with pytest.raises(SpanValidationError, match="answer_text"):
        localize_error(None, [(0, 5)], ["e"])  # type: ignore[arg-type]


def test_a_number_is_aligned_only_in_its_slot() -> None:
    # "eight branches" is not backed by "up 8 percent"; "50 tanks" not by "50 metres"
    answer = "Riverside Credit Union operates eight branches."
    spans = localize_error(
        answer,
        [(0, len(answer))],
        ["Riverside Credit Union operates branches; membership was up 8 percent."],
    )
    assert [answer[s:e] for s, e in spans] == ["eight"]
    answer = "The Bayside Aquarium has 50 tanks."
    spans = localize_error(
        answer, [(0, len(answer))], ["The Bayside Aquarium has tanks and a tunnel 50 metres long."]
    )
    assert [answer[s:e] for s, e in spans] == ["50"]
    # the same value in the same slot is aligned, however it is written
    answer = "Riverside Credit Union operates eight branches and a 2-hour course."
    spans = localize_error(
        answer,
        [(0, len(answer))],
        ["Riverside Credit Union operates 8 branches and a two-hour course."],
    )
    assert spans == ((0, len(answer)),)  # nothing unaligned: the claim span
