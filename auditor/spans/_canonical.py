"""Canonical span sets, stored flat for vectorised interval arithmetic.

Input spans are half-open character intervals ``[start, end)``. A canonical span
set (docs/spans.md) has empty spans dropped and overlapping *and* adjacent spans
merged, so its spans are sorted, disjoint and separated by at least one character.

A :class:`SpanBatch` holds many canonical span sets (one per item) as three flat
numpy arrays, in the CSR layout: the spans of item ``k`` are
``starts[indptr[k]:indptr[k + 1]]`` and ``ends[...]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from numbers import Integral
from typing import Any

import numpy as np
import numpy.typing as npt

from auditor.errors import InputError
from auditor.types import Span

IntArray = npt.NDArray[np.int64]


class SpanValidationError(InputError, ValueError):
    """A span is malformed (not two integers, reversed, negative or past the text)."""

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        super().__init__(message, file=file, line=line, field=field)
        self.detail = message
        """The message without the file / line / field prefix."""


@dataclass(frozen=True)
class SpanBatch:
    """Canonical span sets of ``n_items`` items, flat (CSR layout, local offsets)."""

    starts: IntArray
    ends: IntArray
    indptr: IntArray

    @property
    def n_items(self) -> int:
        """Number of items (span sets) in the batch."""
        return int(self.indptr.shape[0] - 1)

    @property
    def n_spans(self) -> int:
        """Total number of canonical spans."""
        return int(self.starts.shape[0])

    def counts(self) -> IntArray:
        """Number of canonical spans of each item."""
        return np.diff(self.indptr)

    def item_index(self) -> IntArray:
        """Item index of every span (non-decreasing)."""
        return np.repeat(np.arange(self.n_items, dtype=np.int64), self.counts())

    def spans(self, item: int) -> tuple[Span, ...]:
        """The canonical spans of one item as Python tuples."""
        lo, hi = int(self.indptr[item]), int(self.indptr[item + 1])
        return tuple(zip(self.starts[lo:hi].tolist(), self.ends[lo:hi].tolist(), strict=True))

    def to_lists(self) -> list[list[Span]]:
        """All span sets as lists of tuples."""
        return [list(self.spans(k)) for k in range(self.n_items)]

    def max_end(self) -> IntArray:
        """Largest end offset of each item (0 for an item without spans)."""
        out = np.zeros(self.n_items, dtype=np.int64)
        counts = self.counts()
        nonempty = counts > 0
        if self.n_spans:
            # Canonical spans are sorted: the last span of an item ends furthest.
            out[nonempty] = self.ends[self.indptr[1:][nonempty] - 1]
        return out

    def char_counts(self) -> IntArray:
        """Number of characters covered in each item."""
        lengths = (self.ends - self.starts).astype(np.float64)
        return np.bincount(self.item_index(), weights=lengths, minlength=self.n_items).astype(
            np.int64
        )

    @classmethod
    def empty(cls, n_items: int) -> SpanBatch:
        """A batch of ``n_items`` items without spans."""
        return cls(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(n_items + 1, np.int64))

    @classmethod
    def from_arrays(
        cls, item: IntArray, starts: IntArray, ends: IntArray, n_items: int
    ) -> SpanBatch:
        """Canonicalise raw, already validated spans given as flat arrays.

        ``item`` must be non-decreasing; spans need not be sorted or disjoint.
        Empty spans are dropped, overlapping and adjacent ones merged.
        """
        return _canonicalise_flat(
            np.asarray(item, np.int64),
            np.asarray(starts, np.int64),
            np.asarray(ends, np.int64),
            n_items,
        )


def _item_label(ids: Sequence[str] | None, k: int) -> str:
    return repr(ids[k]) if ids is not None else str(k)


def _bad(name: str, ids: Sequence[str] | None, k: int, j: int, span: Any, why: str) -> str:
    return f"{name}[{_item_label(ids, k)}] span {j} {span!r}: {why}"


def _slow_validate(
    span_lists: Sequence[Sequence[Any]], name: str, ids: Sequence[str] | None
) -> None:
    """Find and report the first span that is not a pair of integers."""
    for k, spans in enumerate(span_lists):
        if isinstance(spans, (str, bytes)) or not isinstance(spans, Sequence):
            raise SpanValidationError(
                f"{name}[{_item_label(ids, k)}]: expected a list of [start, end] pairs, "
                f"got {type(spans).__name__}",
                field=name,
            )
        for j, span in enumerate(spans):
            ok = (
                isinstance(span, Sequence)
                and not isinstance(span, (str, bytes))
                and len(span) == 2
                and all(isinstance(v, Integral) and not isinstance(v, bool) for v in span)
            )
            if not ok:
                raise SpanValidationError(
                    _bad(name, ids, k, j, span, "expected a [start, end] pair of integers"),
                    field=name,
                )


def _check_ranges(
    item: IntArray,
    starts: IntArray,
    ends: IntArray,
    local: IntArray,
    span_lists: Sequence[Sequence[Any]],
    name: str,
    ids: Sequence[str] | None,
    text_lengths: IntArray | None,
    clip: bool,
) -> tuple[IntArray, IntArray]:
    """Validate offsets; clip ends past the text when ``clip``; return (starts, ends)."""
    reversed_ = ends < starts
    negative = starts < 0
    for mask, why in (
        (negative, "start is negative"),
        (reversed_, "end is before start (spans are half-open [start, end))"),
    ):
        if mask.any():
            i = int(np.flatnonzero(mask)[0])
            k, j = int(item[i]), int(local[i])
            raise SpanValidationError(
                _bad(name, ids, k, j, list(span_lists[k][j]), why), field=name
            )
    if text_lengths is not None:
        limit = text_lengths[item]
        past = ends > limit
        if past.any():
            if not clip:
                i = int(np.flatnonzero(past)[0])
                k, j = int(item[i]), int(local[i])
                raise SpanValidationError(
                    _bad(
                        name,
                        ids,
                        k,
                        j,
                        list(span_lists[k][j]),
                        f"ends past the text (length {int(limit[i])})",
                    ),
                    field=name,
                )
            ends = np.minimum(ends, limit)
            starts = np.minimum(starts, ends)
    return starts, ends


def spans_past_text(
    span_lists: Sequence[Sequence[Any]], text_lengths: Sequence[int]
) -> list[tuple[int, int, Span]]:
    """``(item, span index, span)`` for every span ending past its text (for warnings)."""
    out: list[tuple[int, int, Span]] = []
    for k, (spans, length) in enumerate(zip(span_lists, text_lengths, strict=True)):
        for j, span in enumerate(spans):
            if int(span[1]) > length:
                out.append((k, j, (int(span[0]), int(span[1]))))
    return out


def batch_from_lists(
    span_lists: Sequence[Sequence[Any]],
    *,
    name: str = "spans",
    ids: Sequence[str] | None = None,
    text_lengths: Sequence[int] | None = None,
    clip: bool = False,
) -> SpanBatch:
    """Validate and canonicalise one span set per item into a :class:`SpanBatch`.

    ``span_lists[k]`` is a list of ``[start, end]`` half-open pairs. Errors name the
    parameter (``name``), the item (its id when ``ids`` is given), the span index and
    the span. With ``text_lengths``, a span ending past its text is an error, or is
    clipped to the text when ``clip`` is true (a span lying wholly past the text
    becomes empty and is dropped).
    """
    if isinstance(span_lists, (str, bytes)):
        raise SpanValidationError(f"{name}: expected a list of span lists, got text", field=name)
    n_items = len(span_lists)
    if ids is not None and len(ids) != n_items:
        raise SpanValidationError(f"{name}: {len(ids)} ids for {n_items} span sets", field=name)
    lengths_arr: IntArray | None = None
    if text_lengths is not None:
        if len(text_lengths) != n_items:
            raise SpanValidationError(
                f"{name}: {len(text_lengths)} text lengths for {n_items} span sets", field=name
            )
        lengths_arr = np.asarray(text_lengths, dtype=np.int64)
    try:
        counts = np.fromiter((len(s) for s in span_lists), dtype=np.int64, count=n_items)
        flat = [span for spans in span_lists for span in spans]
        arr = np.asarray(flat) if flat else np.zeros((0, 2), np.int64)
        ok = arr.ndim == 2 and arr.shape[1] == 2 and arr.dtype.kind in "iu"
    except (TypeError, ValueError):
        ok = False
    if not ok or any(isinstance(s, (str, bytes)) for s in span_lists):
        _slow_validate(span_lists, name, ids)
        raise SpanValidationError(f"{name}: malformed span lists", field=name)  # pragma: no cover
    arr = arr.astype(np.int64, copy=False)
    item = np.repeat(np.arange(n_items, dtype=np.int64), counts)
    first = np.concatenate(([0], np.cumsum(counts)[:-1])) if n_items else counts
    local = np.arange(arr.shape[0], dtype=np.int64) - np.repeat(first, counts)
    starts, ends = _check_ranges(
        item, arr[:, 0].copy(), arr[:, 1].copy(), local, span_lists, name, ids, lengths_arr, clip
    )
    return _canonicalise_flat(item, starts, ends, n_items)


def canonicalize(
    spans: Sequence[Any], *, text_length: int | None = None, clip: bool = False, name: str = "spans"
) -> tuple[Span, ...]:
    """Canonical form of one span set: drop empty, merge overlapping and adjacent spans.

    >>> canonicalize([[5, 8], [0, 2], [2, 3], [7, 9], [4, 4]])
    ((0, 3), (5, 9))
    """
    batch = batch_from_lists(
        [spans], name=name, text_lengths=None if text_length is None else [text_length], clip=clip
    )
    return batch.spans(0)


def _canonicalise_flat(item: IntArray, starts: IntArray, ends: IntArray, n_items: int) -> SpanBatch:
    keep = ends > starts
    item, starts, ends = item[keep], starts[keep], ends[keep]
    if item.size == 0:
        return SpanBatch.empty(n_items)
    # Put items on one line, separated by a gap of one character, so that merging
    # never crosses items: offset_k = sum_{k' < k} (max_end_k' + 1).
    max_end = np.zeros(n_items, dtype=np.int64)
    np.maximum.at(max_end, item, ends)
    offsets = np.concatenate(([0], np.cumsum(max_end + 1)[:-1]))
    gs = starts + offsets[item]
    ge = ends + offsets[item]
    order = np.argsort(gs, kind="stable")
    gs, ge, item = gs[order], ge[order], item[order]
    running = np.maximum.accumulate(ge)
    new = np.empty(gs.shape[0], dtype=bool)
    new[0] = True
    new[1:] = gs[1:] > running[:-1]  # adjacent (==) merges too
    heads = np.flatnonzero(new)
    out_item = item[heads]
    out_starts = gs[heads] - offsets[out_item]
    out_ends = np.maximum.reduceat(ge, heads) - offsets[out_item]
    indptr = np.concatenate(([0], np.cumsum(np.bincount(out_item, minlength=n_items))))
    return SpanBatch(
        out_starts.astype(np.int64), out_ends.astype(np.int64), indptr.astype(np.int64)
    )


def mask_to_spans(mask: npt.NDArray[np.bool_]) -> tuple[Span, ...]:
    """Maximal runs of ``True`` in a boolean character mask, as half-open spans."""
    m = np.asarray(mask, dtype=bool)
    if m.size == 0:
        return ()
    padded = np.concatenate(([False], m, [False]))
    edges = np.flatnonzero(padded[1:] != padded[:-1])
    return tuple(zip(edges[0::2].tolist(), edges[1::2].tolist(), strict=True))


def spans_to_mask(spans: Sequence[Span], length: int) -> npt.NDArray[np.bool_]:
    """Boolean character mask of length ``length`` covering ``spans`` (clipped)."""
    m = np.zeros(length, dtype=bool)
    for s, e in spans:
        m[max(s, 0) : min(e, length)] = True
    return m
