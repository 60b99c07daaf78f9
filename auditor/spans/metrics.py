"""The six span metrics of docs/spans.md, vectorised over many items with numpy.

Every metric compares a *gold* (reference) span set with a *predicted* span set per
item, after canonicalisation (half-open, empty spans dropped, overlapping and
adjacent spans merged). Each yields per-item sufficient statistics; ``macro``
averages the per-item precision / recall / F1 (macro F1 = mean of per-item F1),
``micro`` pools the statistics over items first. An item with no gold and no
predicted span scores 1 on every metric. A side with nothing to score is vacuously
perfect: precision is 1 when nothing is predicted, recall is 1 when there is no gold
(the F1 of such an item is then 0 unless both sides are empty). These conventions
follow the Mycelium study's reference implementation.

Metrics (keys of the result):

``exact_span``
    a predicted span counts only when both boundaries equal a gold span's.
``character`` / ``character_iou``
    spans folded into character masks; F1 over characters, and the intersection
    over union (a ``score``; 1 when both masks are empty).
``deteval_1d``
    DetEval with interval length as area. One-to-one match: the pair is the only
    overlap of both spans, gold coverage ``sigma = |g∩p|/|g| >= 0.8`` and prediction
    coverage ``tau = |g∩p|/|p| >= 0.4``. Then, in span order, splits (one gold, several
    predictions each with ``tau >= 0.4`` and summed ``sigma >= 0.8``) and merges (one
    prediction, several golds each with ``sigma >= 0.8`` and summed ``tau >= 0.4``);
    every instance in a split or merge earns 0.8 credit.
``cleval_1d``
    CLEval with every gold character a pseudo-centre: pairs with area precision
    ``tau >= 0.3`` are matched one-to-one, gold spans with several qualified
    predictions are matched to all of them (split), and a prediction overlapping
    several golds with summed area precision ``>= 0.3`` is matched to all (merge).
    Credit = gold characters covered by matched predictions, less ``(k - 1)`` per
    gold span matched ``k`` predictions (recall) or per prediction matched ``k``
    golds (precision); divided by gold / predicted character totals.
``span_coverage``
    Span Coverage F1: ``P_cov`` = share of predicted spans contained in some gold
    span, ``R_cov`` = share of gold spans containing some predicted span. Report it
    next to ``character_iou``: one character per gold span already scores 1.

The numeric kernel handles all items at once: items are laid on one line with a gap
between them, the overlapping (gold, prediction) pairs are enumerated with
``searchsorted`` (at most ``n_gold + n_pred`` pairs, because canonical spans are
disjoint), and every statistic is a ``bincount`` over pairs. DetEval's ordered
split and merge passes depend on each other only through the one span two
neighbours share; they are resolved in a few vectorised rounds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from auditor.spans._canonical import SpanBatch, SpanValidationError, batch_from_lists

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

METRICS: tuple[str, ...] = (
    "exact_span",
    "character",
    "character_iou",
    "deteval_1d",
    "cleval_1d",
    "span_coverage",
)
"""Metric keys, in output order."""

Average = Literal["macro", "micro"]


@dataclass(frozen=True)
class SpanMetricParams:
    """Thresholds of DetEval-1D and CLEval-1D; the defaults are the published ones."""

    deteval_gold_coverage: float = 0.8
    """DetEval ``sigma`` threshold (share of the gold span covered)."""
    deteval_pred_coverage: float = 0.4
    """DetEval ``tau`` threshold (share of the prediction inside the gold span)."""
    deteval_split_merge_credit: float = 0.8
    """Credit of every instance in a DetEval split or merge."""
    cleval_area_precision: float = 0.3
    """CLEval area-precision threshold."""
    cleval_granularity_penalty: float = 1.0
    """CLEval penalty per extra matched instance: ``(k - 1) * penalty``."""

    def __post_init__(self) -> None:
        for field in (
            "deteval_gold_coverage",
            "deteval_pred_coverage",
            "deteval_split_merge_credit",
            "cleval_area_precision",
        ):
            value = getattr(self, field)
            if not (isinstance(value, (int, float)) and 0.0 <= value <= 1.0):
                raise SpanValidationError(f"must be in [0, 1], got {value!r}", field=field)
        value = self.cleval_granularity_penalty
        if not (isinstance(value, (int, float)) and value >= 0.0 and math.isfinite(value)):
            raise SpanValidationError(
                f"must be a finite number >= 0, got {value!r}", field="cleval_granularity_penalty"
            )


DEFAULT_PARAMS = SpanMetricParams()


@dataclass(frozen=True)
class SpanCounts:
    """Per-item sufficient statistics of the six metrics (float64 arrays, one per item).

    Every metric is a 4-tuple ``(precision credit, predicted total, recall credit,
    gold total)``; ``character_iou`` is ``(intersection, union)``.
    """

    stats: dict[str, tuple[FloatArray, ...]]
    n_items: int

    def subset(self, index: npt.NDArray[Any]) -> SpanCounts:
        """The statistics of a subset of items (boolean mask or integer index)."""
        return SpanCounts(
            {k: tuple(a[index] for a in v) for k, v in self.stats.items()},
            int(np.asarray(self.stats["character"][0][index]).shape[0]),
        )


# --------------------------------------------------------------------------- validation


def _as_batch(value: SpanBatch | Sequence[Any], name: str) -> SpanBatch:
    if isinstance(value, SpanBatch):
        return value
    return batch_from_lists(value, name=name)


def _check_pair(
    gold: SpanBatch | Sequence[Any],
    pred: SpanBatch | Sequence[Any],
    params: SpanMetricParams | None,
) -> tuple[SpanBatch, SpanBatch, SpanMetricParams]:
    g = _as_batch(gold, "gold")
    p = _as_batch(pred, "pred")
    if g.n_items != p.n_items:
        raise SpanValidationError(
            f"gold has {g.n_items} span sets but pred has {p.n_items}", field="pred"
        )
    if params is None:
        params = DEFAULT_PARAMS
    elif not isinstance(params, SpanMetricParams):
        raise SpanValidationError("expected SpanMetricParams", field="params")
    return g, p, params


def _check_average(average: str) -> Average:
    if average not in ("macro", "micro"):
        raise SpanValidationError(f"must be 'macro' or 'micro', got {average!r}", field="average")
    return average  # type: ignore[return-value]


# --------------------------------------------------------------------------- kernel


def _bc(index: IntArray, n: int, weights: FloatArray | None = None) -> FloatArray:
    return np.bincount(index, weights=weights, minlength=n).astype(np.float64)


def span_counts(
    gold: SpanBatch | Sequence[Any],
    pred: SpanBatch | Sequence[Any],
    params: SpanMetricParams | None = None,
) -> SpanCounts:
    """Per-item sufficient statistics of all six metrics (vectorised over items).

    ``gold`` and ``pred`` are :class:`SpanBatch` objects or lists (one span list per
    item) of half-open ``[start, end]`` pairs, canonicalised here.
    """
    g, p, prm = _check_pair(gold, pred, params)
    return _kernel(g, p, prm)


def _kernel(g: SpanBatch, p: SpanBatch, prm: SpanMetricParams) -> SpanCounts:
    n = g.n_items
    g_item, p_item = g.item_index(), p.item_index()
    ng, np_ = g.n_spans, p.n_spans
    # One line for all items, with a one-character gap between items.
    extent = np.maximum(g.max_end(), p.max_end())
    offsets = np.concatenate(([0], np.cumsum(extent + 1)[:-1])).astype(np.int64)
    gs = g.starts + offsets[g_item]
    ge = g.ends + offsets[g_item]
    ps = p.starts + offsets[p_item]
    pe = p.ends + offsets[p_item]
    lg = (ge - gs).astype(np.float64)
    lp = (pe - ps).astype(np.float64)

    # Overlapping pairs: for gold i, predictions lo_i..hi_i-1 (pe > gs_i and ps < ge_i).
    lo = np.searchsorted(pe, gs, side="right")
    hi = np.searchsorted(ps, ge, side="left")
    deg_g = np.maximum(hi - lo, 0)
    n_pairs = int(deg_g.sum())
    pg = np.repeat(np.arange(ng, dtype=np.int64), deg_g)
    first_pair = np.cumsum(deg_g) - deg_g
    pp = (
        np.repeat(lo, deg_g) + np.arange(n_pairs, dtype=np.int64) - np.repeat(first_pair, deg_g)
    ).astype(np.int64)
    inter = (np.minimum(ge[pg], pe[pp]) - np.maximum(gs[pg], ps[pp])).astype(np.float64)
    sigma = inter / lg[pg]
    tau = inter / lp[pp]
    pair_item = g_item[pg]
    deg_p = np.bincount(pp, minlength=np_)

    n_gold = _bc(g_item, n)
    n_pred = _bc(p_item, n)
    g_chars = _bc(g_item, n, lg)
    p_chars = _bc(p_item, n, lp)
    stats: dict[str, tuple[FloatArray, ...]] = {}

    # exact span
    eq = (gs[pg] == ps[pp]) & (ge[pg] == pe[pp])
    exact = _bc(pair_item[eq], n)
    stats["exact_span"] = (exact, n_pred, exact, n_gold)

    # characters (canonical spans are disjoint: the mask intersection is a sum over pairs)
    inter_items = _bc(pair_item, n, inter)
    stats["character"] = (inter_items, p_chars, inter_items, g_chars)
    stats["character_iou"] = (inter_items, g_chars + p_chars - inter_items)

    # span coverage (a prediction lies inside at most one disjoint gold span)
    inside = (ps[pp] >= gs[pg]) & (pe[pp] <= ge[pg])
    contained_pred = _bc(pair_item[inside], n)
    hit = np.zeros(ng, dtype=bool)
    hit[pg[inside]] = True
    hit_gold = _bc(g_item[hit], n)
    stats["span_coverage"] = (contained_pred, n_pred, hit_gold, n_gold)

    # DetEval-1D
    pcred, rcred = _deteval(ng, np_, pg, pp, sigma, tau, deg_g, deg_p, lo, gs, ge, ps, prm)
    stats["deteval_1d"] = (_bc(p_item, n, pcred), n_pred, _bc(g_item, n, rcred), n_gold)

    # CLEval-1D
    stats["cleval_1d"] = _cleval(
        n, ng, np_, g_item, p_item, pg, pp, pair_item, inter, tau, deg_p, p_chars, g_chars, prm
    )
    return SpanCounts(stats, n)


def _deteval(
    ng: int,
    np_: int,
    pg: IntArray,
    pp: IntArray,
    sigma: FloatArray,
    tau: FloatArray,
    deg_g: IntArray,
    deg_p: IntArray,
    lo: IntArray,
    gs: IntArray,
    ge: IntArray,
    ps: IntArray,
    prm: SpanMetricParams,
) -> tuple[FloatArray, FloatArray]:
    tr, tp, pen = (
        prm.deteval_gold_coverage,
        prm.deteval_pred_coverage,
        prm.deteval_split_merge_credit,
    )
    rcred = np.zeros(ng)
    pcred = np.zeros(np_)
    matched_g = np.zeros(ng, dtype=bool)
    matched_p = np.zeros(np_, dtype=bool)

    # 1. one-to-one: the pair is the only overlap of both spans (no conflicts possible).
    one = (deg_g[pg] == 1) & (deg_p[pp] == 1) & (sigma >= tr) & (tau >= tp)
    rcred[pg[one]] = 1.0
    pcred[pp[one]] = 1.0
    matched_g[pg[one]] = True
    matched_p[pp[one]] = True

    # first gold overlapping each prediction (only meaningful where deg_p > 0)
    first_g = np.searchsorted(ge, ps, side="right")

    # 2. split, golds in order. Gold i competes with an earlier gold only for its first
    # overlapping prediction f_i, and only with the first gold k0 overlapping f_i (golds
    # strictly inside f_i overlap one prediction and are skipped). Resolve in rounds.
    s2 = (deg_g >= 2) & ~matched_g
    dep = np.full(ng, -1, dtype=np.int64)
    idx = np.flatnonzero(s2)
    if idx.size:
        k0 = first_g[lo[idx]]
        has = (k0 != idx) & s2[k0]
        dep[idx[has]] = k0[has]
    cand_static = s2[pg] & (tau >= tp)
    avail_p = ~matched_p
    decided = ~s2
    while not decided.all():
        ready = ~decided & ((dep < 0) | decided[np.maximum(dep, 0)])
        c = cand_static & ready[pg] & avail_p[pp]
        cnt = np.bincount(pg[c], minlength=ng)
        ssum = np.bincount(pg[c], weights=sigma[c], minlength=ng)
        full = ready & (cnt == 1) & (ssum >= tr)
        split = ready & (cnt >= 2) & (ssum >= tr)
        fired = full | split
        take = c & fired[pg]
        rcred[full] = 1.0
        rcred[split] = pen
        pcred[pp[take & full[pg]]] = 1.0
        pcred[pp[take & split[pg]]] = pen
        matched_g |= fired
        avail_p[pp[take]] = False
        decided |= ready

    # 3. merge, predictions in order (symmetric roles).
    s3 = (deg_p >= 2) & avail_p
    depp = np.full(np_, -1, dtype=np.int64)
    jdx = np.flatnonzero(s3)
    if jdx.size:
        j0 = lo[first_g[jdx]]
        has = (j0 != jdx) & s3[j0]
        depp[jdx[has]] = j0[has]
    cand_static = s3[pp] & (sigma >= tr)
    avail_g = ~matched_g
    decided = ~s3
    while not decided.all():
        ready = ~decided & ((depp < 0) | decided[np.maximum(depp, 0)])
        c = cand_static & ready[pp] & avail_g[pg]
        cnt = np.bincount(pp[c], minlength=np_)
        tsum = np.bincount(pp[c], weights=tau[c], minlength=np_)
        full = ready & (cnt == 1) & (tsum >= tp)
        merge = ready & (cnt >= 2) & (tsum >= tp)
        fired = full | merge
        take = c & fired[pp]
        pcred[full] = 1.0
        pcred[merge] = pen
        rcred[pg[take & full[pp]]] = 1.0
        rcred[pg[take & merge[pp]]] = pen
        avail_g[pg[take]] = False
        decided |= ready
    return pcred, rcred


def _cleval(
    n: int,
    ng: int,
    np_: int,
    g_item: IntArray,
    p_item: IntArray,
    pg: IntArray,
    pp: IntArray,
    pair_item: IntArray,
    inter: FloatArray,
    tau: FloatArray,
    deg_p: IntArray,
    p_chars: FloatArray,
    g_chars: FloatArray,
    prm: SpanMetricParams,
) -> tuple[FloatArray, ...]:
    t = prm.cleval_area_precision
    q = tau >= t
    qdeg_g = np.bincount(pg[q], minlength=ng)
    qdeg_p = np.bincount(pp[q], minlength=np_)
    tau_sum = np.bincount(pp, weights=tau, minlength=np_)
    match = q & (((qdeg_g[pg] == 1) & (qdeg_p[pp] == 1)) | (qdeg_g[pg] >= 2))
    match |= (deg_p[pp] >= 2) & (tau_sum[pp] >= t)
    correct = _bc(pair_item[match], n, inter[match])
    mdeg_g = np.bincount(pg[match], minlength=ng).astype(np.float64)
    mdeg_p = np.bincount(pp[match], minlength=np_).astype(np.float64)
    w = prm.cleval_granularity_penalty
    rpen = _bc(g_item, n, np.maximum(mdeg_g - 1.0, 0.0) * w)
    ppen = _bc(p_item, n, np.maximum(mdeg_p - 1.0, 0.0) * w)
    return (np.maximum(0.0, correct - ppen), p_chars, np.maximum(0.0, correct - rpen), g_chars)


# --------------------------------------------------------------------------- aggregation


def prf_arrays(
    pc: FloatArray, pt: FloatArray, rc: FloatArray, rt: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Element-wise precision, recall, F1 from credits and totals (conventions above)."""
    pc, pt, rc, rt = (np.asarray(a, dtype=np.float64) for a in (pc, pt, rc, rt))
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(pt > 0, pc / np.where(pt > 0, pt, 1.0), 1.0)
        r = np.where(rt > 0, rc / np.where(rt > 0, rt, 1.0), 1.0)
        s = p + r
        f = np.where(s > 0, 2.0 * p * r / np.where(s > 0, s, 1.0), 0.0)
    both = (pt == 0) & (rt == 0)
    return (np.where(both, 1.0, p), np.where(both, 1.0, r), np.where(both, 1.0, f))


