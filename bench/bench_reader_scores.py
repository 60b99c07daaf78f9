"""What storing the entailment reader's pair scores with a run buys and costs, on the demo.

1. **Audit cost** (in this process): the demo run audited into a fresh SQLite ledger, with
   the time spent turning the reader's kept scores into ledger records and inserting them
   (``reader_score``) measured inside the audit, as a share of the audit's wall time.
2. **Ledger size**: the demo ledger's file with and without its ``reader_score`` rows
   (both VACUUMed), and the rows per run.
3. **Re-judge in a new process** (interleaved whole processes, ``auditor rejudge RUN
   --panel P.toml``): the default panel with the entailment judge's vote thresholds
   changed, each on a fresh copy of the demo ledger, ``stored`` (the run's scores in the
   ledger) against ``withheld`` (the same ledger with its ``reader_score`` rows deleted:
   what a run audited before migration 0007 has) and, with ``--main-src DIR --main-db
   DB``, the same command run with the code of another checkout (``PYTHONPATH=DIR``,
   e.g. a worktree of main) on a demo ledger that code wrote (the code before). Wall
   time of the whole process, and the reader pairs that reached the network
   (``EntailmentModel.forward_pairs`` of the process).

Usage: ``python bench/bench_reader_scores.py [--reps 2] [--panels contradict_at]
[--main-src DIR --main-db DB]``; prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

CHILD = """
import json, sys, time
t = time.perf_counter()
from auditor.cli import main
code = 0
try:
    main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
from auditor.entailment import model as m
loaded = m._load_model.cache_info().currsize > 0
pairs = m.load_model().forward_pairs if loaded else 0
print("CHILD " + json.dumps({"code": code, "model_loaded": loaded, "forward_pairs": pairs,
      "in_process_s": time.perf_counter() - t}), file=sys.stderr)
