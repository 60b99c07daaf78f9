"""Sentences: the one sentence split every judge, the evidence index and the reports use.

A sentence ends after ``.``, ``!`` or ``?`` before a capital, digit, quote or bracket,
and at every line break (a table row, list item or heading without a full stop is a
sentence of its own).
"""

from __future__ import annotations

import re

# a sentence ends after . ! ? before a capital, digit, quote or bracket, and at every line
# break: a table row, list item or heading without a full stop is a sentence of its own
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])|[^\S\n]*\n\s*")


def sentences(text: str) -> list[str]:
    """A cheap regex sentence split (evidence passages are short)."""
    parts = [p.strip() for p in _SENTENCE.split(text) if p.strip()]
    return parts or ([text.strip()] if text.strip() else [])


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Spans ``[start, end)`` of :func:`sentences` in ``text`` (each part whitespace
    trimmed, none empty): ``sentences(text) == [text[s:e] for s, e in spans]``.

    The evidence index stores these spans (and their embeddings) per chunk at ingest;
    the judges look the embeddings up by the exact sentence text, so a split that
    disagreed would cost an encoding, never a wrong vector. (:func:`sentences` keeps
    its own, faster, implementation: the judges call it on every evidence passage.)
    """
    spans: list[tuple[int, int]] = []
    pos = 0
    for match in _SENTENCE.finditer(text):
        _trimmed(text, pos, match.start(), spans)
        pos = match.end()
    _trimmed(text, pos, len(text), spans)
    return spans


def _trimmed(text: str, start: int, end: int, spans: list[tuple[int, int]]) -> None:
    part = text[start:end]
    body = part.strip()
    if body:
        first = start + len(part) - len(part.lstrip())
        spans.append((first, first + len(body)))
