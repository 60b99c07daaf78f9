"""Benchmark ``reaudit --only-impacted`` against a full re-audit and a full audit at the new
date, on the corpus of ``tests/test_reaudit_user.py`` (a ferry timetable with fares that
gets a third dated version after the run, a library, a kettle's warranty terms, a pool),
optionally grown by ``--extra`` one-fact documents and ``--extra-answers`` answers of two
of their facts (claims the update does not touch).

The corpus is ingested as the test does (the ferry's second version in its own ingest),
the answers are audited as of 2025-03-01 with the real pipeline (rules extractor, index,
offline panel, shipped stacker, learned label decision), the ferry's v3 (2025-05-01) is
ingested, and the ledger is copied. Then, in this process, each of

- ``reaudit --only-impacted`` as of 2025-06-01,
- a full ``reaudit`` as of 2025-06-01 (every claim judged again),
- a full ``audit`` of the same answers as of 2025-06-01 (a new run, nothing reused),

runs ``--repeat`` times on a fresh copy of that ledger, with the embedding cache and the
entailment reader's pair cache cleared before each (so no run reads what another one
read in memory; a re-audit still reuses its parent run's stored reader scores, as it
does in a new process), after one warm-up re-audit at another date that loads the
models. Prints per mode the claims judged, the best and median wall time, the ratios
between the modes, what ``impact`` names, and checks that the three give the same labels.

Usage::

    python bench/bench_reaudit.py [--extra 0] [--extra-answers 0] [--repeat 3] [--processes]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the corpus of the user-level test
sys.path.insert(0, str(ROOT / "bench"))

T1, T2 = "2025-03-01", "2025-06-01"
MODES = ("only-impacted", "full reaudit", "full audit")


def _clear_caches() -> None:
    from auditor import embedding
    from auditor.entailment.model import load_model

    embedding.clear_cache()
    load_model().clear_scores()


def _corpus(
    args: argparse.Namespace,
) -> tuple[list[list[Any]], list[Any], list[Any], list[dict[str, Any]]]:
    """(ingests before the run, the update after it, answers as the CLI reads them, and
    their records)."""
    from bench_freshness import PLACES, THINGS, corpus_fact

    from auditor.answers import answers_from_records
    from auditor.retrieval.documents import make_document
    from tests.test_reaudit_user import ANSWERS, FIRST_INGEST, JANUARY_UPDATE, MAY_UPDATE

    def docs(rows: list[dict[str, Any]]) -> list[Any]:
        return [make_document(r["id"], r["text"], published_at=r["published_at"]) for r in rows]

    rng = random.Random(0)
    n_facts = len(PLACES) * len(THINGS)
    extra = rng.sample(range(n_facts), min(args.extra, n_facts))
    values = {i: rng.randint(3, 90) for i in extra}
    first = docs(FIRST_INGEST) + [
        make_document(f"fact-{i}", corpus_fact(i, v), published_at="2024-01-01")
        for i, v in values.items()
    ]
    records = list(ANSWERS)
    for n in range(args.extra_answers if len(extra) >= 2 else 0):
        i, j = rng.sample(extra, 2)
        text = f"{corpus_fact(i, values[i])} {corpus_fact(j, values[j])}"
        records.append({"id": f"extra-{n}", "answer": text})
    answers = answers_from_records(enumerate(records, 1), source="bench answers")
    return [first, docs(JANUARY_UPDATE)], docs(MAY_UPDATE), answers, records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--extra", type=int, default=0, help="one-fact documents added")
    parser.add_argument("--extra-answers", type=int, default=0, help="answers about them")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--processes",
        action="store_true",
        help="also time each mode as its own `auditor` command in a new process (model "
        "loading included), as a user runs it",
    )
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from auditor import AuditConfig, Auditor
    from auditor.clock import parse_datetime
    from auditor.freshness import find_impact, reaudit
    from auditor.retrieval import ingest
    from ledger import open_ledger

    before, update, answers, records = _corpus(args)
    with tempfile.TemporaryDirectory() as tmp:
        index, pristine = Path(tmp) / "index", Path(tmp) / "pristine.db"

        def record(result: Any) -> None:
            versions = {
                (v.doc_id, v.version): v
                for v in (
                    *result.unchanged,
                    *result.retimed_versions,
                    *result.superseded_versions,
                    *result.added_versions,
                )
            }
            with open_ledger(pristine) as ledger:
                ledger.record_corpus(list(versions.values()), list(result.chunks))

        for docs in before:
            ingest(docs, index, on_commit=record)
        t0 = time.perf_counter()
        with Auditor(index, pristine, config=AuditConfig(as_of=parse_datetime(T1))) as auditor:
            run = auditor.audit(answers)
        first_audit = time.perf_counter() - t0
        ingest(update, index, on_commit=record)
        with open_ledger(pristine) as ledger:
            n_claims = len(ledger.claim_results(run.run_id))
            impacted = find_impact(ledger, runs=[run.run_id], as_of=parse_datetime(T2))
        print(
            f"corpus: {sum(len(d) for d in before) + len(update)} versions "
            f"({args.extra} extra documents), {len(answers)} answers, {n_claims} claims; "
            f"audit as of {T1}: {first_audit:.1f} s; impact as of {T2} names "
            f"{len(impacted.claims)} claims"
        )

        def fresh_copy(name: str) -> Path:
            path = Path(tmp) / f"{name}.db"
            shutil.copyfile(pristine, path)
            return path

        def judged_votes(db: Path, run_id: str) -> int:
            with open_ledger(db) as ledger:
                return sum(1 for rows in ledger.claim_votes(run_id).values() if rows)

        def only_impacted(auditor: Any) -> tuple[dict[str, str], int, str]:
            result = reaudit(auditor, run.run_id, as_of=T2, only_impacted=True)
            return _labels(auditor, result.run_id), result.n_rejudged, result.run_id

        def full_reaudit(auditor: Any) -> tuple[dict[str, str], int, str]:
            result = reaudit(auditor, run.run_id, as_of=T2, only_impacted=False)
            return _labels(auditor, result.run_id), -1, result.run_id

        def full_audit(auditor: Any) -> tuple[dict[str, str], int, str]:
            new = auditor.audit(answers)
            return _labels(auditor, new.run_id), -1, new.run_id

        calls: dict[str, Callable[[Any], tuple[dict[str, str], int, str]]] = {
            "only-impacted": only_impacted,
            "full reaudit": full_reaudit,
            "full audit": full_audit,
        }
        with Auditor(index, fresh_copy("warm")) as auditor:  # load the models
            reaudit(auditor, run.run_id, as_of="2025-04-01", only_impacted=False)
        times: dict[str, list[float]] = {m: [] for m in MODES}
        judged: dict[str, int] = {}
        seen: dict[str, dict[str, str]] = {}
        for r in range(args.repeat):
            for mode in MODES[r % len(MODES) :] + MODES[: r % len(MODES)]:  # rotate the order
                db = fresh_copy(f"{mode}-{r}".replace(" ", "-"))
                with Auditor(index, db, config=AuditConfig(as_of=parse_datetime(T2))) as auditor:
                    _clear_caches()
                    t0 = time.perf_counter()
                    labels, n, run_id = calls[mode](auditor)
                    times[mode].append(time.perf_counter() - t0)
                judged[mode] = n if n >= 0 else judged_votes(db, run_id)
                if mode in seen:
                    assert seen[mode] == labels, f"{mode}: labels differ between repeats"
                seen[mode] = labels
        wall: dict[str, list[float]] = {m: [] for m in MODES}
        if args.processes:
            answers_file = Path(tmp) / "answers.jsonl"
            answers_file.write_text("".join(json.dumps(r) + "\n" for r in records))
            for r in range(args.repeat):
                for mode in MODES[r % len(MODES) :] + MODES[: r % len(MODES)]:
                    db = fresh_copy(f"cli-{mode}-{r}".replace(" ", "-"))
                    place = ["--db", str(db), "--index", str(index), "--as-of", T2, "--quiet"]
                    argv = {
                        "only-impacted": ["reaudit", run.run_id, *place, "--only-impacted"],
                        "full reaudit": ["reaudit", run.run_id, *place],
                        "full audit": ["audit", str(answers_file), *place],
                    }[mode]
                    t0 = time.perf_counter()
                    subprocess.run(
                        [sys.executable, "-m", "auditor", *argv],
                        check=True,
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                        cwd=tmp,
                    )
                    wall[mode].append(time.perf_counter() - t0)
    assert seen["only-impacted"] == seen["full reaudit"] == seen["full audit"], "labels differ"
    best = {m: min(t) for m, t in times.items()}
    for mode in MODES:
        print(
            f"{mode:>14}: {judged[mode]:>4} of {n_claims} claims judged; best "
            f"{best[mode]:.2f} s, median {statistics.median(times[mode]):.2f} s "
            f"({', '.join(f'{t:.2f}' for t in times[mode])})"
        )
    print(
        f"only-impacted / full reaudit: {best['only-impacted'] / best['full reaudit']:.2f} of "
        f"the time for {judged['only-impacted'] / max(judged['full reaudit'], 1):.2f} of the "
        f"claims judged; only-impacted / full audit: "
        f"{best['only-impacted'] / best['full audit']:.2f} of the time for "
        f"{judged['only-impacted'] / max(judged['full audit'], 1):.2f} of the claims judged; "
        f"full reaudit / full audit: {best['full reaudit'] / best['full audit']:.2f}"
    )
    print("labels: identical claim by claim in the three")
    if args.processes:
        for mode in MODES:
            print(
                f"{mode:>14} as a command (new process): best {min(wall[mode]):.1f} s, "
                f"median {statistics.median(wall[mode]):.1f} s "
                f"({', '.join(f'{t:.1f}' for t in wall[mode])})"
            )
        print(
            f"as commands: only-impacted / full reaudit "
            f"{min(wall['only-impacted']) / min(wall['full reaudit']):.2f}, only-impacted / "
            f"full audit {min(wall['only-impacted']) / min(wall['full audit']):.2f}"
        )


def _labels(auditor: Any, run_id: str) -> dict[str, str]:
    return {c.claim_id: c.label or "" for c in auditor.ledger.claim_results(run_id)}


if __name__ == "__main__":
    main()