def iou_array(inter: FloatArray, union: FloatArray) -> FloatArray:
    """Element-wise intersection over union; 1 where the union is empty."""
    inter, union = np.asarray(inter, np.float64), np.asarray(union, np.float64)
    return np.where(union > 0, inter / np.where(union > 0, union, 1.0), 1.0)


def per_item_scores(counts: SpanCounts) -> dict[str, dict[str, FloatArray]]:
    """Per-item scores: ``{metric: {"precision", "recall", "f1"}}`` or ``{"score"}`` arrays."""
    out: dict[str, dict[str, FloatArray]] = {}
    for key in METRICS:
        st = counts.stats[key]
        if key == "character_iou":
            out[key] = {"score": iou_array(st[0], st[1])}
        else:
            p, r, f = prf_arrays(*st)
            out[key] = {"precision": p, "recall": r, "f1": f}
    return out


def _nan_warn(what: str) -> float:
    import warnings

    warnings.warn(f"{what}: no items to average; returning NaN", RuntimeWarning, stacklevel=3)
    return float("nan")


def aggregate(
    counts: SpanCounts, average: str = "macro", groups: IntArray | None = None
) -> dict[str, dict[str, float]]:
    """Average per-item statistics into the output shape of ``auditor spans score``.

    ``macro`` is the mean of per-item scores; with ``groups`` (a group id per item,
    e.g. the answer of a leave-one-annotator-out comparison) it is the mean within
    each group first, then over groups. ``micro`` pools the statistics. No items
    gives NaN with a warning.
    """
    avg = _check_average(average)
    if counts.n_items == 0:
        nan = _nan_warn("span metrics")
        return {
            k: (
                {"score": nan}
                if k == "character_iou"
                else {"precision": nan, "recall": nan, "f1": nan}
            )
            for k in METRICS
        }
    if avg == "micro":
        out: dict[str, dict[str, float]] = {}
        for key in METRICS:
            sums = [float(np.sum(a)) for a in counts.stats[key]]
            if key == "character_iou":
                out[key] = {"score": float(iou_array(np.array(sums[0]), np.array(sums[1])))}
            else:
                p, r, f = prf_arrays(*(np.array(x) for x in sums))
                out[key] = {"precision": float(p), "recall": float(r), "f1": float(f)}
        return out
    scores = per_item_scores(counts)
    return {
        key: {name: _group_mean(arr, groups) for name, arr in d.items()}
        for key, d in scores.items()
    }


