"""Pronouns read as the name their passage starts with.

Evidence pages name their subject once and then say "It was opened in 1931 by Queen
Mary" or "Its captain is Tomasz Nowak"; the slot judges (names, numbers, polarity) read
such a sentence as being about the page's subject.
"""

from __future__ import annotations

import re

from auditor.text.names import NAME_PATTERN
from auditor.text.sentences import sentences
from auditor.text.words import stop_words

_PRONOUN = re.compile(r"^(?:He|She|It|They|Its|His|Her|Their)\b")
_LEAD_NAME = re.compile(rf"\s*({NAME_PATTERN})")
_VERB_NEXT = re.compile(
    r"(?:\s+v?\d+(?:\.\d+)*)?\s+(?:is|was|are|were|has|have|had|remains|became|[a-z]+ed)\b"
)
"""A verb after the opening name, perhaps after a version ("Pinewood 4.0 was released")."""
_LEAD_PHRASE = re.compile(
    r"\s*((?:The|A|An)\s+(?:[\w'\-]+\s+){0,3}?[\w'\-]+)\s+"
    r"(?:is|was|are|were|has|have|had|remains|became)\b"
)


def _opening_name(text: str) -> str | None:
    """The name ``text`` opens with. One capitalised word followed by no verb ("Opening
    hours vary") is not a name; one followed by a verb is ("Lanford is ...", "Google was
    founded ...")."""
    lead = _LEAD_NAME.match(text)
    if lead is None:
        return None
    stops = stop_words()
    words = [w for w in lead.group(1).split() if w.lower() not in stops]
    if not words or (len(words) == 1 and not _VERB_NEXT.match(text, lead.end())):
        return None
    return lead.group(1)


def lead_name(text: str) -> str | None:
    """The name ``text`` opens with, or its opening "The ..." phrase before its first
    verb ("The central library is ..."); None when it opens with neither."""
    name = _opening_name(text)
    if name is None and (phrase := _LEAD_PHRASE.match(text)) is not None:
        name = phrase.group(1)
    return name


def opens_with_other_name(sentence: str, lead: str) -> bool:
    """True when ``sentence`` opens with a name that is not part of ``lead`` ("Rivals
    Harrow Town play ..." in a page about Kelder Rovers)."""
    name = _opening_name(sentence)
    if name is None or (" " not in name and name.endswith("ing")):
        return False  # "Swimming is not permitted": an activity, not another name
    words = {w.lower() for w in name.split()} - stop_words()
    return bool(words - {w.lower() for w in lead.split()})


def resolved_sentences(text: str) -> list[str]:
    """The sentences of ``text``, a sentence-initial pronoun replaced by its
    :func:`lead_name`: "Dev Patel is a cricketer. He joined Teal Valley CC in 2022." ->
    "Dev Patel joined Teal Valley CC in 2022."; "Its captain is ..." -> "Port Ellis Rowing
    Club's captain is ...". Unchanged when it has no lead name."""
    parts = sentences(text)
    name = lead_name(text)
    if name is None:
        return parts
    return [
        _PRONOUN.sub(
            lambda m: name + "'s" if m.group(0) in ("Its", "His", "Her", "Their") else name, s
        )
        for s in parts
    ]
