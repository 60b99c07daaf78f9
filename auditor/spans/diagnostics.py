"""Diagnostic subsets that show why Span Coverage F1 and character IoU disagree.

Following the Mycelium study (docs/spans.md):

``nested_boundary``
    the prediction lies strictly inside the gold characters with the same number
    of spans, one per gold span (boundary-only disagreement): Span Coverage F1 is 1
    by construction while the overlap metrics are not.
``partial_overlap``
    prediction and gold share characters but neither contains the other.
``one_char_per_gold``
    a degenerate stress test: the prediction keeps one central character of every
    gold span. Span Coverage F1 is 1, character IoU collapses.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from auditor.spans._canonical import SpanBatch
from auditor.spans.metrics import (
    SpanCounts,
    SpanMetricParams,
    aggregate,
    span_counts,
)

RELATIONS: tuple[str, ...] = (
    "both_empty",
    "one_empty",
    "exact",
    "pred_inside_gold_boundary",
    "pred_inside_gold_extra_components",
    "gold_inside_pred",
    "partial_overlap",
    "disjoint",
)
"""Relation of a prediction to its gold span set, per item."""


def classify_relations(counts: SpanCounts) -> npt.NDArray[np.str_]:
    """The relation (one of :data:`RELATIONS`) of every item's prediction to its gold."""
    inter, p_chars, _, g_chars = counts.stats["character"]
    _, n_pred, _, n_gold = counts.stats["exact_span"]
    hit_gold = counts.stats["span_coverage"][2]
    out = np.full(counts.n_items, "disjoint", dtype=object)
    overlap = inter > 0
    out[overlap] = "partial_overlap"
    pred_in = overlap & (inter == p_chars) & (p_chars < g_chars)
    boundary = pred_in & (n_pred == n_gold) & (hit_gold == n_gold)
    out[pred_in] = "pred_inside_gold_extra_components"
    out[boundary] = "pred_inside_gold_boundary"
    out[overlap & (inter == g_chars) & (g_chars < p_chars)] = "gold_inside_pred"
    out[overlap & (inter == g_chars) & (inter == p_chars)] = "exact"
    empty_g, empty_p = g_chars == 0, p_chars == 0
    out[empty_g ^ empty_p] = "one_empty"
    out[empty_g & empty_p] = "both_empty"
    return out.astype(str)


def one_char_per_gold(gold: SpanBatch) -> SpanBatch:
    """One central character ``[c, c + 1)`` of every gold span, ``c = (start + end - 1) // 2``."""
    centre = (gold.starts + gold.ends - 1) // 2
    return SpanBatch(centre.astype(np.int64), (centre + 1).astype(np.int64), gold.indptr.copy())


def _subset_summary(
    counts: SpanCounts, mask: npt.NDArray[np.bool_], groups: npt.NDArray[np.int64] | None
) -> dict[str, Any]:
    n = int(mask.sum())
    g = None if groups is None else groups[mask]
    n_items = n if g is None else len(np.unique(g))
    summary: dict[str, Any] = {"n": n, "n_items": n_items}
    if n == 0:
        summary["macro"] = None
    else:
        summary["macro"] = aggregate(counts.subset(mask), "macro", g)
    return summary


def diagnose(
    gold: SpanBatch,
    pred: SpanBatch,
    *,
    counts: SpanCounts | None = None,
    groups: npt.NDArray[np.int64] | None = None,
    stress_gold: SpanBatch | None = None,
    params: SpanMetricParams | None = None,
) -> dict[str, Any]:
    """Macro scores of the nested-boundary, partial-overlap and one-char-per-gold subsets.

    ``counts`` are the statistics of ``(gold, pred)`` when already computed;
    ``groups`` (one id per item) makes macro averaging group-first, as in the
    leave-one-annotator-out protocol. ``stress_gold`` is the reference of the
    one-char stress test (default ``gold``); items without gold spans are left out.
    Also returns ``relations``: how many items fall in each relation.
    """
    if counts is None:
        counts = span_counts(gold, pred, params)
    rel = classify_relations(counts)
    result: dict[str, Any] = {
        "relations": {r: int(np.sum(rel == r)) for r in RELATIONS},
        "nested_boundary": _subset_summary(counts, rel == "pred_inside_gold_boundary", groups),
        "partial_overlap": _subset_summary(counts, rel == "partial_overlap", groups),
    }
    ref = gold if stress_gold is None else stress_gold
    has_gold = ref.counts() > 0
    keep = np.flatnonzero(has_gold)
    sub_ref = _take(ref, keep)
    stress_pred = one_char_per_gold(sub_ref)
    stress = span_counts(sub_ref, stress_pred, params)
    g_chars = sub_ref.char_counts().astype(np.float64)
    p_chars = stress_pred.char_counts().astype(np.float64)
    one: dict[str, Any] = {"n": int(keep.size), "n_items": int(keep.size)}
    if keep.size:
        one["reference_char_fraction"] = float(np.mean(p_chars / g_chars))
        one["macro"] = aggregate(stress, "macro")
    else:
        one["reference_char_fraction"] = None
        one["macro"] = None
    result["one_char_per_gold"] = one
    return result


def _take(batch: SpanBatch, items: npt.NDArray[np.int64]) -> SpanBatch:
    """The span sets of the given items, in that order (vectorised gather)."""
    counts = batch.counts()[items]
    starts_at = batch.indptr[:-1][items]
    first = np.cumsum(counts) - counts
    flat = np.repeat(starts_at - first, counts) + np.arange(int(counts.sum()))
    indptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    return SpanBatch(batch.starts[flat], batch.ends[flat], indptr)


__all__ = ["RELATIONS", "classify_relations", "diagnose", "one_char_per_gold"]
