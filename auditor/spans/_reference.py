"""Straightforward set-of-characters implementation of the six span metrics.

Slow on purpose: one item at a time, Python sets of character offsets and nested
loops over span pairs, written to follow the metric definitions literally (the
DetEval / CLEval passes mirror the Mycelium study's reference code). It is the
baseline of ``bench/bench_span_metrics.py`` and the oracle of the tests; the
library uses the vectorised :mod:`auditor.spans.metrics`.
"""

from __future__ import annotations

from collections.abc import Sequence

from auditor.types import Span

Counts = dict[str, tuple[float, ...]]


def naive_canonical(spans: Sequence[Sequence[int]]) -> list[Span]:
    """Canonical spans via a set of characters (drop empty, merge overlap/adjacent)."""
    chars = {c for s, e in spans for c in range(int(s), int(e))}
    out: list[Span] = []
    for c in sorted(chars):
        if out and out[-1][1] == c:
            out[-1] = (out[-1][0], c + 1)
        else:
            out.append((c, c + 1))
    return out


def _chars(spans: Sequence[Span]) -> set[int]:
    return {c for s, e in spans for c in range(s, e)}


def _ov(a: Span, b: Span) -> int:
    return len(set(range(a[0], a[1])) & set(range(b[0], b[1])))


def naive_counts(
    gold: Sequence[Span],
    pred: Sequence[Span],
    *,
    tr: float = 0.8,
    tp: float = 0.4,
    pen: float = 0.8,
    ap: float = 0.3,
    w: float = 1.0,
) -> Counts:
    """Sufficient statistics of the six metrics for one item (canonical inputs)."""
    g, p = sorted(gold), sorted(pred)
    gc, pc = _chars(g), _chars(p)
    out: Counts = {}
    exact = float(len(set(g) & set(p)))
    out["exact_span"] = (exact, float(len(p)), exact, float(len(g)))
    inter = float(len(gc & pc))
    out["character"] = (inter, float(len(pc)), inter, float(len(gc)))
    out["character_iou"] = (inter, float(len(gc | pc)))
    contained = sum(any(gs <= ps and pe <= ge for gs, ge in g) for ps, pe in p)
    hit = sum(any(gs <= ps and pe <= ge for ps, pe in p) for gs, ge in g)
    out["span_coverage"] = (float(contained), float(len(p)), float(hit), float(len(g)))
    out["deteval_1d"] = _deteval(g, p, tr, tp, pen)
    out["cleval_1d"] = _cleval(g, p, ap, w)
    return out


def _deteval(g: list[Span], p: list[Span], tr: float, tp: float, pen: float) -> tuple[float, ...]:
    inter = [[_ov(a, b) for b in p] for a in g]
    sig = [[inter[i][j] / (g[i][1] - g[i][0]) for j in range(len(p))] for i in range(len(g))]
    tau = [[inter[i][j] / (p[j][1] - p[j][0]) for j in range(len(p))] for i in range(len(g))]
    un_g, un_p = set(range(len(g))), set(range(len(p)))
    rc, pc = [0.0] * len(g), [0.0] * len(p)
    for i in range(len(g)):
        row = [j for j in range(len(p)) if inter[i][j] > 0]
        if len(row) != 1:
            continue
        j = row[0]
        col = [k for k in range(len(g)) if inter[k][j] > 0]
        if len(col) == 1 and sig[i][j] >= tr and tau[i][j] >= tp:
            rc[i], pc[j] = 1.0, 1.0
            un_g.discard(i)
            un_p.discard(j)
    for i in sorted(un_g):
        if sum(inter[i][j] > 0 for j in range(len(p))) <= 1:
            continue
        cand = [j for j in sorted(un_p) if inter[i][j] > 0 and tau[i][j] >= tp]
        if len(cand) == 1:
            j = cand[0]
            if sig[i][j] >= tr and tau[i][j] >= tp:
                rc[i], pc[j] = 1.0, 1.0
                un_g.discard(i)
                un_p.discard(j)
        elif len(cand) >= 2 and sum(sig[i][j] for j in cand) >= tr:
            rc[i] = pen
            for j in cand:
                pc[j] = pen
            un_g.discard(i)
            un_p.difference_update(cand)
    for j in sorted(un_p):
        if sum(inter[i][j] > 0 for i in range(len(g))) <= 1:
            continue
        cand = [i for i in sorted(un_g) if inter[i][j] > 0 and sig[i][j] >= tr]
        if len(cand) == 1:
            i = cand[0]
            if sig[i][j] >= tr and tau[i][j] >= tp:
                pc[j], rc[i] = 1.0, 1.0
                un_p.discard(j)
                un_g.discard(i)
        elif len(cand) >= 2 and sum(tau[i][j] for i in cand) >= tp:
            pc[j] = pen
            for i in cand:
                rc[i] = pen
            un_p.discard(j)
            un_g.difference_update(cand)
    return (sum(pc), float(len(p)), sum(rc), float(len(g)))


