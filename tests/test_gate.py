"""auditor gate: pass/fail on interval bounds and against a baseline; exit codes; JUnit."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from auditor import GateRule, assert_audit
from auditor.errors import InputError
from auditor.gate import gate_run
from ledger import open_ledger
from tests._ledger_runs import Item, add_run
from tests.conftest import RunCli


def _items(n_answers: int, bad_every: int) -> list[Item]:
    """Answers of two claims; every ``bad_every``-th claim is contradicted."""
    items = []
    for a in range(n_answers):
        for c in range(2):
            bad = (2 * a + c) % bad_every == 0
            items.append(
                Item(f"a{a}", f"Claim {c} of answer {a}.", "contradicted" if bad else "supported")
            )
    return items


@pytest.fixture
def ledger_path(tmp_path: Path) -> tuple[Path, str, str]:
    db = tmp_path / "gate.db"
    with open_ledger(db) as ledger:
        good = add_run(ledger, "good", _items(40, 20))  # 4 of 80 contradicted
        bad = add_run(ledger, "bad", _items(40, 2))  # half contradicted, same claims
    return db, good, bad


def test_rules_use_interval_bounds(ledger_path: tuple[Path, str, str]) -> None:
    db, good, bad = ledger_path
    with open_ledger(db) as ledger:
        passed = gate_run(
            ledger,
            good,
            rules=[
                GateRule("support_precision", "min", 0.85),
                GateRule("contradicted_rate", "max", 0.15),
            ],
            n_boot=500,
        )
        point_only = gate_run(
            ledger, good, rules=[GateRule("support_precision", "min", 0.94)], n_boot=500
        )
        failed = gate_run(
            ledger, bad, rules=[GateRule("support_precision", "min", 0.85)], n_boot=500
        )
    assert passed.passed and len(passed.checks) == 2
    # the point estimate (0.95) clears 0.94 but the lower bound does not
    assert not point_only.passed and point_only.checks[0].value == pytest.approx(0.95)
    assert not failed.passed and "lower bound" in failed.checks[0].message


def test_baseline_fails_only_when_worse_with_the_interval_excluding_zero(
    ledger_path: tuple[Path, str, str],
) -> None:
    db, good, bad = ledger_path
    with open_ledger(db) as ledger:
        worse = gate_run(ledger, bad, baseline=good, n_boot=500)
        better = gate_run(ledger, good, baseline=bad, n_boot=500)
        same = gate_run(ledger, good, baseline=good, n_boot=500)
    assert not worse.passed
    assert {c.name for c in worse.failures} >= {
        "baseline support_precision",
        "baseline contradicted_rate",
    }
    assert better.passed and same.passed
    with open_ledger(db) as ledger:
        other = add_run(ledger, "other", [Item("z", "Unrelated claim.", "supported")])
        disjoint = gate_run(ledger, good, baseline=other, n_boot=200)
        no_direction = gate_run(
            ledger,
            good,
            baseline=bad,
            n_boot=200,
            rules=[GateRule("time_scoped_share", "max", 1.0)],
        )
    assert not disjoint.passed
    assert disjoint.failures[0].name == "baseline shared claims"
    assert any("neither direction" in w for w in no_direction.warnings)
    assert any(c.name == "baseline support_precision" for c in no_direction.checks)


def test_cli_exit_codes_and_junit(
    ledger_path: tuple[Path, str, str], run_cli: RunCli, tmp_path: Path
) -> None:
    db, good, bad = ledger_path
    code, out, _ = run_cli(
        ["gate", good[:8], "--db", str(db), "--min", "support_precision=0.85", "--bootstrap", "300"]
    )
    assert code == 0 and "PASSED" in out
    code, out, _ = run_cli(
        [
            "gate",
            bad[:8],
            "--db",
            str(db),
            "--baseline",
            good[:8],
            "--min",
            "support_precision=0.85",
            "--format",
            "junit",
            "--out",
            str(tmp_path / "gate.xml"),
            "--bootstrap",
            "300",
        ]
    )
    assert code == 1
    suite = ET.fromstring((tmp_path / "gate.xml").read_text())
    assert suite.get("tests") == "2" and suite.get("failures") == "2"
    assert [c.get("name") for c in suite] == ["min support_precision", "baseline support_precision"]
    code, out, _ = run_cli(
        [
            "gate",
            good[:8],
            "--db",
            str(db),
            "--format",
            "json",
            "--max",
            "contradicted_rate=0.2",
            "--bootstrap",
            "300",
        ]
    )
    assert code == 0 and json.loads(out)["passed"] is True
    for argv, field in (
        (["--min", "support_precison=0.8"], "did you mean"),
        (["--min", "support_precision"], "FIGURE=VALUE"),
        (["--max", "stale_rate=2"], "in [0, 1]"),
        ([], "nothing to check"),
    ):
        code, _, err = run_cli(["gate", good[:8], "--db", str(db), *argv])
        assert code == 2 and field in err and "Traceback" not in err


def test_assert_audit_for_pytest(ledger_path: tuple[Path, str, str]) -> None:
    db, good, bad = ledger_path
    result = assert_audit(good, db=str(db), min={"support_precision": 0.85}, n_boot=300)
    assert result.passed
    with pytest.raises(AssertionError, match="FAIL  min support_precision"):
        assert_audit(bad, db=str(db), min={"support_precision": 0.85}, n_boot=300)
    with pytest.raises(InputError, match="unknown figure"):
        assert_audit(good, db=str(db), min={"precision": 0.5})
