"""Issue 37, item 5: every command that reads a file reports all its bad lines (the first
:data:`auditor.jsonl.MAX_REPORTED`, with the count) before writing anything.

A file with three bad lines among good ones: each command names all three, with file,
line and field, exits 2 and leaves no output, no ledger row and no index behind."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from conftest import RunCli

from auditor.answers import load_answers
from auditor.jsonl import MAX_REPORTED, InputErrors
from auditor.retrieval import load_documents
from ledger import open_ledger
from tests._web_ledger import claim_id, review_specs, write_run


def _write(path: Path, lines: list[object]) -> Path:
    path.write_text(
        "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines),
        encoding="utf-8",
    )
    return path


def _answers(tmp_path: Path) -> Path:
    return _write(
        tmp_path / "answers.jsonl",
        [
            {"id": "a1", "question": "Fare?", "answer": "The fare is 3 dollars."},
            {"id": "a2", "questoin": "Fare?", "answer": "The fare is 3 dollars."},  # line 2
            {"id": "a3", "question": "Fare?", "answer": "It is free."},
            '{"id": "a4", "answer": ',  # line 4: malformed JSON
            {"id": "a5", "question": "Fare?"},  # line 5: no answer
            {"id": "a6", "question": "Fare?", "answer": "Trains are red."},
        ],
    )


EXPECTED_ANSWER_LINES = [
    (2, "questoin"),
    (4, None),
    (5, "answer"),
]


def _bad_lines(err: str) -> list[tuple[int, str | None]]:
    found = re.findall(r"^\s+line (\d+)(?:, field '([^']+)')?: ", err, flags=re.MULTILINE)
    return [(int(n), f or None) for n, f in found]


def test_the_answers_loader_names_every_bad_line(tmp_path: Path) -> None:
    path = _answers(tmp_path)
    with pytest.raises(InputErrors) as caught:
        load_answers(path)
    error = caught.value
    assert error.total == 3 and error.file == str(path)
    assert [(e.line, e.field) for e in error.errors] == EXPECTED_ANSWER_LINES
    assert str(error).startswith(f"{path}: 3 bad lines:")
    assert _bad_lines(str(error)) == EXPECTED_ANSWER_LINES


def test_the_error_stops_at_the_cap_and_gives_the_count(tmp_path: Path) -> None:
    n = MAX_REPORTED + 7
    path = _write(tmp_path / "docs.jsonl", [{"id": f"d{i}"} for i in range(n)])  # no text
    with pytest.raises(InputErrors) as caught:
        load_documents([path])
    text = str(caught.value)
    assert caught.value.total == n and len(caught.value.errors) == MAX_REPORTED
    assert f"{n} bad lines (the first {MAX_REPORTED} below)" in text
    assert [line for line, _ in _bad_lines(text)] == list(range(1, MAX_REPORTED + 1))
    assert text.rstrip().endswith("... and 7 more")


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("command", ["audit", "claims"])
def test_answer_commands_write_nothing(command: str, tmp_path: Path, run_cli: RunCli) -> None:
    path = _answers(tmp_path)
    db, index = tmp_path / "ledger.db", tmp_path / "index"
    argv = {
        "audit": ["audit", str(path), "--db", str(db), "--index", str(index), "--quiet"],
        "claims": ["claims", str(path)],
    }[command]
    code, out, err = run_cli(argv)
    assert code == 2, err
    assert err.startswith(f"error: {path}: 3 bad lines:"), err
    assert _bad_lines(err) == EXPECTED_ANSWER_LINES
    assert out == "" and not db.exists() and not index.exists()


def test_ingest_and_search_write_nothing(tmp_path: Path, run_cli: RunCli) -> None:
    docs = _write(
        tmp_path / "docs.jsonl",
        [
            {"id": "d1", "text": "Trains are red."},
            {"id": "d2"},  # line 2: no text
            {"id": "d3", "text": "Buses are blue.", "publised_at": "2024-01-01"},  # line 3
            {"id": "d4", "text": "Trams are green.", "published_at": "yesterday"},  # line 4
        ],
    )
    db, index = tmp_path / "ledger.db", tmp_path / "index"
    code, out, err = run_cli(["ingest", str(docs), "--db", str(db), "--index", str(index)])
    assert code == 2, err
    assert f"{docs}: 3 bad lines:" in err
    assert _bad_lines(err) == [(2, "text"), (3, "publised_at"), (4, "published_at")]
    assert not db.exists() and not index.exists()

    queries = _write(
        tmp_path / "queries.jsonl",
        [{"id": 1, "text": "red"}, {"id": 2, "text": " "}, "[]", {"id": 4}],
    )
    code, out, err = run_cli(["search", "--queries", str(queries), "--index", str(index)])
    assert code == 2, err
    assert _bad_lines(err) == [(2, "text"), (3, None), (4, "text")]
    assert out == ""


def test_review_import_writes_nothing(tmp_path: Path, run_cli: RunCli) -> None:
    db = tmp_path / "ledger.db"
    with open_ledger(db) as ledger:
        run = write_run(ledger, "import", review_specs(1))
    good = claim_id("ans-0", "The fare is 2 dollars.")
    audits = _write(
        tmp_path / "audits.jsonl",
        [
            {"claim_id": good, "label": "supported", "reviewer": "ana"},
            {"claim_id": good, "label": "fine", "reviewer": "ana"},  # line 2: bad label
            {"claim_id": good, "label": "supported"},  # line 3: no reviewer
            {"claim_id": "ffff", "label": "supported", "reviewer": "ana"},  # line 4: no claim
        ],
    )
    before = _digest(db)
    code, _, err = run_cli(["review", "import", str(audits), "--run", run, "--db", str(db)])
    assert code == 2, err
    assert [line for line, _ in _bad_lines(err)] == [2, 3], err  # the lines' own fields first
    assert _digest(db) == before
    # with every line well formed, the claims that do not exist are all named as well
    _write(
        audits,
        [
            {"claim_id": good, "label": "supported", "reviewer": "ana"},
            {"claim_id": "ffff", "label": "supported", "reviewer": "ana"},
            {"claim_id": "eeee", "label": "supported", "reviewer": "ana"},
        ],
    )
    code, _, err = run_cli(["review", "import", str(audits), "--run", run, "--db", str(db)])
    assert code == 2, err
    assert [line for line, _ in _bad_lines(err)] == [2, 3], err
    assert _digest(db) == before
