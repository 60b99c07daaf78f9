"""``auditor spans score``'s fast whole-file reader accepts and rejects exactly what the
line-by-line reader does (naming the same first bad line), and start-up stays light."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import RunCli


def _jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _score(run_cli: RunCli, gold: Path, pred: Path) -> dict[str, dict[str, float]]:
    code, out, err = run_cli(["spans", "score", "--gold", str(gold), "--pred", str(pred)])
    assert code == 0, err
    return json.loads(out)  # type: ignore[no-any-return]


def test_score_same_result_whatever_the_order_of_the_prediction_file(
    tmp_path: Path, run_cli: RunCli
) -> None:
    gold_rows: list[dict[str, object]] = [
        {"id": f"i{k}", "text": "x" * 40, "spans": [[k, k + 5], [20, 30]]} for k in range(6)
    ]
    pred_rows: list[dict[str, object]] = [
        {"id": f"i{k}", "spans": [[k + 1, k + 5], [21, 35]]} for k in range(6)
    ]
    gold = _jsonl(tmp_path / "g.jsonl", gold_rows)
    same = _score(run_cli, gold, _jsonl(tmp_path / "p.jsonl", pred_rows))
    shuffled = _score(run_cli, gold, _jsonl(tmp_path / "q.jsonl", pred_rows[::-1]))
    assert same == shuffled
    assert same["exact_span"]["f1"] < 1.0


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"id": "a", "spans": []}\n{"id": "b", \n', "p.jsonl, line 2: malformed JSON"),
        (b'{"id": "a", "spans": []}\n[1, 2]\n', "p.jsonl, line 2: expected a JSON object"),
        (b'{"id": "a", "spans": []}\n{"id": "\xff"}\n', "p.jsonl, line 2: not valid UTF-8"),
        (
            b'{"id": "a", "spans": []}\n{"id": "b", "spans": [[0, 123456789012345678901234]]}\n',
            "p.jsonl, line 2, field 'spans'",
        ),
    ],
)
def test_score_parse_errors_name_the_line(
    tmp_path: Path, run_cli: RunCli, content: bytes, message: str
) -> None:
    gold = _jsonl(tmp_path / "g.jsonl", [{"id": "a", "spans": []}, {"id": "b", "spans": []}])
    pred = tmp_path / "p.jsonl"
    pred.write_bytes(content)
    code, _, err = run_cli(["spans", "score", "--gold", str(gold), "--pred", str(pred)])
    assert code == 2
    assert message in err, err


def test_score_missing_file_is_named(tmp_path: Path, run_cli: RunCli) -> None:
    gold = _jsonl(tmp_path / "g.jsonl", [{"id": "a", "spans": []}])
    code, _, err = run_cli(
        ["spans", "score", "--gold", str(gold), "--pred", str(tmp_path / "none.jsonl")]
    )
    assert code == 2 and "none.jsonl" in err and "no such file" in err, err


def test_score_blank_lines_nan_fields_and_crlf_are_read_as_before(
    tmp_path: Path, run_cli: RunCli
) -> None:
    gold = tmp_path / "g.jsonl"
    gold.write_bytes(
        b'{"id": "a", "spans": [[0, 3]], "note": NaN}\r\n\n  \n{"id": 7, "spans": [[2, 4]]}\n'
    )
    pred = _jsonl(
        tmp_path / "p.jsonl", [{"id": "7", "spans": [[2, 4]]}, {"id": "a", "spans": [[0, 3]]}]
    )
    assert _score(run_cli, gold, pred)["exact_span"]["f1"] == 1.0


@pytest.mark.parametrize(
    ("pred_rows", "message"),
    [
        (
            [{"id": "b", "spans": []}, {"id": "a", "text": "abd", "spans": []}],
            "p.jsonl, line 2, field 'text': id 'a': text differs",
        ),
        (
            [{"id": "a", "spans": [[0, 1]]}, {"id": "b", "spans": [[0, 2.5]]}],
            "p.jsonl, line 2, field 'spans': span 0 [0, 2.5]: expected a [start, end] pair",
        ),
        (
            [{"id": "a", "spans": []}, {"id": "b", "spans": [[-1, 2]]}],
            "p.jsonl, line 2, field 'spans': span 0 [-1, 2]: start is negative",
        ),
        (
            [{"id": "a", "spans": []}, {"id": "b", "text": 3, "spans": []}],
            "p.jsonl, line 2, field 'text': expected str",
        ),
        (
            [{"id": "a", "spans": []}, {"id": ["b"], "spans": []}],
            "p.jsonl, line 2, field 'id': expected str/int",
        ),
    ],
)
def test_score_errors_name_the_first_bad_line(
    tmp_path: Path, run_cli: RunCli, pred_rows: list[dict[str, object]], message: str
) -> None:
    gold = _jsonl(
        tmp_path / "g.jsonl", [{"id": "a", "text": "abc", "spans": []}, {"id": "b", "spans": []}]
    )
    pred = _jsonl(tmp_path / "p.jsonl", pred_rows)
    code, _, err = run_cli(["spans", "score", "--gold", str(gold), "--pred", str(pred)])
    assert code == 2
    assert message in err, err


def test_spans_score_does_not_import_the_ledger_or_models(tmp_path: Path) -> None:
    gold = _jsonl(tmp_path / "g.jsonl", [{"id": "a", "spans": [[0, 2]]}])
    code = (
        "import sys\nfrom auditor.cli import main\n"
        "try:\n    main(['spans', 'score', '--gold', sys.argv[1], '--pred', sys.argv[1]])\n"
        "except SystemExit:\n    pass\n"
        "heavy = sorted(m for m in ('sqlalchemy', 'torch', 'spacy', 'sentence_transformers',"
        " 'transformers', 'ledger', 'langgraph', 'faiss', 'sklearn', 'scipy')"
        " if m in sys.modules)\n"
        "print('HEAVY', heavy)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(gold)], capture_output=True, text=True, check=True
    ).stdout
    assert "HEAVY []" in out, out


def _reference(path: Path) -> tuple[list[int], list[str], list[str | None], list[Any]]:
    """The line reader's result: line numbers, ids, texts and canonical spans."""
    from auditor.cli.spans import _read_span_file
    from auditor.spans import batch_from_lists

    slow = _read_span_file(path)
    keys = list(slow)
    batch = batch_from_lists([slow[k][2] for k in keys])  # bounds checked by the reader
    return [slow[k][0] for k in keys], keys, [slow[k][1] for k in keys], batch.to_lists()


