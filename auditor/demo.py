"""The end-to-end demo on the bundled sample corpus and answers (offline, SQLite)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path

from auditor.answers import load_answers
from auditor.report.card import ReportCard
from auditor.report.full import build_full_report, full_to_json, full_to_markdown
from auditor.retrieval import EvidenceIndex, IngestResult, ingest, load_documents
from auditor.runner import RunSummary, index_component, make_components, run_audit
from ledger import Ledger

DEMO_AS_OF = datetime(2026, 6, 30, tzinfo=UTC)
"""The demo audits as of a fixed date, so that re-running it is idempotent."""

Status = Callable[[str], None]


@dataclass(frozen=True)
class DemoResult:
    summary: RunSummary
    card: ReportCard
    json_path: Path
    markdown_path: Path
    ingest: IngestResult


def sample_path(name: str) -> Path:
    """Path of a bundled sample file (``corpus.jsonl``, ``answers.jsonl``)."""
    return Path(str(resources.files("auditor.samples").joinpath(name)))


def run_demo(
    ledger: Ledger, workdir: Path, *, status: Status | None = None,
    progress: Callable[[int, int], None] | None = None, n_boot: int = 2000,
) -> DemoResult:
    """Ingest the sample corpus, audit the sample answers, write the report card."""
    say = status or (lambda _msg: None)
    workdir.mkdir(parents=True, exist_ok=True)
    index_dir = workdir / "index"
    say(f"ingesting the sample corpus into {index_dir}")
    docs = load_documents([sample_path("corpus.jsonl")])
    result = ingest(docs, index_dir,
                    on_commit=lambda r: ledger.record_corpus(r.versions, r.chunks))
    index = EvidenceIndex.open(index_dir)
    answers = load_answers(sample_path("answers.jsonl"))
    say(f"auditing {len(answers)} answers as of {DEMO_AS_OF.date()}")
    components = make_components(index, as_of=DEMO_AS_OF)
    summary = run_audit(answers, components, ledger,
                        index_component=index_component(index.manifest), progress=progress)
    say("building the report card from the ledger")
    report = build_full_report(ledger, summary.run_id, n_boot=n_boot)
    json_path, md_path = workdir / "report.json", workdir / "report.md"
    json_path.write_text(full_to_json(report), encoding="utf-8")
    md_path.write_text(full_to_markdown(report), encoding="utf-8")
    card = report.card
    return DemoResult(summary, card, json_path, md_path, result)