def _group_mean(values: FloatArray, groups: IntArray | None) -> float:
    if groups is None:
        return float(np.mean(values))
    g = np.asarray(groups, dtype=np.int64)
    if g.shape != values.shape:
        raise SpanValidationError(
            f"{g.shape[0]} group ids for {values.shape[0]} items", field="groups"
        )
    _, inv = np.unique(g, return_inverse=True)
    sums = np.bincount(inv, weights=values)
    cnt = np.bincount(inv)
    return float(np.mean(sums / cnt))


# --------------------------------------------------------------------------- public API


def score_spans(
    gold: SpanBatch | Sequence[Any],
    pred: SpanBatch | Sequence[Any],
    *,
    average: str = "macro",
    params: SpanMetricParams | None = None,
) -> dict[str, dict[str, float]]:
    """All six metrics: ``{metric: {"precision", "recall", "f1"}}``, IoU ``{"score"}``.

    ``gold[k]`` and ``pred[k]`` are the span lists of item ``k`` (half-open
    ``[start, end]`` pairs) or canonical :class:`SpanBatch` objects.

    >>> score_spans([[(0, 5)]], [[(0, 5)]])["exact_span"]["f1"]
    1.0
    """
    avg = _check_average(average)
    return aggregate(span_counts(gold, pred, params), avg)


