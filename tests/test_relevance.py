"""Relevance (label rule 2) has one definition (``auditor/relevance.py``, owned by
``auditor/decision.py``): the label step decides with it, stores its outcome per evidence
row (``retrieval.deciding``, migration 0009), and the ledger's counts, report cards and
the freshness watch read the stored flag; rows stored before the flag are decided by the
same rule on their stored values (issue 36)."""

from __future__ import annotations

import random
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import create_engine, inspect, text
from typer.testing import CliRunner

from auditor.cli import _register_commands, app
from auditor.decision import (
    SubjectCoverage,
    deciding_flags,
    evidence_relevant,
    recorded_policy,
    stored_deciding,
)
from auditor.labels import ClaimSignals, LabelPolicy, has_relevant_evidence
from auditor.report.card import build_report_card
from ledger import Ledger, open_ledger
from ledger.schema import HEAD_REVISION, migrations_dir

POLICY = LabelPolicy()


def test_one_piece_of_evidence_is_relevant_by_cosine_and_what_anchors_it() -> None:
    assert not evidence_relevant(0.34, 1.0, POLICY)  # below min_relevance, however covered
    assert evidence_relevant(0.6, 0.0, POLICY)  # a strong cosine needs no coverage
    assert evidence_relevant(0.4, 0.5, POLICY) and not evidence_relevant(0.4, 0.49, POLICY)
    assert evidence_relevant(0.4, None, POLICY)  # coverage not measured: taken as complete
    subject = SubjectCoverage(subject_covered=True)
    assert evidence_relevant(0.45, 0.1, POLICY, subject=subject)
    assert not evidence_relevant(0.44, 0.1, POLICY, subject=subject)  # subject_relevance
    role = SubjectCoverage(role_stated=True)
    assert evidence_relevant(0.35, 0.0, POLICY, subject=role)
    # the subject and role clauses speak for current evidence only
    assert not evidence_relevant(0.5, 0.1, POLICY, superseded=True, subject=subject)
    assert not evidence_relevant(0.5, 0.1, POLICY, superseded=True, subject=role)
    # nothing retrieved is about what a claim that names nothing is about
    assert not evidence_relevant(0.9, 1.0, POLICY, subject=SubjectCoverage(topic_unnamed=True))


def test_the_label_steps_test_is_any_flagged_piece() -> None:
    rng = random.Random(36)
    for _ in range(2000):
        policy = LabelPolicy(
            min_relevance=rng.choice([0.2, 0.35, 0.5]),
            strong_relevance=rng.choice([0.5, 0.6, 0.8]),
            min_coverage=rng.choice([0.3, 0.5, 1.0]),
            subject_relevance=rng.choice([0.3, 0.45, 0.7]),
        )
        current = [
            (round(rng.random(), 2), round(rng.random(), 2)) for _ in range(rng.randrange(4))
        ]
        superseded = [
            (round(rng.random(), 2), round(rng.random(), 2)) for _ in range(rng.randrange(3))
        ]
        signals = ClaimSignals(
            factual=True,
            relevance=max((c for c, _ in current), default=None),
            p_current=0.2,
            stale_relevance=max((c for c, _ in superseded), default=None),
            current_scores=current,
            superseded_scores=superseded,
            subject_covered=rng.random() < 0.3,
            role_stated=rng.random() < 0.2,
            topic_unnamed=rng.random() < 0.1,
        )
        flags = deciding_flags(signals, policy)
        assert len(flags) == len(current) + len(superseded)
        assert any(flags) == has_relevant_evidence(signals, policy), signals