def _cleval(g: list[Span], p: list[Span], ap: float, w: float) -> tuple[float, ...]:
    inter = [[_ov(a, b) for b in p] for a in g]
    tau = [[inter[i][j] / (p[j][1] - p[j][0]) for j in range(len(p))] for i in range(len(g))]
    q = [[inter[i][j] > 0 and tau[i][j] >= ap for j in range(len(p))] for i in range(len(g))]
    match = [[False] * len(p) for _ in g]
    for i in range(len(g)):
        for j in range(len(p)):
            if q[i][j] and sum(q[i]) == 1 and sum(q[k][j] for k in range(len(g))) == 1:
                match[i][j] = True
    for i in range(len(g)):
        cand = [j for j in range(len(p)) if q[i][j]]
        if len(cand) >= 2:
            for j in cand:
                match[i][j] = True
    for j in range(len(p)):
        cand = [i for i in range(len(g)) if inter[i][j] > 0]
        if len(cand) >= 2 and sum(tau[i][j] for i in cand) >= ap:
            for i in cand:
                match[i][j] = True
    covered: set[int] = set()
    for i, (gs, ge) in enumerate(g):
        for j, (ps, pe) in enumerate(p):
            if match[i][j]:
                covered |= set(range(max(gs, ps), min(ge, pe)))
    correct = float(len(covered))
    rpen = sum(max(sum(match[i]) - 1, 0) * w for i in range(len(g)))
    ppen = sum(max(sum(match[i][j] for i in range(len(g))) - 1, 0) * w for j in range(len(p)))
    return (
        max(0.0, correct - ppen),
        float(len(_chars(p))),
        max(0.0, correct - rpen),
        float(len(_chars(g))),
    )


def _prf(pc: float, pt: float, rc: float, rt: float) -> tuple[float, float, float]:
    if pt == 0 and rt == 0:
        return 1.0, 1.0, 1.0
    p = pc / pt if pt > 0 else 1.0
    r = rc / rt if rt > 0 else 1.0
    f = 2.0 * p * r / (p + r) if p + r > 0 else 0.0
    return p, r, f


def naive_score(
    gold_lists: Sequence[Sequence[Sequence[int]]],
    pred_lists: Sequence[Sequence[Sequence[int]]],
    *,
    average: str = "macro",
) -> dict[str, dict[str, float]]:
    """All six metrics over items, the slow way (same output shape as ``score_spans``)."""
    per = [
        naive_counts(naive_canonical(g), naive_canonical(p))
        for g, p in zip(gold_lists, pred_lists, strict=True)
    ]
    out: dict[str, dict[str, float]] = {}
    keys = ("exact_span", "character", "character_iou", "deteval_1d", "cleval_1d", "span_coverage")
    for key in keys:
        if key == "character_iou":
            if average == "micro":
                i, u = sum(c[key][0] for c in per), sum(c[key][1] for c in per)
                out[key] = {"score": i / u if u else 1.0}
            else:
                vals = [c[key][0] / c[key][1] if c[key][1] else 1.0 for c in per]
                out[key] = {"score": sum(vals) / len(vals)}
            continue
        if average == "micro":
            tot = [sum(c[key][t] for c in per) for t in range(4)]
            p, r, f = _prf(*tot)
        else:
            prfs = [_prf(*c[key]) for c in per]
            p, r, f = (sum(x[t] for x in prfs) / len(prfs) for t in range(3))
        out[key] = {"precision": p, "recall": r, "f1": f}
    return out
