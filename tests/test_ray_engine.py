"""The Ray engine on a real local Ray cluster (two CPUs): the same run as the local
engine, a killed worker retried by Ray, a worker that stays dead giving a clean error
and a run that resumes, a bad cluster address refused before anything is written.

Ray starts once for the module. Skipped only when Ray is not installed.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'rag-auditor[ray]')")

from auditor import AuditConfig, Auditor  # noqa: E402
from auditor.demo import prepare_sample_index, sample_path  # noqa: E402
from auditor.engine import Engine  # noqa: E402
from auditor.ray_engine import RayEngineError, release_workers  # noqa: E402
from ledger import open_ledger  # noqa: E402
from tests._ledger_compare import ledger_rows, same  # noqa: E402

pytestmark = pytest.mark.slow

AS_OF = "2026-06-30"
CONFIG = AuditConfig(as_of=datetime(2026, 6, 30, tzinfo=UTC))


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """One local Ray cluster with two CPUs for the whole module."""
    import logging

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        logging_level=logging.ERROR,
        _node_ip_address="127.0.0.1",
    )
    yield ray
    release_workers()
    ray.shutdown()


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The demo index and the demo answers audited by the local engine (the reference)."""
    work = tmp_path_factory.mktemp("ray-demo")
    index = prepare_sample_index(work / "index", work / "corpus.db")
    db = work / "local.db"
    with Auditor(index, db, config=CONFIG) as auditor:
        run = auditor.audit(sample_path("answers.jsonl"), batch_size=2)
    return {"work": work, "index": index, "db": db, "run": run, "rows": ledger_rows(db)}


def assert_same_run(db: Path, demo: dict[str, Any], run_id: str) -> None:
    """The ledger at ``db`` holds exactly the local engine's rows: nothing lost, nothing
    duplicated, nothing different (no table has duplicate rows: each has a primary key)."""
    assert run_id == demo["run"].run_id
    want, got = demo["rows"], ledger_rows(db)
    for table in ("run", "answer", "claim", "retrieval", "judge_vote", "verdict"):
        assert len(got[table]) == len(want[table]), table
        assert same(got[table], want[table]), table
    with open_ledger(db) as ledger:
        info = ledger.get_run(run_id)
        assert info.status == "complete" and info.n_answers_done == 10


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _all_gone(pids: Sequence[int], wait_s: float = 20.0) -> bool:
    """True once none of ``pids`` is a live process (waiting up to ``wait_s``)."""
    deadline = time.monotonic() + wait_s
    while True:
        alive = []
        for pid in pids:
            try:
                os.kill(pid, 0)
                alive.append(pid)
            except ProcessLookupError:
                pass
        if not alive or time.monotonic() > deadline:
            return not alive
        time.sleep(0.2)


def test_ray_run_is_the_local_run_even_when_a_worker_is_killed(
    cluster: Any, demo: dict[str, Any], tmp_path: Path
) -> None:
    db = tmp_path / "ray.db"
    pids: list[int] = []
    killed: list[tuple[int, int]] = []
    committed: list[str] = []

    def kill_one(run_id: str, answer_id: str) -> None:
        if not killed:  # after the first answer commits: kill a busy actor's process
            os.kill(pids[0], signal.SIGKILL)
            killed.append((pids[0], len(committed)))
        committed.append(answer_id)

    with Auditor(demo["index"], db, config=CONFIG) as auditor:
        run = auditor.audit(
            sample_path("answers.jsonl"),
            batch_size=2,
            engine=Engine("ray", workers=2, max_restarts=2, on_workers=pids.extend),
            on_answer=kill_one,
        )
    assert len(pids) == 2 and os.getpid() not in pids  # the batches ran in two actors
    assert killed == [(pids[0], 0)]  # killed with 9 answers still to do; Ray restarted it
    assert committed == [a["id"] for a in demo["run"].answers]  # each once, in input order
    assert run.labels == demo["run"].labels
    assert same(run.answers, demo["run"].answers)
    assert_same_run(db, demo, run.run_id)


