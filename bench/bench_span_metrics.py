"""Speed of the six span metrics: vectorised numpy kernel vs plain-Python baselines.

Generates N random (gold, predicted) span-set pairs (predictions are perturbed gold
spans: shifted boundaries, splits, merges, drops, extra spans).

Default (kernel) mode, in one process: scores all six metrics with macro and micro
averaging with the numpy kernel and with the set-of-characters reference, checks that
the per-item statistics are identical and the averages equal, and prints the ratio.

``--whole-process``: writes the pairs as gold and prediction JSONL files (with the
item text, so bounds are checked) and times two whole processes, start-up and file
parsing included: ``auditor spans score`` and the standard-library script
``bench/spans_score_plain.py`` computing the same six macro figures. Runs are
interleaved (``--repeats`` each), the ratio of medians is printed with the min-max
range of the per-pair ratios, and the two outputs must agree to 1e-9.

    python bench/bench_span_metrics.py --n 100000
    python bench/bench_span_metrics.py --n 100000 --whole-process --repeats 5
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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


_WORDS = (
    "the cat sat on a mat while seven owls watched from an old oak tree and "
    "nobody said anything at all about it "
)


def write_files(
    gold: list[list[list[int]]], pred: list[list[list[int]]], folder: Path, with_text: bool = True
) -> tuple[Path, Path]:
    """Gold and prediction JSONL files ({id, text, spans}); text covers every span."""
    text_src = _WORDS * 4
    g_path, p_path = folder / "gold.jsonl", folder / "pred.jsonl"
    with open(g_path, "w", encoding="utf-8") as gf, open(p_path, "w", encoding="utf-8") as pf:
        for k, (g, p) in enumerate(zip(gold, pred, strict=True)):
            length = max([e for _, e in g + p], default=0) + 3
            text = text_src[:length]
            extra = {"text": text} if with_text else {}
            gf.write(json.dumps({"id": f"item-{k}", **extra, "spans": g}) + "\n")
            pf.write(json.dumps({"id": f"item-{k}", **extra, "spans": p}) + "\n")
    return g_path, p_path


def _timed(cmd: list[str]) -> tuple[float, float, dict[str, dict[str, float]]]:
    """Wall seconds, CPU seconds (user + system) of the child, and its JSON output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr[-2000:]}")
    return elapsed, cpu, json.loads(proc.stdout)


def _summary(name: str, values: list[float]) -> str:
    return (
        f"{name}: median {statistics.median(values):.2f} s "
        f"(min {min(values):.2f}, max {max(values):.2f})"
    )


def whole_process(
    gold: list[list[list[int]]], pred: list[list[list[int]]], repeats: int, with_text: bool = True
) -> None:
    """Time ``auditor spans score`` against the plain-Python script, whole processes."""
    here = Path(__file__).resolve().parent
    exe = shutil.which("auditor", path=str(Path(sys.executable).parent)) or "auditor"
    with tempfile.TemporaryDirectory() as tmp:
        g_path, p_path = write_files(gold, pred, Path(tmp), with_text)
        files = ["--gold", str(g_path), "--pred", str(p_path)]
        ours_cmd = [exe, "spans", "score", *files]
        plain_cmd = [sys.executable, str(here / "spans_score_plain.py"), *files]
        ours_t: list[float] = []
        plain_t: list[float] = []
        ours_c: list[float] = []
        plain_c: list[float] = []
        for _ in range(repeats):
            t, c, ours = _timed(ours_cmd)
            ours_t.append(t)
            ours_c.append(c)
            t, c, plain = _timed(plain_cmd)
            plain_t.append(t)
            plain_c.append(c)
    diff = max(abs(ours[m][s] - plain[m][s]) for m in ours for s in ours[m])
    print(
        f"pairs: {len(gold)} ({'with' if with_text else 'without'} text); whole "
        f"processes, {repeats} interleaved runs each (start-up and parsing included)"
    )
    for what, o, p in (("wall", ours_t, plain_t), ("CPU (user+sys)", ours_c, plain_c)):
        ratios = [b / a for a, b in zip(o, p, strict=True)]
        print(f"-- {what} time")
        print("  " + _summary("auditor spans score", o))
        print("  " + _summary("plain-Python script", p))
        print(
            f"  speed-up (ratio of medians): {statistics.median(p) / statistics.median(o):.1f}x"
            f"; per-pair ratios {min(ratios):.1f}x-{max(ratios):.1f}x"
        )
    print(f"max |difference| of the six macro figures: {diff:.3g}")
    if diff > 1e-9:
        raise SystemExit("results differ")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000, help="number of span-set pairs")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--whole-process",
        action="store_true",
        help="time auditor spans score against bench/spans_score_plain.py",
    )
    ap.add_argument("--repeats", type=int, default=3, help="runs of each (--whole-process)")
    ap.add_argument(
        "--no-text", action="store_true", help="files without the item text (--whole-process)"
    )
    args = ap.parse_args()
    gold, pred = make_pairs(args.n, args.seed)
    if args.whole_process:
        whole_process(gold, pred, args.repeats, not args.no_text)
        return

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
    max_diff = max(
        abs(fast[a][m][s] - slow[a][m][s]) for a in fast for m in fast[a] for s in fast[a][m]
    )
    print(f"pairs: {args.n}, gold spans: {sum(map(len, gold))}, pred spans: {sum(map(len, pred))}")
    print(
        f"numpy kernel (6 metrics, macro+micro, incl. validation/canonicalisation): {t_fast:.3f} s"
    )
    print(f"set-of-characters baseline (same work):                         {t_slow:.3f} s")
    print(f"speed-up: {t_slow / t_fast:.1f}x")
    print(
        f"per-item statistics mismatches: {mismatched}; max |difference| of averages: "
        f"{max_diff:.3g}"
    )
    for avg in ("macro", "micro"):
        print(avg, {m: round(v.get("f1", v.get("score", 0.0)), 4) for m, v in fast[avg].items()})
    if mismatched or max_diff > 1e-9:
        raise SystemExit("results differ")


if __name__ == "__main__":
    main()
