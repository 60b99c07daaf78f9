"""Loading answer files: good input, and bad input named by file, line and field."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from auditor.answers import load_answers
from auditor.errors import InputError


def write(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "answers.jsonl"
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def test_contexts_and_dates_are_parsed(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        '{"id": 1, "question": "q", "answer": "A.", "as_of": "2024-05-01", '
        '"contexts": [{"text": "ctx", "published_at": "2024-01-01T10:00"}]}\n'
        '\n{"id": "b", "answer": "B."}\n',
    )
    a, b = load_answers(path)
    assert a.id == "1" and a.as_of == datetime(2024, 5, 1, tzinfo=UTC)
    assert a.contexts[0].id == "ctx-0"
    assert a.contexts[0].published_at == datetime(2024, 1, 1, 10, tzinfo=UTC)
    assert b.question == "" and b.contexts == ()


@pytest.mark.parametrize(
    "content,line,field",
    [
        ('{"id": "a", "answer": "x"}\n{"id": "b"}\n', 2, "answer"),
        ('{"id": "a", "answer": 3}\n', 1, "answer"),
        ('{"answer": "x"}\n', 1, "id"),
        ('{"id": "a", "answer": "x", "as_of": "yesterday"}\n', 1, "as_of"),
        ('{"id": "a", "answer": "x", "contexts": [{"id": "c"}]}\n', 1, "contexts[0].text"),
        ('{"id": "a", "answer": "x"}\n{"id": "a", "answer": "y"}\n', 2, "id"),
    ],
)
def test_bad_fields_are_named(tmp_path: Path, content: str, line: int, field: str) -> None:
    path = write(tmp_path, content)
    with pytest.raises(InputError) as info:
        load_answers(path)
    assert info.value.line == line and info.value.field == field
    assert str(path) in str(info.value)


def test_malformed_json_and_bad_utf8_name_the_line(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"line 2.*malformed JSON"):
        load_answers(write(tmp_path, '{"id": "a", "answer": "x"}\n{"id": \n'))
    with pytest.raises(InputError, match=r"line 1.*UTF-8"):
        load_answers(write(tmp_path, b'{"id": "a", "answer": "\xff"}\n'))
