"""The authored corpus's validator, reader pairs and agreement: bench/authored_corpus.py."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import authored_corpus as corpus

OLD = (
    "Fares\nAdult single | £4.20 | Valid for one journey\nChild single | £2.10 | Under 16\n"
    + "Bikes travel free on every sailing. " * 24
)
NEW = OLD.replace("£4.20", "£4.80")


def _domain(tmp_path: Path, labels: list[dict[str, object]], answer: str) -> Path:
    folder = tmp_path / "test" / "ferry"
    folder.mkdir(parents=True)
    docs = [
        {"id": "fares", "title": "Fares", "source": "https://f.example/fares", "version": "v1"}
        | {"published_at": "2024-01-01", "text": OLD},
        {"id": "fares", "title": "Fares", "source": "https://f.example/fares", "version": "v2"}
        | {"published_at": "2025-01-01", "text": NEW},
    ]
    answers = [{"id": "a1", "question": "Fares?", "answer": answer, "as_of": "2025-06-01"}]
    for name, rows in (("corpus", docs), ("answers", answers), ("labels", labels)):
        text = "".join(json.dumps(r) + "\n" for r in rows)
        (folder / f"{name}.jsonl").write_text(text, encoding="utf-8")
    return folder


def _label(sentence: str, label: str, evidence: str | None) -> dict[str, object]:
    doc = None if evidence is None else "fares"
    return {"answer_id": "a1", "sentence": sentence, "label": label, "doc_id": doc} | {
        "evidence": evidence,
        "tags": ["plain"],
    }


ANSWER = "An adult single costs £4.80. It used to be £4.20. Hope this helps!"


def test_a_valid_domain_has_no_problems_and_spans_into_its_answer(tmp_path: Path) -> None:
    folder = _domain(
        tmp_path,
        [
            _label("An adult single costs £4.80.", "supported", "Adult single | £4.80"),
            _label("It used to be £4.20.", "stale", "Adult single | £4.20"),
            _label("Hope this helps!", "not_factual", None),
        ],
        ANSWER,
    )
    problems, sentences = corpus.validate(folder)
    assert problems == []
    assert [ANSWER[s.start : s.end] for s in sentences] == [s.sentence for s in sentences]
    assert [s.label for s in sentences] == ["supported", "stale", "not_factual"]


def test_every_problem_is_named_with_file_line_and_field(tmp_path: Path) -> None:
    folder = _domain(
        tmp_path,
        [
            # quoted from the superseded version for a label that needs the current one
            _label("An adult single costs £4.80.", "supported", "Adult single | £4.20"),
            # 'stale' quoting what the current version still says
            _label("It used to be £4.20.", "stale", "Child single | £2.10"),
        ],
        ANSWER,
    )
    problems, _ = corpus.validate(folder)
    text = "\n".join(problems)
    assert "labels.jsonl:1: field 'evidence' is not in the version current at as_of" in text
    assert "labels.jsonl:2: field 'evidence' for 'stale' is still stated" in text
    assert "'Hope this helps!' unlabelled" in text


def test_version_pairs_contradict_each_other_where_a_number_changed() -> None:
    pairs = corpus.changed_lines([{"text": OLD}, {"text": NEW}])
    assert pairs == [
        (
            "Adult single | £4.20 | Valid for one journey",
            "Adult single | £4.80 | Valid for one journey",
        )
    ]


def test_the_frozen_test_split_is_unchanged() -> None:
    if not (corpus.ROOT / "test.sha256").is_file():
        pytest.skip("no frozen test split in this checkout")
    recorded = (corpus.ROOT / "test.sha256").read_text(encoding="utf-8")
    digests = corpus.split_digest("test")
    assert recorded == "".join(f"{h}  {p}\n" for p, h in digests.items())