def test_cli_ray_engine_resumes_a_partial_run(
    cluster: Any, demo: dict[str, Any], tmp_path: Path, run_cli: Any
) -> None:
    db = tmp_path / "ray.db"

    class Stop(Exception):
        pass

    def stop_after_three(run_id: str, answer_id: str) -> None:
        stop_after_three.n += 1  # type: ignore[attr-defined]
        if stop_after_three.n == 3:  # type: ignore[attr-defined]
            raise Stop

    stop_after_three.n = 0  # type: ignore[attr-defined]
    with Auditor(demo["index"], db, config=CONFIG) as auditor, pytest.raises(Stop):
        auditor.audit(sample_path("answers.jsonl"), batch_size=2, on_answer=stop_after_three)
    with open_ledger(db) as ledger:
        (info,) = ledger.list_runs()
        # stopped at the third answer: its batch of two (answers 3 and 4) had committed
        assert info.status == "running" and len(ledger.done_answer_ids(info.run_id)) == 4
    code, out, err = run_cli(
        [
            "audit",
            str(sample_path("answers.jsonl")),
            "--index",
            str(demo["index"]),
            "--db",
            str(db),
            "--as-of",
            AS_OF,
            "--engine",
            "ray",
            "--workers",
            "2",
            "--batch-size",
            "2",
        ]
    )
    assert code == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    # the 6 answers still to do stream as they commit, then the 4 done before
    assert sorted(r["id"] for r in lines) == sorted(a["id"] for a in demo["run"].answers)
    assert same(
        sorted(lines, key=lambda r: r["id"]), sorted(demo["run"].answers, key=lambda r: r["id"])
    )
    assert "complete" in err
    final = [line for line in err.splitlines() if "10/10 answers" in line]
    # the rate (with the claims counted beside it) is shown once half a second has
    # passed; the six remaining answers may all commit sooner on an idle machine
    assert final and ("claims/s" in final[-1] or "0:00 elapsed" in final[-1])
    assert_same_run(db, demo, info.run_id)


def test_dead_worker_is_a_clean_error_never_a_silent_partial_run(
    cluster: Any, demo: dict[str, Any], tmp_path: Path
) -> None:
    db = tmp_path / "ray.db"
    pids: list[int] = []

    seen: list[int] = []

    def kill_all(run_id: str, answer_id: str) -> None:
        seen.extend(pids)
        while pids:
            os.kill(pids.pop(), signal.SIGKILL)

    with (
        Auditor(demo["index"], db, config=CONFIG) as auditor,
        pytest.raises(RayEngineError, match="run the command again to resume"),
    ):
        auditor.audit(
            sample_path("answers.jsonl"),
            batch_size=2,
            engine=Engine("ray", workers=1, max_restarts=0, on_workers=pids.extend),
            on_answer=kill_all,
        )
    with open_ledger(db) as ledger:
        (info,) = ledger.list_runs()
        done = ledger.done_answer_ids(info.run_id)
    assert info.status == "running" and 1 <= len(done) < 10  # incomplete, and says so
    release_workers()
    assert _all_gone(seen)  # a failed pool is not kept warm


def test_unreachable_cluster_is_refused_before_anything_is_written(
    cluster: Any, demo: dict[str, Any], tmp_path: Path, run_cli: Any
) -> None:
    db = tmp_path / "ray.db"
    address = f"127.0.0.1:{_free_port()}"
    code, out, err = run_cli(
        [
            "audit",
            str(sample_path("answers.jsonl")),
            "--index",
            str(demo["index"]),
            "--db",
            str(db),
            "--as-of",
            AS_OF,
            "--engine",
            "ray",
            "--ray-address",
            address,
        ]
    )
    assert code == 2 and out == ""
    assert f"--ray-address {address}: no Ray cluster answers there" in err
    assert "Traceback" not in err
    with open_ledger(db) as ledger:
        assert ledger.list_runs() == []


