"""Speed of the six span metrics: vectorised numpy kernel vs a set-of-characters baseline.

Generates N random (gold, predicted) span-set pairs in the same process (predictions
are perturbed gold spans: shifted boundaries, splits, merges, drops, extra spans),
scores all six metrics with macro and micro averaging both ways, checks that the
per-item statistics are identical and the averages equal, and prints the ratio.

    python bench/bench_span_metrics.py --n 100000
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from auditor.spans import aggregate, span_counts
from auditor.spans._reference import naive_canonical, naive_counts, naive_score


def make_pairs(n: int, seed: int) -> tuple[list[list[list[int]]], list[list[list[int]]]]:
    """Random gold span sets and perturbed predictions (raw: unsorted, may overlap)."""
    rng = np.random.default_rng(seed)
    gold: list[list[list[int]]] = []
    pred: list[list[list[int]]] = []
    for _ in range(n):
        length = int(rng.integers(40, 300))
        g: list[list[int]] = []
        for _ in range(int(rng.integers(0, 5))):
            s = int(rng.integers(0, length - 1))
            g.append([s, min(length, s + int(rng.integers(1, 30)))])
        p: list[list[int]] = []
        for s, e in g:
            r = rng.random()
            if r < 0.15:
                continue  # dropped
            if r < 0.45:
                p.append([s, e])  # exact
                continue
            if r < 0.55 and e - s >= 4:  # split
                m = int(rng.integers(s + 1, e - 1))
                p += [[s, m], [m + 1, e]]
                continue
            d0, d1 = (int(x) for x in rng.integers(-4, 5, size=2))
            ns, ne = max(0, s + d0), min(length, e + d1)
            p.append([ns, max(ns, ne)])
        for _ in range(int(rng.integers(0, 2))):
            s = int(rng.integers(0, length - 1))
            p.append([s, min(length, s + int(rng.integers(1, 40)))])
        gold.append(g)
        pred.append(p)
    return gold, pred


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000, help="number of span-set pairs")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    gold, pred = make_pairs(args.n, args.seed)

    t0 = time.perf_counter()
    counts = span_counts(gold, pred)
    fast = {avg: aggregate(counts, avg) for avg in ("macro", "micro")}
    t_fast = time.perf_counter() - t0

    t0 = time.perf_counter()
    slow = {avg: naive_score(gold, pred, average=avg) for avg in ("macro", "micro")}
    t_slow = time.perf_counter() - t0

    # identical per-item statistics (the naive counts are recomputed outside the timing)
    mismatched = 0
    for k in range(args.n):
        ref = naive_counts(naive_canonical(gold[k]), naive_canonical(pred[k]))
        for key, vals in ref.items():
            if tuple(float(a[k]) for a in counts.stats[key]) != tuple(vals):
                mismatched += 1
    max_diff = max(abs(fast[a][m][s] - slow[a][m][s])
                   for a in fast for m in fast[a] for s in fast[a][m])
    print(f"pairs: {args.n}, gold spans: {sum(map(len, gold))}, pred spans: "
          f"{sum(map(len, pred))}")
    print(f"numpy kernel (6 metrics, macro+micro, incl. validation/canonicalisation): "
          f"{t_fast:.3f} s")
    print(f"set-of-characters baseline (same work):                         {t_slow:.3f} s")
    print(f"speed-up: {t_slow / t_fast:.1f}x")
    print(f"per-item statistics mismatches: {mismatched}; max |difference| of averages: "
          f"{max_diff:.3g}")
    for avg in ("macro", "micro"):
        print(avg, {m: round(v.get("f1", v.get("score", 0.0)), 4) for m, v in fast[avg].items()})
    if mismatched or max_diff > 1e-9:
        raise SystemExit("results differ")


if __name__ == "__main__":
    main()
