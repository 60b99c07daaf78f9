"""What ``auditor audit`` spends outside the models, as a whole process.

    python bench/audit_overhead.py prepare --work DIR [--data DIR] [--claims 150]
    python bench/audit_overhead.py run --work DIR [--rows OUT.json] [--batch-size N]

``prepare`` writes the first ``--claims`` WiCE dev claims as one-sentence answers and
ingests every evidence sentence of theirs (one document each, the WiCE pool shape)
into ``DIR/index`` and ``DIR/base.db``, once (minutes: it embeds the whole pool).

``run`` audits them in this fresh interpreter through the command line entry point
(:func:`auditor.cli.main`, ``--quiet``, the default offline panel) into a copy of
``DIR/base.db``, and prints one JSON line: the whole time from before the first
``auditor`` import, the import time of the command, the seconds inside the encoder's
and the reader's forward passes (``auditor.embedding._run_model`` and
``EntailmentModel.predict``, tokenisation included) and the rest (everything else:
the overhead a user waits for beyond the models). ``--rows`` writes every ledger row
of the run (clock readings removed) and the JSONL output, to compare two versions of
the code for identical results.

Run it from another checkout's root with that checkout first on ``PYTHONPATH`` to
time another version of the code with the same interpreter (interleave the two and
compare medians; the machine is shared and noisy).
"""

from __future__ import annotations

import time

T_START = time.perf_counter()

import argparse  # noqa: E402
import contextlib  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import resource  # noqa: E402
import shutil  # noqa: E402
import sqlite3  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from profile_paths import _wice, _write_jsonl  # noqa: E402  (stdlib imports only)

VOLATILE = {"created_at", "finished_at", "latency_s"}


def _cli(argv: list[str]) -> str:
    from auditor.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            main(argv)
        except SystemExit as exc:
            if exc.code not in (0, None):
                raise
    return out.getvalue()


def prepare(work: Path, data: Path, n: int) -> None:
    """Write the answers and build the index and base ledger under ``work``."""
    rows = _wice(data)[:n]
    work.mkdir(parents=True, exist_ok=True)
    docs = [
        {"id": f"{c}:{s}", "text": sent}
        for c, row in enumerate(rows)
        for s, sent in enumerate(row["evidence"])
        if sent.strip()
    ]
    answers = [{"id": f"a{c}", "question": "", "answer": r["claim"]} for c, r in enumerate(rows)]
    _write_jsonl(work / "docs.jsonl", docs)
    _write_jsonl(work / "answers.jsonl", answers)
    _cli(
        [
            "ingest",
            str(work / "docs.jsonl"),
            "--index",
            str(work / "index"),
            "--db",
            str(work / "base.db"),
            "--quiet",
        ]
    )
    print(f"prepared {len(answers)} answers, {len(docs)} documents in {work}")


