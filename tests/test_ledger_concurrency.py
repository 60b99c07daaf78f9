"""Two processes writing runs to one PostgreSQL ledger at once lose nothing.

Skips without ``AUDITOR_TEST_PG_URL`` (``.ci/run`` starts a throwaway server).
Both processes open the same fresh database (both race to create the schema),
write overlapping shared rows (the same documents, chunks and components) and
their own runs, answer by answer; afterwards every run, answer, claim, vote and
verdict of both is there exactly once.
"""

from __future__ import annotations

import multiprocessing as mp
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ledger import open_ledger

N_RUNS = 3
N_ANSWERS = 12
CLAIMS_PER_ANSWER = 3


def _writer(url: str, worker: int, start: Any) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from tests._ledger_runs import Item, add_run

    start.wait(30)
    with open_ledger(url) as ledger:
        for r in range(N_RUNS):
            items = [
                Item(
                    f"a{i}",
                    f"claim {i}-{j} by worker {worker}",
                    "supported",
                    evidence=f"shared evidence {i}-{j}",
                    votes=(("j", 0.0), ("k", 1.0)),
                )
                for i in range(N_ANSWERS)
                for j in range(CLAIMS_PER_ANSWER)
            ]
            add_run(ledger, f"w{worker}-r{r}", items, judges=("j", "k"))


@pytest.fixture
def pg_url() -> Iterator[str]:
    from tests.conftest import PG_URL, _pg_database

    if not PG_URL:
        pytest.skip("AUDITOR_TEST_PG_URL is not set (no PostgreSQL server)")
    yield from _pg_database()


@pytest.mark.postgres
def test_two_processes_writing_runs_at_once_lose_nothing(pg_url: str) -> None:
    ctx = mp.get_context("spawn")
    start = ctx.Event()
    procs = [ctx.Process(target=_writer, args=(pg_url, w, start)) for w in range(2)]
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0, 0]
    with open_ledger(pg_url) as ledger:
        runs = ledger.list_runs()
        assert len(runs) == 2 * N_RUNS and all(r.status == "complete" for r in runs)
        n_claims = 2 * N_RUNS * N_ANSWERS * CLAIMS_PER_ANSWER
        assert ledger.count("answer") == 2 * N_RUNS * N_ANSWERS
        assert ledger.count("claim") == n_claims
        assert ledger.count("verdict") == n_claims
        assert ledger.count("judge_vote") == 2 * n_claims
        # shared evidence written by both workers is stored once
        assert ledger.count("document_version") == N_ANSWERS * CLAIMS_PER_ANSWER
        for run in runs:
            assert len(ledger.claim_results(run.run_id)) == N_ANSWERS * CLAIMS_PER_ANSWER


N_WORKERS = 4
SHARED_RUNS = 2


def _shared_items(r: int) -> list[Any]:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from tests._ledger_runs import Item

    return [
        Item(
            f"a{i}",
            f"shared claim {r}-{i}-{j}",
            "supported",
            evidence=f"evidence {i % 5}-{j}",  # evidence shared across answers and runs
            votes=(("j", 0.0), ("k", 1.0)),
        )
        for i in range(N_ANSWERS)
        for j in range(CLAIMS_PER_ANSWER)
    ]


def _overlapping_writer(url: str, worker: int, start: Any) -> None:
    """Every worker writes every shared run (as Ray re-running a batch would), in its own
    shuffled order and batch sizes, plus a run of its own."""
    import random

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from auditor.digest import sha256_text
    from tests._ledger_runs import add_run, build_run

    rng = random.Random(worker)
    start.wait(30)
    with open_ledger(url, retry_attempts=20) as ledger:
        for r in rng.sample(range(SHARED_RUNS), SHARED_RUNS):
            run_id, roles, results = build_run(f"shared-{r}", _shared_items(r), judges=("j", "k"))
            ledger.begin_run(
                run_id,
                kind="audit",
                input_digest=sha256_text(f"shared-{r}"),
                as_of=None,
                config={},
                components=roles,
                n_answers=len(results),
            )
            rng.shuffle(results)
            batch = 1 + worker  # 1, 2, 3, 4 answers per transaction
            for lo in range(0, len(results), batch):
                ledger.record_answers(run_id, results[lo : lo + batch])
            ledger.finish_run(run_id)
        add_run(ledger, f"own-{worker}", _shared_items(100 + worker), judges=("j", "k"))


