"""Live checks: one answer labelled before it is shown, synchronously (:func:`check`).

A :class:`Checker` builds the auditor once (panel, stacker, extractor, the models
they load) and keeps it warm: each :meth:`Checker.check` labels one answer against its
own contexts (and the evidence index, when the checker has one) through the audit's
own producer (:mod:`auditor.runner`: extract, embed, the audit graph) and the one run
executor (:func:`auditor.executor.execute_run`) into a sink that keeps the records in
memory. Nothing is written unless asked: with ``record=True`` the same records are
queued and a background thread writes each check as a run of its own (kind
``check``, content-addressed like an audit) through the executor's
:class:`~auditor.executor.NewRun` sink; :meth:`Checker.close` writes what is still
queued before it returns.
"""

from __future__ import annotations

import functools
import logging
import queue
import threading
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from auditor._auditor import Auditor
from auditor.answers import answers_from_records
from auditor.clock import default_as_of
from auditor.config import AuditConfig
from auditor.digest import content_digest, sha256_text
from auditor.errors import ConfigError, InputError
from auditor.executor import NewRun, ResultsOf, execute_run
from auditor.graph.flow import AuditComponents
from auditor.runner import (
    audit_judges,
    index_component,
    input_digest,
    judge_digests,
    local_batches,
    run_components,
    run_id_of,
)
from auditor.types import Answer, Component, Context
from ledger import AnswerResult, Ledger

if TYPE_CHECKING:
    from auditor.judges.panel import Panel
    from auditor.retrieval import EvidenceIndex
    from auditor.stacking.model import Stacker

log = logging.getLogger("auditor.checker")

NO_INDEX = Component(
    kind="index",
    name="no-index",
    version="1",
    digest=content_digest({"index": "none"}),
    config={"note": "the answer's own contexts only"},
)
"""The index role of a check without an evidence index (part of its run id)."""
MAX_ANSWER_CHARS = 20_000
MAX_CONTEXTS = 64
MAX_CONTEXT_CHARS = 50_000
"""The largest check taken (a check is synchronous: its size bounds its latency)."""
REQUEST_FIELDS = ("answer", "contexts", "question", "as_of", "record")
"""The fields of a check request (:func:`check_request`)."""

ContextInput = str | Mapping[str, Any] | Context
"""A context: its text, a dict ``{"id"?, "text", "source"?, "published_at"?}`` or a
:class:`~auditor.types.Context`."""


@dataclass(frozen=True)
class CheckedEvidence:
    """One passage a claim was judged against."""

    doc_id: str
    chunk_id: str
    start: int
    end: int
    inline: bool
    """One of the answer's own contexts (``context`` names it)."""
    superseded: bool
    relevance: float
    """Cosine of the claim to the passage."""
    context: str | None = None
    """The id of the context this passage is (inline evidence), else None."""


@dataclass(frozen=True)
class CheckedClaim:
    """One claim of a checked answer, with its label."""

    id: str
    text: str
    spans: tuple[tuple[int, int], ...]
    """Half-open character offsets of the claim in the answer."""
    factual: bool
    kind: str
    label: str
    p_hallucinated: float | None
    """The stacked probability that the claim is not supported (None when not judged)."""
    reason: str
    error_spans: tuple[tuple[int, int], ...]
    """Answer offsets of the words that make the claim wrong (contradicted and
    not_supported claims)."""
    evidence: tuple[CheckedEvidence, ...] = ()
    votes: Mapping[str, float] = field(default_factory=dict)
    """Each judge's vote against the current evidence, by name."""


