"""Issue 37, item 5: the ``report`` and ``trend`` tables stay legible at 80 columns.

At ``COLUMNS=80`` (and 120) no line is wider than the terminal, nothing is cut with an
ellipsis (dates and claim ids whole), the figures' definitions are not a column (they go
below the table with ``--explain``), and ``trend`` shows the label transitions between
consecutive runs in its table, not only in JSON."""

from __future__ import annotations

import dataclasses
import re
from datetime import UTC, datetime

import pytest
from conftest import RunCli

from ledger import open_ledger
from tests._web_ledger import claim_id, review_specs, write_run

DEFINITION = "claims with relevant evidence whose relevant evidence includes a dated version"


def _widths(text: str) -> int:
    return max(len(line.rstrip()) for line in text.splitlines())


def _words(text: str) -> str:
    """The text with box-drawing characters and line breaks gone (a cell that wraps
    reads as one run of words)."""
    return " ".join(re.sub(r"[\u2500-\u257f]", " ", text).split())


@pytest.fixture
def run(sqlite_url: str) -> str:
    with open_ledger(sqlite_url) as ledger:
        return write_run(ledger, "narrow", review_specs(3))


@pytest.mark.parametrize("columns", [80, 120])
def test_report_table_fits_the_terminal(
    columns: int, run: str, sqlite_url: str, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    code, out, err = run_cli(["report", run[:12], "--db", sqlite_url, "--bootstrap", "50"])
    assert code == 0, err
    assert _widths(out) <= columns, out
    assert "\u2026" not in out, out  # nothing cut with an ellipsis
    assert DEFINITION not in _words(out) and "definitions: --explain" in out
    for spec in review_specs(3):
        if spec.label in ("contradicted", "not_supported", "stale", "unknown"):
            assert claim_id(spec.answer_id, spec.text)[:16] in out  # whole, to copy
    code, out, err = run_cli(
        ["report", run[:12], "--db", sqlite_url, "--bootstrap", "50", "--explain"]
    )
    assert code == 0, err
    assert _widths(out) <= columns, out
    assert DEFINITION in _words(out) and "\u2026" not in out


def test_trend_table_fits_80_columns_and_shows_transitions(
    sqlite_url: str, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = review_specs(2)
    # the later run: the contradicted fares are supported, one stale claim is contradicted
    later = [
        dataclasses.replace(s, label="supported")
        if s.label == "contradicted"
        else dataclasses.replace(s, label="contradicted")
        if s.label == "stale" and s.answer_id == "ans-0"
        else s
        for s in first
    ]
    with open_ledger(sqlite_url) as ledger:
        a = write_run(ledger, "early", first, as_of=datetime(2025, 1, 15, tzinfo=UTC))
        b = write_run(ledger, "late", later, as_of=datetime(2026, 6, 30, tzinfo=UTC))
    monkeypatch.setenv("COLUMNS", "80")
    argv = ["trend", "--runs", a[:12], "--runs", b[:12], "--db", sqlite_url, "--bootstrap", "50"]
    code, out, err = run_cli(argv)
    assert code == 0, err
    assert _widths(out) <= 80, out
    assert "\u2026" not in out, out
    assert "2025-01-15" in out and "2026-06-30" in out  # dates whole
    assert a[:12] in out and b[:12] in out
    words = _words(out)
    assert "Label transitions" in words
    assert re.search(r"#1 -> #2 contradicted supported 2\b", words), words
    assert re.search(r"stale contradicted 1\b", words), words
    assert re.search(r"\(label unchanged\) 9\b", words), words
    for figure in ("support_precision", "stale_rate", "contradicted_rate", "decidable_rate"):
        assert figure in words


def test_compare_tables_fit_80_columns(
    sqlite_url: str, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    specs = review_specs(2)
    with open_ledger(sqlite_url) as ledger:
        a = write_run(ledger, "a", specs)
        b = write_run(
            ledger,
            "b",
            [dataclasses.replace(s, label="supported") if s.label == "stale" else s for s in specs],
        )
    monkeypatch.setenv("COLUMNS", "80")
    argv = ["report", a[:12], "--compare", b[:12], "--db", sqlite_url, "--bootstrap", "50"]
    code, out, err = run_cli(argv)
    assert code == 0, err
    assert _widths(out) <= 80 and "\u2026" not in out, out
    assert re.search(r"A -> B stale supported 2\b", _words(out)), out
