"""Shared fixtures: ledgers on real SQLite files and, when available, real PostgreSQL.

PostgreSQL tests run when ``AUDITOR_TEST_PG_URL`` points at a server (``.ci/run``
starts a throwaway cluster and sets it); each test gets a fresh database.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from auditor.extract.rules import RuleExtractor

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

PG_URL = os.environ.get("AUDITOR_TEST_PG_URL")


def _pg_database() -> Iterator[str]:
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    assert PG_URL is not None
    admin = create_engine(PG_URL, isolation_level="AUTOCOMMIT")
    name = f"auditor_test_{uuid.uuid4().hex[:12]}"
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield make_url(PG_URL).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def ledger_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, empty ledger location: a SQLite file, then a PostgreSQL database."""
    if request.param == "sqlite":
        yield str(tmp_path / "ledger.db")
        return
    if not PG_URL:
        pytest.skip("AUDITOR_TEST_PG_URL is not set (no PostgreSQL server)")
    yield from _pg_database()


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """A fresh SQLite ledger file path."""
    return str(tmp_path / "ledger.db")


@pytest.fixture(autouse=True)
def _default_ledger_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Commands run without --db write to a temporary ledger, never into the checkout."""
    monkeypatch.setenv("AUDITOR_DB", str(tmp_path / "default-ledger.db"))


RunCli = Callable[[list[str]], tuple[int, str, str]]


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str]) -> RunCli:
    """Run ``auditor ARGV`` through its real entry point: (exit code, stdout, stderr)."""
    from auditor.cli import main

    def run(argv: list[str]) -> tuple[int, str, str]:
        with pytest.raises(SystemExit) as exc:
            main(argv)
        out = capsys.readouterr()
        code = exc.value.code if isinstance(exc.value.code, int) else 1
        return code, out.out, out.err

    return run


@pytest.fixture(scope="session")
def rules() -> RuleExtractor:
    """The default rule-based extractor (one per test session: it holds no state)."""
    from auditor.extract.rules import RuleExtractor

    return RuleExtractor()
