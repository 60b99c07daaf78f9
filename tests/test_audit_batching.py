"""Batching changes how fast an audit runs, never what it finds: the demo answers audited
one per batch and all in one batch give the same labels, claim records and ledger rows;
the records an audit returns (and hands to ``on_record`` as each batch commits) are
exactly what the ledger holds; a resumed run returns the same records as a whole one.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from auditor import AuditConfig, Auditor
from auditor.demo import prepare_sample_index, sample_path
from auditor.report.claims import claim_records
from ledger import open_ledger
from tests._ledger_compare import ledger_rows, same

CONFIG = AuditConfig(as_of=datetime(2026, 6, 30, tzinfo=UTC))


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("batching")
    return prepare_sample_index(work / "index", work / "corpus.db")


def _answer_ids() -> list[str]:
    lines = sample_path("answers.jsonl").read_text("utf-8").splitlines()
    return [json.loads(line)["id"] for line in lines if line.strip()]


def _audit(index: Path, db: Path, batch_size: int, **kwargs: Any) -> Any:
    with Auditor(index, db, config=CONFIG) as auditor:
        return auditor.audit(sample_path("answers.jsonl"), batch_size=batch_size, **kwargs)


def test_one_answer_per_batch_and_all_in_one_batch_find_the_same(
    index: Path, tmp_path: Path
) -> None:
    from auditor import embedding

    embedding.clear_cache()  # each audit encodes its own texts in its own batches
    one = _audit(index, tmp_path / "one.db", batch_size=1)
    embedding.clear_cache()
    whole = _audit(index, tmp_path / "whole.db", batch_size=64)
    assert one.run_id == whole.run_id and one.answers_total == whole.answers_total == 10
    assert len(one.claims) == len(whole.claims) > 10
    # labels and reasons exactly; scores to float32 rounding
    assert [(c["id"], c["label"], c["reason"]) for c in one.claims] == [
        (c["id"], c["label"], c["reason"]) for c in whole.claims
    ]
    assert same(one.answers, whole.answers)
    rows_one, rows_whole = ledger_rows(tmp_path / "one.db"), ledger_rows(tmp_path / "whole.db")
    for table in ("run", "answer", "claim", "retrieval", "judge_vote", "verdict", "chunk"):
        assert len(rows_one[table]) == len(rows_whole[table]) > 0, table
        assert same(rows_one[table], rows_whole[table]), table


def test_records_returned_and_streamed_are_what_the_ledger_holds(
    index: Path, tmp_path: Path
) -> None:
    db = tmp_path / "ledger.db"
    events: list[tuple[str, str]] = []
    streamed: list[dict[str, Any]] = []

    def on_record(record: dict[str, Any]) -> None:
        events.append(("record", record["id"]))
        streamed.append(record)

    run = _audit(
        index,
        db,
        batch_size=3,
        on_answer=lambda run_id, answer_id: events.append(("answer", answer_id)),
        on_record=on_record,
        progress=lambda done, total: events.append(("progress", f"{done}/{total}")),
    )
    with open_ledger(db) as ledger:
        stored = claim_records(ledger, run.run_id)
    assert run.answers == stored  # exactly: the returned records are read from the ledger
    assert streamed == stored  # each answer's record once, in input order
    ids = _answer_ids()
    with_claims = {r["id"] for r in stored}
    # per answer: on_answer, then its record (answers without claims have none), then progress
    expected = [("progress", "0/10")]
    for n, answer_id in enumerate(ids, 1):
        expected.append(("answer", answer_id))
        if answer_id in with_claims:
            expected.append(("record", answer_id))
        expected.append(("progress", f"{n}/10"))
    assert events == expected


def test_a_resumed_run_returns_the_records_of_a_whole_run(index: Path, tmp_path: Path) -> None:
    reference = _audit(index, tmp_path / "whole.db", batch_size=4)
    db = tmp_path / "resumed.db"

    class Stop(Exception):
        pass

    def stop_at_fifth(run_id: str, answer_id: str) -> None:
        seen.append(answer_id)
        if len(seen) == 5:
            raise Stop

    seen: list[str] = []
    with pytest.raises(Stop):
        _audit(index, db, batch_size=4, on_answer=stop_at_fifth)
    with open_ledger(db) as ledger:
        (info,) = ledger.list_runs()
        assert len(ledger.done_answer_ids(info.run_id)) == 8  # two whole batches committed
    streamed: list[dict[str, Any]] = []
    resumed = _audit(index, db, batch_size=4, on_record=streamed.append)
    assert resumed.run_id == reference.run_id and resumed.answers_written == 2
    assert same(resumed.answers, reference.answers)
    last_two = _answer_ids()[8:]
    assert same(streamed, [r for r in reference.answers if r["id"] in last_two])
    streamed.clear()
    again = _audit(index, db, batch_size=4, on_record=streamed.append)
    assert again.reused and same(again.answers, reference.answers) and streamed == []
