"""Leave-one-annotator-out (LOO) protocol for multi-annotator span data (docs/spans.md).

For every item with at least two annotators, each annotator's span set in turn is
the prediction; the reference is built from the *other* annotators' character
masks, either their strict majority (a character marked by more than half of
them) or their union. Macro averaging is within an item first (over its held-out
annotators), then over items; micro pools the statistics of all comparisons.

Input: Mu-SHROOM JSONL (``id``, ``model_output_text``, ``annotations``: annotator ->
list of half-open ``[start, end]`` character spans). Spans ending past the text are
**clipped** to the text by default, with a warning naming the item, annotator and
span (the Mu-SHROOM English validation file has one: ``val-en-34``, ``[301, 373]``
over a 372-character answer); ``clip=False`` makes them an error instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from auditor.errors import InputError
from auditor.jsonl import BadLines, read_jsonl, require
from auditor.spans._canonical import (
    SpanBatch,
    SpanValidationError,
    batch_from_lists,
    spans_past_text,
)
from auditor.spans.diagnostics import diagnose
from auditor.spans.metrics import SpanMetricParams, aggregate, span_counts
from auditor.types import Span

REFERENCES: tuple[str, ...] = ("majority", "union")


@dataclass(frozen=True)
class AnnotatedItem:
    """One answer with every annotator's canonical span set."""

    id: str
    text: str
    annotations: tuple[tuple[str, tuple[Span, ...]], ...]
    """``(annotator id, canonical spans)`` in file order."""


def load_annotated(
    path: str | Path, *, clip: bool = True, warnings_out: list[str] | None = None
) -> list[AnnotatedItem]:
    """Read a Mu-SHROOM-format JSONL file into :class:`AnnotatedItem` records.

    Errors name the file, line and field. Spans past the text are clipped (with a
    message appended to ``warnings_out``) when ``clip``, else rejected.
    """
    items: list[AnnotatedItem] = []
    seen: set[str] = set()
    fname = str(path)
    bad = BadLines(path)  # every bad line of the file is named together
    for line, rec in read_jsonl(path, bad=bad):
        with bad.collect():
            items.append(_annotated(rec, fname, line, seen, clip, warnings_out))
    bad.check()
    return items


def _annotated(
    rec: dict[str, Any],
    fname: str,
    line: int,
    seen: set[str],
    clip: bool,
    warnings_out: list[str] | None,
) -> AnnotatedItem:
    """One line of a Mu-SHROOM file, checked (:func:`load_annotated`)."""
    item_id = require(rec, "id", str, file=fname, line=line)
    if item_id in seen:
        raise InputError(f"duplicate id {item_id!r}", file=fname, line=line, field="id")
    seen.add(item_id)
    text = require(rec, "model_output_text", str, file=fname, line=line)
    ann = require(rec, "annotations", dict, file=fname, line=line)
    names = [str(k) for k in ann]
    lists = list(ann.values())
    try:
        batch = batch_from_lists(
            lists,
            name="annotations",
            ids=names,
            text_lengths=[len(text)] * len(lists),
            clip=clip,
        )
    except SpanValidationError as exc:
        raise InputError(exc.detail, file=fname, line=line, field="annotations") from None
    if clip and warnings_out is not None:
        for k, j, span in spans_past_text(lists, [len(text)] * len(lists)):
            warnings_out.append(
                f"{fname}, line {line}: item {item_id!r} annotator {names[k]!r} span {j} "
                f"{list(span)} ends past the text (length {len(text)}); clipped"
            )
    return AnnotatedItem(
        item_id, text, tuple((names[k], batch.spans(k)) for k in range(len(names)))
    )


def _reference_masks(masks: npt.NDArray[np.bool_], reference: str) -> npt.NDArray[np.bool_]:
    """Row a: the reference built from all rows but a (majority > half, or union)."""
    total = masks.sum(axis=0, dtype=np.int64)
    others = total[None, :] - masks.astype(np.int64)
    n_others = masks.shape[0] - 1
    if reference == "majority":
        return 2 * others > n_others
    return others > 0


def _rows_to_spans(rows: npt.NDArray[np.bool_]) -> tuple[npt.NDArray[np.int64], ...]:
    """(row, start, end) of every maximal run of True in each row."""
    padded = np.zeros((rows.shape[0], rows.shape[1] + 2), dtype=np.int8)
    padded[:, 1:-1] = rows
    r, c = np.nonzero(np.diff(padded, axis=1))
    return r[0::2].astype(np.int64), c[0::2].astype(np.int64), c[1::2].astype(np.int64)