def test_cli_ingest_with_ray_data_builds_the_local_index(
    cluster: Any, demo: dict[str, Any], tmp_path: Path, run_cli: Any
) -> None:
    from auditor.retrieval import EvidenceIndex

    index, db = tmp_path / "index", tmp_path / "ledger.db"
    corpus = str(sample_path("corpus.jsonl"))
    argv = ["ingest", corpus, "--index", str(index), "--db", str(db), "--engine", "ray"]
    code, out, err = run_cli([*argv, "--workers", "2"])
    assert code == 0, err
    assert "30 chunks" in out and "Traceback" not in err
    ours, local = EvidenceIndex.open(index), EvidenceIndex.open(demo["index"])
    volatile = {"created_at"}
    assert {k: v for k, v in ours.manifest.items() if k not in volatile} == {
        k: v for k, v in local.manifest.items() if k not in volatile
    }
    assert [c.chunk_id for c in ours.chunks()] == [c.chunk_id for c in local.chunks()]
    # the same MiniLM in other processes and batches: equal to float32 rounding
    assert np.allclose(ours._corpus.vectors, local._corpus.vectors, atol=1e-5)
    queries = [c["text"] for c in demo["run"].claims]
    for mode in ("dense", "hybrid"):
        got = ours.search(queries, 5, mode=mode)
        want = local.search(queries, 5, mode=mode)
        assert [[h.chunk.chunk_id for h in hits] for hits in got] == [
            [h.chunk.chunk_id for h in hits] for hits in want
        ]
    corpus_rows = ledger_rows(db)
    assert corpus_rows["chunk"] == ledger_rows(demo["work"] / "corpus.db")["chunk"]
    again = run_cli([*argv, "--workers", "2"])  # nothing new: Ray is not even needed
    assert again[0] == 0 and "0 versions added" in again[1]


@pytest.mark.postgres
def test_workers_write_a_postgres_ledger_themselves(
    cluster: Any, demo: dict[str, Any], tmp_path: Path
) -> None:
    from conftest import PG_URL, _pg_database

    if not PG_URL:
        pytest.skip("AUDITOR_TEST_PG_URL is not set (no PostgreSQL server)")
    pids: list[int] = []
    killed: list[int] = []

    def kill_one(run_id: str, answer_id: str) -> None:
        if not killed:  # a worker dies mid-batch: its retried batch writes again, ignored
            killed.append(pids[1])
            os.kill(pids[1], signal.SIGKILL)

    databases = _pg_database()
    url = next(databases)
    try:
        with Auditor(demo["index"], url, config=CONFIG) as auditor:
            run = auditor.audit(
                sample_path("answers.jsonl"),
                batch_size=2,
                engine=Engine("ray", workers=2, on_workers=pids.extend),
                on_answer=kill_one,
            )
            counts = {t: auditor.ledger.count(t) for t in ("answer", "claim", "verdict")}
            counts["vote"] = auditor.ledger.count("judge_vote")
        assert killed and run.run_id == demo["run"].run_id
        assert run.labels == demo["run"].labels
        assert same(run.answers, demo["run"].answers)
        want = demo["rows"]
        assert counts == {
            "answer": len(want["answer"]),
            "claim": len(want["claim"]),
            "verdict": len(want["verdict"]),
            "vote": len(want["judge_vote"]),
        }
    finally:
        release_workers()  # they hold connections to the database dropped next
        databases.close()


def test_an_index_changed_under_the_run_stops_the_workers_cleanly(
    cluster: Any, demo: dict[str, Any], tmp_path: Path
) -> None:
    import shutil

    from auditor.digest import sha256_text
    from auditor.retrieval import ingest
    from auditor.types import DocumentVersion

    index, db = tmp_path / "index", tmp_path / "ray.db"
    shutil.copytree(demo["index"], index)
    with Auditor(index, db, config=CONFIG) as auditor:
        assert len(auditor.index) == 30  # the driver opened this generation
        text = "A late document."
        ingest([DocumentVersion("late", "v1", text, sha256_text(text))], index)
        with pytest.raises(RayEngineError, match=r"other components than the driver \(index\)"):
            auditor.audit(sample_path("answers.jsonl"), engine=Engine("ray", workers=1))
        assert auditor.ledger.list_runs() == []  # refused before the run was begun
