"""``auditor judge NAME PAIRS.jsonl``: one output line per pair; clean errors for bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import RunCli

pytestmark = pytest.mark.slow  # loads the entailment cross-encoder


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_judge_entailment_prints_one_record_per_pair(tmp_path: Path, run_cli: RunCli) -> None:
    evidence = "The bridge opened in 1932 and carries six lanes of traffic."
    pairs = write(
        tmp_path / "pairs.jsonl",
        [
            json.dumps({"id": "a", "claim": "The bridge opened in 1932.", "evidence": evidence}),
            json.dumps(
                {
                    "id": 2,
                    "claim": "The bridge opened in 1965.",
                    "evidence": ["Unrelated text about rivers.", evidence],
                }
            ),
        ],
    )
    code, out, err = run_cli(["judge", "entailment", str(pairs), "--format", "jsonl"])
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["id"] for r in rows] == ["a", "2"]
    assert rows[0]["vote"] == 0.0 and rows[1]["vote"] == 1.0
    for row in rows:
        assert set(row) == {"id", "vote", "scores", "raw", "error"}
        assert {"entailment", "neutral", "contradiction"} <= set(row["scores"])
    assert rows[1]["scores"]["contradiction"] > rows[0]["scores"]["contradiction"]


def test_judge_runs_any_registered_judge(tmp_path: Path, run_cli: RunCli) -> None:
    pairs = write(
        tmp_path / "pairs.jsonl",
        [
            json.dumps(
                {"id": "n", "claim": "It has 12 stations.", "evidence": "It has 14 stations."}
            )
        ],
    )
    code, out, _ = run_cli(["judge", "numeric_consistency", str(pairs)])
    assert code == 0
    row = json.loads(out)
    assert row["vote"] == 1.0 and row["scores"]["contradiction"] == 1.0


def test_bad_pairs_name_file_line_and_field(tmp_path: Path, run_cli: RunCli) -> None:
    pairs = write(
        tmp_path / "pairs.jsonl",
        [
            json.dumps({"id": "a", "claim": "x", "evidence": "y"}),
            json.dumps({"id": "b", "claim": "x", "evidence": ["y", 3]}),
        ],
    )
    code, out, err = run_cli(["judge", "entailment", str(pairs)])
    assert code == 2 and out == ""
    assert "pairs.jsonl" in err and "line 2" in err and "'evidence'" in err
    assert "Traceback" not in err


def test_unknown_judge_and_bad_params_are_clean_errors(tmp_path: Path, run_cli: RunCli) -> None:
    pairs = write(tmp_path / "pairs.jsonl", [json.dumps({"id": 1, "claim": "x", "evidence": "y"})])
    code, _, err = run_cli(["judge", "no_such_judge", str(pairs)])
    assert code == 2 and "no_such_judge" in err
    code, _, err = run_cli(["judge", "entailment", str(pairs), "--params", "[1]"])
    assert code == 2 and "--params" in err
    code, _, err = run_cli(["judge", "entailment", str(pairs), "--format", "csv"])
    assert code == 2 and "--format" in err
    code, _, err = run_cli(
        ["judge", "entailment", str(pairs), "--params", '{"support_at": 0.1, "reject_below": 0.3}']
    )
    assert code == 2 and "reject_below <= support_at" in err and "Traceback" not in err
