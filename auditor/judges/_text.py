"""Text normalisation shared by the local judges: tokens, content words, numbers."""

from __future__ import annotations

import re
from functools import lru_cache

from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

_WORD = re.compile(r"[A-Za-z0-9]+(?:[.,][0-9]+)*%?")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
_NUMBER = re.compile(
    r"(?<![A-Za-z])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?\s*(%|percent|per cent|million|billion|"
    r"thousand)?",
    re.IGNORECASE,
)
_SCALE = {"thousand": 1e3, "million": 1e6, "billion": 1e9}
_SMALL_NUMBERS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight",
                  "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen",
                  "sixteen", "seventeen", "eighteen", "nineteen", "twenty")
# "one" is left out: it is rarely a quantity ("one of the ...")
_NUMBER_WORDS = {w: float(i) for i, w in enumerate(_SMALL_NUMBERS) if w != "one"} | {
    "thirty": 30.0, "forty": 40.0, "fifty": 50.0, "sixty": 60.0, "seventy": 70.0,
    "eighty": 80.0, "ninety": 90.0, "hundred": 100.0, "dozen": 12.0}
_NUMBER_WORD = re.compile(r"\b(" + "|".join(_NUMBER_WORDS) + r")\b", re.IGNORECASE)
NEGATIONS = frozenset({"not", "no", "never", "none", "nobody", "nothing", "neither", "nor",
                       "without", "cannot", "n't", "didn", "doesn", "isn", "wasn", "aren",
                       "weren", "won", "hasn", "haven", "hadn"})
STOP_WORDS = frozenset(ENGLISH_STOP_WORDS) - NEGATIONS


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens (numbers keep their separators)."""
    found = _WORD.findall(text.replace("n't", " not"))
    return [t.replace(",", "").lower() if t[0].isdigit() else t.lower() for t in found]


def stem(word: str) -> str:
    """A light suffix stripper, enough to match plural and tense variants."""
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


@lru_cache(maxsize=65536)
def content_words(text: str) -> frozenset[str]:
    """Stemmed content words of ``text`` (stop words dropped, negations kept out)."""
    return frozenset(stem(t) for t in tokens(text) if t not in STOP_WORDS and t not in NEGATIONS)


def sentences(text: str) -> list[str]:
    """A cheap regex sentence split (evidence passages are short)."""
    parts = [p.strip() for p in _SENTENCE.split(text) if p.strip()]
    return parts or ([text.strip()] if text.strip() else [])


def numbers(text: str) -> frozenset[float]:
    """Normalised numeric values: "3,200" == "3200"; "2.5 million" == 2500000; "40%" == 40;
    number words up to twenty and the tens ("four" == 4)."""
    found = set()
    for match in _NUMBER.finditer(text):
        integer, fraction, unit = match.group(1), match.group(2), match.group(3)
        value = float(integer.replace(",", "") + ("." + fraction if fraction else ""))
        if unit and unit.lower() in _SCALE:
            value *= _SCALE[unit.lower()]
        found.add(round(value, 6))
    found.update(_NUMBER_WORDS[m.group(1).lower()] for m in _NUMBER_WORD.finditer(text))
    return frozenset(found)


def negation_count(text: str) -> int:
    """How many negation cues the text holds."""
    return sum(1 for t in tokens(text) if t in NEGATIONS)
