"""Paired comparison of two ``calibrate_shared.py fit-default`` runs on the same held-out items.

``fit-default`` prints a JSON summary whose ``held_out.items`` keeps every item's
prediction per system (``votes``, ``scores``, ``previous``, ``reader alone``). Two runs on
the same items (same ``--eval-sets``, ``--eval-limit`` and seed; e.g. before and after a
judge change) are compared here with the paired cluster bootstrap: balanced accuracy
(abstentions counted as errors), κ and abstention rate per data set and pooled over the
claim-level sets, with 95 % intervals of the differences.

Usage::

    python bench/compare_fits.py BEFORE.json AFTER.json [--before votes] [--after votes]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import calibrate_shared as shared

from auditor.stacking.metrics import bootstrap_scores, interval


def compare(before: dict, after: dict, col_a: str, col_b: str, n_boot: int = 2000) -> dict:
    """Per group: both systems' bacc/κ/abstention and the paired differences (after − before)."""
    a, b = before["held_out"]["items"], after["held_out"]["items"]
    if a["ids"] != b["ids"]:
        raise SystemExit("the two runs were not scored on the same held-out items")
    labels, clusters = np.array(a["labels"]), np.array(a["clusters"])
    datasets = np.array(a["datasets"])
    groups = {d: datasets == d for d in dict.fromkeys(a["datasets"])}
    groups["claim-level pooled"] = np.isin(datasets, shared.CLAIM_SETS)
    out = {}
    for group, mask in groups.items():
        if not mask.any():
            continue
        pred = np.stack(
            [np.array(a["predictions"][col_a])[mask], np.array(b["predictions"][col_b])[mask]],
            axis=1,
        )
        boot = bootstrap_scores(
            pred, labels[mask], clusters[mask], n_boot=n_boot, rng=np.random.default_rng(0)
        )
        out[group] = {
            "n": int(mask.sum()),
            "bacc": [float(boot.bacc[0]), float(boot.bacc[1])],
            "delta_bacc": [
                float(boot.bacc[1] - boot.bacc[0]),
                *interval(boot.boot_bacc[:, 1] - boot.boot_bacc[:, 0]),
            ],
            "kappa": [float(boot.kappa[0]), float(boot.kappa[1])],
            "delta_kappa": [
                float(boot.kappa[1] - boot.kappa[0]),
                *interval(boot.boot_kappa[:, 1] - boot.boot_kappa[:, 0]),
            ],
            "abstain": [float(np.mean(pred[:, j] == 0.5)) for j in (0, 1)],
        }
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--before-system", default="votes", help="column of the first run")
    parser.add_argument("--after-system", default="votes", help="column of the second run")
    args = parser.parse_args()
    result = compare(
        json.loads(Path(args.before).read_text(encoding="utf-8")),
        json.loads(Path(args.after).read_text(encoding="utf-8")),
        args.before_system,
        args.after_system,
    )
    for group, row in result.items():
        db, dk = row["delta_bacc"], row["delta_kappa"]
        print(
            f"{group:20s} n={row['n']:4d}  bacc {row['bacc'][0]:.3f} -> {row['bacc'][1]:.3f} "
            f"d {db[0]:+.3f} [{db[1]:+.3f}, {db[2]:+.3f}]  kappa {row['kappa'][0]:.3f} -> "
            f"{row['kappa'][1]:.3f} d {dk[0]:+.3f} [{dk[1]:+.3f}, {dk[2]:+.3f}]  abstain "
            f"{row['abstain'][0]:.2f} -> {row['abstain'][1]:.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