@pytest.mark.parametrize(
    "content",
    [
        b'{"id": "a", "text": "abcdef", "spans": [[0, 2], [1, 4]]}\n\n{"id": 3, "spans": []}\n',
        b'{"id": "a", "spans": [[0, 2]], "extra": {"x": [1, 2.5]}, "id": "b"}\n',
        b'{"id": "a",\n "spans": [[0, 2]]}\n',  # one object over two lines
        b'{"id": "a", "spans": []} {"id": "b", "spans": []}\n',  # two objects on one line
        b'{"id": true, "spans": [[0, 2]]}\n',  # a boolean id (the line reader takes it)
        b'{"id": "a", "spans": [[0, true]]}\n{"id": "b", "spans": [[1, 3]]}\n',
        b'{"id": "a", "spans": [[0, 18446744073709551615]]}\n',  # beyond int64
        b'{"id": "a", "spans": [[0, 1, 2]]}\n',
        b'{"id": "a", "spans": [[2, 1]]}\n',
        b'{"id": "a", "text": "ab", "spans": [[0, 3]]}\n',
        b'{"id": "a", "text": null, "spans": [[0, 3]]}\n',
        b'{"id": "a", "spans": [[0, 3]]}\n{"id": "a", "spans": []}\n',
        b'{"id": 1, "spans": []}\n{"id": "1", "spans": []}\n',
        b'\xef\xbb\xbf{"id": "a", "spans": [[0, 1]]}\n',  # byte-order mark
        b'{"id": "a", "text": "\\u00e9\\ud83d\\ude00x", "spans": [[0, 3]]}\r\n',
        b'{"id": "a", "text": "\xc3\xa9\xf0\x9f\x98\x80x", "spans": [[0, 4]]}\n',
    ],
)
def test_fast_reader_matches_the_line_reader(tmp_path: Path, content: bytes) -> None:
    """Whatever the file, the whole-file reader (typed decoding in C, one numpy check)
    gives what the line-by-line reader gives: the same records and line numbers, or the
    same error naming file, line and field."""
    from auditor.cli.spans import _SpanFile
    from auditor.errors import InputError

    path = tmp_path / "f.jsonl"
    path.write_bytes(content)
    try:
        expected: object = _reference(path)
    except InputError as exc:
        expected = str(exc)
    try:
        fast = _SpanFile.read(path)
        got: object = (fast.lines, fast.ids, fast.texts, fast.batch.to_lists())
    except InputError as exc:
        got = str(exc)
    assert got == expected


def test_missing_id_names_its_line_counting_blank_lines(tmp_path: Path, run_cli: RunCli) -> None:
    gold = tmp_path / "g.jsonl"
    gold.write_bytes(b'{"id": "a", "spans": []}\n\n\n{"id": "b", "spans": [[0, 1]]}\n')
    pred = _jsonl(tmp_path / "p.jsonl", [{"id": "a", "spans": []}])
    code, _, err = run_cli(["spans", "score", "--gold", str(gold), "--pred", str(pred)])
    assert code == 2
    assert "g.jsonl, line 4, field 'id': id 'b' has no line in" in err, err


def test_a_plain_file_never_goes_through_the_line_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import auditor.cli.spans as cli_spans

    def refuse(path: Path) -> None:
        raise AssertionError("the line reader was used")

    monkeypatch.setattr(cli_spans, "_read_span_file", refuse)
    path = tmp_path / "f.jsonl"
    path.write_bytes(
        b'{"id": "a", "text": "abcdef", "spans": [[0, 2], [1, 4]]}\n\n{"id": 3, "spans": []}\n'
    )
    fast = cli_spans._SpanFile.read(path)
    assert (fast.lines, fast.ids, fast.batch.to_lists()) == ([1, 3], ["a", "3"], [[(0, 4)], []])