"""

PANELS = {
    "contradict_at": "contradict_at = 0.6\n",
    "support_reject": "support_at = 0.6\nreject_below = 0.25\n",
}
"""Changed vote thresholds of the entailment member (the last of the default panel)."""


def audit_demo(work: Path) -> dict[str, Any]:
    """Audit the demo into ``work/ledger.db``, timing the reader-score writes inside."""
    from auditor import reader_scores, runner
    from auditor.demo import DEMO_CONFIG, prepare_sample_index, sample_path
    from ledger import models, open_ledger, store

    spent = {"take_s": 0.0, "insert_s": 0.0, "rows": 0}
    take, insert = reader_scores.take, store.Ledger._insert_ignore

    def timed_take(*args: Any, **kwargs: Any) -> Any:
        t = time.perf_counter()
        out = take(*args, **kwargs)
        spent["take_s"] += time.perf_counter() - t
        return out

    def timed_insert(self: Any, conn: Any, model: Any, rows: Any) -> None:
        t = time.perf_counter()
        insert(self, conn, model, rows)
        if model is models.ReaderScoreRow:
            spent["insert_s"] += time.perf_counter() - t
            spent["rows"] += len(rows)

    from auditor._auditor import Auditor

    db = work / "ledger.db"
    with open_ledger(db) as ledger:
        prepare_sample_index(work / "index", ledger)
        runner.take_reader_scores = timed_take  # type: ignore[assignment]
        store.Ledger._insert_ignore = timed_insert  # type: ignore[method-assign]
        try:
            with Auditor(work / "index", ledger, config=DEMO_CONFIG) as auditor:
                t = time.perf_counter()
                run = auditor.audit(sample_path("answers.jsonl"))
                audit_s = time.perf_counter() - t
        finally:
            runner.take_reader_scores = take  # type: ignore[assignment]
            store.Ledger._insert_ignore = insert  # type: ignore[method-assign]
    write_s = spent["take_s"] + spent["insert_s"]
    return {
        "run_id": run.run_id,
        "audit_s": round(audit_s, 3),
        "reader_score_rows": spent["rows"],
        "take_s": round(spent["take_s"], 5),
        "insert_s": round(spent["insert_s"], 5),
        "write_share_of_audit": round(write_s / audit_s, 5),
        "db": str(db),
    }


def ledger_sizes(db: Path, work: Path) -> dict[str, Any]:
    """File sizes of the ledger with and without its reader scores (both VACUUMed)."""
    sizes = {}
    for name, drop in (("with_scores", False), ("without_scores", True)):
        copy = work / f"size-{name}.db"
        shutil.copy(db, copy)
        with sqlite3.connect(copy) as conn:
            if drop:
                conn.execute("DELETE FROM reader_score")
        conn = sqlite3.connect(copy)
        conn.execute("VACUUM")
        conn.close()
        sizes[name] = copy.stat().st_size
    growth = sizes["with_scores"] - sizes["without_scores"]
    return {
        **sizes,
        "growth_bytes": growth,
        "growth_share": round(growth / sizes["without_scores"], 4),
    }


def rejudge_once(python: str, db: Path, run_id: str, panel: Path, src: Path) -> dict[str, Any]:
    """One ``auditor rejudge`` as a whole process of ``python`` importing the code in
    ``src``: its wall time and the reader pairs that reached the network."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(src)}
    cwd = src
    argv = [python, "-c", CHILD, "rejudge", run_id[:12], "--panel", str(panel), "--db", str(db)]
    argv += ["--bootstrap", "50", "--format", "json"]
    t = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd, check=False)
    wall = time.perf_counter() - t
    line = next((x for x in done.stderr.splitlines() if x.startswith("CHILD ")), None)
    if line is None or done.returncode != 0:
        raise RuntimeError(f"rejudge failed ({done.returncode}): {done.stderr[-2000:]}")
    child = json.loads(line.removeprefix("CHILD "))
    if child["code"] != 0:
        raise RuntimeError(f"rejudge exited {child['code']}: {done.stderr[-2000:]}")
    labels = json.loads(done.stdout)["agreement"]
    return {"wall_s": round(wall, 3), **child, "agreement_kappa": labels.get("kappa")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--main-src", help="a checkout of the code before (e.g. main)")
    parser.add_argument("--main-db", help="a demo ledger written by that checkout")
    parser.add_argument("--panels", default=",".join(PANELS))
    args = parser.parse_args()
    repo = Path(__file__).resolve().parents[1]
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        audit = audit_demo(work)
        out["audit"] = audit
        db = Path(audit["db"])
        out["ledger_size"] = ledger_sizes(db, work)
        from auditor.demo import sample_path

        default = sample_path("panel.toml").read_text(encoding="utf-8")
        withheld = work / "withheld.db"
        shutil.copy(db, withheld)
        with sqlite3.connect(withheld) as conn:
            conn.execute("DELETE FROM reader_score")
        variants: dict[str, tuple[str, Path, Path]] = {
            "stored": (sys.executable, db, repo),
            "withheld": (sys.executable, withheld, repo),
        }
        if args.main_src and args.main_db:
            variants["main"] = (sys.executable, Path(args.main_db), Path(args.main_src))
        results: dict[str, dict[str, list[dict[str, Any]]]] = {}
        for name in args.panels.split(","):
            panel = work / f"{name}.toml"
            panel.write_text(default + "[judges.params]\n" + PANELS[name])
            results[name] = {v: [] for v in variants}
            for rep in range(args.reps):
                for variant, (python, source, cwd) in variants.items():  # interleaved
                    copy = work / f"{name}-{variant}-{rep}.db"
                    shutil.copy(source, copy)
                    results[name][variant].append(
                        rejudge_once(python, copy, audit["run_id"], panel, cwd)
                    )
                    copy.unlink()
        out["rejudge"] = {
            name: {
                variant: {
                    "wall_s": [r["wall_s"] for r in runs],
                    "median_wall_s": statistics.median(r["wall_s"] for r in runs),
                    "forward_pairs": [r["forward_pairs"] for r in runs],
                    "model_loaded": [r["model_loaded"] for r in runs],
                    "kappa": [r["agreement_kappa"] for r in runs],
                }
                for variant, runs in per.items()
            }
            for name, per in results.items()
        }
        for per in out["rejudge"].values():
            if "withheld" in per:
                per["stored_over_withheld"] = round(
                    per["stored"]["median_wall_s"] / per["withheld"]["median_wall_s"], 3
                )
            if "main" in per:
                per["stored_over_main"] = round(
                    per["stored"]["median_wall_s"] / per["main"]["median_wall_s"], 3
                )
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
