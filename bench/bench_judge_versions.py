"""One judge as committed at an earlier commit against the current one, in one process,
on the held-out side of the document split: balanced accuracy (abstentions counted as
errors), kappa, paired cluster-bootstrap intervals, votes changed, and the cost of each
version (seconds, encoder texts and reader pairs run through the networks).

Usage::

    python bench/bench_judge_versions.py --judge entity_consistency --before 6d40679
    python bench/bench_judge_versions.py --judge entailment --before 2e6d79c --n 80 \\
        [--sets wice,factcheck] [--json OUT] [--before-helpers auditor.text.quantities]

The earlier version is the judge's module as committed at ``--before`` (``git show``;
for a commit before the judge had a module of its own, the module its digest names,
``Judge.class_path``: ``auditor/judges/local.py``), executed privately (not
registered) with the current helpers it imports, except the modules named by
``--before-helpers``, taken from ``--before`` as well. A judge committed before the text
toolkit moved to ``auditor/text/`` imports helpers that are gone: name them
(``--before-helpers auditor.judges._text,auditor.judges._pronouns,auditor.labels``).
Each version reads every set from empty caches (the encoder's text cache and the
reader's score cache are cleared before each), the earlier version first, so the seconds
and the model calls compare. Data: ``--data``, else ``$AUDITOR_DATA``, else ``../shared/data``.
"""

from __future__ import annotations

import argparse
import inspect
import json
import re
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import calibrate_shared as shared

from auditor import embedding
from auditor.judges.base import Judge
from auditor.judges.catalog import build_judge
from auditor.stacking.metrics import bootstrap_scores, interval

SETS = ("wice", "factcheck", "faithbench", "summedits:news", "summedits:samsum")
ROOT = Path(__file__).resolve().parents[1]


