"""Where the time goes: cProfile of ``auditor ingest``, ``auditor audit`` and ``auditor
calibrate`` as whole commands on small real inputs, broken down per stage.

    python bench/profile_paths.py [--data DIR] [--path ingest|audit|calibrate|all]
                                  [--ingest-n 2000] [--audit-n 40] [--calibrate-n 120]
                                  [--out DIR]

Each path runs in its own fresh interpreter (so start-up and imports count, as they
do for a user), through the command line entry point :func:`auditor.cli.main` under
cProfile. Inputs come from the shared data (never committed):

- ingest: the first N WiCE dev evidence sentences, one document each (the WiCE
  pool shape: many one-sentence documents), into a fresh index and ledger;
- audit: N WiCE dev claims as one-sentence answers, against an index of the
  evidence sentences of those claims (built first, outside the profile);
- calibrate: N items, half WiCE dev (claim vs its article's sentences), half
  SummEdits news (summary vs its source article), default offline panel, B=2000.

Per stage the cumulative time of the function that does that stage is printed as
seconds and as a share of the command's wall time (the profiler adds overhead to
Python-heavy stages, so shares of pure-Python stages are upper bounds). Nested
stages are indented; a stage's share includes its children. Absolute seconds on
this shared machine are noisy; the shares are what to compare. ``--out`` keeps the
``.prof`` files (open them with ``python -m pstats`` or snakeviz).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

sys.path.insert(0, str(Path(__file__).resolve().parent))

Key = tuple[str, int, str]
# a stage: (label, depth, matcher) where matcher picks pstats keys; the stage's time is
# the largest cumulative time among the matched entries (outermost of nested matches)
# when ``how`` is "max", or their sum when "sum" (disjoint functions).
Stage = tuple[str, int, Callable[[Key], bool], str]


def _fn(file_part: str, name: str) -> Callable[[Key], bool]:
    return lambda k: file_part in k[0] and k[2] == name


def _code(func: Any) -> Callable[[Key], bool]:
    code = func.__code__
    return lambda k: (
        k[0] == code.co_filename and k[1] == code.co_firstlineno and k[2] == code.co_name
    )


def _judge_stages(depth: int) -> list[Stage]:
    """One stage per member of the default panel: the method that does its work."""
    from auditor.judges.base import LocalJudge
    from auditor.judges.panel import load_panel

    stages: list[Stage] = []
    for member in load_panel().members:
        cls = type(member)
        if cls.score_batch is not LocalJudge.score_batch:
            stages.append((f"judge {member.name}", depth, _code(cls.score_batch), "max"))
        else:
            stages.append((f"judge {member.name}", depth, _code(cls.score), "max"))
    return stages


MODEL_STAGES: list[Stage] = [
    ("load MiniLM encoder", 1, _fn("auditor/embedding.py", "load_encoder"), "max"),
    ("digest of encoder weights", 1, _fn("auditor/embedding.py", "model_digest"), "max"),
    ("load entailment reader", 1, _fn("auditor/entailment/model.py", "_load_model"), "max"),
    ("load spaCy", 1, _fn("spacy/__init__.py", "load"), "max"),
    ("MiniLM encode (tokenise + forward)", 1, _fn("sentence_transformers/", "encode"), "max"),
    ("  MiniLM forward (BertModel)", 2, _fn("models/bert/modeling_bert.py", "forward"), "max"),
    (
        "reader predict (tokenise + forward)",
        1,
        _fn("auditor/entailment/model.py", "predict"),
        "max",
    ),
]


def stages_for(path: str) -> list[Stage]:
    """The stages reported for one path."""
    imports: Stage = (
        "python imports (all)",
        1,
        _fn("<frozen importlib._bootstrap>", "_find_and_load"),
        "max",
    )
    if path == "ingest":
        return [
            imports,
            (
                "load_documents (parse JSONL)",
                1,
                _fn("auditor/retrieval/documents.py", "load_documents"),
                "max",
            ),
            ("retrieval.ingest", 1, _fn("auditor/retrieval/ingestion.py", "ingest"), "max"),
            ("reconcile versions", 2, _fn("auditor/retrieval/versions.py", "_reconcile"), "max"),
            ("chunking", 2, _fn("auditor/retrieval/chunking.py", "chunk_document"), "sum"),
            ("embed chunks", 2, _fn("auditor/retrieval/ingestion.py", "_embed"), "max"),
            (
                "write generation",
                2,
                _fn("auditor/retrieval/generation.py", "_write_generation"),
                "max",
            ),
            ("BM25 build", 3, _fn("auditor/retrieval/lexical.py", "build"), "max"),
            ("ledger record_corpus", 2, _fn("auditor/cli/index.py", "record"), "max"),
            *MODEL_STAGES,
        ]
    if path == "audit":
        return [
            imports,
            ("load answers", 1, _fn("auditor/answers.py", "coerce_answers"), "max"),
            ("open index", 1, _fn("auditor/retrieval/search.py", "open"), "max"),
            ("graph: extract", 1, _fn("auditor/graph/flow.py", "extract"), "sum"),
            ("graph: retrieve", 1, _fn("auditor/graph/flow.py", "retrieve"), "sum"),
            ("index.search", 2, _fn("auditor/retrieval/search.py", "search"), "sum"),
            ("graph: judge (panel)", 1, _fn("auditor/graph/flow.py", "judge"), "sum"),
            *_judge_stages(2),
            ("graph: stack", 1, _fn("auditor/graph/flow.py", "stack"), "sum"),
            ("graph: label", 1, _fn("auditor/graph/flow.py", "label"), "sum"),
            ("graph: localize", 1, _fn("auditor/graph/flow.py", "localize"), "sum"),
            ("graph: write (ledger)", 1, _fn("auditor/graph/flow.py", "write"), "sum"),
            (
                "claim records for output",
                1,
                _fn("auditor/report/claims.py", "claim_records"),
                "max",
            ),
            *MODEL_STAGES,
        ]
    return [
        imports,
        (
            "read calibration data",
            1,
            _fn("auditor/stacking/calibrate.py", "read_calibration_data"),
            "max",
        ),
        ("load panel", 1, _fn("auditor/judges/panel.py", "load_panel"), "max"),
        ("panel judging", 1, _fn("auditor/judges/panel.py", "judge"), "max"),
        *_judge_stages(2),
        (
            "calibrate_votes (folds, ladder, bootstrap, stacker)",
            1,
            _fn("auditor/stacking/calibrate.py", "calibrate_votes"),
            "max",
        ),
        ("bootstrap", 2, _fn("auditor/stacking/metrics.py", "bootstrap_scores"), "max"),
        ("ledger record_calibration", 1, _fn("auditor/runner.py", "record_calibration"), "max"),
        *MODEL_STAGES,
    ]


# ------------------------------------------------------------------ inputs
def _wice(data: Path) -> list[dict[str, Any]]:
    path = data / "wice" / "claim" / "dev.jsonl"
    if not path.is_file():
        sys.exit(f"WiCE dev not found at {path} (set --data or AUDITOR_DATA)")
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line]


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


def prepare(path: str, data: Path, work: Path, n: int) -> list[str]:
    """Write the inputs of one path under ``work``; return the CLI arguments."""
    rows = _wice(data)
    if path == "ingest":
        docs = [
            {"id": f"{c}:{s}", "text": sent}
            for c, row in enumerate(rows)
            for s, sent in enumerate(row["evidence"])
            if sent.strip()
        ][:n]
        f = _write_jsonl(work / "docs.jsonl", docs)
        return ["ingest", str(f), "--index", str(work / "index"), "--db", str(work / "l.db")]
    if path == "audit":
        chosen = rows[:n]
        docs = [
            {"id": f"{c}:{s}", "text": sent}
            for c, row in enumerate(chosen)
            for s, sent in enumerate(row["evidence"])
            if sent.strip()
        ]
        answers = [
            {"id": f"a{c}", "question": "", "answer": row["claim"]} for c, row in enumerate(chosen)
        ]
        d = _write_jsonl(work / "docs.jsonl", docs)
        a = _write_jsonl(work / "answers.jsonl", answers)
        from auditor.cli import main

        _run_cli(
            main, ["ingest", str(d), "--index", str(work / "index"), "--db", str(work / "l.db")]
        )
        return [
            "audit",
            str(a),
            "--index",
            str(work / "index"),
            "--db",
            str(work / "l.db"),
            "--quiet",
        ]
    from calibrate_shared import load

    half = n // 2
    records = load("wice", data, limit=half) + load("summedits:news", data, limit=n - half)
    f = _write_jsonl(work / "data.jsonl", records)
    return ["calibrate", str(f), "--db", str(work / "l.db")]


def _run_cli(main: Callable[[list[str]], None], argv: list[str]) -> None:
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()):
        try:
            main(argv)
        except SystemExit as exc:
            if exc.code not in (0, None):
                raise


# ------------------------------------------------------------------ one path
def profile_one(path: str, data: Path, n: int, out: Path | None) -> dict[str, Any]:
    """Profile one command in this (fresh) process; return the per-stage breakdown."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        argv = prepare(path, data, work, n)
        prof = cProfile.Profile()
        t0 = time.perf_counter()
        prof.enable()
        from auditor.cli import main

        _run_cli(main, argv)
        prof.disable()
        wall = time.perf_counter() - t0
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        prof.dump_stats(str(out / f"{path}.prof"))
    stats = pstats.Stats(prof)
    entries: dict[Key, Any] = stats.stats  # type: ignore[attr-defined]
    rows = []
    for label, depth, match, how in stages_for(path):
        cums = [v[3] for k, v in entries.items() if match(k)]
        t = (max(cums) if how == "max" else sum(cums)) if cums else 0.0
        rows.append(
            {"stage": label, "depth": depth, "seconds": round(t, 3), "share": round(t / wall, 4)}
        )
    return {"path": path, "n": n, "wall_s": round(wall, 3), "stages": rows}


