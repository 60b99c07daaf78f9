"""The one audit path: :class:`Auditor` (with a ledger) and :func:`audit_answers` (one-off).

The command line, the demo, ``rejudge`` and the tests all audit through this
module, so the same answers with the same configuration give the same run id
and the same ledger rows whichever door they came in by.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from auditor.answers import AnswersInput, coerce_answers
from auditor.clock import default_as_of
from auditor.config import AuditConfig
from auditor.engine import AUDIT_BATCH_ANSWERS, Engine
from auditor.errors import ConfigError
from auditor.graph.flow import AuditComponents
from auditor.judges.base import Judge
from auditor.judges.catalog import build_judge
from auditor.judges.panel import Panel, load_panel
from auditor.locations import index_location, ledger_location
from auditor.stacking.model import Stacker, load_stacker
from auditor.types import Answer, Component, Hit
from ledger import Ledger, open_ledger

if TYPE_CHECKING:
    from auditor.bridging import BridgeResult
    from auditor.executor import RunSummary
    from auditor.gate import GateResult, GateRule
    from auditor.ray_engine import WorkerSpec
    from auditor.report.card import ReportCard
    from auditor.report.full import FullReport
    from auditor.retrieval import EvidenceIndex


ProgressFn = Callable[[int, int], None]
"""``progress(done, total)`` answers, called as each answer commits."""
AnswerFn = Callable[[str, str], None]
"""``on_answer(run_id, answer_id)``, called for each answer after its transaction commits."""
RecordFn = Callable[[dict[str, Any]], None]
"""``on_record(record)``: an answer's claim record (the JSONL line of ``auditor audit``),
called after its transaction commits."""
RECORDS_PER_QUERY = 256
"""Answers whose claim records are read back from the ledger in one set of queries."""


@dataclass(frozen=True)
class AuditRun:
    """The outcome of one audit: its id, what was written, and every claim's record."""

    run_id: str
    reused: bool
    """True when the run was already complete in the ledger: nothing was written."""
    answers_written: int
    answers_total: int
    answers: list[dict[str, Any]] = field(default_factory=list)
    """One record per answer ``{"id", "run_id", "claims": [...]}``, in input order (the
    JSONL lines of ``auditor audit``)."""

    @property
    def claims(self) -> list[dict[str, Any]]:
        """Every claim record (label, spans, evidence, votes), in answer order."""
        return [c for a in self.answers for c in a["claims"]]

    @property
    def labels(self) -> Counter[str]:
        """How many claims got each label."""
        return Counter(str(c["label"]) for c in self.claims)


