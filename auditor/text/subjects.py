"""What a claim is about: its subject, and whether the evidence names it.

:func:`claim_subject` reads the first named thing of a claim ("The Kestrel Bridge was
designed by ..." -> {"kestrel", "bridge"}), or a subject in lower-case words ("The
stadium was ..." -> {"stadium"}); :func:`subject_in_evidence` tells whether one
evidence text names all of it. The label step's relevance rule and the
``entity_consistency`` judge both ask.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from auditor.judges import wordlists as wl
from auditor.judges.wordlists import derived
from auditor.text.names import name_runs, surface_words, without_possessive
from auditor.text.sentences import sentences
from auditor.text.words import stop_words

_COMMON_SUBJECT = re.compile(
    r"\s*(?:The|This|That|Its|Their)\s+((?:[a-z][a-z'\u2019\-]*\s+){0,2}?[a-z][a-z'\u2019\-]*)"
    r"\s+(?:is|was|are|were|has|have|had|will|can|[a-z]+ed|[a-z]+s)\b"
)
"""A subject in lower-case words before the verb: "The stadium was designed by ..."."""


@derived
def _about_a_text() -> frozenset[str]:
    """Subjects that speak of a text ("The passage describes ..."): its names say what it
    is about (``text_nouns.txt``)."""
    return wl.words("text_nouns")


def claim_subject(text: str) -> frozenset[str]:
    """Name tokens of the first named thing in ``text`` (its subject, as a rule): "The
    Kestrel Bridge was designed by ..." -> {"kestrel", "bridge"}, or the words of a subject
    in lower case that opens it ("The stadium was designed by Archibald Leitch" ->
    {"stadium"}, "The zoo's penguin pool ..." -> {"zoo", "penguin", "pool"}); empty when it
    names nothing."""
    for sentence in sentences(text):
        common = _COMMON_SUBJECT.match(sentence)
        if common:
            words = frozenset(
                without_possessive(w) for w in common.group(1).split() if w not in stop_words()
            )
            if words and not words & _about_a_text():
                return words
        runs = name_runs(sentence)
        if runs:
            return runs[0].tokens
    return frozenset()


def subject_in_evidence(claim: str, evidence: Sequence[str]) -> bool:
    """True when every token of the claim's subject (:func:`claim_subject`) occurs in one
    evidence text."""
    subject = claim_subject(claim)
    if not subject:
        return False
    return any(subject <= surface_words(text.lower()) for text in evidence)
