"""Words opposed to each other ("open"/"closed", "north"/"south"), in all their forms.

The pairs are the ``[opposites]`` section of ``antonyms.txt``
(``auditor/judges/wordlists/``); a word's forms are the stems of its inflections, so
"closes" and "closing" are opposed to "open" as "closed" is.
"""

from __future__ import annotations

from auditor.judges import wordlists as wl
from auditor.judges.wordlists import derived
from auditor.text.words import stem


def antonyms() -> tuple[tuple[str, str], ...]:
    """Pairs of words opposed to each other (``antonyms.txt``)."""
    return wl.pairs("antonyms", "opposites")


def word_forms(word: str) -> set[str]:
    """Stems of a word's inflected forms ("close", "closed", "closes", "closing")."""
    base = word[:-1] if word.endswith("e") else word
    return {stem(w) for w in (word, word + "s", word + "es", base + "ed", base + "ing")}


@derived
def antonym_pairs() -> dict[str, set[str]]:
    """Each form of a word -> the stems of the words opposed to it."""
    pairs: dict[str, set[str]] = {}
    for a, b in antonyms():
        for word, other in ((a, b), (b, a)):
            for form in word_forms(word):
                pairs.setdefault(form, set()).add(stem(other))
    return pairs


@derived
def antonym_forms() -> dict[str, set[str]]:
    """Each word of an antonym pair (stemmed) -> the stems of its forms."""
    return {stem(w): word_forms(w) for pair in antonyms() for w in pair}
