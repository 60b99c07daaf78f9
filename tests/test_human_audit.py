"""Human audits: append-only reviewer verdicts; kappa and balanced accuracy on report cards."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from auditor.cli import _register_commands, app
from auditor.errors import InputError
from auditor.human_audit import HumanAudit, add_audits, import_audits
from auditor.report.agreement import binary_label, human_agreement
from auditor.report.full import build_full_report
from auditor.stacking.metrics import balanced_accuracy, cohen_kappa
from ledger import open_ledger
from tests._ledger_runs import Item, add_run, claim_id

LABELS = ["supported", "contradicted", "not_supported", "unknown", "stale", "supported"]


def _run(url: str) -> str:
    with open_ledger(url) as ledger:
        return add_run(
            ledger,
            "r",
            [
                Item(f"a{i}", f"c{i}-{j}", label)
                for i in range(20)
                for j, label in enumerate(LABELS)
            ],
        )


def test_binary_mapping() -> None:
    assert binary_label("supported") == 0
    assert {
        binary_label(x) for x in ("contradicted", "not_supported", "stale", "hallucinated")
    } == {1}
    assert binary_label("unknown") is None and binary_label("not_factual") is None
    assert binary_label(None) is None


def test_cli_add_is_append_only_and_validated(ledger_url: str) -> None:
    run = _run(ledger_url)
    _register_commands()
    runner = CliRunner()
    cid = claim_id("a0", "c0-1")
    args = [
        "review",
        "add",
        run[:10],
        cid[:14],
        "--label",
        "supported",
        "--reviewer",
        "ann",
        "--db",
        ledger_url,
    ]
    first = runner.invoke(app, args)
    assert first.exit_code == 0 and "1 audit added" in first.output
    again = runner.invoke(app, args)
    assert again.exit_code == 0 and "nothing added" in again.output
    other = runner.invoke(app, [*args[:5], "contradicted", *args[6:], "--note", "re-read"])
    assert other.exit_code == 0, other.output
    with open_ledger(ledger_url) as ledger:
        audits = ledger.human_audits(run)
        assert [a["label"] for a in audits] == ["supported", "contradicted"]
        # the auditor's verdict is untouched
        label = {c.claim_id: c.label for c in ledger.claim_results(run)}[cid]
        assert label == "contradicted"
    bad = runner.invoke(app, [*args[:5], "great", *args[6:]])
    assert bad.exit_code != 0 and "label" in str(bad.exception)
    missing = runner.invoke(
        app,
        [
            "review",
            "add",
            run[:10],
            "ffffff",
            "--label",
            "supported",
            "--reviewer",
            "ann",
            "--db",
            ledger_url,
        ],
    )
    assert missing.exit_code != 0 and "no claim" in str(missing.exception)
    # a short prefix could name the wrong claim on an append-only ledger: refused
    for short_run, short_claim in ((run[:10], cid[:5]), (run[:5], cid[:14])):
        short = runner.invoke(
            app,
            [
                "review",
                "add",
                short_run,
                short_claim,
                "--label",
                "supported",
                "--reviewer",
                "ann",
                "--db",
                ledger_url,
            ],
        )
        assert short.exit_code != 0 and "at least 6 characters" in str(short.exception)
    memory = runner.invoke(app, [*args[:-1], ":memory:"])
    assert memory.exit_code != 0 and "in-memory ledger" in str(memory.exception)
    listed = runner.invoke(
        app, ["review", "list", run[:10], "--db", ledger_url, "--format", "json"]
    )
    assert listed.exit_code == 0
    assert [a["auditor_label"] for a in json.loads(listed.output)] == ["contradicted"] * 2


def test_import_writes_nothing_when_one_line_is_bad(sqlite_url: str, tmp_path: Path) -> None:
    run = _run(sqlite_url)
    good = {"claim_id": claim_id("a1", "c1-0"), "label": "supported", "reviewer": "bo"}
    path = tmp_path / "audits.jsonl"
    path.write_text(json.dumps(good) + "\n\n" + json.dumps({**good, "label": "meh"}) + "\n")
    with open_ledger(sqlite_url) as ledger:
        with pytest.raises(InputError) as info:
            import_audits(ledger, path, run=run)
        assert "line 3" in str(info.value) and "label" in str(info.value)
        path.write_text(json.dumps(good) + "\n" + json.dumps({**good, "claim_id": "zz"}) + "\n")
        with pytest.raises(InputError, match="line 2"):
            import_audits(ledger, path, run=run)
        assert ledger.human_audits(run) == []
        path.write_text(json.dumps({**good, "run_id": run[:8]}) + "\n")
        assert import_audits(ledger, path) == 1
        assert import_audits(ledger, path) == 0


def test_kappa_and_balanced_accuracy_match_the_stacking_metrics(sqlite_url: str) -> None:
    run = _run(sqlite_url)
    rng = np.random.default_rng(3)
    audits = []
    for i in range(20):
        for j, label in enumerate(LABELS):
            # reviewers mostly agree; a few flips; some say unknown
            given = (
                label
                if rng.random() < 0.8
                else ("supported" if label != "supported" else "contradicted")
            )
            if j == 3:
                given = "not_supported"  # auditor said unknown: excluded
            audits.append(HumanAudit(run, claim_id(f"a{i}", f"c{i}-{j}"), "ann", given))
    with open_ledger(sqlite_url) as ledger:
        assert add_audits(ledger, audits) == len(audits)
        claims = ledger.claim_results(run)
        report = build_full_report(ledger, run, n_boot=300, history=False)
    agreement = human_agreement(claims, ledger_audits(sqlite_url, run), n_boot=300)
    assert agreement is not None and report.human is not None
    assert agreement.n_used == 20 * 5 and agreement.excluded == {"compared unknown": 20}
    human = {a.claim_id: a.label for a in audits}
    used = [c for c in claims if c.label != "unknown"]
    y = np.array([binary_label(human[c.claim_id]) for c in used], dtype=float)
    pred = np.array([binary_label(c.label) for c in used], dtype=float)
    assert np.isclose(agreement.kappa, cohen_kappa(pred, y))
    assert np.isclose(agreement.bacc, balanced_accuracy(pred, y))
    assert agreement.kappa_ci is not None
    assert agreement.kappa_ci[0] <= agreement.kappa <= agreement.kappa_ci[1]
    assert report.human.kappa == agreement.kappa


def test_latest_audit_counts_and_conflicts_are_counted(sqlite_url: str) -> None:
    run = _run(sqlite_url)
    cid = claim_id("a0", "c0-0")
    with open_ledger(sqlite_url) as ledger:
        add_audits(ledger, [HumanAudit(run, cid, "ann", "contradicted")])
        add_audits(ledger, [HumanAudit(run, cid, "bo", "supported")])
        with pytest.warns(RuntimeWarning, match="undefined"):  # one item, one class
            agreement = human_agreement(
                ledger.claim_results(run), ledger.human_audits(run), n_boot=20
            )
    assert agreement is not None
    assert agreement.confusion == {"supported": {"supported": 1}}
    assert agreement.extra["n_claims_with_conflicting_audits"] == 1


def ledger_audits(url: str, run: str) -> list[dict[str, object]]:
    with open_ledger(url) as ledger:
        return ledger.human_audits(run)
