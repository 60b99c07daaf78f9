"""`auditor calibrate --from-reviews RUN`: the learned label decision refitted on a run's
reviewed claims, compared with the shipped one (real demo run, real SQLite ledger)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from auditor.demo import run_demo
from auditor.label_model import load_label_model
from ledger import open_ledger
from tests.conftest import RunCli

FLIP = {"supported": "not_supported", "not_supported": "unknown", "unknown": "supported"}


@pytest.fixture(scope="module")
def reviewed_demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, int]:
    """The demo run with every factual claim reviewed: the run's own label, except a third
    of the claims a reviewer called otherwise."""
    work = tmp_path_factory.mktemp("reviews")
    db = work / "demo.db"
    with open_ledger(db) as ledger:
        run_id = run_demo(ledger, work, n_boot=20).run.run_id
        rows = [r for r in ledger.claim_results(run_id) if r.factual and r.label]
        audits = [
            (r.claim_id, "ana", FLIP.get(r.label, r.label) if i % 3 == 0 else r.label, None)
            for i, r in enumerate(rows)
        ]
        ledger.record_human_audits(run_id, audits)
    return db, run_id, len(rows)


def test_a_run_with_reviews_refits_and_compares(
    reviewed_demo: tuple[Path, str, int], run_cli: RunCli, tmp_path: Path
) -> None:
    db, run_id, n = reviewed_demo
    out = tmp_path / "team_model.json"
    code, stdout, err = run_cli(
        [
            "calibrate",
            "--from-reviews",
            run_id[:12],
            "--db",
            str(db),
            "--save-label-model",
            str(out),
            "--bootstrap",
            "200",
        ]
    )
    assert code == 0, err
    report = json.loads(stdout)
    assert report["run_id"] == run_id and report["reviewed_claims"] <= n
    assert report["reviewed_claims"] >= 20 and report["answers"] >= 5
    # the reviewers overruled a third of the labels, so the shipped model cannot agree
    # with all of them
    assert report["shipped_accuracy"] < 1.0
    lo, hi = report["difference_interval"]
    assert lo <= report["difference"] <= hi
    model = load_label_model(out)
    assert (
        model.provenance["run_id"] == run_id and model.provenance["n"] == report["reviewed_claims"]
    )


def test_too_few_reviews_and_both_inputs_are_clear_errors(
    reviewed_demo: tuple[Path, str, int], run_cli: RunCli, tmp_path: Path
) -> None:
    db, run_id, _ = reviewed_demo
    empty = tmp_path / "empty.db"
    with open_ledger(db) as ledger, open_ledger(empty) as other:
        del ledger, other  # a second ledger with no runs at all
    code, _, err = run_cli(["calibrate", "--from-reviews", run_id[:12], "--db", str(empty)])
    assert code == 2 and "error:" in err
    code, _, err = run_cli(["calibrate", "--db", str(db)])
    assert code == 2 and "--from-reviews" in err