@pytest.mark.postgres
def test_many_processes_writing_overlapping_runs_write_each_row_once(pg_url: str) -> None:
    ctx = mp.get_context("spawn")
    start = ctx.Event()
    procs = [
        ctx.Process(target=_overlapping_writer, args=(pg_url, w, start)) for w in range(N_WORKERS)
    ]
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(180)
    assert [p.exitcode for p in procs] == [0] * N_WORKERS
    runs_total = SHARED_RUNS + N_WORKERS
    n_claims = runs_total * N_ANSWERS * CLAIMS_PER_ANSWER
    with open_ledger(pg_url) as ledger:
        runs = ledger.list_runs()
        assert len(runs) == runs_total and all(r.status == "complete" for r in runs)
        assert ledger.count("answer") == runs_total * N_ANSWERS
        assert ledger.count("claim") == n_claims
        assert ledger.count("retrieval") == n_claims
        assert ledger.count("verdict") == n_claims
        assert ledger.count("judge_vote") == 2 * n_claims
        assert ledger.count("document_version") == 5 * CLAIMS_PER_ANSWER
        assert ledger.count("chunk") == 5 * CLAIMS_PER_ANSWER
        for run in runs:
            assert len(ledger.claim_results(run.run_id)) == N_ANSWERS * CLAIMS_PER_ANSWER


def _conflict_trigger(url: str, failures: int) -> None:
    """Make the next ``failures`` inserts into ``answer`` fail with a real PostgreSQL
    serialization_failure (SQLSTATE 40001), as a concurrent SERIALIZABLE writer would."""
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE IF NOT EXISTS conflict_budget (n integer)"))
        conn.execute(text("DELETE FROM conflict_budget"))
        conn.execute(text("INSERT INTO conflict_budget VALUES (:n)"), {"n": failures})
        conn.execute(
            text(
                """
                CREATE OR REPLACE FUNCTION fail_answer() RETURNS trigger AS $$
                DECLARE budget integer;
                BEGIN
                  -- the failing transaction rolls back, so attempts are counted in a
                  -- sequence (sequences are not rolled back)
                  SELECT n INTO budget FROM conflict_budget;
                  IF nextval('conflict_attempts') <= budget THEN
                    RAISE EXCEPTION 'could not serialize access' USING ERRCODE = '40001';
                  END IF;
                  RETURN NEW;
                END $$ LANGUAGE plpgsql
                """
            )
        )
        conn.execute(text("DROP SEQUENCE IF EXISTS conflict_attempts"))
        conn.execute(text("CREATE SEQUENCE conflict_attempts"))
        conn.execute(text("DROP TRIGGER IF EXISTS fail_answer ON answer"))
        conn.execute(
            text(
                "CREATE TRIGGER fail_answer BEFORE INSERT ON answer "
                "FOR EACH ROW EXECUTE FUNCTION fail_answer()"
            )
        )
    engine.dispose()


@pytest.mark.postgres
def test_serialisation_failures_are_retried_and_write_once(pg_url: str) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from tests._ledger_runs import Item, add_run

    items = [Item(f"a{i}", f"claim {i}", "supported") for i in range(3)]
    with open_ledger(pg_url, retry_attempts=5) as ledger:
        ledger.retry_base_s = 0.001
        _conflict_trigger(pg_url, failures=3)
        run_id = add_run(ledger, "retried", items)
        assert ledger.retries == 3  # three aborted transactions, each re-run
        assert ledger.count("answer") == 3 and ledger.count("claim") == 3
        assert len(ledger.claim_results(run_id)) == 3


@pytest.mark.postgres
def test_a_conflict_that_never_clears_is_a_clean_error_and_writes_nothing(pg_url: str) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from ledger import LedgerError
    from tests._ledger_runs import Item, add_run

    with open_ledger(pg_url, retry_attempts=3) as ledger:
        ledger.retry_base_s = 0.001
        _conflict_trigger(pg_url, failures=1_000)
        with pytest.raises(LedgerError, match=r"serialisation failure.*after 3 attempts"):
            add_run(ledger, "doomed", [Item("a0", "claim", "supported")])
        assert ledger.count("answer") == 0 and ledger.count("claim") == 0
