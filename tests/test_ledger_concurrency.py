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