def print_report(rep: dict[str, Any]) -> None:
    print(f"\n== {rep['path']} (n={rep['n']}): {rep['wall_s']:.1f} s under cProfile")
    print(f"{'stage':58s} {'seconds':>8s} {'share':>7s}")
    for r in rep["stages"]:
        if r["seconds"] == 0:
            continue
        name = "  " * (r["depth"] - 1) + r["stage"].strip()
        print(f"{name:58s} {r['seconds']:8.2f} {100 * r['share']:6.1f}%")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=None)
    ap.add_argument("--path", choices=("ingest", "audit", "calibrate", "all"), default="all")
    ap.add_argument("--ingest-n", type=int, default=2000)
    ap.add_argument("--audit-n", type=int, default=40)
    ap.add_argument("--calibrate-n", type=int, default=120)
    ap.add_argument("--out", type=Path, default=None, help="keep the .prof files here")
    ap.add_argument("--json", action="store_true", help="print the breakdown as JSON")
    args = ap.parse_args()
    from calibrate_shared import data_dir

    data = data_dir(args.data)
    sizes = {"ingest": args.ingest_n, "audit": args.audit_n, "calibrate": args.calibrate_n}
    if args.path != "all":
        rep = profile_one(args.path, data, sizes[args.path], args.out)
        if args.json:
            print(json.dumps(rep))
        else:
            print_report(rep)
        return
    for path in ("ingest", "audit", "calibrate"):
        cmd = [
            sys.executable,
            __file__,
            "--path",
            path,
            "--data",
            str(data),
            f"--{path}-n",
            str(sizes[path]),
            "--json",
        ]
        if args.out is not None:
            cmd += ["--out", str(args.out)]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            sys.exit(f"{path} failed:\n{proc.stderr[-3000:]}")
        print_report(json.loads(proc.stdout.strip().splitlines()[-1]))


if __name__ == "__main__":
    main()
