"""The ledger on real SQLite and PostgreSQL: schema, idempotent writes, refusals."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import create_engine, text

from auditor.digest import sha256_text
from auditor.types import Chunk, Component, DocumentVersion
from ledger import (
    AnswerResult,
    ClaimRecord,
    LedgerError,
    RetrievalRecord,
    VerdictRecord,
    VoteRecord,
    open_ledger,
)
from ledger.schema import head_revision, migrations_dir


def _version(doc_id: str, text_: str, version: str = "v1", **dates: datetime) -> DocumentVersion:
    return DocumentVersion(
        doc_id=doc_id,
        version=version,
        text=text_,
        digest=sha256_text(text_),
        source=f"https://example.org/{doc_id}",
        **dates,
    )


def _chunk(v: DocumentVersion) -> Chunk:
    return Chunk(
        chunk_id=f"{v.digest[:16]}:0",
        doc_id=v.doc_id,
        version=v.version,
        digest=v.digest,
        start=0,
        end=len(v.text),
        text=v.text,
    )


COMPONENTS = {
    "extractor": Component("extractor", "rules", "1", "e" * 64, {"a": 1}),
    "panel": Component("panel", "p", "1", "p" * 64, {}),
    "stacker": Component("stacker", "raim", "1", "s" * 64, {}),
    "judge:j": Component("judge", "j", "1", "j" * 64, {"t": 0.5}),
}


def _answer(answer_id: str, v: DocumentVersion, seq: int = 0) -> AnswerResult:
    claim_id = sha256_text(answer_id + "c")
    return AnswerResult(
        answer_id=answer_id,
        question="q?",
        answer="The sky is blue.",
        answer_digest=sha256_text("The sky is blue."),
        as_of=None,
        seq=seq,
        claims=[ClaimRecord(claim_id, "The sky is blue", [(0, 15)], True, "claim")],
        retrievals=[
            RetrievalRecord(
                claim_id,
                0,
                _chunk(v).chunk_id,
                v.doc_id,
                v.digest,
                0.9,
                False,
                False,
                "The sky is blue",
            )
        ],
        votes=[
            VoteRecord(
                claim_id, "j" * 64, "j", 0.0, '{"why": "overlap"}', {"support": 1.0}, 0.01, None
            )
        ],
        verdicts=[VerdictRecord(claim_id, "supported", 0.1, "supported", ())],
        evidence_versions=[v],
        evidence_chunks=[_chunk(v)],
    )


def test_new_ledger_is_at_head(ledger_url: str) -> None:
    with open_ledger(ledger_url) as ledger:
        with ledger.engine.connect() as conn:
            rev = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
        assert rev == head_revision()
        assert ledger.count("run") == 0


def test_alembic_upgrade_and_check_find_no_drift(ledger_url: str) -> None:
    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    url = ledger_url if "://" in ledger_url else f"sqlite:///{ledger_url}"
    engine = create_engine(url)
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, "head")
        command.check(config)  # raises when models and migrations drift apart
    engine.dispose()


def test_corpus_writes_are_idempotent_and_supersede(ledger_url: str) -> None:
    old = _version("d1", "Fares are 2.50 dollars.", published_at=datetime(2022, 1, 1, tzinfo=UTC))
    with open_ledger(ledger_url) as ledger:
        ledger.record_corpus([old], [_chunk(old)])
        ledger.record_corpus([old], [_chunk(old)])
        assert (
            ledger.count("document"),
            ledger.count("document_version"),
            ledger.count("chunk"),
        ) == (1, 1, 1)
        cutoff = datetime(2025, 1, 1, tzinfo=UTC)
        superseded = DocumentVersion(**{**old.__dict__, "valid_to": cutoff})
        new = _version("d1", "Fares are 2.75 dollars.", "v2", published_at=cutoff)
        ledger.record_corpus([superseded, new], [_chunk(new)])
        assert ledger.count("document_version") == 2
        with ledger.engine.connect() as conn:
            valid_to = conn.execute(
                text("SELECT valid_to FROM document_version WHERE version = 'v1'")
            ).scalar()
        assert valid_to is not None and str(valid_to).startswith("2025-01-01")


def test_runs_are_idempotent_and_resumable(ledger_url: str) -> None:
    v = _version("d1", "The sky is blue.")
    with open_ledger(ledger_url) as ledger:
        info = ledger.begin_run(
            "r" * 64,
            kind="audit",
            input_digest="i" * 64,
            as_of=None,
            config={"when": datetime(2026, 1, 1, tzinfo=UTC)},
            components=COMPONENTS,
            n_answers=2,
        )
        assert info.status == "running" and info.n_answers_done == 0
        ledger.record_answer(info.run_id, _answer("a1", v))
        assert ledger.done_answer_ids(info.run_id) == {"a1"}
        # a restart finds the same run and only the missing answer is written
        again = ledger.begin_run(
            "r" * 64,
            kind="audit",
            input_digest="i" * 64,
            as_of=None,
            config={},
            components=COMPONENTS,
            n_answers=2,
        )
        assert again.n_answers_done == 1
        ledger.record_answer(info.run_id, _answer("a2", v, seq=1))
        ledger.record_answer(info.run_id, _answer("a2", v, seq=1))  # a repeat adds nothing
        done = ledger.finish_run(info.run_id)
        assert done.status == "complete" and done.finished_at is not None
        counts = {
            t: ledger.count(t)
            for t in ("answer", "claim", "judge_vote", "verdict", "retrieval", "run", "component")
        }
        assert counts == {
            "answer": 2,
            "claim": 2,
            "judge_vote": 2,
            "verdict": 2,
            "retrieval": 2,
            "run": 1,
            "component": 4,
        }
        rows = ledger.claim_results(info.run_id)
        assert [r.answer_id for r in rows] == ["a1", "a2"]
        assert rows[0].label == "supported" and rows[0].n_evidence == 1
        assert rows[0].spans == [(0, 15)]


def test_unknown_run_is_a_clear_error(ledger_url: str) -> None:
    with open_ledger(ledger_url) as ledger, pytest.raises(LedgerError, match="no run"):
        ledger.get_run("nope")


def test_ledger_from_the_future_is_refused_and_untouched(tmp_path: Path) -> None:
    path = tmp_path / "future.db"
    open_ledger(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE alembic_version SET version_num = 'zz99_future'")
    before = path.read_bytes()
    with pytest.raises(LedgerError, match="newer than this version"):
        open_ledger(path)
    assert path.read_bytes() == before


def test_corrupted_sqlite_file_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "broken.db"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(LedgerError, match="not a database"):
        open_ledger(path)


def test_locked_sqlite_file_is_a_clear_error_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "locked.db"
    ledger = open_ledger(path, busy_timeout_s=0.1)
    holder = sqlite3.connect(path, timeout=0)
    holder.execute("BEGIN EXCLUSIVE")
    v = _version("d1", "text")
    try:
        with pytest.raises(LedgerError, match="locked"):
            ledger.record_corpus([v], [_chunk(v)])
        with pytest.raises(LedgerError, match="locked"):
            open_ledger(path, busy_timeout_s=0.1)
    finally:
        holder.rollback()
        holder.close()
        ledger.close()
    with open_ledger(path) as ledger:
        assert ledger.count("document") == 0


def test_missing_file_without_create(tmp_path: Path) -> None:
    with pytest.raises(LedgerError, match="no ledger"):
        open_ledger(tmp_path / "absent.db", create=False)


def test_llm_response_cache_round_trip(ledger_url: str) -> None:
    with open_ledger(ledger_url) as ledger:
        cache = ledger.response_cache()
        assert cache.get("k1") is None
        cache.put("k1", '{"vote": 0}', {"model": "m", "tokens": 12})
        cache.put("k1", "ignored: first write wins", {"model": "m"})
        assert cache.get("k1") == '{"vote": 0}'
        assert ledger.count("llm_cache") == 1


def test_head_revision_constant_is_alembics_head() -> None:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    from ledger.schema import HEAD_REVISION

    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    assert ScriptDirectory.from_config(config).get_current_head() == HEAD_REVISION, (
        "a migration was added: set ledger.schema.HEAD_REVISION to its revision"
    )


def test_opening_a_ledger_at_head_does_not_import_alembic(tmp_path: Path) -> None:
    import subprocess
    import sys

    path = tmp_path / "l.db"
    open_ledger(path).close()
    code = (
        "import sys\nfrom ledger import open_ledger\n"
        f"open_ledger({str(path)!r}).close()\n"
        "print('ALEMBIC', 'alembic' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert "ALEMBIC False" in out, out