class Auditor:
    """Audits answers into a ledger with one index, panel, stacker and configuration.

    ``index``: an evidence index directory (or an open :class:`EvidenceIndex`; only
    :meth:`audit` needs one). ``db``: a SQLite path, a SQLAlchemy URL or an open
    :class:`~ledger.Ledger` (default ``$AUDITOR_DB``, else ``.auditor/ledger.db``).
    ``panel``/``stacker``: a TOML/JSON path or an object (default: the offline panel and
    its shipped stacker). ``second_opinion``: a registered judge name or a
    :class:`~auditor.judges.base.Judge`, asked about claims the stack leaves within
    ``config.second_opinion_band`` of the threshold. A ``config`` without ``as_of`` gets
    the one default date, today 00:00 UTC (:func:`auditor.clock.default_as_of`), as
    ``auditor audit`` without ``--as-of`` does; an answer's own ``as_of`` always wins.

    >>> import tempfile
    >>> from auditor import AuditConfig, Auditor
    >>> from auditor.demo import prepare_sample_index, sample_path
    >>> work = tempfile.mkdtemp()
    >>> index = prepare_sample_index(f"{work}/index", f"{work}/ledger.db")
    >>> with Auditor(index, f"{work}/ledger.db",
    ...              config=AuditConfig(as_of="2026-06-30")) as auditor:
    ...     run = auditor.audit(sample_path("answers.jsonl"))
    ...     again = auditor.audit(sample_path("answers.jsonl"))
    >>> run.answers_total, again.reused, again.run_id == run.run_id
    (10, True, True)
    >>> sorted(run.labels) == sorted(["contradicted", "not_factual", "not_supported",
    ...                              "stale", "supported", "unknown"])
    True
    """

    def __init__(
        self,
        index: str | Path | EvidenceIndex | None = None,
        db: str | Path | Ledger | None = None,
        *,
        panel: str | Path | Panel | None = None,
        stacker: str | Path | Stacker | None = None,
        config: AuditConfig | None = None,
        second_opinion: str | Judge | None = None,
    ) -> None:
        self.config = config if config is not None else AuditConfig()
        if not isinstance(self.config, AuditConfig):
            raise ConfigError(f"config: expected AuditConfig, got {type(config).__name__}")
        if self.config.as_of is None:  # the one default date (auditor.clock)
            self.config = replace(self.config, as_of=default_as_of())
        self._sources = (panel, stacker, second_opinion)
        """What the panel, stacker and second opinion were built from (Ray workers
        build theirs from the same)."""
        self.panel = panel if isinstance(panel, Panel) else load_panel(panel)
        self.stacker = stacker if isinstance(stacker, Stacker) else load_stacker(stacker)
        from auditor.runner import attach_cache, check_members

        check_members(self.panel, self.stacker)
        self.second_opinion = _second_opinion(second_opinion, self.panel)
        if isinstance(db, Ledger):
            self.ledger, self._owns_ledger = db, False
        else:
            self.ledger, self._owns_ledger = open_ledger(ledger_location(db)), True
        attach_cache(self.panel, self.ledger)
        if self.second_opinion is not None:
            attach_cache(Panel("second-opinion", (self.second_opinion,), ""), self.ledger)
        self._index_arg = index
        self._index: EvidenceIndex | None = None

    # -- lifecycle ---------------------------------------------------------------------
    def close(self) -> None:
        """Close the ledger if this auditor opened it."""
        if self._owns_ledger:
            self.ledger.close()

    def __enter__(self) -> Auditor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- auditing ----------------------------------------------------------------------
    @property
    def index(self) -> EvidenceIndex:
        """The evidence index, opened on first use."""
        if self._index is None:
            from auditor.retrieval import EvidenceIndex

            if isinstance(self._index_arg, EvidenceIndex):
                self._index = self._index_arg
            else:
                self._index = EvidenceIndex.open(index_location(self._index_arg))
        return self._index

    def components(self, *, searched: bool = True) -> AuditComponents:
        """What the audit graph runs with (built from this auditor's settings); with
        ``searched=False`` a search that finds nothing (answers judged against their own
        contexts only, no index opened)."""
        from auditor.extract import build_extractor

        index, mode = (self.index if searched else None), self.config.mode

        def search(queries: Sequence[str], n: int, when: datetime | None) -> list[list[Hit]]:
            if index is None:
                return [[] for _ in queries]
            return index.search(queries, n, mode=mode, as_of=when)

        return AuditComponents(
            extractor=build_extractor(self.config.extractor),
            search=search,
            panel=self.panel,
            stacker=self.stacker,
            config=self.config,
            second_opinion=self.second_opinion,
        )

    def audit(
        self,
        answers: AnswersInput,
        *,
        progress: ProgressFn | None = None,
        on_answer: AnswerFn | None = None,
        on_record: RecordFn | None = None,
        batch_size: int = AUDIT_BATCH_ANSWERS,
        engine: Engine | str | None = None,
    ) -> AuditRun:
        """Audit ``answers`` (a JSONL path, :class:`~auditor.types.Answer` objects or dicts)
        into the ledger: content-addressed (the same input and configuration find the
        existing run and write nothing) and resumable (a killed run continues at the
        first answer it had not committed).

        Each batch of ``batch_size`` answers is written in one transaction; after it
        commits, for each of its answers in input order, ``on_answer(run_id,
        answer_id)``, then ``on_record(record)`` with the answer's claim record as read
        back from the ledger (none for an answer without claims), then ``progress``.
        ``engine``: ``"local"`` (default, this process) or ``"ray"`` / an
        :class:`~auditor.engine.Engine` (batches on Ray actors; the same run id, labels
        and ledger rows)."""
        from auditor.report.claims import claim_records
        from auditor.runner import execute_audit, index_component

        if batch_size < 1:
            raise ConfigError(f"batch_size: must be >= 1, got {batch_size}")
        how = Engine.of(engine)
        items = coerce_answers(answers)
        components = self.components()
        index = index_component(self.index.manifest)
        records: dict[str, dict[str, Any]] = {}
        committed: set[str] = set()

        def read_back(run_id: str, answer_ids: list[str]) -> None:
            # the records of a committed batch, read once (not once per answer, and not
            # again for the whole run at the end)
            for start in range(0, len(answer_ids), RECORDS_PER_QUERY):
                chosen = answer_ids[start : start + RECORDS_PER_QUERY]
                for record in claim_records(self.ledger, run_id, answer_ids=chosen):
                    records[record["id"]] = record
            committed.update(answer_ids)

        def answered(run_id: str, answer_id: str) -> None:
            if on_answer is not None:
                on_answer(run_id, answer_id)
            if on_record is not None and answer_id in records:
                on_record(records[answer_id])

        execute = partial(
            execute_audit,
            items,
            components,
            self.ledger,
            index_component=index,
            batch_size=batch_size,
            progress=progress,
            on_answer=answered,
            on_commit=read_back,
        )
        if how.kind == "local":
            summary = execute()
        else:
            summary = self._audit_on_ray(how, items, components, index, execute)
        if len(committed) == len(items):  # every answer was written by this call
            ordered = [records[a.id] for a in items if a.id in records]
        else:  # found again, or resumed: what earlier calls wrote is read from the ledger
            ordered = claim_records(self.ledger, summary.run_id)
        return AuditRun(
            summary.run_id, summary.reused, summary.answers_written, summary.answers_total, ordered
        )

    def _audit_on_ray(
        self,
        how: Engine,
        items: list[Answer],
        components: AuditComponents,
        index: Component,
        execute: Callable[..., RunSummary],
    ) -> RunSummary:
        """``execute`` (:func:`~auditor.runner.execute_audit` with the run's arguments) with
        batches on Ray actors."""
        from auditor.engine import require_ray
        from auditor.ray_engine import (
            RayAuditEngine,
            WorkerSpec,
            ledger_url_for_workers,
            ray_cluster,
        )
        from auditor.runner import run_components

        require_ray()
        if self._run_complete(items, components, index):  # found again: nothing to start
            return execute(progress=None, on_answer=None, on_commit=None)
        panel, stacker, second_opinion = self._sources
        spec = WorkerSpec(
            index_dir=str(self.index.index_dir),
            panel=panel,
            stacker=stacker,
            config=self.config,
            second_opinion=second_opinion,
            ledger_url=ledger_url_for_workers(self.ledger),
            roles={r: c.digest for r, c in run_components(components, index).items()},
            build=worker_auditor,
        )
        with ray_cluster(how) as session:
            # a Ray session the caller started (notebook, tests) keeps warm actors
            workers = RayAuditEngine(how, spec, keep=not session.ours)
            workers.start()  # before the run is begun: a cluster that cannot work writes nothing
            try:
                summary = execute(engine=workers)
            except BaseException:
                workers.stop(failed=True)
                raise
            workers.stop()
            return summary

    def _run_complete(
        self, items: list[Answer], components: AuditComponents, index: Component
    ) -> bool:
        from auditor.runner import run_id_of
        from ledger import LedgerError

        try:
            info = self.ledger.get_run(run_id_of(items, components, index))
        except LedgerError:
            return False
        return info.status == "complete"

    def rejudge(
        self,
        run: str,
        *,
        panel: str | Path | Panel | None = None,
        stacker: str | Path | Stacker | None = None,
        second_opinion: str | Judge | None = None,
        n_boot: int = 2000,
        seed: int = 0,
    ) -> BridgeResult:
        """Re-judge a run's claims (id or unique prefix) on its stored evidence with another
        panel and stacker (default: this auditor's), through the same graph nodes and the
        run's own configuration; the new verdicts sit beside the old ones."""
        from auditor.bridging import rejudge
        from auditor.runner import attach_cache

        new_panel = (
            panel
            if isinstance(panel, Panel)
            else (load_panel(panel) if panel is not None else self.panel)
        )
        new_stacker = (
            stacker
            if isinstance(stacker, Stacker)
            else (load_stacker(stacker) if stacker is not None else self.stacker)
        )
        judge = _second_opinion(second_opinion, new_panel)
        attach_cache(new_panel, self.ledger)
        return rejudge(
            self.ledger,
            self.ledger.find_run(run),
            new_panel,
            new_stacker,
            second_opinion=judge,
            n_boot=n_boot,
            seed=seed,
        )

    def gate(
        self,
        run: str,
        *,
        rules: Iterable[GateRule] = (),
        baseline: str | None = None,
        n_boot: int = 2000,
        seed: int = 0,
    ) -> GateResult:
        """Pass or fail a run on its figures' intervals and against a baseline run
        (:mod:`auditor.gate`)."""
        from auditor.gate import gate_run

        return gate_run(self.ledger, run, rules=rules, baseline=baseline, n_boot=n_boot, seed=seed)

    # -- reading back ------------------------------------------------------------------
    def run_id(self, run: str) -> str:
        """The full id of a run given by id or unique prefix."""
        return self.ledger.find_run(run)

    def card(self, run: str, *, n_boot: int = 2000, seed: int = 0) -> ReportCard:
        """A run's report card (figures with 95% cluster-bootstrap intervals)."""
        from auditor.report.card import build_report_card, report_config

        info = self.ledger.get_run(self.ledger.find_run(run))
        return build_report_card(
            info.run_id,
            self.ledger.claim_results(info.run_id),
            config=report_config(info),
            n_boot=n_boot,
            seed=seed,
        )

    def full_report(
        self,
        run: str,
        *,
        compare: str | None = None,
        n_boot: int = 2000,
        seed: int = 0,
        history: bool = True,
    ) -> FullReport:
        """The whole report of a run (card, judges, human audits, history, comparison)."""
        from auditor.report.full import build_full_report

        other = self.ledger.find_run(compare) if compare is not None else None
        return build_full_report(
            self.ledger,
            self.ledger.find_run(run),
            compare_to=other,
            n_boot=n_boot,
            seed=seed,
            history=history,
        )

    def report(
        self,
        run: str,
        *,
        format: Literal["md", "json", "html"] = "md",
        compare: str | None = None,
        n_boot: int = 2000,
        seed: int = 0,
    ) -> str:
        """A run's report as Markdown, JSON or one self-contained HTML file."""
        from auditor.report.full import full_to_json, full_to_markdown

        if format not in ("md", "json", "html"):
            raise ConfigError(f"format: must be md, json or html, got {format!r}")
        full = self.full_report(
            run, compare=compare, n_boot=n_boot, seed=seed, history=format == "html"
        )
        if format == "html":
            from auditor.report.html import to_html

            return to_html(full)
        return full_to_json(full) if format == "json" else full_to_markdown(full)


