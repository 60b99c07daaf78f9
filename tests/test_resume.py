"""A run killed with SIGKILL mid-way completes when started again: no duplicate, no loss."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from auditor.demo import sample_path
from ledger import open_ledger

pytestmark = pytest.mark.slow

CHILD = textwrap.dedent("""
    import os, signal, sys
    from datetime import UTC, datetime
    from pathlib import Path
    from auditor.answers import load_answers
    from auditor.demo import sample_path
    from auditor.retrieval import EvidenceIndex, ingest, load_documents
    from auditor import AuditConfig, Auditor
    from ledger import open_ledger

    db, work, kill_after = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
    index_dir = work / "index"
    with open_ledger(db) as ledger:
        if not index_dir.exists():
            ingest(load_documents([sample_path("corpus.jsonl")]), index_dir,
                   on_commit=lambda r: ledger.record_corpus(r.versions, r.chunks))
        index = EvidenceIndex.open(index_dir)
        config = AuditConfig(as_of=datetime(2026, 6, 30, tzinfo=UTC))
        auditor = Auditor(index, ledger, config=config)

        def progress(done, total):
            if kill_after and done >= kill_after:
                os.kill(os.getpid(), signal.SIGKILL)

        summary = auditor.audit(load_answers(sample_path("answers.jsonl")), batch_size=2,
                                progress=progress)
        print(summary.run_id, summary.answers_written)
""")


def _child(db: Path, work: Path, kill_after: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", CHILD, str(db), str(work), str(kill_after)],
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_killed_run_resumes_without_duplicates(tmp_path: Path) -> None:
    db = tmp_path / "ledger.db"
    killed = _child(db, tmp_path, kill_after=3)
    assert killed.returncode == -9, killed.stderr[-2000:]
    with open_ledger(db) as ledger:
        (run,) = ledger.list_runs()
        assert run.status == "running"
        partial = ledger.done_answer_ids(run.run_id)
        assert 3 <= len(partial) < 10
    resumed = _child(db, tmp_path, kill_after=0)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    run_id, written = resumed.stdout.split()
    assert run_id == run.run_id and int(written) == 10 - len(partial)
    with open_ledger(db) as ledger:
        info = ledger.get_run(run_id)
        assert info.status == "complete" and info.n_answers_done == 10
        rows = ledger.claim_results(run_id)
        assert len({r.claim_id for r in rows}) == len(rows)
        assert all(r.label is not None for r in rows)
    answers = [
        json.loads(line)["id"]
        for line in sample_path("answers.jsonl").read_text().splitlines()
        if line.strip()
    ]
    assert {r.answer_id for r in rows} == set(answers)
