"""Audits in time, end to end: a tiny dated corpus, the real flow, a temporary ledger.

Every audit goes through :class:`auditor.Auditor` (rules extractor, evidence
index with its as-of cutoff, the default offline panel and shipped stacker, labels)
into a SQLite ledger; labels and evidence are read back from the ledger.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from auditor import AuditConfig, Auditor
from auditor.answers import load_answers
from auditor.retrieval import EvidenceIndex, ingest
from auditor.retrieval.documents import make_document
from auditor.types import Answer, Context
from ledger import open_ledger

pytestmark = pytest.mark.slow

FERRY_OLD = "The Harbor Line ferry departs from Pier 4 every 30 minutes on weekdays."
FERRY_NEW = "The Harbor Line ferry departs from Pier 4 every 45 minutes on weekdays."
MUSEUM_OLD = "The Orchard Valley museum opens at 9 o'clock with free entry for children."
MUSEUM_NEW = "The Orchard Valley museum opens at 11 o'clock with free entry for children."
BRIDGE = "The Kestrel Bridge toll for cars is 4 euros since the toll reform."


def utc(year: int, month: int = 1, day: int = 1) -> datetime:
    return datetime(year, month, day, tzinfo=UTC)


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> EvidenceIndex:
    root = tmp_path_factory.mktemp("time-index")
    docs = [
        make_document("ferry", FERRY_OLD, published_at="2020-01-01"),
        make_document("ferry", FERRY_NEW, published_at="2023-01-01"),
        make_document("museum", MUSEUM_OLD),  # undated, then updated without a date
        make_document("museum", MUSEUM_NEW),
        make_document("bridge", BRIDGE, published_at="2019-06-01"),
    ]
    ingest(docs, root / "index")
    return EvidenceIndex.open(root / "index")


def audit(
    index: EvidenceIndex, db: Path, answers: list[Answer], as_of: datetime | None
) -> tuple[dict[str, str], dict[str, list[dict]]]:
    """Labels per answer id (its one factual claim) and the evidence the ledger kept."""
    with (
        open_ledger(db) as ledger,
        Auditor(index, ledger, config=AuditConfig(as_of=as_of)) as auditor,
    ):
        summary = auditor.audit(answers)
        rows = [r for r in ledger.claim_results(summary.run_id) if r.factual]
        labels = {r.answer_id: r.label or "" for r in rows}
        evidence = {
            r.answer_id: [
                e
                for entry in ledger.claim_trail(r.claim_id)
                if entry["run_id"] == summary.run_id
                for e in entry["evidence"]
            ]
            for r in rows
        }
    assert len(rows) == len(answers), "one factual claim per answer"
    return labels, evidence


def answer(answer_id: str, text: str, **kw: object) -> Answer:
    return Answer(id=answer_id, question="", answer=text, **kw)  # type: ignore[arg-type]


def test_stale_when_only_a_superseded_version_supports(
    index: EvidenceIndex, tmp_path: Path
) -> None:
    labels, evidence = audit(
        index,
        tmp_path / "l.db",
        [answer("old", FERRY_OLD), answer("new", FERRY_NEW)],
        as_of=utc(2024),
    )
    assert labels == {"old": "stale", "new": "supported"}
    superseded = [e for e in evidence["old"] if e["superseded"]]
    assert superseded and all(e["text"] == FERRY_OLD for e in superseded)


def test_evidence_published_after_as_of_is_never_used(index: EvidenceIndex, tmp_path: Path) -> None:
    as_of = utc(2021, 6, 1)
    labels, evidence = audit(
        index, tmp_path / "l.db", [answer("old", FERRY_OLD), answer("new", FERRY_NEW)], as_of=as_of
    )
    # in 2021 the 30-minute timetable was the current one and nothing else existed yet
    assert labels["old"] == "supported"
    assert labels["new"] in ("contradicted", "not_supported")
    for rows in evidence.values():
        assert rows
        assert all(FERRY_NEW not in e["text"] for e in rows)
        dated = [e for e in rows if e["published_at"] is not None]
        assert all(
            datetime.fromisoformat(str(e["published_at"])).replace(tzinfo=UTC) <= as_of
            for e in dated
        )


def test_undated_documents_are_never_grounds_for_stale(
    index: EvidenceIndex, tmp_path: Path
) -> None:
    labels, evidence = audit(
        index,
        tmp_path / "l.db",
        [answer("old", MUSEUM_OLD), answer("new", MUSEUM_NEW)],
        as_of=utc(2024),
    )
    assert labels["new"] == "supported"
    # supported only by the undated old version: not stale (update time undisclosed)
    assert labels["old"] != "stale"
    assert labels["old"] in ("contradicted", "not_supported")
    assert not [e for e in evidence["old"] if e["doc_id"] == "museum" and e["superseded"]]


def test_an_as_of_before_all_dated_evidence_gives_unknown(
    index: EvidenceIndex, tmp_path: Path
) -> None:
    labels, evidence = audit(
        index,
        tmp_path / "l.db",
        [answer("ferry", FERRY_NEW), answer("bridge", BRIDGE)],
        as_of=utc(2010),
    )
    assert labels == {"ferry": "unknown", "bridge": "unknown"}
    assert all(e["published_at"] is None for rows in evidence.values() for e in rows)


def test_an_answers_as_of_overrides_the_runs(index: EvidenceIndex, tmp_path: Path) -> None:
    labels, _ = audit(
        index,
        tmp_path / "l.db",
        [answer("then", FERRY_OLD, as_of=utc(2021, 6, 1)), answer("now", FERRY_OLD)],
        as_of=utc(2024),
    )
    assert labels == {"then": "supported", "now": "stale"}


def test_contexts_without_ids_and_published_after_as_of(
    index: EvidenceIndex, tmp_path: Path
) -> None:
    claim = "The Tilbury sourdough bakery bakes 40 rye loaves every morning."
    path = tmp_path / "answers.jsonl"
    rows = [
        {
            "id": "cited",
            "question": "What does the bakery bake?",
            "answer": claim,
            "contexts": [{"text": claim, "published_at": "2022-03-01"}],
        },
        {
            "id": "future",
            "question": "What does the bakery bake?",
            "answer": claim,
            "contexts": [{"text": claim, "published_at": "2030-03-01"}],
        },
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    answers = load_answers(path)
    assert answers[0].contexts == (Context(id="ctx-0", text=claim, published_at=utc(2022, 3, 1)),)
    labels, evidence = audit(index, tmp_path / "l.db", answers, as_of=utc(2024))
    assert labels["cited"] == "supported"
    assert any(e["inline"] for e in evidence["cited"])
    # a context published after the audit date is not evidence: nothing else is about it
    assert labels["future"] == "unknown"
    assert not any(e["inline"] for e in evidence["future"])


def test_a_claim_about_its_own_past_period_is_not_stale(
    index: EvidenceIndex, tmp_path: Path
) -> None:
    scoped = "From 2020 to 2022, the Harbor Line ferry departed from Pier 4 every 30 minutes."
    wrong_period = "From 2023 to 2024, the Harbor Line ferry departed from Pier 4 every 30 minutes."
    labels, _ = audit(
        index,
        tmp_path / "l.db",
        [answer("scoped", scoped), answer("wrong", wrong_period), answer("plain", FERRY_OLD)],
        as_of=utc(2024, 6, 1),
    )
    assert labels["scoped"] == "supported"  # true of the version valid then
    assert labels["plain"] == "stale"
    assert labels["wrong"] != "supported"  # the 30-minute version was not valid in 2023-24
