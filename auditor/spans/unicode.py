"""Unicode for spans: NFC normalisation with offsets mapped back, and grapheme clusters.

Span offsets everywhere in the auditor are **Unicode code points of the text as given**
(Python ``str`` indices; not bytes, not UTF-16 units, not grapheme clusters). Text is
normalised to NFC before claims are extracted and matched, so that ``café`` written
with a combining accent (``cafe`` + U+0301) and with the precomposed ``é`` are the
same word. NFC can change the length of a text, so :class:`NfcMap` maps offsets
between the text as given and its NFC form: a position inside a run of characters
that NFC composes maps to the whole run (never into the middle of it). Spans handed
back to the user are widened to whole extended grapheme clusters (UAX #29, via the
``regex`` module's ``\\X``): an accent, an emoji modifier, a ZWJ sequence or a flag is
never cut off its base.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

import regex

from auditor.types import Span

_GRAPHEME = regex.compile(r"\X", regex.DOTALL)


def nfc(text: str) -> str:
    """``text`` in Unicode normalisation form C (unchanged when it already is)."""
    return text if unicodedata.is_normalized("NFC", text) else unicodedata.normalize("NFC", text)


@dataclass(frozen=True)
class NfcMap:
    """The NFC form of a text with offset maps both ways (see the module docstring)."""

    original: str
    text: str
    """The NFC text."""
    identity: bool
    """True when the text was already NFC (offsets are the same)."""
    _norm_start: tuple[int, ...] = ()
    _norm_end: tuple[int, ...] = ()
    _orig_start: tuple[int, ...] = ()
    _orig_end: tuple[int, ...] = ()

    def to_original(self, start: int, end: int) -> Span:
        """The span of the text as given that ``[start, end)`` of the NFC text covers."""
        if self.identity:
            return start, end
        if start >= end:
            pos = self._orig_start[start] if start < len(self.text) else len(self.original)
            return pos, pos
        return self._orig_start[start], self._orig_end[end - 1]

    def to_normalized(self, start: int, end: int) -> Span:
        """The span of the NFC text that ``[start, end)`` of the text as given covers."""
        if self.identity:
            return start, end
        if start >= end:
            pos = self._norm_start[start] if start < len(self.original) else len(self.text)
            return pos, pos
        return self._norm_start[start], self._norm_end[end - 1]


def nfc_map(text: str) -> NfcMap:
    """Normalise ``text`` to NFC and keep the offset maps (cheap when it already is NFC)."""
    if unicodedata.is_normalized("NFC", text):
        return NfcMap(text, text, True)
    runs = _composition_runs(text)
    parts: list[str] = []
    norm_start: list[int] = []
    norm_end: list[int] = []
    orig_start = [0] * len(text)
    orig_end = [0] * len(text)
    pos = 0
    for s, e in runs:
        piece = unicodedata.normalize("NFC", text[s:e])
        parts.append(piece)
        norm_start.extend([s] * len(piece))
        norm_end.extend([e] * len(piece))
        for j in range(s, e):
            orig_start[j], orig_end[j] = pos, pos + len(piece)
        pos += len(piece)
    normalized = "".join(parts)
    # (the maps are named by what they return: NFC index -> original offsets, and back)
    return NfcMap(
        text,
        normalized,
        False,
        tuple(orig_start),
        tuple(orig_end),
        tuple(norm_start),
        tuple(norm_end),
    )


def _composition_runs(text: str) -> list[Span]:
    """Cut ``text`` into runs that NFC normalises independently: a run starts at a
    starter (combining class 0); a run is merged into the previous one when NFC of the
    two together differs from NFC of each (Hangul jamo, a starter that composes)."""
    runs: list[list[int]] = []
    for j, ch in enumerate(text):
        if runs and unicodedata.combining(ch):
            runs[-1][1] = j + 1
            continue
        if runs:
            prev = text[runs[-1][0] : runs[-1][1]]
            if _nfc(prev + ch) != _nfc(prev) + _nfc(ch):
                runs[-1][1] = j + 1
                continue
        runs.append([j, j + 1])
    merged: list[list[int]] = []
    for run in runs:  # a run whose combining marks reorder across it was merged above
        if merged:
            a = text[merged[-1][0] : merged[-1][1]]
            b = text[run[0] : run[1]]
            if _nfc(a + b) != _nfc(a) + _nfc(b):
                merged[-1][1] = run[1]
                continue
        merged.append(run)
    return [(s, e) for s, e in merged]


@lru_cache(maxsize=4096)
def _nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def grapheme_boundaries(text: str) -> list[int]:
    """Offsets where an extended grapheme cluster starts, plus ``len(text)``."""
    out = [m.start() for m in _GRAPHEME.finditer(text)]
    out.append(len(text))
    return out


def snap_to_graphemes(text: str, spans: Iterable[Span]) -> tuple[Span, ...]:
    """Widen each span to whole grapheme clusters of ``text`` (sorted, overlaps merged)."""
    bounds = grapheme_boundaries(text)
    import bisect

    out: list[Span] = []
    for s, e in sorted(spans):
        s2 = bounds[bisect.bisect_right(bounds, s) - 1] if s > 0 else 0
        e2 = bounds[bisect.bisect_left(bounds, e)] if e < len(text) else len(text)
        if out and s2 <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e2))
        else:
            out.append((s2, e2))
    return tuple(out)
