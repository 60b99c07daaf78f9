"""Pronouns read as the name their passage starts with.

Evidence pages name their subject once and then say "It was opened in 1931 by Queen
Mary" or "Its captain is Tomasz Nowak"; the slot judges (names, numbers, polarity) read
such a sentence as being about the page's subject.
"""

from __future__ import annotations

import re

from auditor.judges._text import STOP_WORDS, sentences

NAME_PATTERN = (
    r"(?:[A-Z][A-Za-z'\-]*[A-Za-z]|[A-Z]{2,})(?:\s+(?:of|de|van|von|la|du|del)?\s*"
    r"(?:[A-Z][A-Za-z'\-]*[A-Za-z]|[A-Z]{2,}))*"
)
"""A name: a run of capitalised words or acronyms, joined by "of", "de", "van", ..."""
_PRONOUN = re.compile(r"^(?:He|She|It|They|Its|His|Her|Their)\b")
_LEAD_NAME = re.compile(rf"\s*({NAME_PATTERN})")
_VERB_NEXT = re.compile(r"\s+(?:is|was|are|were|has|have|had|remains|became|[a-z]+ed)\b")
_LEAD_PHRASE = re.compile(
    r"\s*((?:The|A|An)\s+(?:[\w'\-]+\s+){0,3}?[\w'\-]+)\s+"
    r"(?:is|was|are|were|has|have|had|remains|became)\b"
)


def resolved_sentences(text: str) -> list[str]:
    """The sentences of ``text``, a sentence-initial pronoun replaced by the name (or
    "The ..." phrase before its first verb) ``text`` starts with: "Dev Patel is a
    cricketer. He joined Teal Valley CC in 2022." -> "Dev Patel joined Teal Valley CC in
    2022."; "Its captain is ..." -> "Port Ellis Rowing Club's captain is ...". Unchanged
    when it starts with neither."""
    parts = sentences(text)
    lead = _LEAD_NAME.match(text)
    if lead is not None:
        words = [w for w in lead.group(1).split() if w.lower() not in STOP_WORDS]
        # one capitalised word may just open the sentence ("Opening hours vary"): a name
        # only when a verb follows ("Lanford is ...", "Google was founded ...")
        if not words or (len(words) == 1 and not _VERB_NEXT.match(text, lead.end())):
            lead = None
    if lead is None:
        lead = _LEAD_PHRASE.match(text)  # "The central library is ..."
    if lead is None:
        return parts
    name = lead.group(1)
    return [
        _PRONOUN.sub(
            lambda m: name + "'s" if m.group(0) in ("Its", "His", "Her", "Their") else name, s
        )
        for s in parts
    ]