def _one(
    key: str,
    gold: SpanBatch | Sequence[Any],
    pred: SpanBatch | Sequence[Any],
    average: str,
    params: SpanMetricParams | None,
) -> dict[str, float]:
    return score_spans(gold, pred, average=average, params=params)[key]


def exact_span_f1(
    gold: SpanBatch | Sequence[Any], pred: SpanBatch | Sequence[Any], *, average: str = "macro"
) -> dict[str, float]:
    """Exact span precision / recall / F1 (boundaries must match exactly)."""
    return _one("exact_span", gold, pred, average, None)


def character_f1(
    gold: SpanBatch | Sequence[Any], pred: SpanBatch | Sequence[Any], *, average: str = "macro"
) -> dict[str, float]:
    """Character-level precision / recall / F1 over the span masks."""
    return _one("character", gold, pred, average, None)


def character_iou(
    gold: SpanBatch | Sequence[Any], pred: SpanBatch | Sequence[Any], *, average: str = "macro"
) -> dict[str, float]:
    """Character intersection over union: ``{"score": ...}``."""
    return _one("character_iou", gold, pred, average, None)


def deteval_1d(
    gold: SpanBatch | Sequence[Any],
    pred: SpanBatch | Sequence[Any],
    *,
    average: str = "macro",
    gold_coverage: float = 0.8,
    pred_coverage: float = 0.4,
    split_merge_credit: float = 0.8,
) -> dict[str, float]:
    """DetEval-1D precision / recall / F1 with its thresholds (published defaults)."""
    prm = SpanMetricParams(
        deteval_gold_coverage=gold_coverage,
        deteval_pred_coverage=pred_coverage,
        deteval_split_merge_credit=split_merge_credit,
    )
    return _one("deteval_1d", gold, pred, average, prm)


def cleval_1d(
    gold: SpanBatch | Sequence[Any],
    pred: SpanBatch | Sequence[Any],
    *,
    average: str = "macro",
    area_precision: float = 0.3,
    granularity_penalty: float = 1.0,
) -> dict[str, float]:
    """CLEval-1D precision / recall / F1 with its thresholds (published defaults)."""
    prm = SpanMetricParams(
        cleval_area_precision=area_precision, cleval_granularity_penalty=granularity_penalty
    )
    return _one("cleval_1d", gold, pred, average, prm)


def span_coverage_f1(
    gold: SpanBatch | Sequence[Any], pred: SpanBatch | Sequence[Any], *, average: str = "macro"
) -> dict[str, float]:
    """Span Coverage precision (P_cov) / recall (R_cov) / F1; report beside character IoU."""
    return _one("span_coverage", gold, pred, average, None)
