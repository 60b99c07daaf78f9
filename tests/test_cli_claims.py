"""``auditor claims``: JSONL in, claims with spans out; clean errors for bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _extract_llm_server import scripted_server

from auditor.cli import main

pytestmark = pytest.mark.slow  # parses with spaCy


def _write(path: Path, lines: list[str | bytes]) -> Path:
    data = b"".join((x if isinstance(x, bytes) else x.encode("utf-8")) + b"\n" for x in lines)
    path.write_bytes(data)
    return path


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = 0
    try:
        main(argv)
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


ANSWERS = [
    {
        "id": "a1",
        "question": "Who?",
        "answer": "Jack Dorsey founded Square in 2009 and led it. What else?",
    },
    {"id": 2, "question": "Empty?", "answer": ""},
    {"id": "c", "answer": "Paris\u0000 is in France.\nHello!"},
]


def test_jsonl_output_has_claims_with_spans_into_the_answer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path / "a.jsonl", [json.dumps(a) for a in ANSWERS])
    code, out, err = _run(["claims", str(path), "--format", "jsonl"], capsys)
    assert code == 0, err
    records = [json.loads(line) for line in out.splitlines()]
    assert [r["id"] for r in records] == ["a1", "2", "c"]
    assert records[1]["claims"] == []
    for record, answer in zip(records, ANSWERS, strict=True):
        assert record["extractor"]["name"] == "rules"
        for claim in record["claims"]:
            assert set(claim) == {"id", "text", "spans", "factual", "kind", "topic"}
            for start, end in claim["spans"]:
                assert 0 <= start < end <= len(answer["answer"])
    first = records[0]["claims"]
    assert sum(c["factual"] for c in first) == 2
    question = next(c for c in first if not c["factual"])
    assert question["kind"] == "question"
    s, e = question["spans"][0]
    assert ANSWERS[0]["answer"][s:e] == "What else?"
    kinds = {c["kind"] for c in records[2]["claims"]}
    assert kinds == {"claim", "greeting"}


def test_text_format_and_unknown_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path / "a.jsonl", [json.dumps(ANSWERS[0])])
    code, out, _ = _run(["claims", str(path), "--format", "text"], capsys)
    assert code == 0 and out.startswith("# a1: 3 claims")
    assert "question" in out
    code, out, err = _run(["claims", str(path), "--format", "xml"], capsys)
    assert code == 2 and out == "" and "unknown format 'xml'" in err


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (
            [b'{"id": "x", "answer": "ok"}', b'{"id": "y", "answer": "\xff\xfe"}'],
            ["line 2", "UTF-8"],
        ),
        ([b'{"id": "x", "question": "q"}'], ["line 1", "field 'answer'"]),
        ([b'{"id": "x", "answer": 5}'], ["line 1", "field 'answer'", "expected str"]),
        ([b'{"answer": "ok"}'], ["line 1", "field 'id'"]),
        ([b'{"id": "x", "answer": "a"}', b'{"id": "x", "answer": "b"}'], ["line 2", "duplicate"]),
        ([b'{"id": "x", "answer": "a\\ud800"}'], ["line 1", "field 'answer'", "surrogate"]),
        ([b"[1, 2]"], ["line 1", "JSON object"]),
    ],
)
def test_bad_input_is_a_clean_error_naming_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], lines: list[bytes], expected: list[str]
) -> None:
    path = _write(tmp_path / "bad.jsonl", list(lines))
    code, out, err = _run(["claims", str(path)], capsys)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and str(path) in err and "Traceback" not in err
    for part in expected:
        assert part in err


def test_missing_file_and_llm_without_endpoint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, _, err = _run(["claims", str(tmp_path / "none.jsonl")], capsys)
    assert code == 2 and "no such file" in err
    monkeypatch.delenv("AUDITOR_LLM_BASE_URL", raising=False)
    path = _write(tmp_path / "a.jsonl", [json.dumps(ANSWERS[0])])
    code, _, err = _run(["claims", str(path), "--extractor", "llm"], capsys)
    assert code == 2 and "base_url" in err
    code, _, err = _run(["claims", str(path), "--extractor", "magic"], capsys)
    assert code == 2 and "unknown extractor" in err


def test_llm_extractor_through_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reply = json.dumps(
        {
            "claims": [
                {"sentences": [1], "text": "Jack Dorsey founded Square in 2009", "kind": "claim"},
                {"sentences": [1], "text": "Jack Dorsey led Square", "kind": "claim"},
                {"sentences": [2], "text": "What else?", "kind": "question"},
            ]
        }
    )
    path = _write(tmp_path / "a.jsonl", [json.dumps(ANSWERS[0])])
    with scripted_server([reply]) as server:
        code, out, err = _run(
            [
                "claims",
                str(path),
                "--extractor",
                "llm",
                "--base-url",
                server.base_url,
                "--model",
                "scripted",
            ],
            capsys,
        )
    assert code == 0, err
    [record] = [json.loads(line) for line in out.splitlines()]
    assert record["extractor"]["name"] == "llm" and "fallback" not in record
    assert len(record["extractor"]["prompt_digest"]) == 64
    assert [c["text"] for c in record["claims"]][:2] == [
        "Jack Dorsey founded Square in 2009",
        "Jack Dorsey led Square",
    ]
