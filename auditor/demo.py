"""The end-to-end demo on the bundled sample corpus and answers (offline, SQLite)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path

from auditor._auditor import Auditor, AuditRun
from auditor.config import AuditConfig
from auditor.report.card import ReportCard
from auditor.report.full import full_to_json, full_to_markdown
from auditor.retrieval import ingest, load_documents
from ledger import Ledger, open_ledger

DEMO_AS_OF = datetime(2026, 6, 30, tzinfo=UTC)
"""The demo audits as of a fixed date, so that re-running it is idempotent."""
DEMO_CONFIG = AuditConfig(as_of=DEMO_AS_OF)
"""The demo's run configuration: the defaults, as of :data:`DEMO_AS_OF`."""

Status = Callable[[str], None]


@dataclass(frozen=True)
class DemoResult:
    run: AuditRun
    card: ReportCard
    json_path: Path
    markdown_path: Path


def sample_path(name: str) -> Path:
    """Path of a bundled sample file (``corpus.jsonl``, ``answers.jsonl``)."""
    return Path(str(resources.files("auditor.samples").joinpath(name)))


def prepare_sample_index(index_dir: str | Path, ledger: Ledger | str | Path) -> Path:
    """Ingest the bundled sample corpus into ``index_dir`` (its versions into ``ledger``);
    re-ingesting the same corpus changes nothing. Returns ``index_dir``."""
    index_dir = Path(index_dir)
    docs = load_documents([sample_path("corpus.jsonl")])
    if isinstance(ledger, Ledger):
        ingest(docs, index_dir, on_commit=lambda r: ledger.record_corpus(r.versions, r.chunks))
    else:
        with open_ledger(ledger) as opened:
            ingest(docs, index_dir, on_commit=lambda r: opened.record_corpus(r.versions, r.chunks))
    return index_dir


def run_demo(
    ledger: Ledger,
    workdir: Path,
    *,
    status: Status | None = None,
    progress: Callable[[int, int], None] | None = None,
    n_boot: int = 2000,
) -> DemoResult:
    """Ingest the sample corpus, audit the sample answers, write the report card."""
    say = status or (lambda _msg: None)
    workdir.mkdir(parents=True, exist_ok=True)
    index_dir = workdir / "index"
    say(f"ingesting the sample corpus into {index_dir}")
    prepare_sample_index(index_dir, ledger)
    answers = sample_path("answers.jsonl")
    say(f"auditing the sample answers as of {DEMO_AS_OF.date()}")
    with Auditor(index_dir, ledger, config=DEMO_CONFIG) as auditor:
        run = auditor.audit(answers, progress=progress)
        say("building the report card from the ledger")
        report = auditor.full_report(run.run_id, n_boot=n_boot)
    json_path, md_path = workdir / "report.json", workdir / "report.md"
    json_path.write_text(full_to_json(report), encoding="utf-8")
    md_path.write_text(full_to_markdown(report), encoding="utf-8")
    return DemoResult(run, report.card, json_path, md_path)