def test_recorded_policy_is_the_one_reader_of_a_stored_policy() -> None:
    from auditor.web.queue import threshold_of

    assert recorded_policy({"policy": {"min_relevance": 0.4}}).min_relevance == 0.4
    assert recorded_policy({}) == LabelPolicy()
    assert threshold_of({"policy": {"threshold": 0.6}}) == 0.6
    assert threshold_of({}) == LabelPolicy().threshold


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    _register_commands()
    root = tmp_path_factory.mktemp("relevance-demo")
    db = root / "ledger.db"
    result = CliRunner().invoke(
        app, ["demo", "--db", str(db), "--workdir", str(root / "work"), "--bootstrap", "50"]
    )
    assert result.exit_code == 0, result.output
    yield db


def _evidence_rows(ledger: Ledger) -> dict[tuple[str, str], list[dict[str, object]]]:
    with ledger.engine.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT r.run_id, r.claim_id, r.rank, r.score, r.sentence_relevance, "
                "r.coverage, r.superseded, r.inline, r.deciding, c.text, "
                "cl.text AS claim_text, cl.topic "
                "FROM retrieval r JOIN chunk c ON c.chunk_id = r.chunk_id "
                "JOIN claim cl ON cl.run_id = r.run_id AND cl.claim_id = r.claim_id "
                "ORDER BY r.run_id, r.claim_id, r.rank"
            )
        ).mappings()
        out: dict[tuple[str, str], list[dict[str, object]]] = {}
        for r in rows:
            out.setdefault((r["run_id"], r["claim_id"]), []).append(dict(r))
    return out


@pytest.mark.slow
def test_the_stored_flag_is_the_rule_on_every_evidence_row_of_the_demo(demo_db: Path) -> None:
    with open_ledger(demo_db) as ledger:
        (run,) = ledger.list_runs()
        policy = recorded_policy(run.config)
        by_claim = _evidence_rows(ledger)
        counted = {c.claim_id: c.n_relevant_evidence for c in ledger.claim_results(run.run_id)}
    flags = [r["deciding"] for rows in by_claim.values() for r in rows]
    assert flags and None not in flags, "every row written by an audit carries its flag"
    assert {bool(f) for f in flags} == {True, False}
    for (_, claim_id), rows in by_claim.items():
        first = rows[0]
        rule = stored_deciding(str(first["claim_text"]), first["topic"], rows, policy)  # type: ignore[arg-type]
        assert [bool(r["deciding"]) for r in rows] == rule, claim_id
        assert counted[claim_id] == sum(rule)


@pytest.mark.slow
def test_a_ledger_from_before_the_flag_reads_the_same(demo_db: Path, tmp_path: Path) -> None:
    old = tmp_path / "old.db"
    shutil.copy(demo_db, old)
    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    engine = create_engine(f"sqlite:///{old}")
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.downgrade(config, "0008")
    with engine.connect() as conn:
        assert "deciding" not in {c["name"] for c in inspect(conn).get_columns("retrieval")}
    engine.dispose()

    def read(path: Path) -> tuple[object, ...]:
        with open_ledger(path) as ledger:
            (run,) = ledger.list_runs()
            claims = ledger.claim_results(run.run_id)
            with ledger.engine.connect() as conn:
                docs = [d for (d,) in conn.execute(text("SELECT DISTINCT doc_id FROM retrieval"))]
                rev = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
                unflagged = conn.execute(
                    text("SELECT COUNT(*) FROM retrieval WHERE deciding IS NULL")
                ).scalar()
            card = build_report_card(run.run_id, claims, n_boot=50).to_dict()
            return rev, unflagged, claims, ledger.citing_evidence(sorted(docs)), card

    rev, unflagged, claims, citing, card = read(old)  # upgraded on opening: flags NULL
    assert rev == HEAD_REVISION and unflagged == sum(len(c) for c in _all_rows(old))
    _, none, claims_now, citing_now, card_now = read(demo_db)
    assert none == 0
    assert claims == claims_now
    assert citing == citing_now and any(r["deciding"] for r in citing)
    assert card == card_now


def _all_rows(path: Path) -> list[list[dict[str, object]]]:
    with open_ledger(path) as ledger:
        return list(_evidence_rows(ledger).values())