@dataclass(frozen=True)
class CheckResult:
    """The labelled claims of one checked answer."""

    answer_id: str
    run_id: str
    """The content address of the check (the run id it has, or would have, in a ledger)."""
    as_of: datetime | None
    claims: tuple[CheckedClaim, ...]
    latency_s: float
    """Seconds spent labelling (waiting for the checker not counted)."""
    recorded: bool = False
    """True when the check was queued for the ledger (written in the background)."""

    @property
    def labels(self) -> Counter[str]:
        """How many claims got each label."""
        return Counter(c.label for c in self.claims)

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON-ready values (what ``POST /api/check`` returns)."""
        out = asdict(self)
        out["as_of"] = self.as_of.isoformat() if self.as_of is not None else None
        out["labels"] = dict(self.labels)
        for claim in out["claims"]:
            claim["spans"] = [list(s) for s in claim["spans"]]
            claim["error_spans"] = [list(s) for s in claim["error_spans"]]
        return out


@dataclass(frozen=True)
class CheckRequest:
    """A check as it arrives over HTTP, validated (:func:`check_request`)."""

    answer: str
    contexts: tuple[ContextInput, ...] = ()
    question: str = ""
    as_of: str | None = None
    record: bool = False


def check_request(payload: object) -> CheckRequest:
    """Validate a JSON check request ``{answer, contexts?, question?, as_of?, record?}``;
    an :class:`~auditor.errors.InputError` naming the field otherwise (the contexts
    themselves are checked by :meth:`Checker.check`)."""
    if not isinstance(payload, Mapping):
        raise InputError("expected a JSON object", field="body")
    for name in payload:
        if name not in REQUEST_FIELDS:
            raise InputError(f"unknown field (known: {', '.join(REQUEST_FIELDS)})", field=name)
    answer = payload.get("answer")
    if answer is None:
        raise InputError("missing required field (the answer's text)", field="answer")
    if not isinstance(answer, str):
        raise InputError(f"must be a string, got {type(answer).__name__}", field="answer")
    contexts = payload.get("contexts", [])
    if not isinstance(contexts, list):
        raise InputError(
            f"must be a list of strings or objects, got {type(contexts).__name__}",
            field="contexts",
        )
    question = payload.get("question") or ""
    if not isinstance(question, str):
        raise InputError(f"must be a string, got {type(question).__name__}", field="question")
    as_of = payload.get("as_of")
    if as_of is not None and not isinstance(as_of, str):
        raise InputError(
            f"must be an ISO-8601 date string, got {type(as_of).__name__}", field="as_of"
        )
    record = payload.get("record", False)
    if not isinstance(record, bool):
        raise InputError(f"must be true or false, got {type(record).__name__}", field="record")
    return CheckRequest(answer, tuple(contexts), question, as_of, record)


class Checker:
    """Labels single answers synchronously, with the models loaded once.

    ``index``: an evidence index directory or an open ``EvidenceIndex`` searched as
    well as the answer's contexts (None: the contexts only). ``db``: a ledger (path,
    URL or open :class:`~ledger.Ledger`) that checks with ``record=True`` are written
    to (None: nothing can be recorded). ``panel``/``stacker``/``config``: as for
    :class:`~auditor.Auditor` (default: the offline panel, its stacker, and each check
    as of today 00:00 UTC unless the check or ``config.as_of`` gives a date).

    Thread-safe: checks run one at a time (the models use the process's threads).
    """

    def __init__(
        self,
        index: str | Path | EvidenceIndex | None = None,
        db: str | Path | Ledger | None = None,
        *,
        panel: str | Path | Panel | None = None,
        stacker: str | Path | Stacker | None = None,
        config: AuditConfig | None = None,
    ) -> None:
        self._dated = config is not None and config.as_of is not None
        self._recording = db is not None
        self.auditor = Auditor(
            index,
            db if db is not None else ":memory:",
            panel=panel,
            stacker=stacker,
            config=config,
        )
        self.components, self.index_component = self._components(index is not None)
        roles = run_components(self.components, self.index_component)
        self._roles = roles
        self._digests = judge_digests(self.components, roles)
        self._judges = audit_judges(self.components)
        self._lock = threading.Lock()
        self._queue: queue.Queue[tuple[Answer, str, list[AnswerResult]] | None] = queue.Queue()
        self._writer: threading.Thread | None = None
        self._closed = False

    def _components(self, searched: bool) -> tuple[AuditComponents, Component]:
        """The audit graph's components and the index role (no index: answers are judged
        against their own contexts)."""
        components = self.auditor.components(searched=searched)
        return components, (index_component(self.auditor.index.manifest) if searched else NO_INDEX)

    # -- lifecycle ---------------------------------------------------------------------
    def warm(self) -> None:
        """Load every model now (a first check would otherwise pay for it)."""
        self.check(
            "The warm-up answer has 3 claims. It was written in 2024.",
            ["The warm-up answer has 3 claims."],
        )

    def close(self) -> None:
        """Write every queued record, stop the writer, close the ledger if this checker
        opened it. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            writer = self._writer
        if writer is not None:
            self._queue.put(None)
            writer.join()
        self.auditor.close()

    def __enter__(self) -> Checker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- checking ----------------------------------------------------------------------
    def check(
        self,
        answer: str,
        contexts: Sequence[ContextInput] = (),
        *,
        question: str = "",
        as_of: str | datetime | None = None,
        record: bool = False,
    ) -> CheckResult:
        """Label the claims of ``answer`` against ``contexts`` (and the index).

        ``as_of``: the date the answer is checked as of (ISO string or datetime; default
        ``config.as_of`` if given, else today 00:00 UTC): contexts and indexed versions
        published later are not evidence. ``record``: also queue the check for the
        ledger (written by a background thread; :meth:`close` writes what is left).
        Bad input is an :class:`~auditor.errors.InputError` naming the field."""
        if record and not self._recording:
            raise ConfigError("record: this checker has no ledger (give Checker(db=...))")
        item = self._answer(answer, contexts, question, as_of)
        with self._lock:
            if self._closed:
                raise ConfigError("this checker is closed")
            started = time.perf_counter()
            kept = _Kept(run_id_of([item], self.components, self.index_component))
            execute_run(
                [item],
                kept,
                local_batches(self.components, 1),
                judges=self._judges,
                judge_digests=self._digests,
                batch_size=1,
            )
            latency = time.perf_counter() - started
            if record:
                self._start_writer()
                self._queue.put((item, kept.run_id, kept.results))
        return _result(item, kept.run_id, kept.results, latency, record)

    def _answer(
        self,
        text: str,
        contexts: Sequence[ContextInput],
        question: str,
        as_of: str | datetime | None,
    ) -> Answer:
        """The answer to check, validated as audit input is (errors name the field)."""
        if not isinstance(text, str):
            raise InputError(f"must be a string, got {type(text).__name__}", field="answer")
        if len(text) > MAX_ANSWER_CHARS:
            raise InputError(f"longer than {MAX_ANSWER_CHARS} characters", field="answer")
        if isinstance(contexts, str) or not isinstance(contexts, Sequence):
            raise InputError("must be a list of strings or objects", field="contexts")
        if len(contexts) > MAX_CONTEXTS:
            raise InputError(f"more than {MAX_CONTEXTS} contexts", field="contexts")
        given: list[Any] = []
        for i, ctx in enumerate(contexts):
            value = _context_record(ctx)
            if isinstance(value, Mapping) and len(str(value.get("text", ""))) > MAX_CONTEXT_CHARS:
                raise InputError(
                    f"longer than {MAX_CONTEXT_CHARS} characters", field=f"contexts[{i}].text"
                )
            given.append(value)
        when = as_of if as_of is not None else (None if self._dated else default_as_of())
        record = {
            "id": f"check-{sha256_text(text)[:16]}",
            "question": question,
            "answer": text,
            "contexts": given,
            "as_of": when,
        }
        (item,) = answers_from_records([(1, record)], source="check")
        return item

    def _start_writer(self) -> None:
        if self._writer is None:
            self._writer = threading.Thread(target=self._write_queued, name="check-recorder")
            self._writer.start()

    def _write_queued(self) -> None:
        """The background writer: each queued check as a run of its own, until close."""
        while True:
            job = self._queue.get()
            if job is None:
                return
            item, run_id, results = job
            try:
                self._record(item, run_id, results)
            except Exception:  # a lost write is logged; the writer keeps going
                log.exception("could not record check %s", item.id)

    def _record(self, item: Answer, run_id: str, results: list[AnswerResult]) -> None:
        """Write one check's records through the executor (a ``check`` run)."""
        config = self.components.config
        sink = NewRun(
            self.auditor.ledger,
            run_id,
            kind="check",
            input_digest=input_digest([item]),
            as_of=config.as_of,
            config=config.to_dict(),
            components=self._roles,
            n_answers=1,
        )

        def replay(
            batches: Sequence[Sequence[Answer]], seq_of: Mapping[str, int], results_of: ResultsOf
        ) -> Iterator[Sequence[AnswerResult]]:
            yield results

        execute_run([item], sink, replay, batch_size=1)


