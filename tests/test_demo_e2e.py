"""End to end: the demo flow on the bundled samples, in a temporary directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from auditor.cli import _register_commands, app
from auditor.types import Label
from ledger import open_ledger

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    _register_commands()
    root = tmp_path_factory.mktemp("demo")
    db, workdir = root / "ledger.db", root / "work"
    result = CliRunner().invoke(
        app, ["demo", "--db", str(db), "--workdir", str(workdir), "--bootstrap", "200"]
    )
    assert result.exit_code == 0, result.output
    return db, workdir, result.output


def test_demo_prints_and_writes_a_report_card(demo_run: tuple[Path, Path, str]) -> None:
    _, workdir, output = demo_run
    assert "support_precision" in output
    card = json.loads((workdir / "report.json").read_text())
    assert card["n_answers"] == 10
    assert set(card["figures"]) >= {"support_precision", "decidable_rate", "citation_coverage"}
    markdown = (workdir / "report.md").read_text()
    assert "| support_precision |" in markdown
    # flagged claims come with the answer characters their error spans mark
    assert "## Flagged claims" in markdown
    flagged = card["flagged"]
    assert flagged and all(
        f["label"] in {"contradicted", "not_supported", "stale", "unknown"} for f in flagged
    )
    assert all(f["error_text"] and all(f["error_text"]) for f in flagged)


def test_every_label_occurs(demo_run: tuple[Path, Path, str]) -> None:
    _, workdir, _ = demo_run
    labels = json.loads((workdir / "report.json").read_text())["labels"]
    missing = [label.value for label in Label if labels.get(label.value, 0) == 0]
    assert not missing, f"labels missing from the demo: {missing}"


def test_ledger_holds_claims_evidence_votes_and_labels(demo_run: tuple[Path, Path, str]) -> None:
    db, _, _ = demo_run
    with open_ledger(db) as ledger:
        (run,) = ledger.list_runs()
        assert run.status == "complete" and run.n_answers_done == 10
        assert {"extractor", "panel", "stacker", "index", "label_model"} <= set(run.components)
        rows = ledger.claim_results(run.run_id)
        assert rows and all(r.label is not None for r in rows)
        factual = [r for r in rows if r.factual]
        assert all(r.n_evidence > 0 for r in factual if r.label != "unknown")
        n_members = len([role for role in run.components if role.startswith("judge:")])
        # the learned label decision (the default) has the panel judge every factual claim
        # with evidence; claims without any are routed past it (labelled unknown)
        judged = [r for r in factual if r.n_evidence > 0]
        skipped = [r for r in factual if r.n_evidence == 0]
        assert all(r.label == "unknown" for r in skipped)
        assert ledger.count("judge_vote") == n_members * len(judged)
        with ledger.engine.connect() as conn:
            from sqlalchemy import text

            evidence = conn.execute(
                text(
                    'SELECT r.chunk_id, c.start, c."end", v.digest, v.text, c.text '
                    "FROM retrieval r JOIN chunk c ON c.chunk_id = r.chunk_id "
                    "JOIN document_version v ON v.digest = r.version_digest "
                    "AND v.doc_id = r.doc_id"
                )
            ).all()
        assert evidence
        for _, start, end, digest, version_text, chunk_text in evidence:
            assert version_text[start:end] == chunk_text and len(digest) == 64


def test_rerunning_the_demo_adds_no_rows(demo_run: tuple[Path, Path, str]) -> None:
    db, workdir, _ = demo_run
    tables = (
        "run",
        "answer",
        "claim",
        "retrieval",
        "judge_vote",
        "verdict",
        "document",
        "document_version",
        "chunk",
        "component",
    )
    with open_ledger(db) as ledger:
        before = {t: ledger.count(t) for t in tables}
    result = CliRunner().invoke(
        app, ["demo", "--db", str(db), "--workdir", str(workdir), "--bootstrap", "50"]
    )
    assert result.exit_code == 0, result.output
    assert "nothing new written" in result.output
    with open_ledger(db) as ledger:
        assert {t: ledger.count(t) for t in tables} == before


def test_runs_report_and_show_read_the_ledger(
    demo_run: tuple[Path, Path, str], tmp_path: Path
) -> None:
    db, workdir, _ = demo_run
    runner = CliRunner()
    with open_ledger(db) as ledger:
        (run,) = ledger.list_runs()
        stale = next(r for r in ledger.claim_results(run.run_id) if r.label == "stale")
    listed = runner.invoke(app, ["runs", "--db", str(db)])
    assert listed.exit_code == 0 and run.run_id[:12] in listed.output
    out = tmp_path / "card.json"
    made = runner.invoke(
        app,
        [
            "report",
            run.run_id[:8],
            "--db",
            str(db),
            "--format",
            "json",
            "--out",
            str(out),
            "--bootstrap",
            "100",
        ],
    )
    assert made.exit_code == 0, made.output
    card = json.loads(out.read_text())
    assert card["labels"] == json.loads((workdir / "report.json").read_text())["labels"]
    assert card["config"]["components"]["stacker"]["digest"] == run.components["stacker"]["digest"]
    shown = runner.invoke(app, ["show", stale.claim_id[:12], "--db", str(db), "--format", "json"])
    assert shown.exit_code == 0, shown.output
    (entry,) = json.loads(shown.output)
    assert entry["claim"]["text"] == stale.text
    assert any(e["superseded"] for e in entry["evidence"])
    judges = {role.split(":", 1)[1] for role in run.components if role.startswith("judge:")}
    assert {v["judge_name"] for v in entry["votes"]} == judges
    # the votes that made it stale: the panel's against the superseded evidence
    assert {v["judge_name"] for v in entry["superseded_votes"]} == judges
    assert entry["verdicts"][0]["label"] == "stale"
    table = runner.invoke(app, ["show", stale.claim_id[:12], "--db", str(db)])
    assert table.exit_code == 0 and "superseded-evidence vote entailment" in table.output
    missing = runner.invoke(app, ["report", "nope", "--db", str(db)])
    assert missing.exit_code != 0