@dataclass(frozen=True)
class LooComparisons:
    """All held-out comparisons of one reference kind, as flat batches."""

    gold: SpanBatch
    pred: SpanBatch
    groups: npt.NDArray[np.int64]
    """Item index of every comparison."""


def loo_comparisons(items: Sequence[AnnotatedItem], reference: str) -> LooComparisons:
    """Build (reference, held-out) span-set pairs for every annotator of every item.

    Items with fewer than two annotators are skipped.
    """
    if reference not in REFERENCES:
        raise SpanValidationError(
            f"must be one of {REFERENCES}, got {reference!r}", field="reference"
        )
    g_parts: list[tuple[npt.NDArray[np.int64], ...]] = []
    p_rows: list[int] = []
    p_s: list[int] = []
    p_e: list[int] = []
    groups: list[int] = []
    n_rec = 0
    for k, item in enumerate(items):
        n_ann = len(item.annotations)
        if n_ann < 2:
            continue
        length = max([len(item.text)] + [e for _, sp in item.annotations for _, e in sp])
        masks = np.zeros((n_ann, length), dtype=bool)
        for a, (_, spans) in enumerate(item.annotations):
            for s, e in spans:
                masks[a, s:e] = True
                p_rows.append(n_rec + a)
                p_s.append(s)
                p_e.append(e)
        r, s_arr, e_arr = _rows_to_spans(_reference_masks(masks, reference))
        g_parts.append((r + n_rec, s_arr, e_arr))
        groups.extend([k] * n_ann)
        n_rec += n_ann
    if g_parts:
        g_item = np.concatenate([x[0] for x in g_parts])
        g_s = np.concatenate([x[1] for x in g_parts])
        g_e = np.concatenate([x[2] for x in g_parts])
    else:
        g_item = g_s = g_e = np.zeros(0, np.int64)
    gold = SpanBatch.from_arrays(g_item, g_s, g_e, n_rec)
    pred = SpanBatch.from_arrays(
        np.asarray(p_rows, np.int64), np.asarray(p_s, np.int64), np.asarray(p_e, np.int64), n_rec
    )
    return LooComparisons(gold, pred, np.asarray(groups, dtype=np.int64))


def _all_annotator_union(items: Iterable[AnnotatedItem]) -> SpanBatch:
    lists = [[s for _, spans in it.annotations for s in spans] for it in items]
    return batch_from_lists(lists, name="annotations")


def leave_one_annotator_out(
    items: Sequence[AnnotatedItem],
    *,
    params: SpanMetricParams | None = None,
    diagnostics: bool = False,
) -> dict[str, Any]:
    """LOO scores: ``{"majority": {"macro", "micro"}, "union": {...}, "n_items",
    "n_annotations"}``; each inner value has the six metric keys.

    With ``diagnostics``, adds ``"diagnostics"``: the nested-boundary and
    partial-overlap subsets of the LOO comparisons under each reference, and the
    one-char-per-gold stress test against the union of all annotators of an item.
    """
    out: dict[str, Any] = {}
    diag: dict[str, Any] = {}
    n_items = n_ann = 0
    for ref in REFERENCES:
        cmp_ = loo_comparisons(items, ref)
        counts = span_counts(cmp_.gold, cmp_.pred, params)
        out[ref] = {
            "macro": aggregate(counts, "macro", cmp_.groups),
            "micro": aggregate(counts, "micro"),
        }
        n_items = len(np.unique(cmp_.groups))
        n_ann = cmp_.gold.n_items
        if diagnostics:
            d = diagnose(cmp_.gold, cmp_.pred, counts=counts, groups=cmp_.groups, params=params)
            diag[ref] = {k: d[k] for k in ("relations", "nested_boundary", "partial_overlap")}
    out["n_items"] = n_items
    out["n_annotations"] = n_ann
    if diagnostics:
        eligible = [it for it in items if len(it.annotations) >= 2]
        union_all = _all_annotator_union(eligible)
        stress = diagnose(union_all, union_all, params=params)
        diag["one_char_per_gold"] = dict(
            stress["one_char_per_gold"], reference="union of all annotators"
        )
        out["diagnostics"] = diag
    return out
