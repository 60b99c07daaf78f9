"""Paired before/after on the evaluation sets' held-out side: two ``bench/calibrate_shared.py
fit-default`` outputs over the same items (``held_out["items"]``), one system of each.

    python bench/compare_held_out.py BEFORE.json AFTER.json [--system previous]

Prints, per set and pooled over the claim-level sets, kappa and balanced accuracy of the
system before and after, and the paired differences with 95 % cluster-bootstrap intervals
(the same resamples for both)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from auditor.stacking.metrics import bootstrap_scores, interval

CLAIM_SETS = ("wice", "factcheck")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument(
        "--system", default="previous", help="votes, scores, previous, reader alone"
    )
    args = parser.parse_args(argv)
    a, b = (json.loads(p.read_text())["held_out"]["items"] for p in (args.before, args.after))
    if a["ids"] != b["ids"]:
        raise SystemExit("error: the two outputs hold different items")
    datasets = np.array(a["datasets"])
    pred = np.column_stack(
        [np.asarray(a["predictions"][args.system]), np.asarray(b["predictions"][args.system])]
    )
    labels, clusters = np.asarray(a["labels"]), np.asarray(a["clusters"])
    groups = {name: datasets == name for name in dict.fromkeys(datasets.tolist())}
    groups["claim-level pooled"] = np.isin(datasets, CLAIM_SETS)
    out = {}
    for name, mask in groups.items():
        s = bootstrap_scores(
            pred[mask], labels[mask], clusters[mask], n_boot=2000, rng=np.random.default_rng(0)
        )
        row = {}
        for metric, point, boot in (
            ("kappa", s.kappa, s.boot_kappa),
            ("bacc", s.bacc, s.boot_bacc),
        ):
            row[metric] = [round(float(point[0]), 3), round(float(point[1]), 3)]
            row[f"{metric}_difference"] = round(float(point[1] - point[0]), 3)
            row[f"{metric}_interval"] = [round(x, 3) for x in interval(boot[:, 1] - boot[:, 0])]
        out[name] = row
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
