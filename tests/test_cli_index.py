"""``auditor ingest`` and ``auditor search``: ledger + index as one unit, output shape, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import RunCli

pytestmark = pytest.mark.slow  # loads the MiniLM encoder

HIT_FIELDS = {
    "doc_id",
    "version",
    "chunk_id",
    "score",
    "start",
    "end",
    "text",
    "published_at",
    "valid_from",
    "valid_to",
    "digest",
    "superseded",
}


def _jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _ledger_counts(db: Path | str) -> tuple[int, int, int]:
    from ledger import open_ledger

    with open_ledger(db, create=False) as ledger:
        return (ledger.count("document"), ledger.count("document_version"), ledger.count("chunk"))


def test_ingest_then_search_as_of(tmp_path: Path, run_cli: RunCli, ledger_url: str) -> None:
    ix, db = tmp_path / "ix", ledger_url  # SQLite, and PostgreSQL when a server is given
    docs = _jsonl(
        tmp_path / "docs.jsonl",
        [
            {
                "id": "ceo",
                "text": "Alice Martin is the chief executive of Acme Corp.",
                "published_at": "2019-01-01",
                "source": "https://acme.example/about",
            },
            {"id": "river", "text": "The Danube flows through Vienna."},
        ],
    )
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "memo.md").write_text("# Memo\n\nAcme Corp opened an office in Oslo.")
    code, out, err = run_cli(
        [
            "ingest",
            str(docs),
            str(notes),
            "--index",
            str(ix),
            "--db",
            str(db),
            "--published-at",
            "2020-02-02",
        ]
    )
    assert code == 0, err
    assert "3 versions added" in out
    assert _ledger_counts(db) == (3, 3, 3)
    # changed text for a known id: a new version, the old one kept
    update = _jsonl(
        tmp_path / "update.jsonl",
        [
            {
                "id": "ceo",
                "text": "Bob Jones is the chief executive of Acme Corp.",
                "published_at": "2022-06-01",
            }
        ],
    )
    code, out, _ = run_cli(["ingest", str(update), "--index", str(ix), "--db", str(db)])
    assert code == 0 and "1 versions added, 1 superseded" in out
    assert _ledger_counts(db) == (3, 4, 4)
    code, out, _ = run_cli(["ingest", str(update), "--index", str(ix), "--db", str(db)])
    assert code == 0 and "0 versions added" in out and _ledger_counts(db) == (3, 4, 4)

    queries = _jsonl(
        tmp_path / "q.jsonl",
        [
            {"id": "q1", "text": "Who runs Acme Corp?"},
            {"id": 2, "text": "Where is the Acme office?"},
        ],
    )
    code, out, err = run_cli(
        [
            "search",
            "--index",
            str(ix),
            "--queries",
            str(queries),
            "--k",
            "4",
            "--as-of",
            "2021-01-01",
            "--mode",
            "hybrid",
            "--format",
            "jsonl",
        ]
    )
    assert code == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    assert [line["id"] for line in lines] == ["q1", 2]
    for line in lines:
        assert all(set(hit) == HIT_FIELDS for hit in line["hits"])
        scores = [hit["score"] for hit in line["hits"]]
        assert scores == sorted(scores, reverse=True)
    q1 = lines[0]["hits"]
    assert ("ceo", "v2") not in {(h["doc_id"], h["version"]) for h in q1}  # not yet published
    ceo = next(h for h in q1 if h["doc_id"] == "ceo")
    assert ceo["version"] == "v1" and ceo["superseded"] is False
    assert ceo["text"] == "Alice Martin is the chief executive of Acme Corp."
    assert lines[1]["hits"][0]["doc_id"] == "memo.md"
    assert lines[1]["hits"][0]["published_at"] == "2020-02-02T00:00:00+00:00"

    code, out, _ = run_cli(
        [
            "search",
            "--index",
            str(ix),
            "--queries",
            str(queries),
            "--k",
            "4",
            "--as-of",
            "2023-01-01",
            "--mode",
            "dense",
        ]
    )
    flags = {
        (h["doc_id"], h["version"]): h["superseded"]
        for h in json.loads(out.splitlines()[0])["hits"]
    }
    assert flags[("ceo", "v1")] is True and flags[("ceo", "v2")] is False


def test_bad_input_names_file_line_field_and_writes_nothing(
    tmp_path: Path, run_cli: RunCli
) -> None:
    ix, db = tmp_path / "ix", tmp_path / "ledger.db"
    bad = _jsonl(
        tmp_path / "bad.jsonl",
        [{"id": "a", "text": "Fine."}, {"id": "b", "text": "x", "published_at": "soon"}],
    )
    code, _, err = run_cli(["ingest", str(bad), "--index", str(ix), "--db", str(db)])
    assert code == 2
    assert err.startswith("error: ") and "line 2" in err and "published_at" in err
    assert str(bad) in err
    assert not ix.exists() and not db.exists()


def test_failed_ledger_write_leaves_index_unchanged(tmp_path: Path, run_cli: RunCli) -> None:
    ix, db = tmp_path / "ix", tmp_path / "ledger.db"
    docs = _jsonl(tmp_path / "d.jsonl", [{"id": "a", "text": "Alpha is first."}])
    assert run_cli(["ingest", str(docs), "--index", str(ix), "--db", str(db)])[0] == 0
    live = (ix / "CURRENT").read_text()
    more = _jsonl(tmp_path / "m.jsonl", [{"id": "b", "text": "Beta is second."}])
    not_a_db = tmp_path / "garbage.db"
    not_a_db.write_bytes(b"this is not a sqlite file" * 100)
    code, _, err = run_cli(["ingest", str(more), "--index", str(ix), "--db", str(not_a_db)])
    assert code == 2 and err.startswith("error: ")
    assert (ix / "CURRENT").read_text() == live


def test_search_errors_are_clean(tmp_path: Path, run_cli: RunCli) -> None:
    queries = _jsonl(tmp_path / "q.jsonl", [{"id": "q", "text": "x"}])
    code, _, err = run_cli(["search", "--index", str(tmp_path / "none"), "--queries", str(queries)])
    assert code == 2 and "no such evidence index" in err
    bad = _jsonl(tmp_path / "bad.jsonl", [{"id": "q"}])
    code, _, err = run_cli(["search", "--index", str(tmp_path / "none"), "--queries", str(bad)])
    assert code == 2 and "line 1" in err and "'text'" in err
    code, _, err = run_cli(["search", "--queries", str(queries), "--as-of", "tomorrow"])
    assert code == 2 and "--as-of" in err


def test_help_lists_commands(run_cli: RunCli) -> None:
    code, out, _ = run_cli(["--help"])
    assert code == 0 and "ingest" in out and "search" in out
