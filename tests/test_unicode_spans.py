"""Issue 18: NFC before extraction and matching, offsets in code points of the text as
given, error spans never cutting a grapheme (combining marks, emoji, right-to-left)."""

from __future__ import annotations

import unicodedata

import pytest

from auditor.spans.localize import localize_error
from auditor.spans.unicode import grapheme_boundaries, nfc_map, snap_to_graphemes

NFD_CAFE = "cafe\u0301"  # "café" with a combining acute accent
THUMBS = "\U0001f44d\U0001f3fd"  # thumbs up + a skin-tone modifier: one grapheme
FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467"  # a ZWJ sequence: one grapheme
HEBREW = "\u05d4\u05de\u05d7\u05d9\u05e8"  # "the price", right-to-left
HINDI = "\u0939\u093f\u0928\u094d\u0926\u0940"  # "Hindi": vowel signs and a virama

SAMPLES = [
    f"Le {NFD_CAFE} du port vend un espresso a 4 euros.",
    f"{THUMBS} The team of {FAMILY} won 3 games in {HINDI}.",
    f"{HEBREW} \u05d4\u05d5\u05d0 4 \u05e9\u05e7\u05dc\u05d9\u05dd. Also A\u030a and \u1100\u1161.",
    "Plain ASCII stays as it is.",
]


@pytest.mark.parametrize("text", SAMPLES)
def test_nfc_map_round_trips_and_never_splits_a_composed_run(text: str) -> None:
    m = nfc_map(text)
    assert m.text == unicodedata.normalize("NFC", text)
    assert m.to_original(0, len(m.text)) == (0, len(text))
    for start in range(len(m.text)):
        for end in range(start + 1, len(m.text) + 1):
            s, e = m.to_original(start, end)
            # the original slice normalises to something that contains the NFC slice
            assert m.text[start:end] in unicodedata.normalize("NFC", text[s:e])


def test_combining_accent_is_matched_and_the_wrong_price_marked() -> None:
    answer = SAMPLES[0]
    evidence = ["Le caf\u00e9 du port vend un espresso a 2 euros."]  # precomposed é
    spans = localize_error(answer, [(0, len(answer))], evidence)
    assert [answer[s:e] for s, e in spans] == ["4"]


def test_error_spans_keep_whole_graphemes() -> None:
    answer = SAMPLES[1]
    evidence = [f"{THUMBS} The team of {FAMILY} won 5 games."]
    spans = localize_error(answer, [(0, len(answer))], evidence)
    marked = [answer[s:e] for s, e in spans]
    assert "3" in marked
    bounds = set(grapheme_boundaries(answer))
    assert all(s in bounds and e in bounds for s, e in spans)
    # a span ending inside a cluster is widened to the whole cluster
    start = answer.index(FAMILY)
    assert snap_to_graphemes(answer, [(start, start + 1)]) == ((start, start + len(FAMILY)),)
    start = answer.index(THUMBS)
    assert snap_to_graphemes(answer, [(start, start + 1)]) == ((start, start + 2),)


def test_right_to_left_text_gets_its_number_marked() -> None:
    answer = SAMPLES[2]
    evidence = [f"{HEBREW} \u05d4\u05d5\u05d0 2 \u05e9\u05e7\u05dc\u05d9\u05dd."]
    claim = (0, answer.index("."))
    spans = localize_error(answer, [claim], evidence)
    assert [answer[s:e] for s, e in spans] == ["4"]


def test_extraction_runs_on_nfc_with_offsets_into_the_text_as_given() -> None:
    from auditor.extract.rules import RuleExtractor
    from auditor.types import Answer

    text = f"The {NFD_CAFE} opened in 1990. It sells {THUMBS} stickers for 4 euros."
    claims = RuleExtractor().extract(Answer(id="u", question="", answer=text))
    first = claims[0]
    (s, e), *_ = first.spans
    assert text[s:e].startswith(f"The {NFD_CAFE}")  # the accent is inside the span
    assert "caf\u00e9" in first.text and unicodedata.is_normalized("NFC", first.text)
    bounds = set(grapheme_boundaries(text))
    assert all(a in bounds and b in bounds for c in claims for a, b in c.spans)
