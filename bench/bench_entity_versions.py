"""Entity judge v2 (git 6d40679) against the current one, in one process, on the held-out
side of the document split (80 seeded items per set): balanced accuracy (abstentions
counted as errors), kappa, paired cluster-bootstrap intervals.

Usage::

    python bench/bench_entity_versions.py   # data: ../shared/data or $AUDITOR_DATA
"""

from __future__ import annotations

import subprocess
import sys
import types
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import calibrate_shared as shared

from auditor.judges.entity import EntityConsistencyJudge
from auditor.stacking.metrics import bootstrap_scores, interval

BEFORE = "6d40679"
SETS = ("wice", "factcheck", "faithbench", "summedits:news", "summedits:samsum")


def judge_at(commit: str) -> object:
    """The entity judge as committed at ``commit``, in a private module (not registered)."""
    source = subprocess.run(
        ["git", "show", f"{commit}:auditor/judges/entity.py"],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[1],
    ).stdout.replace('@register_judge("entity_consistency")\n', "")
    module = types.ModuleType("entity_before")
    sys.modules[module.__name__] = module  # dataclasses look their module up
    exec(compile(source, "entity_before.py", "exec"), module.__dict__)
    return module.EntityConsistencyJudge()


def _ci(samples: np.ndarray) -> str:
    lo, hi = interval(samples)
    return f"[{lo:+.3f}, {hi:+.3f}]"


def main() -> int:
    judges = (judge_at(BEFORE), EntityConsistencyJudge())
    root = shared.data_dir()
    for name in SETS:
        records = shared.split_records(name, root, "eval", 80, 0)
        pairs = shared.to_pairs(records)
        votes = np.stack([[v.value for v in j.judge_sync(pairs)] for j in judges], axis=1)
        labels = np.array([r["label"] for r in records])
        clusters = np.array([r["cluster"] for r in records])
        b = bootstrap_scores(votes, labels, clusters, n_boot=2000, rng=np.random.default_rng(0))
        print(
            f"{name:18s} n={len(labels)} bacc {b.bacc[0]:.3f} {_ci(b.boot_bacc[:, 0])} -> "
            f"{b.bacc[1]:.3f} {_ci(b.boot_bacc[:, 1])} d {b.bacc[1] - b.bacc[0]:+.3f} "
            f"{_ci(b.boot_bacc[:, 1] - b.boot_bacc[:, 0])}; kappa {b.kappa[0]:.3f} -> "
            f"{b.kappa[1]:.3f} d {b.kappa[1] - b.kappa[0]:+.3f} "
            f"{_ci(b.boot_kappa[:, 1] - b.boot_kappa[:, 0])}; votes changed "
            f"{int((votes[:, 0] != votes[:, 1]).sum())}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
