"""``auditor spans score`` and ``auditor spans loo``: output shapes and clean errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import RunCli

from auditor.spans import METRICS, score_spans


def _jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _shape_ok(scores: dict[str, dict[str, float]]) -> bool:
    return tuple(scores) == METRICS and all(
        set(v) == ({"score"} if k == "character_iou" else {"precision", "recall", "f1"})
        for k, v in scores.items()
    )


def test_score_matches_the_library_and_has_the_issue_shape(tmp_path: Path, run_cli: RunCli) -> None:
    gold = _jsonl(
        tmp_path / "g.jsonl",
        [
            {"id": "a", "text": "hello brave new world", "spans": [[0, 5], [12, 15]]},
            {"id": "b", "spans": []},
        ],
    )
    pred = _jsonl(
        tmp_path / "p.jsonl",
        [
            {"id": "b", "spans": [[1, 2]]},
            {"id": "a", "spans": [[0, 3], [3, 5], [12, 14]]},
        ],
    )
    for avg in ("macro", "micro"):
        code, out, _ = run_cli(
            [
                "spans",
                "score",
                "--gold",
                str(gold),
                "--pred",
                str(pred),
                "--average",
                avg,
                "--format",
                "json",
            ]
        )
        assert code == 0
        result = json.loads(out)
        assert _shape_ok(result)
        expected = score_spans(
            [[(0, 5), (12, 15)], []], [[(0, 5), (12, 14)], [(1, 2)]], average=avg
        )
        for key in METRICS:
            assert result[key] == pytest.approx(expected[key])


def test_score_diagnostics(tmp_path: Path, run_cli: RunCli) -> None:
    gold = _jsonl(tmp_path / "g.jsonl", [{"id": "a", "spans": [[0, 10]]}])
    pred = _jsonl(tmp_path / "p.jsonl", [{"id": "a", "spans": [[2, 4]]}])
    code, out, _ = run_cli(
        ["spans", "score", "--gold", str(gold), "--pred", str(pred), "--diagnostics"]
    )
    assert code == 0
    diag = json.loads(out)["diagnostics"]
    assert diag["nested_boundary"]["n"] == 1
    assert diag["one_char_per_gold"]["macro"]["span_coverage"]["f1"] == 1.0


@pytest.mark.parametrize(
    ("gold_rows", "pred_rows", "message"),
    [
        (
            [{"id": "a", "spans": []}, {"id": "b", "spans": []}],
            [{"id": "a", "spans": []}],
            "g.jsonl, line 2, field 'id': id 'b' has no line in",
        ),
        (
            [{"id": "a", "spans": []}],
            [{"id": "a", "spans": []}, {"id": "z", "spans": []}],
            "p.jsonl, line 2, field 'id': id 'z' has no line in",
        ),
        (
            [{"id": "a", "text": "abc", "spans": [[0, 9]]}],
            [{"id": "a", "spans": []}],
            "g.jsonl, line 1, field 'spans': span 0 [0, 9]: ends past the text (length 3)",
        ),
        (
            [{"id": "a", "spans": []}],
            [{"id": "a", "spans": [[4, 2]]}],
            "p.jsonl, line 1, field 'spans': span 0 [4, 2]: end is before start",
        ),
        ([{"id": "a", "spans": []}], [{"id": "a"}], "p.jsonl, line 1, field 'spans'"),
        (
            [{"id": "a", "spans": []}, {"id": "a", "spans": []}],
            [{"id": "a", "spans": []}],
            "g.jsonl, line 2, field 'id': duplicate id",
        ),
    ],
)
def test_score_errors_are_clean(
    tmp_path: Path,
    run_cli: RunCli,
    gold_rows: list[dict[str, object]],
    pred_rows: list[dict[str, object]],
    message: str,
) -> None:
    gold = _jsonl(tmp_path / "g.jsonl", gold_rows)
    pred = _jsonl(tmp_path / "p.jsonl", pred_rows)
    code, _, err = run_cli(["spans", "score", "--gold", str(gold), "--pred", str(pred)])
    assert code == 2
    assert err.startswith("error: ") and message in err
    assert "Traceback" not in err


def test_loo_shape_and_clip_warning(tmp_path: Path, run_cli: RunCli) -> None:
    path = _jsonl(
        tmp_path / "m.jsonl",
        [
            {
                "id": "1",
                "model_output_text": "abcdefghij",
                "annotations": {"x": [[0, 3]], "y": [[0, 4]], "z": [[8, 12]]},
            },
            {"id": "2", "model_output_text": "abcdefghij", "annotations": {"x": [], "y": [[1, 2]]}},
        ],
    )
    code, out, err = run_cli(["spans", "loo", str(path), "--format", "json"])
    assert code == 0
    result = json.loads(out)
    assert set(result) == {"majority", "union", "n_items", "n_annotations"}
    assert (result["n_items"], result["n_annotations"]) == (2, 5)
    for ref in ("majority", "union"):
        assert set(result[ref]) == {"macro", "micro"}
        assert _shape_ok(result[ref]["macro"]) and _shape_ok(result[ref]["micro"])
    assert "warning:" in err and "[8, 12]" in err and "clipped" in err
    code, _, err = run_cli(["spans", "loo", str(path), "--strict-bounds"])
    assert code == 2 and "ends past the text" in err
    code, out, _ = run_cli(["spans", "loo", str(path), "--diagnostics"])
    assert code == 0 and "one_char_per_gold" in json.loads(out)["diagnostics"]


def test_unknown_format_is_an_error(tmp_path: Path, run_cli: RunCli) -> None:
    path = _jsonl(tmp_path / "m.jsonl", [])
    code, _, err = run_cli(["spans", "loo", str(path), "--format", "xml"])
    assert code == 2 and "unknown format 'xml'" in err


def test_table_format(tmp_path: Path, run_cli: RunCli) -> None:
    gold = _jsonl(tmp_path / "g.jsonl", [{"id": "a", "spans": [[0, 10]]}])
    code, out, _ = run_cli(
        ["spans", "score", "--gold", str(gold), "--pred", str(gold), "--format", "table"]
    )
    assert code == 0 and "span_coverage" in out and "1.000" in out
