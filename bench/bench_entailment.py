"""Benchmarks of the shipped entailment cross-encoder.

Two parts (``--part``):

- ``heldout``: accuracy and balanced accuracy, three-way and binary (entailment vs not),
  on the evaluation parts of ``../shared/data/nli`` that training never sees (SICK test,
  SNLI test, GLUE RTE re-split test, held-out slices of the claim sets; see
  ``auditor/entailment/data.py``), for the fp32 model and its dynamic int8 version:
  the accuracy cost of quantising.
- ``speed``: pairs/s on two threads for a 30-word claim against a 200-word evidence
  window (real text: FaithBench sources and summaries), fp32 vs dynamic int8, with the
  ratio measured in the same process.

Usage::

    python bench/bench_entailment.py --part heldout [--data DIR] [--per-source 1500]
    python bench/bench_entailment.py --part speed [--data DIR] [--n 256]
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import calibrate_shared as shared

from auditor.entailment.data import LABEL_MAPPING, load_mix
from auditor.entailment.model import load_model
from auditor.entailment.train import _sample, evaluate


def part_heldout(root: Path, per_source: int, seed: int = 0) -> dict[str, object]:
    pairs = [p for p in load_mix(root / "nli") if p.split == "eval"]
    held_out = _sample(pairs, {s: per_source for s in LABEL_MAPPING},
                       np.random.default_rng(seed))
    results: dict[str, object] = {}
    for quantize in (False, True):
        model = load_model(quantize=quantize, threads=2)
        start = time.perf_counter()
        metrics = evaluate(model.predict, held_out)
        elapsed = time.perf_counter() - start
        name = "int8" if quantize else "fp32"
        results[name] = metrics
        print(f"\n== {name}: {len(held_out)} held-out pairs in {elapsed:.0f}s")
        print(f"  {'source':15s} {'n':>5s}  acc3   bacc3  acc2   bacc2")
        for source, row in metrics.items():
            acc3 = f"{row['accuracy']:.3f}" if "accuracy" in row else "  -  "
            bacc3 = f"{row['balanced_accuracy']:.3f}" if "balanced_accuracy" in row else "  -  "
            print(f"  {source:15s} {int(row['n']):5d}  {acc3}  {bacc3}  "
                  f"{row['binary_accuracy']:.3f}  {row['binary_balanced_accuracy']:.3f}")
    fp32, int8 = results["fp32"], results["int8"]
    assert isinstance(fp32, dict) and isinstance(int8, dict)
    cost = {s: {k: round(fp32[s][k] - int8[s][k], 4) for k in fp32[s] if k != "n"}
            for s in fp32}
    print("\naccuracy cost of int8 (fp32 minus int8):")
    for source, row in cost.items():
        print(f"  {source:15s} " + "  ".join(f"{k} {v:+.3f}" for k, v in row.items()))
    results["int8_cost"] = cost
    return results


def _speed_pairs(root: Path, n: int) -> tuple[list[str], list[str]]:
    windows, claims = [], []
    with open(root / "faithbench" / "FaithBench.csv", encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            source, summary = row["source"].split(), row["summary"].split()
            if len(source) >= 200 and len(summary) >= 30:
                windows.append(" ".join(source[:200]))
                claims.append(" ".join(summary[:30]))
            if len(windows) == n:
                break
    return windows, claims


def part_speed(root: Path, n: int, repeats: int = 3) -> dict[str, float]:
    windows, claims = _speed_pairs(root, n)
    rates = {}
    for quantize in (False, True):
        model = load_model(quantize=quantize, threads=2)
        model.predict(windows[:32], claims[:32])  # warm-up
        best = np.inf
        for _ in range(repeats):
            start = time.perf_counter()
            model.predict(windows, claims, batch_size=32)
            best = min(best, time.perf_counter() - start)
        rates["int8" if quantize else "fp32"] = len(windows) / best
    tokens = np.mean([len(t) for t in model.tokenizer(windows[:32], claims[:32])["input_ids"]])
    print(f"{len(windows)} pairs (200-word window + 30-word claim, ~{tokens:.0f} tokens), "
          f"2 threads, batch 32, best of {repeats}:")
    print(f"  fp32 {rates['fp32']:.1f} pairs/s; int8 {rates['int8']:.1f} pairs/s; "
          f"int8/fp32 speed ratio {rates['int8'] / rates['fp32']:.2f}")
    return rates


def main() -> None:
    parser = argparse.ArgumentParser(description="entailment judge benchmarks")
    parser.add_argument("--part", choices=("heldout", "speed"), required=True)
    parser.add_argument("--data", default=None, help="shared data folder")
    parser.add_argument("--per-source", type=int, default=1500)
    parser.add_argument("--n", type=int, default=256)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    root = shared.data_dir(args.data)
    result: object
    if args.part == "heldout":
        result = part_heldout(root, args.per_source)
    else:
        result = part_speed(root, args.n)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
