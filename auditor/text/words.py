"""Words: tokens, Snowball stems, stop words, negation cues and content words.

What every judge and the label step compare claims and evidence in: a claim's
*content words* are its stemmed tokens less stop words and negation cues
("The ferries don't run on Sundays" -> {"ferri", "run", "sunday"}).
"""

from __future__ import annotations

import re
from functools import lru_cache

import Stemmer

from auditor.judges.wordlists import cleared_on_ablation, derived, words

_WORD = re.compile(r"[A-Za-z0-9]+(?:[.,][0-9]+)*%?")

MONTH_NAMES = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
"""The months, lower-cased, in calendar order."""
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
"""The days of the week, lower-cased, Monday first."""


@derived
def negations() -> frozenset[str]:
    """The negation cues (``negation_cues.txt``)."""
    return words("negation_cues")


@derived
def stop_words() -> frozenset[str]:
    """scikit-learn's English stop words, the negation cues left out."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS  # 1 s to import: on first use

    return frozenset(ENGLISH_STOP_WORDS) - negations()


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens (numbers keep their separators)."""
    found = _WORD.findall(text.replace("n't", " not").replace("n\u2019t", " not"))
    return [t.replace(",", "").lower() if t[0].isdigit() else t.lower() for t in found]


_SNOWBALL = Stemmer.Stemmer("english")


@lru_cache(maxsize=262144)
def stem(word: str) -> str:
    """The Snowball (Porter2) English stem of a lower-case word: plural and tense
    variants meet ("ferries"/"ferry", "minutes"/"minute", "taking"/"takes")."""
    return str(_SNOWBALL.stemWord(word))


@cleared_on_ablation
@lru_cache(maxsize=65536)
def content_words(text: str) -> frozenset[str]:
    """Stemmed content words of ``text`` (stop words dropped, negations kept out)."""
    stops, negated = stop_words(), negations()
    return frozenset(stem(t) for t in tokens(text) if t not in stops and t not in negated)


def negation_count(text: str) -> int:
    """How many negation cues the text holds."""
    negated = negations()
    return sum(1 for t in tokens(text) if t in negated)
