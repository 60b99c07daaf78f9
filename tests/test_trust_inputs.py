"""Issue 18: secrets never printed, renderers escape untrusted text, strict input fields."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import RunCli

from auditor.errors import InputError
from ledger import LedgerError, open_ledger
from ledger.url import mask_url, redact

SECRET = "s3cr3t-Pa55"
URL = f"postgresql+psycopg://auditor:{SECRET}@127.0.0.1:1/ledger"


# ---------------------------------------------------------------- secrets
@pytest.mark.parametrize(
    "url, shown",
    [
        (URL, "postgresql+psycopg://auditor:***@127.0.0.1:1/ledger"),
        (
            "postgresql://u:p@ss/w@host/db?sslmode=require",
            "postgresql://u:***@host/db?sslmode=require",
        ),
        (
            "postgresql://host/db?user=u&password=hunter22",
            "postgresql://host/db?user=u&password=***",
        ),
        ("postgresql://u@host/db", "postgresql://u@host/db"),
        (".auditor/ledger.db", ".auditor/ledger.db"),
    ],
)
def test_mask_url(url: str, shown: str) -> None:
    assert mask_url(url) == shown


def test_redact_masks_the_password_wherever_it_is_quoted() -> None:
    message = f'connection to "{URL}" failed: password "{SECRET}" rejected'
    assert SECRET not in redact(message, URL)
    assert SECRET not in redact(f"dsn {URL}")  # a URL in the text, even without the location


def test_ledger_connection_error_does_not_print_the_password() -> None:
    with pytest.raises(LedgerError) as info:
        open_ledger(URL)
    assert SECRET not in str(info.value) and "auditor:***@" in str(info.value)


@pytest.mark.parametrize(
    "argv", [["runs"], ["report", "abcdef"], ["review", "list", "abcdef"], ["show", "abcdef"]]
)
def test_cli_errors_do_not_print_the_password(argv: list[str], run_cli: RunCli) -> None:
    code, out, err = run_cli([*argv, "--db", URL])
    assert code == 2 and SECRET not in out + err and "***" in err, err


def test_ingest_summary_masks_the_url(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, run_cli: RunCli
) -> None:
    monkeypatch.setenv("AUDITOR_DB", URL)
    docs = tmp_path / "d.jsonl"
    docs.write_text(json.dumps({"id": "a", "text": "Alpha."}) + "\n", encoding="utf-8")
    monkeypatch.setattr("auditor.retrieval.ingest", _refuse_ledger)
    code, out, err = run_cli(["ingest", str(docs), "--index", str(tmp_path / "ix")])
    assert code == 2 and SECRET not in out + err, err


def _refuse_ledger(*_a: object, on_commit: object = None, **_k: object) -> None:
    open_ledger(URL)  # what the on_commit ledger write would do


# ---------------------------------------------------------------- renderers
HOSTILE = (
    "<img src=x onerror=alert(1)> **bold** [link](javascript:x) | cell \x1b[2J\x1b]0;pwn\x07"
    "`code` \u202eevil"
)


def _report(hostile: str):  # type: ignore[no-untyped-def]
    from auditor.report.card import build_report_card
    from auditor.report.full import FullReport

    card = build_report_card(
        "run-hostile", [], config={"panel": {"name": "```\n# forged"}}, n_boot=10, seed=0
    )
    return FullReport(
        card=card,
        label_shares={},
        judges=[],
        human=None,
        reliability=None,
        flagged=[
            {
                "claim_id": "c" * 64,
                "deciding_evidence": None,
                "answer_id": hostile,
                "label": "contradicted",
                "p_hallucinated": 0.9,
                "claim": hostile,
                "error_text": [hostile],
                "reason": hostile,
            }
        ],
        notes=[hostile],
    )


def test_markdown_report_escapes_answer_text() -> None:
    from auditor.report.full import full_to_markdown

    text = full_to_markdown(_report(HOSTILE))
    assert "<img" not in text and "&lt;img src=x onerror=alert(1)&gt;" in text
    assert "**bold**" not in text and "[link](" not in text and "\x1b" not in text
    flagged = [line for line in text.splitlines() if "onerror" in line and line.startswith("|")]
    assert flagged and all(len(re.split(r"(?<!\\)\|", line)) == 10 for line in flagged)
    # the configuration fence cannot be closed by a value inside it
    fence_lines = [line for line in text.splitlines() if line.startswith("```")]
    assert len(fence_lines) == 2 and fence_lines[0].startswith("````")


def test_html_report_escapes_answer_text() -> None:
    from auditor.report.html import to_html

    text = to_html(_report(HOSTILE))
    assert "<img src=x" not in text and "&lt;img src=x onerror=alert(1)&gt;" in text


def test_table_output_strips_terminal_control_sequences() -> None:
    from io import StringIO

    from rich.console import Console

    from auditor.report.render import print_card, terminal_safe

    safe = terminal_safe(HOSTILE)
    assert "\x1b" not in safe and "\x07" not in safe and "\u202e" not in safe
    assert "[link]" not in safe.replace("\\[link]", "")  # rich markup escaped
    card = _report(HOSTILE).card
    card.warnings.append(HOSTILE)
    buf = StringIO()
    print_card(card, Console(file=buf, force_terminal=False, width=200))
    assert "\x1b" not in buf.getvalue() and "onerror" in buf.getvalue()


# ---------------------------------------------------------------- inputs
def _write(path: Path, raw: bytes) -> Path:
    path.write_bytes(raw)
    return path


def test_bom_is_accepted_in_jsonl(tmp_path: Path) -> None:
    from auditor.answers import load_answers
    from auditor.retrieval import load_documents

    line = json.dumps({"id": "a", "text": "Alpha."}).encode()
    assert load_documents([_write(tmp_path / "d.jsonl", b"\xef\xbb\xbf" + line)])[0].doc_id == "a"
    answer = json.dumps({"id": "q", "question": "?", "answer": "Yes."}).encode()
    assert load_answers(_write(tmp_path / "a.jsonl", b"\xef\xbb\xbf" + answer))[0].id == "q"


@pytest.mark.parametrize(
    "record, field, suggestion",
    [
        ({"id": "a", "text": "t", "publised_at": "2024-01-01"}, "publised_at", "published_at"),
        ({"id": "a", "txet": "t"}, "txet", "text"),
        ({"id": "a", "text": "t", "colour": "red"}, "colour", None),
    ],
)
def test_unknown_document_field_is_named_with_the_closest(
    tmp_path: Path, record: dict, field: str, suggestion: str | None
) -> None:
    from auditor.retrieval import load_documents

    path = _write(tmp_path / "d.jsonl", json.dumps(record).encode() + b"\n")
    with pytest.raises(InputError) as info:
        load_documents([path])
    assert info.value.field == field and info.value.line == 1
    if suggestion:
        assert f"did you mean {suggestion!r}" in str(info.value)


def test_unknown_answer_and_context_fields(tmp_path: Path) -> None:
    from auditor.answers import load_answers

    path = _write(
        tmp_path / "a.jsonl", json.dumps({"id": "q", "questoin": "?", "answer": "Yes."}).encode()
    )
    with pytest.raises(InputError, match=r"did you mean 'question'"):
        load_answers(path)
    path = _write(
        tmp_path / "a.jsonl",
        json.dumps(
            {"id": "q", "answer": "Yes.", "contexts": [{"text": "t", "publishd_at": "2024"}]}
        ).encode(),
    )
    with pytest.raises(InputError) as info:
        load_answers(path)
    assert info.value.field == "contexts[0].publishd_at"


def test_empty_answers_file_is_an_error(tmp_path: Path) -> None:
    from auditor.answers import load_answers

    for raw in (b"", b"\n\n", b"\xef\xbb\xbf\n"):
        with pytest.raises(InputError, match="no answers"):
            load_answers(_write(tmp_path / "a.jsonl", raw))


def test_memory_ledger_is_refused_for_commands_that_write() -> None:
    from auditor.cli._common import refuse_memory_ledger, require_write_prefix
    from auditor.errors import AuditorError

    for db in (":memory:", "sqlite://", "sqlite:///file:x?mode=memory&uri=true"):
        with pytest.raises(AuditorError, match="in-memory"):
            refuse_memory_ledger(db, "audit")
    refuse_memory_ledger("ledger.db", "audit")
    with pytest.raises(AuditorError, match="at least 6"):
        require_write_prefix("abcde", "claim id prefix")
    require_write_prefix("abcdef", "claim id prefix")


def test_ingest_refuses_an_in_memory_ledger(tmp_path: Path, run_cli: RunCli) -> None:
    docs = tmp_path / "d.jsonl"
    docs.write_text(json.dumps({"id": "a", "text": "Alpha."}) + "\n", encoding="utf-8")
    code, _, err = run_cli(
        ["ingest", str(docs), "--index", str(tmp_path / "ix"), "--db", ":memory:"]
    )
    assert code == 2 and "in-memory ledger" in err and not (tmp_path / "ix").exists()
