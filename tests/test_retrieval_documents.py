"""Loading evidence documents: JSONL records, text files, folders, and bad input."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from auditor.errors import InputError
from auditor.retrieval import load_documents, make_document


def _jsonl(path: Path, records: list[object]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_jsonl_fields_digest_and_dates(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path / "docs.jsonl",
        [
            {
                "id": "a",
                "text": "Alpha text.",
                "source": "http://x",
                "title": "A",
                "version": "2024-01",
                "published_at": "2024-01-02",
                "valid_to": "2024-05-01T12:00:00+02:00",
            },
            {"id": 7, "text": "Seven."},
        ],
    )
    docs = load_documents([path])
    assert [d.doc_id for d in docs] == ["a", "7"]
    a = docs[0]
    assert a.digest == hashlib.sha256(b"Alpha text.").hexdigest()
    assert (a.source, a.title, a.version) == ("http://x", "A", "2024-01")
    assert a.published_at == datetime(2024, 1, 2, tzinfo=UTC)
    assert a.valid_to == datetime(2024, 5, 1, 10, 0, tzinfo=UTC)
    assert docs[1].version == "" and docs[1].published_at is None


def test_flags_are_defaults_that_records_override(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path / "d.jsonl",
        [{"id": "a", "text": "A.", "published_at": "2023-03-03"}, {"id": "b", "text": "B."}],
    )
    docs = load_documents([path], published_at="2020-01-01", retrieved_at="2021-01-01")
    assert docs[0].published_at == datetime(2023, 3, 3, tzinfo=UTC)
    assert docs[1].published_at == datetime(2020, 1, 1, tzinfo=UTC)
    assert all(d.retrieved_at == datetime(2021, 1, 1, tzinfo=UTC) for d in docs)


def test_text_files_and_folders(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    (corpus / "sub").mkdir(parents=True)
    (corpus / "one.txt").write_text("First file.", encoding="utf-8")
    (corpus / "sub" / "two.md").write_text("# Title\n\nSecond.", encoding="utf-8")
    (corpus / "skip.csv").write_text("x,y", encoding="utf-8")
    (corpus / ".hidden.txt").write_text("hidden", encoding="utf-8")
    single = tmp_path / "alone.txt"
    single.write_text("Alone.", encoding="utf-8")
    docs = load_documents([corpus, single], valid_from="2022-02-02")
    assert [d.doc_id for d in docs] == ["one.txt", "sub/two.md", "alone.txt"]
    assert docs[1].text == "# Title\n\nSecond."
    assert all(d.valid_from == datetime(2022, 2, 2, tzinfo=UTC) for d in docs)
    assert docs[0].source == "file://" + (corpus / "one.txt").resolve().as_posix()


def test_repeated_record_with_same_text_is_one_version(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path / "d.jsonl",
        [{"id": "a", "text": "Same."}, {"id": "a", "text": "Same."}, {"id": "a", "text": "New."}],
    )
    assert [d.text for d in load_documents([path])] == ["Same.", "New."]


@pytest.mark.parametrize(
    ("line", "field", "fragment"),
    [
        ('{"id": "a", "text": "ok"', None, "malformed JSON"),
        ('{"text": "no id"}', "id", "missing"),
        ('{"id": "a"}', "text", "missing"),
        ('{"id": "a", "text": 3}', "text", "expected str"),
        ('{"id": "a", "text": "   "}', "text", "empty"),
        ('{"id": "a", "text": "x", "published_at": "yesterday"}', "published_at", "ISO-8601"),
        (
            '{"id": "a", "text": "x", "valid_from": "2024-02-01", "valid_to": "2024-01-01"}',
            "valid_to",
            "before",
        ),
        ('["not", "an", "object"]', None, "JSON object"),
    ],
)
def test_bad_jsonl_names_file_line_and_field(
    tmp_path: Path, line: str, field: str | None, fragment: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "ok", "text": "fine"}\n\n' + line + "\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_documents([path])
    err = info.value
    assert err.file == str(path) and err.line == 3 and err.field == field
    assert fragment in str(err)


def test_non_utf8_files_name_the_line(tmp_path: Path) -> None:
    jsonl = tmp_path / "bad.jsonl"
    jsonl.write_bytes(b'{"id": "a", "text": "ok"}\n{"id": "b", "text": "caf\xe9"}\n')
    with pytest.raises(InputError) as info:
        load_documents([jsonl])
    assert (info.value.file, info.value.line) == (str(jsonl), 2)
    text = tmp_path / "bad.txt"
    text.write_bytes(b"line one\nline two\nbad \xff byte\n")
    with pytest.raises(InputError) as info:
        load_documents([text])
    assert (info.value.file, info.value.line, info.value.field) == (str(text), 3, "text")


def test_missing_path_unsupported_type_and_bad_flag(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        load_documents([tmp_path / "nope.jsonl"])
    other = tmp_path / "x.pdf"
    other.write_bytes(b"%PDF")
    with pytest.raises(InputError, match="unsupported file type"):
        load_documents([other])
    with pytest.raises(InputError) as info:
        load_documents([], published_at="31/12/2020")
    assert info.value.field == "published_at"


def test_make_document_validates() -> None:
    doc = make_document("d", "Some text.", valid_from="2020-01-01")
    assert doc.digest == hashlib.sha256(b"Some text.").hexdigest()
    assert doc.valid_from == datetime(2020, 1, 1, tzinfo=UTC)
    with pytest.raises(InputError):
        make_document("", "x")
    with pytest.raises(InputError):
        make_document("d", "  ")
