"""The clause of a sentence about a claim: polarity and prices belong to a clause.

"Tuition is free for students from the region, while international students pay 9,000
euros" says nothing free of international students: :func:`clause_about` picks the
clause of a contrast (and the part of it between its "and"s) that holds the claim's
words.
"""

from __future__ import annotations

import re

from auditor.judges.wordlists import derived
from auditor.text.antonyms import antonym_forms, antonym_pairs
from auditor.text.words import content_words, stem, stop_words, tokens

DETERMINERS = frozenset({"the", "a", "an", "all", "most", "many", "some", "other"})
"""Words before the subject that opens a clause ("the", "all", "some", ...)."""


@derived
def own_subject_not() -> frozenset[str]:
    """Words that, opening a clause after its determiners, name no subject of its own: stop
    words and pronouns."""
    return stop_words() | {"it", "they", "he", "she", "this", "these", "those"}


CONTRAST_CLAUSES = re.compile(r";|\bbut\b|\bwhile\b|\bwhereas\b")
"""Where the clauses of a contrast meet ("...; ...", "... but ...", "... while ...")."""


def clause_about(claim_words: frozenset[str], sentence: str, min_coverage: float) -> str:
    """The clause of a contrast ("...; ...", "... but ...", "... while ...") holding the
    most of the claim's content words, when it holds at least ``min_coverage`` of those
    the sentence holds; else the whole sentence; then the part of that clause between
    its "and"s that says it of the claim's thing (:func:`_parallel_part`), or that holds
    the most of the claim's words when every other part opens with a subject of its own
    (:func:`_own_subject`) and says none of them. Polarity
    belongs to a clause: "Tuition is free for students from the region, while
    international students pay 9,000 euros" says of the region's students that they pay
    nothing, and "Admission is £9 for adults and free
    for children under 16" says nothing free of adults."""
    clause = _part_about(claim_words, sentence, CONTRAST_CLAUSES, min_coverage)
    part = _parallel_part(claim_words, clause)
    if part != clause:
        return part
    parts = [p for p in _AND_PARTS.split(clause) if p.strip()]
    best = _part_about(claim_words, clause, _AND_PARTS, min_coverage)
    others = [p for p in parts if p != best]
    if (
        best != clause
        and all(_own_subject(p, claim_words) for p in others)
        and not any(claim_words & content_words(p) for p in others)
    ):
        return best  # "£12 for a foot passenger, and children under five travel free"
    return clause


def _own_subject(part: str, claim_words: frozenset[str]) -> bool:
    """Whether a part of a clause opens with a subject of its own: a content word the
    claim does not say, nor its opposite ("children under five travel free" beside "a
    ticket for a foot passenger costs £12"; not "cost £15" after "tours run on Saturday")."""
    opener = next((t for t in tokens(part) if t not in DETERMINERS), "")
    if not opener or opener in own_subject_not() or not opener[0].isalpha():
        return False
    word = stem(opener)
    opposed, forms = antonym_pairs().get(word, set()), antonym_forms()
    return word not in claim_words and not any(forms[o] & claim_words for o in opposed)


_AND_PARTS = re.compile(r",?\s+and\s+")
_COMPLEMENT = re.compile(r"\b(for|to|on|in|at)\s+(?:the\s+|all\s+)?([A-Za-z][\w\-]*)")


def _parallel_part(claim_words: frozenset[str], clause: str) -> str:
    """The part of ``clause`` between its "and"s that says it of what the claim is about,
    when the parts say it of different things with the same preposition ("£9 for adults
    and free for children under 16": the claim's "adults" picks the first part; "allowed
    in the garden and not in the cafe"); else ``clause``. Parts that share their subject
    and complement ("tours run on Saturdays and cost £15") stay one."""
    parts = [p for p in _AND_PARTS.split(clause) if p.strip()]
    if len(parts) < 2:
        return clause
    objects = [
        {(m.group(1).lower(), stem(m.group(2).lower())) for m in _COMPLEMENT.finditer(p)}
        for p in parts
    ]
    for i, own in enumerate(objects):
        for prep, obj in own:
            if obj not in claim_words:
                continue
            others = [o for j, other in enumerate(objects) if j != i for p, o in other if p == prep]
            if others and all(o != obj and o not in claim_words for o in others):
                return parts[i]
    return clause


def _part_about(
    claim_words: frozenset[str], text: str, joints: re.Pattern[str], min_coverage: float
) -> str:
    """The part of ``text`` between ``joints`` holding the most of the claim's content
    words, when it holds at least ``min_coverage`` of those the text holds; else ``text``."""
    parts = [p for p in joints.split(text) if p.strip()]
    said = claim_words & content_words(text)  # not the passage's lead name, if borrowed
    if len(parts) < 2 or not said:
        return text
    best = max(parts, key=lambda p: len(said & content_words(p)))
    if len(said & content_words(best)) / len(said) < min_coverage:
        return text
    return best
