"""One clock: one date parser, one UTC normaliser and one default as-of date (today,
00:00 UTC) for every command and the Python API; an answer's own ``as_of`` wins
everywhere, ``reaudit`` included, unless ``--override-answer-dates``; ``reaudit`` without
``--as-of`` refuses.

The end-to-end tests run the commands as a user would (``auditor ingest``, ``audit``,
``search``, ``impact``, ``reaudit``) on a small dated corpus with a SQLite ledger, with
the wall clock frozen at 2025-06-01 15:30 UTC.
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from auditor import clock
from auditor.answers import load_answers
from auditor.errors import InputError
from ledger import open_ledger
from tests.conftest import RunCli
from tests.test_freshness import OTHERS as FRESHNESS_OTHERS

NOW = datetime(2025, 6, 1, 15, 30, tzinfo=UTC)
TODAY = datetime(2025, 6, 1, tzinfo=UTC)

FERRY = "The Harbor Line ferry departs from Pier 4 every 30 minutes on weekdays."
FERRY_NEW = "The Harbor Line ferry departs from Pier 4 every 45 minutes on weekdays."
OTHERS = FRESHNESS_OTHERS[:8]


@pytest.fixture
def frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    """The wall clock reads 2025-06-01 15:30 UTC."""
    monkeypatch.setattr(clock, "now", lambda: NOW)


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _corpus(path: Path) -> Path:
    rows = [{"id": "ferry", "text": FERRY, "published_at": "2024-01-01"}]
    rows += [{"id": d, "text": t, "published_at": "2024-01-01"} for d, t in OTHERS]
    return _jsonl(path, rows)


def _labels(out: str) -> dict[str, str]:
    return {r["id"]: r["claims"][0]["label"] for r in map(json.loads, out.splitlines())}


def _runs(db: Path) -> list[Any]:
    with open_ledger(db, create=False) as ledger:
        return ledger.list_runs()


# ------------------------------------------------------------------ the one parser
def test_one_parser_and_one_normaliser(frozen: None) -> None:
    assert clock.parse_datetime("2025-01-01") == datetime(2025, 1, 1, tzinfo=UTC)
    assert clock.parse_datetime("2025-01-01T02:00:00+02:00") == datetime(2025, 1, 1, tzinfo=UTC)
    assert clock.parse_datetime(" 2025-01-01T00:00:00Z ") == datetime(2025, 1, 1, tzinfo=UTC)
    assert clock.parse_datetime(None) is None and clock.parse_datetime("") is None
    assert clock.parse_datetime(date(2025, 1, 1)) == datetime(2025, 1, 1, tzinfo=UTC)  # YAML
    naive = datetime(2025, 1, 1, 12)
    assert clock.utc(naive) == datetime(2025, 1, 1, 12, tzinfo=UTC)  # timezone-less: UTC
    east = datetime(2025, 1, 1, 12, tzinfo=timezone(timedelta(hours=3)))
    assert clock.utc(east) == datetime(2025, 1, 1, 9, tzinfo=UTC)
    assert clock.utc(None) is None
    assert clock.default_as_of() == TODAY  # the start of the current UTC day
    assert clock.as_of_or_default(None) == TODAY
    assert clock.as_of_or_default("2024-02-02") == datetime(2024, 2, 2, tzinfo=UTC)
    with pytest.raises(InputError, match=r"^field '--as-of': not an ISO-8601 date: 'soon'"):
        clock.as_of_or_default("soon", field="--as-of")


def test_a_bad_date_names_file_line_and_field(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path / "answers.jsonl",
        [
            {"id": "a", "answer": "The ferry runs every 30 minutes.", "as_of": "2025-01-01"},
            {"id": "b", "answer": "The ferry runs every 30 minutes.", "as_of": "01/02/2025"},
        ],
    )
    with pytest.raises(InputError) as caught:
        load_answers(path)
    assert str(caught.value) == (
        f"{path}, line 2, field 'as_of': not an ISO-8601 date: '01/02/2025'"
    )


# ------------------------------------------------------------------ reaudit refuses
def test_reaudit_without_as_of_refuses_naming_the_flag(tmp_path: Path, run_cli: RunCli) -> None:
    db, index = tmp_path / "ledger.db", tmp_path / "index"
    code, out, err = run_cli(["reaudit", "abc123", "--db", str(db), "--index", str(index)])
    assert code == 2 and out == ""
    assert "--as-of" in err and "Traceback" not in err
    assert not db.exists() and not index.exists()  # nothing written, not even a ledger
    code, _, err = run_cli(["reaudit", "abc123", "--db", str(db), "--as-of", "next week"])
    assert code == 2 and "field '--as-of': not an ISO-8601 date: 'next week'" in err
    assert not db.exists()


# ------------------------------------------------------------------ one default date
@pytest.mark.slow
def test_one_default_as_of_for_the_cli_the_api_and_every_command(
    tmp_path: Path, run_cli: RunCli, frozen: None
) -> None:
    """Without a date, `audit`, the Python API, `search` and `impact` all use today,
    00:00 UTC: a version published at 12:00 today is not visible yet to any of them."""
    from auditor import Auditor

    index, db = tmp_path / "index", tmp_path / "ledger.db"
    docs = _corpus(tmp_path / "docs.jsonl")
    code, _, err = run_cli(["ingest", str(docs), "--index", str(index), "--db", str(db)])
    assert code == 0, err
    later_today = [{"id": "ferry", "text": FERRY_NEW, "published_at": "2025-06-01T12:00:00Z"}]
    update = _jsonl(tmp_path / "update.jsonl", later_today)
    code, _, err = run_cli(["ingest", str(update), "--index", str(index), "--db", str(db)])
    assert code == 0, err
    answers = _jsonl(tmp_path / "answers.jsonl", [{"id": "ferry", "answer": FERRY}])

    code, out, err = run_cli(["audit", str(answers), "--index", str(index), "--db", str(db)])
    assert code == 0, err
    assert _labels(out) == {"ferry": "supported"}  # the 45-minute version is not out yet
    [run] = _runs(db)
    assert run.as_of == TODAY

    # the Python API without as_of: the same date, hence the same run (reused)
    with Auditor(index, db) as auditor:
        assert auditor.config.as_of == TODAY
        api = auditor.audit(answers)
    assert api.run_id == run.run_id and api.reused

    queries = _jsonl(tmp_path / "q.jsonl", [{"id": "q", "text": "How often does the ferry go?"}])
    code, out, err = run_cli(["search", "--index", str(index), "--queries", str(queries)])
    assert code == 0, err
    texts = [h["text"] for h in json.loads(out)["hits"]]
    assert FERRY in texts and FERRY_NEW not in texts

    code, out, err = run_cli(["impact", "--db", str(db)])
    assert code == 0, err
    assert "0 impacted claims" in out and "as of 2025-06-01" in out
    # one explicit date later, the same commands see the new version
    code, out, err = run_cli(["impact", "--db", str(db), "--as-of", "2025-06-02"])
    assert code == 0 and "1 impacted claims" in out, (out, err)


# ------------------------------------------------------------------ answers' own dates
@pytest.mark.slow
def test_an_answers_own_as_of_wins_in_impact_and_reaudit(tmp_path: Path, run_cli: RunCli) -> None:
    """Two answers state the 30-minute timetable, one dated 2025-01-01, one undated. After
    a 45-minute version published 2025-03-01 is ingested, a re-audit as of 2025-06-01 makes
    the undated answer's claim stale and keeps the dated one (its own date wins: carried),
    unless --override-answer-dates; `impact` names the claims each would judge again."""
    from auditor import Auditor
    from auditor.freshness import reaudit

    index, db = tmp_path / "index", tmp_path / "ledger.db"
    code, _, err = run_cli(
        ["ingest", str(_corpus(tmp_path / "docs.jsonl")), "--index", str(index), "--db", str(db)]
    )
    assert code == 0, err
    answers = _jsonl(
        tmp_path / "answers.jsonl",
        [
            {"id": "dated", "answer": FERRY, "as_of": "2025-01-01"},
            {"id": "undated", "answer": FERRY},
        ],
    )
    code, out, err = run_cli(
        ["audit", str(answers), "--index", str(index), "--db", str(db), "--as-of", "2025-01-01"]
    )
    assert code == 0, err
    assert _labels(out) == {"dated": "supported", "undated": "supported"}
    [run] = _runs(db)
    update = _jsonl(
        tmp_path / "update.jsonl",
        [{"id": "ferry", "text": FERRY_NEW, "published_at": "2025-03-01"}],
    )
    code, _, err = run_cli(["ingest", str(update), "--index", str(index), "--db", str(db)])
    assert code == 0, err

    # reaudit with no date refuses and writes nothing, also on a real ledger
    code, out, err = run_cli(["reaudit", run.run_id[:10], "--db", str(db), "--index", str(index)])
    assert code == 2 and "--as-of" in err and out == ""
    assert [r.run_id for r in _runs(db)] == [run.run_id]

    def impacted(*flags: str) -> list[str]:
        code, out, err = run_cli(
            ["impact", "--db", str(db), "--as-of", "2025-06-01", "--format", "json", *flags]
        )
        assert code == 0, err
        return sorted(c["answer_id"] for c in json.loads(out))

    assert impacted() == ["undated"]  # the dated answer's evidence as of its date is unchanged
    assert impacted("--override-answer-dates") == ["dated", "undated"]

    base = ["reaudit", run.run_id[:10], "--db", str(db), "--index", str(index)]
    code, out, err = run_cli([*base, "--as-of", "2025-06-01", "--only-impacted"])
    assert code == 0, err
    records = {r["id"]: r["claims"][0] for r in map(json.loads, out.splitlines())}
    assert {k: c["label"] for k, c in records.items()} == {
        "dated": "supported",
        "undated": "stale",
    }
    assert records["dated"]["carried"] and "2025-01-01" in records["dated"]["carried"]["reason"]
    assert records["undated"]["carried"] is None

    code, out, err = run_cli(
        [*base, "--as-of", "2025-06-01", "--only-impacted", "--override-answer-dates"]
    )
    assert code == 0, err
    assert _labels(out) == {"dated": "stale", "undated": "stale"}

    # a full re-audit also keeps the answer's own date
    code, out, err = run_cli([*base, "--as-of", "2025-06-01"])
    assert code == 0, err
    assert _labels(out) == {"dated": "supported", "undated": "stale"}
    assert len(_runs(db)) == 4

    # the Python API: the same rule and flag, the same runs (reused)
    with Auditor(index, db) as auditor:
        own = reaudit(auditor, run.run_id, as_of="2025-06-01", only_impacted=True)
        overridden = reaudit(auditor, run.run_id, as_of="2025-06-01", override_answer_dates=True)
    assert own.reused and overridden.reused and own.run_id != overridden.run_id
    assert len(_runs(db)) == 4