def ledger_rows(db: Path) -> dict[str, list[list[Any]]]:
    """Every row of every table, sorted, without clock readings."""
    out: dict[str, list[list[Any]]] = {}
    with contextlib.closing(sqlite3.connect(db)) as conn:
        tables = [
            r[0]
            for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if r[0] != "alembic_version"
        ]
        for table in sorted(tables):
            cols = [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')]
            select = ", ".join(f'"{c}"' for c in cols if c not in VOLATILE)
            rows = conn.execute(f'SELECT {select} FROM "{table}"').fetchall()
            out[table] = sorted(([_plain(v) for v in r] for r in rows), key=repr)
    return out


def _plain(value: Any) -> Any:
    return value.hex() if isinstance(value, bytes) else value


class Clock:
    """Seconds inside the encoder's and the reader's forward passes."""

    def __init__(self) -> None:
        self.seconds = {"encoder": 0.0, "reader": 0.0}

    def install(self) -> None:
        from auditor import embedding  # numpy only: cheap, and counted below anyway
        from auditor.entailment import model

        embedding._run_model = self._wrap("encoder", embedding._run_model)  # type: ignore[method-assign]
        model.EntailmentModel.predict = self._wrap("reader", model.EntailmentModel.predict)  # type: ignore[method-assign]

    def _wrap(self, key: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds[key] += time.perf_counter() - t0

        return timed


STAGES: list[tuple[str, str, str]] = [
    # (label, module, attribute path): wall seconds summed over calls (outermost only)
    ("load spaCy", "auditor.extract.rules", "load_nlp"),
    ("load encoder", "auditor.embedding", "load_encoder"),
    ("load reader", "auditor.entailment.model", "_load_model"),
    ("open index", "auditor.retrieval.search", "EvidenceIndex.open"),
    ("extract", "auditor.extract.rules", "RuleExtractor.extract_detailed"),
    ("embed claims ahead", "auditor.runner", "embed_claims_ahead"),
    ("index.search", "auditor.retrieval.search", "EvidenceIndex.search"),
    ("gather evidence", "auditor.graph.flow", "gather_evidence"),
    ("panel judge", "auditor.judges.panel", "Panel.judge_sync"),
    ("route (needs_judging)", "auditor.graph.flow", "needs_judging"),
    ("stack", "auditor.graph.flow", "stack_audits"),
    ("label", "auditor.graph.flow", "label_audits"),
    ("localize", "auditor.graph.flow", "localize_audits"),
    ("answer results", "auditor.executor", "answer_results"),
    ("ledger record_answers", "ledger._claims", "ClaimRepository.record_answers"),
    ("claim records", "auditor.report.claims", "claim_records"),
]


class GcClock:
    """Seconds the cyclic garbage collector ran, per generation (``gc.callbacks``)."""

    def __init__(self) -> None:
        self.seconds = [0.0, 0.0, 0.0]
        self.runs = [0, 0, 0]
        self._t0 = 0.0

    def install(self) -> None:
        import gc

        gc.callbacks.append(self._tick)

    def _tick(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._t0 = time.perf_counter()
        else:
            self.seconds[info["generation"]] += time.perf_counter() - self._t0
            self.runs[info["generation"]] += 1


class Stages:
    """Wall seconds inside chosen functions (imports their modules first)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def install(self) -> None:
        import importlib

        for label, module, attr in STAGES:
            owner: Any = importlib.import_module(module)
            *path, name = attr.split(".")
            for part in path:
                owner = getattr(owner, part)
            fn = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
            wrapped = self._wrap(label, fn.__func__ if isinstance(fn, classmethod) else fn)
            setattr(owner, name, classmethod(wrapped) if isinstance(fn, classmethod) else wrapped)

    def _wrap(self, label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        depth = [0]

        def timed(*args: Any, **kwargs: Any) -> Any:
            depth[0] += 1
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                depth[0] -= 1
                if depth[0] == 0:
                    self.seconds[label] = self.seconds.get(label, 0.0) + time.perf_counter() - t0

        return timed


def run(
    work: Path,
    rows_out: Path | None,
    stages: bool = False,
    warm: bool = False,
    profile: Path | None = None,
    batch_size: int | None = None,
) -> dict[str, Any]:
    """Audit the prepared answers in this process; the time breakdown.

    ``warm``: as ``bench_throughput.py`` measures its audit part, with :mod:`auditor`
    imported and the encoder and the reader loaded before the clock starts (``wall_s``
    is then the command alone)."""
    global T_START
    clock = Clock()
    gc_clock = GcClock()
    t0 = time.perf_counter()
    clock.install()
    gc_clock.install()
    timer = Stages()
    if stages:  # imports the staged modules (and what they import) up front
        timer.install()
    import auditor.cli.audit  # the command's own imports, as a user pays them

    imports = time.perf_counter() - t0
    if warm:
        from auditor import Auditor, embedding  # noqa: F401
        from auditor.entailment.model import load_model

        embedding.encode(["warm up"], cache=False)
        load_model()
        clock.seconds = {"encoder": 0.0, "reader": 0.0}
        gc_clock.seconds, gc_clock.runs = [0.0, 0.0, 0.0], [0, 0, 0]
        timer.seconds.clear()
        T_START = time.perf_counter()
        imports = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "ledger.db"
        shutil.copyfile(work / "base.db", db)
        t1 = time.perf_counter()
        prof = None
        if profile is not None:  # the command only (with --warm: no imports, no loads)
            import cProfile

            prof = cProfile.Profile()
            prof.enable()
        output = _cli(
            [
                "audit",
                str(work / "answers.jsonl"),
                "--index",
                str(work / "index"),
                "--db",
                str(db),
                "--as-of",
                "2026-06-30",
                "--quiet",
                *(["--batch-size", str(batch_size)] if batch_size else []),
            ]
        )
        command = time.perf_counter() - t1
        if prof is not None and profile is not None:
            prof.disable()
            prof.dump_stats(str(profile))
        if rows_out is not None:
            rows_out.write_text(
                json.dumps({"ledger": ledger_rows(db), "output": output.splitlines()}),
                encoding="utf-8",
            )
    wall = time.perf_counter() - T_START
    claims = sum(len(json.loads(line)["claims"]) for line in output.splitlines() if line)
    enc, rd = clock.seconds["encoder"], clock.seconds["reader"]
    import auditor

    return {
        "code": str(Path(auditor.__file__).resolve().parent.parent),
        "claims": claims,
        "wall_s": round(wall, 3),
        "imports_s": round(imports, 3),
        "command_s": round(command, 3),
        "encoder_s": round(enc, 3),
        "reader_s": round(rd, 3),
        "other_s": round(wall - enc - rd, 3),
        "claims_per_s": round(claims / wall, 3),
        "load": os.getloadavg()[0],
        "gc_s": [round(x, 3) for x in gc_clock.seconds],
        "gc_runs": gc_clock.runs,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        **({"stages": {k: round(v, 3) for k, v in timer.seconds.items()}} if stages else {}),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--work", type=Path, required=True)
    p.add_argument("--data", default=None)
    p.add_argument("--claims", type=int, default=150)
    r = sub.add_parser("run")
    r.add_argument("--work", type=Path, required=True)
    r.add_argument("--rows", type=Path, default=None, help="write the ledger rows here")
    r.add_argument("--stages", action="store_true", help="time the stages too")
    r.add_argument("--warm", action="store_true", help="imports and models loaded first")
    r.add_argument("--profile", type=Path, default=None, help="cProfile the command to this file")
    r.add_argument("--batch-size", type=int, default=None, help="the audit's answers per batch")
    args = ap.parse_args()
    if args.cmd == "prepare":
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from calibrate_shared import data_dir

        prepare(args.work, data_dir(args.data), args.claims)
    else:
        result = run(args.work, args.rows, args.stages, args.warm, args.profile, args.batch_size)
        print(json.dumps(result))


if __name__ == "__main__":
    main()