def _context_record(ctx: ContextInput) -> Any:
    """A context as the dict answer input has (validated with the answer)."""
    if isinstance(ctx, str):
        return {"text": ctx}
    return asdict(ctx) if isinstance(ctx, Context) else ctx


@dataclass
class _Kept:
    """A run sink that keeps the records in memory (a check writes nothing itself)."""

    run_id: str
    results: list[AnswerResult] = field(default_factory=list)

    def begin(self) -> frozenset[str] | None:
        return frozenset()

    def record(self, results: Sequence[AnswerResult]) -> None:
        self.results.extend(results)

    def finish(self) -> None:
        return None


def _result(
    item: Answer, run_id: str, results: Sequence[AnswerResult], latency: float, recorded: bool
) -> CheckResult:
    """A check's records as a :class:`CheckResult`."""
    (result,) = results
    verdicts = {v.claim_id: v for v in result.verdicts}
    chunks = {c.chunk_id: c for c in result.evidence_chunks}
    inline_prefix = f"inline:{item.id}:"
    evidence: dict[str, list[CheckedEvidence]] = {}
    for r in result.retrievals:
        chunk = chunks[r.chunk_id]
        evidence.setdefault(r.claim_id, []).append(
            CheckedEvidence(
                doc_id=r.doc_id,
                chunk_id=r.chunk_id,
                start=chunk.start,
                end=chunk.end,
                inline=r.inline,
                superseded=r.superseded,
                relevance=round(r.score, 4),
                context=r.doc_id.removeprefix(inline_prefix) if r.inline else None,
            )
        )
    votes: dict[str, dict[str, float]] = {}
    for v in result.votes:
        if not v.superseded:
            votes.setdefault(v.claim_id, {})[v.judge_name] = v.value
    claims = []
    for c in result.claims:
        verdict = verdicts[c.claim_id]
        claims.append(
            CheckedClaim(
                id=c.claim_id,
                text=c.text,
                spans=tuple((int(a), int(b)) for a, b in c.spans),
                factual=c.factual,
                kind=c.kind,
                label=verdict.label,
                p_hallucinated=verdict.p_hallucinated,
                reason=verdict.reason,
                error_spans=tuple((int(a), int(b)) for a, b in verdict.error_spans),
                evidence=tuple(evidence.get(c.claim_id, ())),
                votes=votes.get(c.claim_id, {}),
            )
        )
    return CheckResult(item.id, run_id, item.as_of, tuple(claims), latency, recorded)


@functools.lru_cache(maxsize=4)
def shared_checker(index: str | None = None, config: AuditConfig | None = None) -> Checker:
    """The warm :class:`Checker` :func:`check` uses for ``index`` and ``config`` (built on
    first use, kept for the process)."""
    return Checker(index, config=config)


def check(
    answer: str,
    contexts: Sequence[ContextInput] = (),
    *,
    index: str | Path | None = None,
    question: str = "",
    as_of: str | datetime | None = None,
    config: AuditConfig | None = None,
) -> CheckResult:
    """Label one answer's claims against its ``contexts`` (and an evidence ``index``)
    before it is shown, synchronously, with the offline panel.

    The models load on the first call and stay loaded (a shared :class:`Checker` per
    ``index`` and ``config``); nothing is written anywhere. To record checks in a
    ledger, use ``Checker(db=...)`` and ``record=True``.

    >>> from auditor import check
    >>> result = check("The network has 47 stations.",
    ...                ["The regional network has 47 stations and 3 lines."])
    >>> [(c.text, c.label) for c in result.claims]
    [('The network has 47 stations', 'supported')]
    """
    where = str(index) if index is not None else None
    return shared_checker(where, config).check(answer, contexts, question=question, as_of=as_of)