def _source_at(commit: str, path: str) -> str:
    return subprocess.run(
        ["git", "show", f"{commit}:{path}"], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout


def _module_path_at(commit: str, cls: type) -> str:
    """The path of the judge's module at ``commit``: where it lives now, else the module its
    digest names (``class_path``: the module it was first published in)."""
    path = Path(inspect.getfile(cls)).resolve().relative_to(ROOT).as_posix()
    published = vars(cls).get("class_path")
    found = subprocess.run(
        ["git", "cat-file", "-e", f"{commit}:{path}"], cwd=ROOT, capture_output=True
    ).returncode
    if found != 0 and published:
        return published.rsplit(".", 1)[0].replace(".", "/") + ".py"
    return path


def judge_at(commit: str, current: Judge, helpers: tuple[str, ...] = ()) -> Judge:
    """The judge named like ``current`` as committed at ``commit`` (default parameters),
    from a private copy of its module; ``helpers`` (module names such as
    ``auditor.text.quantities``) are taken from ``commit`` too while that copy is imported."""
    cls = type(current)
    path = _module_path_at(commit, cls)
    source = re.sub(r"^@register_judge\(.*\)\n", "", _source_at(commit, path), flags=re.MULTILINE)
    source = re.sub(r",\s*register_judge\b", "", source)  # registered in base.py until the split
    module = types.ModuleType(f"before_{commit}_{cls.__module__.rsplit('.', 1)[-1]}")
    saved = {name: sys.modules.get(name) for name in helpers}  # None: gone since
    try:
        for name in helpers:
            old = types.ModuleType(name)
            sys.modules[name] = old
            helper_path = name.replace(".", "/") + ".py"
            exec(
                compile(_source_at(commit, helper_path), f"{commit}:{helper_path}", "exec"),
                old.__dict__,
            )
        sys.modules[module.__name__] = module  # dataclasses look their module up
        exec(compile(source, f"{commit}:{path}", "exec"), module.__dict__)
    finally:
        for name, kept in saved.items():
            if kept is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = kept
    judge: Judge = getattr(module, cls.__name__)()
    return judge


class Cost:
    """Seconds and model calls of one judge run, from empty caches."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.encoded = 0
        self.reader_pairs = 0
        self._encode = embedding._run_model

    def run(self, judge: Judge, pairs: list[Any]) -> list[float]:
        from auditor.entailment.model import load_model

        reader = load_model()
        reader.clear_scores()
        embedding.clear_cache()

        def counted(texts: list[str], batch_size: int) -> Any:
            self.encoded += len(texts)
            return self._encode(texts, batch_size)

        embedding._run_model = counted
        before = reader.forward_pairs
        t0 = time.perf_counter()
        try:
            votes = [v.value for v in judge.judge_sync(pairs)]
        finally:
            embedding._run_model = self._encode
        self.seconds += time.perf_counter() - t0
        self.reader_pairs += reader.forward_pairs - before
        return votes


def _ci(samples: np.ndarray) -> str:
    lo, hi = interval(samples)
    return f"[{lo:+.3f}, {hi:+.3f}]"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--judge", required=True, help="registered judge name")
    ap.add_argument("--before", required=True, help="git commit of the earlier version")
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--n", type=int, default=80, help="seeded held-out items per set")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--before-helpers",
        default="",
        help="comma-separated modules the earlier version takes from --before as well "
        "(e.g. auditor.text.quantities)",
    )
    ap.add_argument("--data", default=None)
    ap.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = ap.parse_args()
    current = build_judge(args.judge)
    helpers = tuple(h for h in args.before_helpers.split(",") if h)
    judges = (judge_at(args.before, current, helpers), current)
    print(f"{args.judge}: {args.before} (v{judges[0].version}) -> current (v{current.version})")
    root = shared.data_dir(args.data)
    costs = (Cost(), Cost())
    out: dict[str, Any] = {"judge": args.judge, "before": args.before, "sets": {}}
    for name in args.sets.split(","):
        records = shared.split_records(name, root, "eval", args.n, args.seed)
        pairs = shared.to_pairs(records)
        spent = [(c.seconds, c.encoded, c.reader_pairs) for c in costs]
        columns = [cost.run(j, pairs) for cost, j in zip(costs, judges, strict=True)]
        spent = [
            (c.seconds - s, c.encoded - e, c.reader_pairs - r)
            for c, (s, e, r) in zip(costs, spent, strict=True)
        ]
        votes = np.array(columns, dtype=float).T
        labels = np.array([r["label"] for r in records])
        clusters = np.array([r["cluster"] for r in records])
        b = bootstrap_scores(votes, labels, clusters, n_boot=2000, rng=np.random.default_rng(0))
        d_bacc, d_kappa = (
            b.boot_bacc[:, 1] - b.boot_bacc[:, 0],
            b.boot_kappa[:, 1] - b.boot_kappa[:, 0],
        )
        changed = int((votes[:, 0] != votes[:, 1]).sum())
        abstain = (votes == 0.5).mean(axis=0)
        print(
            f"{name:18s} n={len(labels)} bacc {b.bacc[0]:.3f} {_ci(b.boot_bacc[:, 0])} -> "
            f"{b.bacc[1]:.3f} {_ci(b.boot_bacc[:, 1])} d {b.bacc[1] - b.bacc[0]:+.3f} "
            f"{_ci(d_bacc)}; kappa {b.kappa[0]:.3f} -> {b.kappa[1]:.3f} d "
            f"{b.kappa[1] - b.kappa[0]:+.3f} {_ci(d_kappa)}; abstain {abstain[0]:.2f} -> "
            f"{abstain[1]:.2f}; votes changed {changed}; cost "
            + " -> ".join(f"{t:.1f} s, {e:,} texts, {r:,} pairs" for t, e, r in spent)
        )
        out["sets"][name] = {
            "n": len(labels),
            "bacc": [float(x) for x in b.bacc],
            "kappa": [float(x) for x in b.kappa],
            "d_bacc_ci": list(interval(d_bacc)),
            "d_kappa_ci": list(interval(d_kappa)),
            "abstain": [float(x) for x in abstain],
            "votes_changed": changed,
            "cost": [{"seconds": t, "encoded": e, "reader_pairs": r} for t, e, r in spent],
        }
    for label, cost in zip(("before", "current"), costs, strict=True):
        print(
            f"{label}: {cost.seconds:.1f} s, {cost.encoded:,} texts encoded, "
            f"{cost.reader_pairs:,} reader pairs"
        )
        out[label] = {
            "seconds": cost.seconds,
            "encoded": cost.encoded,
            "reader_pairs": cost.reader_pairs,
        }
    ratio = costs[0].seconds / max(costs[1].seconds, 1e-9)
    print(f"speed-up (seconds before / current): {ratio:.2f}x")
    if args.json is not None:
        args.json.write_text(json.dumps(out, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
