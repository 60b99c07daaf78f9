"""Names: capitalised runs read as names, their tokens, and the words of a text.

A cheap, model-free name finder: runs of capitalised words and acronyms ("Kestrel
Bridge", "NHS", "Port Ellis Rowing Club"), without a sentence-initial stop word, a
month or weekday, or a title ("Professor"); each remaining word is a lower-cased name
token, so "Barack Obama" and "Obama" share "obama".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from auditor.judges import wordlists as wl
from auditor.judges.wordlists import derived
from auditor.text.sentences import sentences
from auditor.text.words import MONTH_NAMES, WEEKDAYS, stem, stop_words

NAME_PATTERN = (
    r"(?:[A-Z][A-Za-z'\-]*[A-Za-z]|[A-Z]{2,})(?:\s+(?:of|de|van|von|la|du|del)?\s*"
    r"(?:[A-Z][A-Za-z'\-]*[A-Za-z]|[A-Z]{2,}))*"
)
"""A name: a run of capitalised words or acronyms, joined by "of", "de", "van", ..."""
CAPITALISED_RUN = re.compile(
    r"\b(?:[A-Z][A-Za-z'\-]*[A-Za-z]|[A-Z]{2,})(?:\s+(?:of|de|the|van|von|"
    r"la|du|del|and|&)?\s*(?:[A-Z][A-Za-z'\-]*[A-Za-z]|[A-Z]{2,}))*"
)
"""A run of capitalised words or acronyms, joined by "of", "the", "and", ... ("Bank of
England", "Marks and Spencer"): what :func:`entities` reads names from."""
_MONTHS = frozenset({*MONTH_NAMES, *WEEKDAYS, *(day + "s" for day in WEEKDAYS)})
_POSSESSIVE = re.compile(r"['\u2019]s$")
WORD_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9'\-]*")
"""A word, with its position in the text (letters and digits, apostrophes and hyphens
inside)."""


@derived
def non_name_words() -> frozenset[str]:
    """Lower-cased words that are no name token: stop words, months and weekdays, "i", and
    ``entity_stopwords.txt`` (titles before a name, "Professor"; words that open a sentence
    capitalised, "Roughly")."""
    return stop_words() | _MONTHS | wl.words("entity_stopwords") | {"i"}


_LOWER_SUFFIX = re.compile(r"-[a-z][a-z\-]*$")
"""The lower-case part after a name's hyphen: "-based" of "Leeds-based"."""


def _name_matches(sentence: str) -> list[re.Match[str]]:
    """The capitalised runs of a sentence that may be names: not a lone plural noun that
    opens the sentence ("Kids younger than five ...", "Visitors can ...")."""
    return [m for m in CAPITALISED_RUN.finditer(sentence) if not _plural_opener(sentence, m)]


def _plural_opener(sentence: str, match: re.Match[str]) -> bool:
    word = match.group(0)
    return (
        not sentence[: match.start()].strip(" \"'\u201c(")
        and " " not in word
        and word[1:].islower()
        and len(word) > 3
        and word.endswith("s")
        and not word.endswith(("ss", "us", "is", "as", "os", "es", "'s", "\u2019s"))
    )


def entities(text: str) -> frozenset[str]:
    """Lower-cased name tokens of the capitalised runs in ``text``.

    A run's first word is dropped when it is a stop word (sentence-initial "The",
    "In", ...); each remaining word of the run is one token, so "Barack Obama" and
    "Obama" share "obama"; a lower-case part after a hyphen is no part of the name
    ("Leeds-based" -> "leeds").
    """
    found: set[str] = set()
    skip = non_name_words()
    for sentence in sentences(text):
        for match in _name_matches(sentence):
            words = [
                _POSSESSIVE.sub("", _LOWER_SUFFIX.sub("", w).lower()).strip("'-")
                for w in match.group(0).split()
            ]
            found.update(w for w in words if w and w not in skip and len(w) > 1)
    return frozenset(found)


def without_possessive(word: str) -> str:
    """``word`` without a final possessive "'s" ("Mary's" -> "Mary")."""
    return _POSSESSIVE.sub("", word)


@dataclass(frozen=True)
class NameRun:
    """A capitalised run of one sentence: its name tokens, its kind (``name`` or
    ``acronym``) and the stemmed content words next to it."""

    tokens: frozenset[str]
    kind: str
    left: str | None
    right: str | None
    head: str = ""
    """The run's last name token ("breweries" of "Vale Breweries")."""
    modifier: bool = False
    """The name qualifies the noun after it ("the MIT licence", "the Apache 2.0 licence")."""


_DETERMINER_BEFORE = re.compile(r"\b(?:the|a|an)\s+$", re.I)
_NOUN_AFTER = re.compile(r"(?:\s+v?\d[\d.]*)?\s+[a-z]")


def name_runs(sentence: str) -> list[NameRun]:
    """The capitalised runs of one sentence with their kind and neighbouring content words."""
    matches = _name_matches(sentence)
    spans = [(m.start(), m.end()) for m in matches]
    skip = non_name_words()
    words = [
        (w.start(), w.end(), stem(w.group(0).lower()))
        for w in WORD_PATTERN.finditer(sentence)
        if not any(s <= w.start() < e for s, e in spans) and w.group(0).lower() not in skip
    ]
    runs = []
    for m in matches:
        parts = [_POSSESSIVE.sub("", w).strip("'-") for w in m.group(0).split()]
        names = frozenset(w.lower() for w in parts if w and w.lower() not in skip and len(w) > 1)
        if not names:
            continue
        kept = [w for w in parts if w.lower() in names]
        kind = "acronym" if all(w.isupper() for w in kept) else "name"
        left = next((t for s, e, t in reversed(words) if e <= m.start()), None)
        # "the Apache 2.0 licence": a version number does not part a name from its noun
        right = next((t for s, e, t in words if s >= m.end() and not t[0].isdigit()), None)
        modifier = bool(_DETERMINER_BEFORE.search(sentence, 0, m.start())) and bool(
            _NOUN_AFTER.match(sentence, m.end())
        )
        runs.append(NameRun(names, kind, left, right, kept[-1].lower(), modifier))
    return runs


def name_tokens(name: str) -> frozenset[str]:
    """The lower-cased name tokens of ``name`` (a possessive "'s" dropped, no
    :func:`non_name_words`, none of one letter)."""
    skip = non_name_words()
    words = (re.sub(r"'s$", "", w.lower()).strip("'-") for w in name.split())
    return frozenset(w for w in words if w not in skip and len(w) > 1)


def share_a_name(a: tuple[frozenset[str], ...], b: tuple[frozenset[str], ...]) -> bool:
    """Whether one name of ``a`` is all in ``b`` or the reverse ("Dunmore Rovers" and
    "Rovers" do; "Dunmore Rovers" and "Harrow Vale Rovers" do not)."""
    in_a, in_b = frozenset().union(*a), frozenset().union(*b)
    return any(n <= in_b for n in a) or any(n <= in_a for n in b)


def surface_words(text: str) -> set[str]:
    """Lower-case word tokens, a possessive "'s" dropped ("freedonia's" -> "freedonia"),
    and the parts of a hyphenated word ("leeds-based" -> "leeds", "based")."""
    words = {_POSSESSIVE.sub("", w) for w in re.findall(r"[a-z0-9'\u2019\-]+", text)}
    return words | {p for w in words if "-" in w for p in w.split("-") if p}