def _second_opinion(judge: str | Judge | None, panel: Panel) -> Judge | None:
    """The second-opinion judge, which must not be a member of the panel (its votes are
    stored beside the members' votes, by name)."""
    built = build_judge(judge) if isinstance(judge, str) else judge
    if built is not None and built.name in panel.member_names:
        raise ConfigError(
            f"second_opinion: {built.name!r} is already a member of the panel "
            f"{panel.name!r}; choose another judge (an LLM judge, a plugin)"
        )
    return built


def audit_answers(
    answers: AnswersInput,
    *,
    documents: str | Path | Iterable[str | Path] | None = None,
    index: str | Path | EvidenceIndex | None = None,
    config: AuditConfig | None = None,
    panel: str | Path | Panel | None = None,
    stacker: str | Path | Stacker | None = None,
) -> AuditRun:
    """Audit answers once, without a ledger file (an in-memory SQLite ledger).

    Evidence comes from ``index`` (an index directory) or ``documents`` (JSONL files or
    ``.txt``/``.md`` files and folders, ingested into a temporary index).

    >>> from auditor import AuditConfig, audit_answers
    >>> from auditor.demo import sample_path
    >>> run = audit_answers([{"id": "a1", "question": "How many stations?",
    ...                       "answer": "The network has 47 stations."}],
    ...                     documents=sample_path("corpus.jsonl"),
    ...                     config=AuditConfig(as_of="2026-06-30"))
    >>> [(c["text"], c["label"]) for c in run.claims]
    [('The network has 47 stations', 'supported')]
    """
    if (documents is None) == (index is None):
        raise ConfigError("give exactly one of documents= (files to ingest) or index=")
    with tempfile.TemporaryDirectory(prefix="auditor-") as tmp, open_ledger(":memory:") as ledger:
        if documents is not None:
            from auditor.retrieval import ingest, load_documents

            paths = [documents] if isinstance(documents, str | Path) else list(documents)
            ingest(
                load_documents([Path(p) for p in paths]),
                Path(tmp) / "index",
                on_commit=lambda r: ledger.record_corpus(r.versions, r.chunks),
            )
            index = Path(tmp) / "index"
        with Auditor(index, ledger, panel=panel, stacker=stacker, config=config) as auditor:
            return auditor.audit(answers)


def worker_auditor(spec: WorkerSpec) -> Auditor:
    """The auditor a Ray worker audits with, built from the driver's arguments (its own
    ledger connection, or an in-memory one when rows go back to the driver)."""
    return Auditor(
        spec.index_dir,
        spec.ledger_url if spec.ledger_url is not None else ":memory:",
        panel=spec.panel,
        stacker=spec.stacker,
        config=spec.config,
        second_opinion=spec.second_opinion,
    )
