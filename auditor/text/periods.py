"""A claim's own time scope: "from 2004 to 2005", "as of 2010", a leading "In 2004, ...".

The label step (:mod:`auditor.labels`) judges a claim that scopes itself to a period
against the document versions valid then; the judges read such a claim without its
period (:func:`strip_period`), as the old version does not repeat it.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

_YEAR = r"(?:[A-Z][a-z]+\.? )?(?:\d{1,2},? )?(1[5-9]\d\d|20\d\d)"
_PERIODS = (
    re.compile(
        rf"\b(?:from|between) {_YEAR} (?:to|until|till|through|and|-) {_YEAR}\b", re.IGNORECASE
    ),
    re.compile(r"\b(1[5-9]\d\d|20\d\d)\s*(?:-|–)\s*(1[5-9]\d\d|20\d\d)\b"),
    re.compile(rf"\b(?:as of|during|as at) {_YEAR}\b", re.IGNORECASE),
    re.compile(rf"^\s*(?:in|by) {_YEAR}\b", re.IGNORECASE),
)


def stated_period(text: str) -> tuple[datetime, datetime] | None:
    """The time a claim scopes itself to, as ``[start, end)`` in UTC; None when it states none.

    Recognised: ``from Y1 to Y2``, ``between Y1 and Y2``, ``Y1-Y2``, ``as of Y``,
    ``during Y`` and a leading ``In Y`` / ``By Y`` (a year elsewhere, e.g. the answer
    to a "when" question, is not a time scope). The period covers whole years.
    """
    years: list[int] = []
    for pattern in _PERIODS:
        for match in pattern.finditer(text):
            years.extend(int(y) for y in match.groups() if y)
    if not years:
        return None
    return (datetime(min(years), 1, 1, tzinfo=UTC), datetime(max(years) + 1, 1, 1, tzinfo=UTC))


def strip_period(text: str) -> str:
    """``text`` without the time scope :func:`stated_period` reads (for judging a claim about
    the past against the version valid then, whose text does not repeat the period)."""
    out = text
    for pattern in _PERIODS:
        out = pattern.sub("", out)
    out = re.sub(r"^[\s,;:]+", "", re.sub(r"\s+([,.;:])", r"\1", re.sub(r"\s{2,}", " ", out)))
    return out[:1].upper() + out[1:] if out.strip() else text
