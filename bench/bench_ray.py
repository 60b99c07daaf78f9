"""The Ray engine against the local engine on the same input, in one process.

Audits N answers (the bundled demo answers repeated with new ids; default 400) against
the demo corpus three times: ``--engine local``, then ``--engine ray --workers 1``,
then ``--workers 2`` (each Ray run starts and stops its own local cluster, as the
command line does), each into a fresh SQLite ledger. Reports, for each: wall time,
time to the first committed answer (start-up: Ray, actors, model loading), the
overall rate, and checks that the run ids, every claim's label and the ledger
row counts are the same, and every ledger row equal (floats to float32 rounding).

    .venv/bin/python bench/bench_ray.py                   # 400 answers, workers 1 and 2
    .venv/bin/python bench/bench_ray.py --answers 40 --workers 2 --out ray.json

Timings on a shared machine are noisy: compare the ratios of one run, not runs.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sqlite3
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

VOLATILE = {"created_at", "finished_at", "latency_s"}
TABLES = ("run", "answer", "claim", "retrieval", "judge_vote", "verdict")


def answers(n: int) -> list[dict[str, Any]]:
    """``n`` answers: the demo answers repeated, each copy with its own ids."""
    from auditor.demo import sample_path

    base = [
        json.loads(line)
        for line in sample_path("answers.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    return [{**base[i % len(base)], "id": f"{base[i % len(base)]['id']}#{i}"} for i in range(n)]


def rows(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    """The audit tables of a SQLite ledger, sorted, without clock readings."""
    out = {}
    conn = sqlite3.connect(db)
    try:
        for table in TABLES:
            cols = [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')]
            keep = ", ".join(f'"{c}"' for c in cols if c not in VOLATILE)
            out[table] = sorted(conn.execute(f'SELECT {keep} FROM "{table}"').fetchall(), key=repr)
    finally:
        conn.close()
    return out


def same(a: Any, b: Any) -> bool:
    """Equal, floats to float32 rounding (JSON texts compared parsed)."""
    if isinstance(a, str) and isinstance(b, str) and a != b and a[:1] in "[{":
        try:
            return same(json.loads(a), json.loads(b))
        except ValueError:
            return False
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-6)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def run_once(
    label: str, index: Path, db: Path, items: list[dict[str, Any]], engine: Any, batch: int
) -> dict[str, Any]:
    from auditor import AuditConfig, Auditor

    first: list[float] = []
    ready: list[float] = []
    claims = 0
    start = time.perf_counter()
    if not isinstance(engine, str):  # Ray: note when the actors have built their components
        from dataclasses import replace

        engine = replace(engine, on_workers=lambda pids: ready.append(time.perf_counter() - start))

    def committed(run_id: str, answer_id: str) -> None:
        if not first:
            first.append(time.perf_counter() - start)

    with Auditor(index, db, config=AuditConfig(as_of="2026-06-30")) as auditor:
        run = auditor.audit(items, batch_size=batch, engine=engine, on_answer=committed)
        wall = time.perf_counter() - start
        claims = len(run.claims)
        labels = {c["id"]: c["label"] for c in run.claims}
    result = {
        "engine": label,
        "run_id": run.run_id,
        "wall_s": round(wall, 2),
        "workers_ready_s": round(ready[0], 2) if ready else None,
        "first_answer_s": round(first[0], 2) if first else None,
        "answers_per_s": round(len(items) / wall, 3),
        "claims": claims,
        "claims_per_s": round(claims / wall, 2),
        "labels": dict(Counter(labels.values())),
        "_labels": labels,
    }
    print(
        f"{label:>14}: {wall:7.1f} s wall, Ray actors ready after {result['workers_ready_s']} s, "
        f"first answer after {result['first_answer_s']} s, {len(items) / wall:.2f} answers/s, "
        f"{claims / wall:.2f} claims/s",
        file=sys.stderr,
        flush=True,
    )
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=400)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--workers", default="1,2", help="Ray worker counts, e.g. 1,2")
    parser.add_argument("--out", type=Path, help="Also write the results as JSON here.")
    args = parser.parse_args(argv)

    from auditor.demo import prepare_sample_index
    from auditor.engine import Engine
    from auditor.progress import quiet_third_party

    quiet_third_party()
    items = answers(args.answers)
    work = Path(tempfile.mkdtemp(prefix="bench-ray-"))
    index = prepare_sample_index(work / "index", work / "corpus.db")
    results = [run_once("local", index, work / "local.db", items, "local", args.batch_size)]
    for n in (int(w) for w in args.workers.split(",")):
        results.append(
            run_once(
                f"ray workers={n}",
                index,
                work / f"ray{n}.db",
                items,
                Engine("ray", workers=n),
                args.batch_size,
            )
        )
    base = results[0]
    want = rows(work / "local.db")
    for r in results[1:]:
        got = rows(work / f"ray{r['engine'].split('=')[1]}.db")
        r["same_run_id"] = r["run_id"] == base["run_id"]
        r["same_labels"] = r["_labels"] == base["_labels"]
        r["row_counts"] = {t: len(got[t]) for t in TABLES}
        r["same_row_counts"] = r["row_counts"] == {t: len(want[t]) for t in TABLES}
        r["same_rows"] = all(same(got[t], want[t]) for t in TABLES)
        r["rows_bit_identical"] = got == want
        r["wall_ratio_vs_local"] = round(r["wall_s"] / base["wall_s"], 3)
    base["row_counts"] = {t: len(want[t]) for t in TABLES}
    for r in results:
        r.pop("_labels")
    summary = {
        "answers": args.answers,
        "batch_size": args.batch_size,
        "cpu_count": os.cpu_count(),
        "results": results,
    }
    text = json.dumps(summary, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    ok = all(r["same_run_id"] and r["same_labels"] and r["same_rows"] for r in results[1:])
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
