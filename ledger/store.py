"""The ledger facade: every read and write of the SQL ledger goes through :class:`Ledger`.

Writes are batched (one multi-row INSERT per table) and transactional; shared
rows (components, documents, versions, chunks) are inserted with
ON CONFLICT DO NOTHING, so writing the same thing twice adds nothing.

Many writers (processes, Ray actors) may share one PostgreSQL ledger: every row is
keyed by content digests (run, claim, judge, version, chunk), so a write repeated by
a retried worker adds nothing; rows are inserted in primary-key order, so two
transactions writing overlapping rows take their locks in the same order and do
not deadlock each other; and a write that PostgreSQL still aborts with a
serialisation failure or a deadlock (SQLSTATE 40001, 40P01) is rolled back and
re-run, with exponential backoff and jitter, up to ``retry_attempts`` times.
"""

from __future__ import annotations

import functools
import json
import random
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import Table, case, create_engine, event, func, select, true, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DatabaseError, DBAPIError, OperationalError, SQLAlchemyError

from auditor.clock import utc
from ledger import models as m
from ledger.errors import LedgerError
from ledger.records import (
    AnswerResult,
    ChunkLike,
    ClaimResult,
    ComponentLike,
    DocumentVersionLike,
    ReaderScoreRecord,
    RunInfo,
    VerdictRecord,
    VoteRecord,
)
from ledger.schema import ensure_schema
from ledger.url import mask_url, normalise_url, redact

RELEVANCE_DEFAULTS = (0.35, 0.6, 0.5)
"""``(min_relevance, strong_relevance, min_coverage)`` of the default label policy."""


RETRYABLE_SQLSTATES = {"40001": "serialisation failure", "40P01": "deadlock"}
"""PostgreSQL errors after which the whole transaction is rolled back and re-run."""
DEFAULT_RETRY_ATTEMPTS = 8
DEFAULT_RETRY_BASE_S = 0.05
"""First backoff; attempt ``n`` waits ``base * 2**n`` (capped at 5 s) times a random
factor in [0.5, 1.5), so colliding writers spread out."""
DEFAULT_POOL = {"pool_size": 5, "max_overflow": 5, "pool_timeout": 60, "pool_recycle": 1800}
"""PostgreSQL connection pool per :class:`Ledger` (per process): a worker writes from
one thread, so a few connections suffice; ``max_connections`` on the server must
exceed workers x (pool_size + max_overflow)."""

_T = TypeVar("_T")


class _Conflict(Exception):
    """A transaction PostgreSQL aborted that can be re-run (see RETRYABLE_SQLSTATES)."""


def _sqlstate(exc: BaseException) -> str | None:
    orig = getattr(exc, "orig", None)
    code = getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None)
    return str(code) if code else None


def _retrying(method: Callable[..., _T]) -> Callable[..., _T]:
    """Re-run a one-transaction write method when PostgreSQL aborts it as a conflict.

    Safe because the aborted transaction wrote nothing and every write is idempotent.
    """

    @functools.wraps(method)
    def wrapper(self: Ledger, *args: Any, **kwargs: Any) -> _T:
        return self._with_retries(lambda: method(self, *args, **kwargs))

    return wrapper


def _now() -> datetime:
    return datetime.now(UTC)


def _vote_model(v: VoteRecord) -> type[Any]:
    """The table of one vote: ``superseded_vote`` or ``judge_vote``."""
    return m.SupersededVoteRow if v.superseded else m.JudgeVoteRow


def _vote_row(run_id: str, v: VoteRecord, now: datetime) -> dict[str, Any]:
    """The row of one vote (an audit's or a bridge's) in its table (:func:`_vote_model`)."""
    return {
        "run_id": run_id,
        "claim_id": v.claim_id,
        "judge_digest": v.judge_digest,
        "judge_name": v.judge_name,
        "value": v.value,
        "raw": v.raw,
        "scores": _plain(dict(v.scores)),
        "latency_s": v.latency_s,
        "error": v.error,
        "created_at": now,
    }


def _reader_score_rows(run_id: str, scores: Iterable[ReaderScoreRecord]) -> list[dict[str, Any]]:
    """The ``reader_score`` rows of a run's reader scores, one per key."""
    rows = {
        (r.weights_digest, r.quantized, r.pair_digest, r.max_length): {
            "run_id": run_id,
            "weights_digest": r.weights_digest,
            "quantized": r.quantized,
            "pair_digest": r.pair_digest,
            "max_length": r.max_length,
            "entailment": float(r.entailment),
            "neutral": float(r.neutral),
            "contradiction": float(r.contradiction),
        }
        for r in scores
    }
    return list(rows.values())


def _plain(value: Any) -> Any:
    """A JSON-safe copy (datetimes and other objects become strings)."""
    return json.loads(json.dumps(value, default=str))


def _table(model: type[Any]) -> Table:
    return model.__table__  # type: ignore[no-any-return,unused-ignore]


def _describe(exc: BaseException, *locations: str | Path) -> str:
    """The first line of a database error, with any secret of ``locations`` masked."""
    text = str(getattr(exc, "orig", exc)) or type(exc).__name__
    return redact(text.splitlines()[0], *locations)


class Ledger:
    """A connection to one ledger database (SQLite file or PostgreSQL)."""

    def __init__(self, engine: Engine, location: str) -> None:
        self.engine = engine
        self.location = mask_url(location)
        """Where the ledger is, safe to print (a URL's password is masked)."""
        self._secret_location = location
        self.retry_attempts = DEFAULT_RETRY_ATTEMPTS
        """How many times a conflicting write is tried before it is an error."""
        self.retry_base_s = DEFAULT_RETRY_BASE_S
        self.retries = 0
        """Writes re-run after a conflict so far (for benchmarks and tests)."""

    # ------------------------------------------------------------------ plumbing
    def _with_retries(self, work: Callable[[], _T]) -> _T:
        """``work()``, re-run with backoff while it raises :class:`_Conflict`."""
        attempt = 0
        while True:
            try:
                return work()
            except _Conflict as exc:
                attempt += 1
                self.retries += 1
                if attempt >= self.retry_attempts:
                    raise LedgerError(
                        f"{self.location}: {exc} (still failing after {attempt} attempts; "
                        "nothing was written)"
                    ) from None
                delay = min(self.retry_base_s * 2 ** (attempt - 1), 5.0)
                time.sleep(delay * (0.5 + random.random()))

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _tx(self) -> Iterator[Connection]:
        try:
            with self.engine.begin() as conn:
                yield conn
        except DBAPIError as exc:
            state = _sqlstate(exc)
            where = self._secret_location
            if state in RETRYABLE_SQLSTATES:
                raise _Conflict(f"{RETRYABLE_SQLSTATES[state]}: {_describe(exc, where)}") from None
            if isinstance(exc, OperationalError) and "locked" in str(exc).lower():
                raise LedgerError(
                    f"{self.location}: the ledger is locked by another process "
                    f"(nothing was written): {_describe(exc, where)}"
                ) from None
            if isinstance(exc, OperationalError):
                raise LedgerError(f"{self.location}: {_describe(exc, where)}") from None
            if isinstance(exc, DatabaseError):
                raise LedgerError(
                    f"{self.location}: {_describe(exc, where)} (nothing was written)"
                ) from None
            raise

    def _insert_ignore(
        self, conn: Connection, model: type[Any], rows: Sequence[dict[str, Any]]
    ) -> None:
        if not rows:
            return
        table = _table(model)
        dialect = sqlite if conn.dialect.name == "sqlite" else postgresql
        # chunked so that huge batches stay under the bound-parameter limits
        # primary-key order: concurrent writers lock overlapping rows in the same order
        keys = [c.name for c in table.primary_key.columns]
        rows = sorted(rows, key=lambda r: tuple(str(r.get(k)) for k in keys))
        per_row = max(len(rows[0]), 1)
        size = max(1, 30000 // per_row)
        for start in range(0, len(rows), size):
            stmt = dialect.insert(table).on_conflict_do_nothing()
            conn.execute(stmt, list(rows[start : start + size]))

    # ------------------------------------------------------------------ components
    @_retrying
    def record_components(self, components: Iterable[ComponentLike]) -> None:
        """Store component versions (content-addressed; existing digests are kept)."""
        with self._tx() as conn:
            self._record_components(conn, components)

    def _record_components(self, conn: Connection, components: Iterable[ComponentLike]) -> None:
        rows = {
            c.digest: {
                "digest": c.digest,
                "kind": c.kind,
                "name": c.name,
                "version": c.version,
                "config": _plain(dict(c.config)),
                "created_at": _now(),
            }
            for c in components
        }
        self._insert_ignore(conn, m.ComponentRow, list(rows.values()))

    # ------------------------------------------------------------------ corpus
    @_retrying
    def record_corpus(
        self,
        versions: Sequence[DocumentVersionLike],
        chunks: Sequence[ChunkLike],
        *,
        inline: bool = False,
    ) -> None:
        """Store documents, versions and chunks in one transaction (idempotent).

        A known version whose ``valid_to`` was open, or later than the one given, gets
        the new ``valid_to`` (it was superseded, or an older version was inserted
        after it in date order); nothing else of an existing row changes.
        """
        with self._tx() as conn:
            self._record_corpus(
                conn,
                versions,
                chunks,
                inline_ids=(frozenset(v.doc_id for v in versions) if inline else frozenset()),
            )

    def _record_corpus(
        self,
        conn: Connection,
        versions: Sequence[DocumentVersionLike],
        chunks: Sequence[ChunkLike],
        inline_ids: frozenset[str],
    ) -> None:
        now = _now()
        docs = {
            v.doc_id: {
                "doc_id": v.doc_id,
                "source": v.source,
                "title": v.title,
                "inline": v.doc_id in inline_ids,
                "created_at": now,
            }
            for v in versions
        }
        self._insert_ignore(conn, m.DocumentRow, list(docs.values()))
        rows = {
            (v.digest, v.doc_id): {
                "digest": v.digest,
                "doc_id": v.doc_id,
                "version": v.version,
                "text": v.text,
                "source": v.source,
                "title": v.title,
                "published_at": utc(v.published_at),
                "retrieved_at": utc(v.retrieved_at),
                "valid_from": utc(v.valid_from),
                "valid_to": utc(v.valid_to),
                "created_at": now,
            }
            for v in versions
        }
        self._insert_ignore(conn, m.DocumentVersionRow, list(rows.values()))
        table = _table(m.DocumentVersionRow)
        for _key, row in sorted(rows.items()):
            if row["valid_to"] is not None:
                conn.execute(
                    update(table)
                    .where(
                        table.c.digest == row["digest"],
                        table.c.doc_id == row["doc_id"],
                        table.c.valid_to.is_(None) | (table.c.valid_to > row["valid_to"]),
                    )
                    .values(valid_to=row["valid_to"])
                )
        chunk_rows = {
            c.chunk_id: {
                "chunk_id": c.chunk_id,
                "doc_id": c.doc_id,
                "version": c.version,
                "digest": c.digest,
                "start": c.start,
                "end": c.end,
                "text": c.text,
            }
            for c in chunks
        }
        self._insert_ignore(conn, m.ChunkRow, list(chunk_rows.values()))

    def count(self, table: str) -> int:
        """Number of rows in a ledger table (for checks and reports)."""
        tables = {t.name: t for t in m.SQLModel.metadata.sorted_tables}
        if table not in tables:
            raise LedgerError(f"unknown table {table!r}")
        with self.engine.connect() as conn:
            return int(conn.execute(select(func.count()).select_from(tables[table])).scalar_one())

    # ------------------------------------------------------------------ runs
    @_retrying
    def begin_run(
        self,
        run_id: str,
        *,
        kind: str,
        input_digest: str,
        as_of: datetime | None,
        config: Mapping[str, Any],
        components: Mapping[str, ComponentLike],
        n_answers: int,
    ) -> RunInfo:
        """Create the run (or find it again: same id = same input and versions)."""
        with self._tx() as conn:
            self._record_components(conn, components.values())
            self._insert_ignore(
                conn,
                m.RunRow,
                [
                    {
                        "run_id": run_id,
                        "kind": kind,
                        "status": "running",
                        "input_digest": input_digest,
                        "as_of": utc(as_of),
                        "config": _plain(dict(config)),
                        "n_answers": n_answers,
                        "created_at": _now(),
                        "finished_at": None,
                    }
                ],
            )
            self._insert_ignore(
                conn,
                m.RunComponentRow,
                [
                    {"run_id": run_id, "digest": c.digest, "role": role}
                    for role, c in components.items()
                ],
            )
        return self.get_run(run_id)

    def done_answer_ids(self, run_id: str) -> set[str]:
        """Answers of a run already written (a resumed run skips them)."""
        table = _table(m.AnswerRow)
        with self.engine.connect() as conn:
            return set(
                conn.execute(select(table.c.answer_id).where(table.c.run_id == run_id)).scalars()
            )

    @_retrying
    def record_answer(self, run_id: str, result: AnswerResult) -> None:
        """Write one answer's claims, evidence, votes and verdicts in one transaction."""
        self._record_answers(run_id, [result])

    @_retrying
    def record_answers(self, run_id: str, results: Sequence[AnswerResult]) -> None:
        """Write many answers in one transaction (one multi-row INSERT per table).

        Fewer, larger transactions are what lets many workers share one PostgreSQL
        ledger (bench/bench_scale.py measures rows per second by batch size). Each row
        is keyed by content digests, so answers already written add nothing.
        """
        self._record_answers(run_id, results)

    def _record_answers(self, run_id: str, results: Sequence[AnswerResult]) -> None:
        if not results:
            return
        now = _now()
        with self._tx() as conn:
            inline: set[str] = set()
            for result in results:
                inline.update(result.inline_doc_ids)
            self._record_corpus(
                conn,
                [v for r in results for v in r.evidence_versions],
                [c for r in results for c in r.evidence_chunks],
                frozenset(inline),
            )
            tables: dict[type[Any], list[dict[str, Any]]] = {
                model: []
                for model in (
                    m.AnswerRow,
                    m.ClaimRow,
                    m.RetrievalRow,
                    m.JudgeVoteRow,
                    m.SupersededVoteRow,
                    m.VerdictRow,
                    m.ReaderScoreRow,
                )
            }
            roles = {
                role: self._run_component_or_none(conn, run_id, role)
                for role in ("extractor", "panel", "stacker")
            }
            # the answers' extractor components, once each (not one INSERT per answer)
            self._record_components(
                conn,
                {
                    r.extractor.digest: r.extractor for r in results if r.extractor is not None
                }.values(),
            )
            for result in results:
                self._answer_rows(conn, run_id, result, now, roles, tables)
            tables[m.ReaderScoreRow] = _reader_score_rows(
                run_id, (score for r in results for score in r.reader_scores)
            )
            for model, rows in tables.items():
                self._insert_ignore(conn, model, rows)

    def _answer_rows(
        self,
        conn: Connection,
        run_id: str,
        result: AnswerResult,
        now: datetime,
        roles: dict[str, str | None],
        tables: dict[type[Any], list[dict[str, Any]]],
    ) -> None:
        """Append one answer's rows to ``tables`` (its extractor component must be written)."""

        def role(name: str) -> str:
            digest = roles.get(name)
            return digest if digest is not None else self._run_component(conn, run_id, name)

        tables[m.AnswerRow].append(
            {
                "run_id": run_id,
                "answer_id": result.answer_id,
                "question": result.question,
                "answer": result.answer,
                "answer_digest": result.answer_digest,
                "as_of": utc(result.as_of),
                "seq": result.seq,
                "extraction": _plain(dict(result.extraction)),
                "created_at": now,
            }
        )
        # an answer's own extractor component was recorded by _record_answers
        extractor = result.extractor.digest if result.extractor is not None else role("extractor")
        tables[m.ClaimRow].extend(
            {
                "run_id": run_id,
                "claim_id": c.claim_id,
                "answer_id": result.answer_id,
                "text": c.text,
                "spans": [list(s) for s in c.spans],
                "factual": c.factual,
                "kind": c.kind,
                "extractor_digest": extractor,
                "seq": i,
                "topic": c.topic,
            }
            for i, c in enumerate(result.claims)
        )
        tables[m.RetrievalRow].extend(
            {
                "run_id": run_id,
                "claim_id": r.claim_id,
                "rank": r.rank,
                "chunk_id": r.chunk_id,
                "doc_id": r.doc_id,
                "version_digest": r.version_digest,
                "score": r.score,
                "superseded": r.superseded,
                "inline": r.inline,
                "query": r.query,
                "coverage": r.coverage,
                "sentence_relevance": r.sentence_relevance,
            }
            for r in result.retrievals
        )
        for v in result.votes:
            tables[_vote_model(v)].append(_vote_row(run_id, v, now))
        panel, stacker = role("panel"), role("stacker")
        tables[m.VerdictRow].extend(
            {
                "run_id": run_id,
                "claim_id": v.claim_id,
                "panel_digest": panel,
                "stacker_digest": stacker,
                "label": v.label,
                "p_hallucinated": v.p_hallucinated,
                "reason": v.reason,
                "error_spans": [list(s) for s in v.error_spans],
                "created_at": now,
            }
            for v in result.verdicts
        )

    def _run_component(self, conn: Connection, run_id: str, role: str) -> str:
        table = _table(m.RunComponentRow)
        digest = conn.execute(
            select(table.c.digest).where(table.c.run_id == run_id, table.c.role == role)
        ).scalar()
        if digest is None:
            raise LedgerError(f"run {run_id[:12]} has no {role} component")
        return str(digest)

    def _run_component_or_none(self, conn: Connection, run_id: str, role: str) -> str | None:
        table = _table(m.RunComponentRow)
        digest = conn.execute(
            select(table.c.digest).where(table.c.run_id == run_id, table.c.role == role)
        ).scalar()
        return None if digest is None else str(digest)

    @_retrying
    def finish_run(self, run_id: str) -> RunInfo:
        """Mark a run complete (once every answer is written)."""
        table = _table(m.RunRow)
        with self._tx() as conn:
            conn.execute(
                update(table)
                .where(table.c.run_id == run_id, table.c.status != "complete")
                .values(status="complete", finished_at=_now())
            )
        return self.get_run(run_id)

    def find_run(self, prefix: str) -> str:
        """The full id of the run whose id starts with ``prefix`` (unique)."""
        table = _table(m.RunRow)
        with self.engine.connect() as conn:
            ids = list(
                conn.execute(
                    select(table.c.run_id).where(table.c.run_id.startswith(prefix))
                ).scalars()
            )
        if not ids:
            raise LedgerError(f"{self.location}: no run with id {prefix!r}")
        if len(ids) > 1:
            raise LedgerError(f"run id prefix {prefix!r} is ambiguous ({len(ids)} runs)")
        return str(ids[0])

    def get_run(self, run_id: str) -> RunInfo:
        """A run's metadata and components; :class:`LedgerError` if there is no such run."""
        runs, comps, answers = (_table(m.RunRow), _table(m.RunComponentRow), _table(m.AnswerRow))
        components = _table(m.ComponentRow)
        with self.engine.connect() as conn:
            row = conn.execute(select(runs).where(runs.c.run_id == run_id)).mappings().first()
            if row is None:
                raise LedgerError(f"{self.location}: no run with id {run_id!r}")
            comp_rows = (
                conn.execute(
                    select(comps.c.role, components)
                    .join(components, components.c.digest == comps.c.digest)
                    .where(comps.c.run_id == run_id)
                )
                .mappings()
                .all()
            )
            done = conn.execute(
                select(func.count()).select_from(answers).where(answers.c.run_id == run_id)
            ).scalar_one()
        return RunInfo(
            run_id=row["run_id"],
            kind=row["kind"],
            status=row["status"],
            input_digest=row["input_digest"],
            as_of=utc(row["as_of"]),
            config=row["config"] or {},
            n_answers=row["n_answers"],
            n_answers_done=int(done),
            created_at=utc(row["created_at"]),
            finished_at=utc(row["finished_at"]),
            components={
                r["role"]: {
                    "kind": r["kind"],
                    "name": r["name"],
                    "version": r["version"],
                    "digest": r["digest"],
                    "config": r["config"],
                }
                for r in comp_rows
            },
        )

    def list_runs(self) -> list[RunInfo]:
        """Every run, oldest first."""
        table = _table(m.RunRow)
        with self.engine.connect() as conn:
            ids = list(conn.execute(select(table.c.run_id).order_by(table.c.created_at)).scalars())
        return [self.get_run(run_id) for run_id in ids]

    def claim_results(
        self,
        run_id: str,
        *,
        panel_digest: str | None = None,
        stacker_digest: str | None = None,
        answer_ids: Sequence[str] | None = None,
        relevance: tuple[float, float, float] = RELEVANCE_DEFAULTS,
    ) -> list[ClaimResult]:
        """Every claim of a run (or of ``answer_ids`` only) with its verdict and evidence
        counts, in answer order.

        ``relevance`` = ``(min_relevance, strong_relevance, min_coverage)``: evidence
        counts as relevant (``n_relevant_evidence``, ``n_dated_relevant_evidence``) when
        its stored cosine reaches the first and it reaches the second or covers the
        third share of the claim's content words (the label policy's rule 2).

        The verdict is the one of the run's own panel and stacker unless
        ``panel_digest``/``stacker_digest`` pick a bridged version (see
        :meth:`record_bridge`); a claim with no verdict of that version has label None.
        """
        claims, verdicts, retr = (_table(m.ClaimRow), _table(m.VerdictRow), _table(m.RetrievalRow))
        answers, versions = _table(m.AnswerRow), _table(m.DocumentVersionRow)
        with self.engine.connect() as conn:
            if panel_digest is None:
                panel_digest = self._run_component_or_none(conn, run_id, "panel")
            if stacker_digest is None:
                stacker_digest = self._run_component_or_none(conn, run_id, "stacker")
            verdict_on = (verdicts.c.run_id == claims.c.run_id) & (
                verdicts.c.claim_id == claims.c.claim_id
            )
            if panel_digest is not None:
                verdict_on = verdict_on & (verdicts.c.panel_digest == panel_digest)
            if stacker_digest is not None:
                verdict_on = verdict_on & (verdicts.c.stacker_digest == stacker_digest)
            rows = (
                conn.execute(
                    select(
                        claims,
                        verdicts.c.label,
                        verdicts.c.p_hallucinated,
                        verdicts.c.reason,
                        verdicts.c.error_spans,
                        answers.c.seq.label("answer_seq"),
                    )
                    .join(
                        answers,
                        (answers.c.run_id == claims.c.run_id)
                        & (answers.c.answer_id == claims.c.answer_id),
                    )
                    .outerjoin(verdicts, verdict_on)
                    .where(claims.c.run_id == run_id)
                    .where(claims.c.answer_id.in_(answer_ids) if answer_ids is not None else true())
                    .order_by(answers.c.seq, claims.c.seq)
                )
                .mappings()
                .all()
            )
            chosen = [r["claim_id"] for r in rows] if answer_ids is not None else None
            min_rel, strong_rel, min_cov = relevance
            relevant = (retr.c.score >= min_rel) & (
                (retr.c.score >= strong_rel) | (func.coalesce(retr.c.coverage, 1.0) >= min_cov)
            )
            evidence = (
                conn.execute(
                    select(
                        retr.c.claim_id,
                        func.count().label("n"),
                        func.sum(case((retr.c.inline, 1), else_=0)).label("n_inline"),
                        func.sum(case((retr.c.superseded, 1), else_=0)).label("n_sup"),
                        func.count(versions.c.published_at).label("n_dated"),
                        func.sum(case((relevant, 1), else_=0)).label("n_rel"),
                        func.sum(
                            case((relevant & versions.c.published_at.is_not(None), 1), else_=0)
                        ).label("n_dated_rel"),
                    )
                    .join(
                        versions,
                        (versions.c.digest == retr.c.version_digest)
                        & (versions.c.doc_id == retr.c.doc_id),
                    )
                    .where(retr.c.run_id == run_id)
                    .where(retr.c.claim_id.in_(chosen) if chosen is not None else true())
                    .group_by(retr.c.claim_id)
                )
                .mappings()
                .all()
            )
        ev = {r["claim_id"]: r for r in evidence}
        out = []
        for r in rows:
            e = dict(ev.get(r["claim_id"], {}))
            out.append(
                ClaimResult(
                    run_id=run_id,
                    answer_id=r["answer_id"],
                    claim_id=r["claim_id"],
                    text=r["text"],
                    spans=[(int(a), int(b)) for a, b in r["spans"] or []],
                    factual=r["factual"],
                    kind=r["kind"],
                    topic=r["topic"],
                    label=r["label"],
                    p_hallucinated=r["p_hallucinated"],
                    reason=r["reason"],
                    error_spans=[(int(a), int(b)) for a, b in r["error_spans"] or []],
                    n_evidence=int(e.get("n") or 0),
                    n_inline_evidence=int(e.get("n_inline") or 0),
                    n_superseded_evidence=int(e.get("n_sup") or 0),
                    n_dated_evidence=int(e.get("n_dated") or 0),
                    n_relevant_evidence=int(e.get("n_rel") or 0),
                    n_dated_relevant_evidence=int(e.get("n_dated_rel") or 0),
                )
            )
        return out

    def claim_evidence(
        self,
        run_id: str,
        *,
        with_document_text: bool = False,
        claim_ids: Sequence[str] | None = None,
    ) -> dict[str, list[dict[str, Any]]]:
        """Evidence per claim of a run, in rank order: chunk (id, offsets, text), document
        version (id, label, digest, source, publication date), stored relevance score and
        the superseded/inline flags; with ``with_document_text`` also the version's whole
        text (``doc_text``), enough to replay the run's evidence."""
        retr, chunks, versions = (
            _table(m.RetrievalRow),
            _table(m.ChunkRow),
            _table(m.DocumentVersionRow),
        )
        columns: list[Any] = [
            retr.c.claim_id,
            retr.c.rank,
            retr.c.chunk_id,
            retr.c.doc_id,
            retr.c.version_digest,
            retr.c.score,
            retr.c.superseded,
            retr.c.inline,
            retr.c.coverage,
            retr.c.sentence_relevance,
            chunks.c.start,
            chunks.c.end,
            chunks.c.text,
            versions.c.version,
            versions.c.source,
            versions.c.published_at,
            versions.c.valid_from,
            versions.c.valid_to,
        ]
        if with_document_text:
            columns.append(versions.c.text.label("doc_text"))
        with self.engine.connect() as conn:
            rows = (
                conn.execute(
                    select(*columns)
                    .join(chunks, chunks.c.chunk_id == retr.c.chunk_id)
                    .join(
                        versions,
                        (versions.c.digest == retr.c.version_digest)
                        & (versions.c.doc_id == retr.c.doc_id),
                    )
                    .where(retr.c.run_id == run_id)
                    .where(retr.c.claim_id.in_(claim_ids) if claim_ids is not None else true())
                    .order_by(retr.c.claim_id, retr.c.rank)
                )
                .mappings()
                .all()
            )
        out: dict[str, list[dict[str, Any]]] = {}
        for r in rows:
            item = dict(r)
            for key in ("published_at", "valid_from", "valid_to"):
                item[key] = utc(item[key])
            out.setdefault(r["claim_id"], []).append(item)
        return out

    def claim_votes(
        self, run_id: str, *, claim_ids: Sequence[str] | None = None, superseded: bool = False
    ) -> dict[str, list[dict[str, Any]]]:
        """Judge votes per claim of a run (name, digest, value, raw output, error): those
        against the claims' current evidence, or with ``superseded`` those against their
        superseded evidence."""
        votes = _table(m.SupersededVoteRow if superseded else m.JudgeVoteRow)
        with self.engine.connect() as conn:
            rows = (
                conn.execute(
                    select(votes)
                    .where(votes.c.run_id == run_id)
                    .where(votes.c.claim_id.in_(claim_ids) if claim_ids is not None else true())
                    .order_by(votes.c.claim_id, votes.c.judge_name)
                )
                .mappings()
                .all()
            )
        out: dict[str, list[dict[str, Any]]] = {}
        for r in rows:
            out.setdefault(r["claim_id"], []).append(dict(r))
        return out

    @_retrying
    def record_human_audits(
        self, run_id: str, audits: Sequence[tuple[str, str, str, str | None]]
    ) -> int:
        """Append reviewer verdicts ``(claim_id, reviewer, label, note)``; never edits a
        verdict. An audit identical to one already recorded is not added again.
        Returns how many were added."""
        table = _table(m.HumanAuditRow)
        added = 0
        with self._tx() as conn:
            existing = {
                tuple(row)
                for row in conn.execute(
                    select(table.c.claim_id, table.c.reviewer, table.c.label, table.c.note).where(
                        table.c.run_id == run_id
                    )
                )
            }
            rows = []
            for claim_id, reviewer, label, note in audits:
                if (claim_id, reviewer, label, note) in existing:
                    continue
                existing.add((claim_id, reviewer, label, note))
                rows.append(
                    {
                        "run_id": run_id,
                        "claim_id": claim_id,
                        "reviewer": reviewer,
                        "label": label,
                        "note": note,
                        "created_at": _now(),
                    }
                )
            if rows:
                conn.execute(table.insert(), rows)
                added = len(rows)
        return added

    def claim_trail(self, claim_id: str) -> list[dict[str, Any]]:
        """Everything the ledger knows about a claim (id or unique prefix), per run:
        answer and spans, evidence with digests and timestamps, every vote with its raw
        output and judge version (those against superseded evidence apart), every verdict
        (bridged versions side by side), audits."""
        claims, answers = _table(m.ClaimRow), _table(m.AnswerRow)
        retr, chunks, versions = (
            _table(m.RetrievalRow),
            _table(m.ChunkRow),
            _table(m.DocumentVersionRow),
        )
        votes, superseded, verdicts, comps = (
            _table(m.JudgeVoteRow),
            _table(m.SupersededVoteRow),
            _table(m.VerdictRow),
            _table(m.ComponentRow),
        )
        audits = _table(m.HumanAuditRow)
        with self.engine.connect() as conn:
            rows = (
                conn.execute(
                    select(claims, answers.c.answer, answers.c.question, answers.c.extraction)
                    .join(
                        answers,
                        (answers.c.run_id == claims.c.run_id)
                        & (answers.c.answer_id == claims.c.answer_id),
                    )
                    .where(claims.c.claim_id.startswith(claim_id))
                    .order_by(claims.c.run_id)
                )
                .mappings()
                .all()
            )
            if len({r["claim_id"] for r in rows}) > 1:
                raise LedgerError(f"claim id prefix {claim_id!r} is ambiguous")
            if not rows:
                raise LedgerError(f"{self.location}: no claim with id {claim_id!r}")
            full_id = rows[0]["claim_id"]
            trail = []
            for row in rows:
                run_id = row["run_id"]
                evidence = (
                    conn.execute(
                        select(
                            retr.c.rank,
                            retr.c.score,
                            retr.c.superseded,
                            retr.c.inline,
                            chunks.c.chunk_id,
                            chunks.c.start,
                            chunks.c.end,
                            chunks.c.text,
                            versions.c.doc_id,
                            versions.c.version,
                            versions.c.digest,
                            versions.c.source,
                            versions.c.published_at,
                            versions.c.retrieved_at,
                            versions.c.valid_from,
                            versions.c.valid_to,
                        )
                        .join(chunks, chunks.c.chunk_id == retr.c.chunk_id)
                        .join(
                            versions,
                            (versions.c.digest == retr.c.version_digest)
                            & (versions.c.doc_id == retr.c.doc_id),
                        )
                        .where(retr.c.run_id == run_id, retr.c.claim_id == full_id)
                        .order_by(retr.c.rank)
                    )
                    .mappings()
                    .all()
                )
                vote_rows, superseded_rows = (
                    conn.execute(
                        select(
                            table,
                            comps.c.version.label("judge_version"),
                            comps.c.config.label("judge_config"),
                        )
                        .join(comps, comps.c.digest == table.c.judge_digest)
                        .where(table.c.run_id == run_id, table.c.claim_id == full_id)
                        .order_by(table.c.judge_name)
                    )
                    .mappings()
                    .all()
                    for table in (votes, superseded)
                )
                verdict_rows = (
                    conn.execute(
                        select(verdicts)
                        .where(verdicts.c.run_id == run_id, verdicts.c.claim_id == full_id)
                        .order_by(verdicts.c.created_at)
                    )
                    .mappings()
                    .all()
                )
                audit_rows = (
                    conn.execute(
                        select(audits)
                        .where(audits.c.run_id == run_id, audits.c.claim_id == full_id)
                        .order_by(audits.c.created_at)
                    )
                    .mappings()
                    .all()
                )
                trail.append(
                    {
                        "run_id": run_id,
                        "claim": dict(row),
                        "evidence": [dict(e) for e in evidence],
                        "votes": [dict(v) for v in vote_rows],
                        "superseded_votes": [dict(v) for v in superseded_rows],
                        "verdicts": [dict(v) for v in verdict_rows],
                        "audits": [dict(a) for a in audit_rows],
                    }
                )
        return trail

    # ------------------------------------------------------------------ bridging, audits
    def run_answers(self, run_id: str) -> list[dict[str, Any]]:
        """The answers of a run (id, question, answer text, as-of date), in input order."""
        table = _table(m.AnswerRow)
        with self.engine.connect() as conn:
            rows = (
                conn.execute(
                    select(
                        table.c.answer_id,
                        table.c.question,
                        table.c.answer,
                        table.c.as_of,
                        table.c.seq,
                    )
                    .where(table.c.run_id == run_id)
                    .order_by(table.c.seq)
                )
                .mappings()
                .all()
            )
        return [{**dict(r), "as_of": utc(r["as_of"])} for r in rows]

    @_retrying
    def record_votes(
        self, run_id: str, votes: Sequence[VoteRecord], *, components: Iterable[ComponentLike] = ()
    ) -> int:
        """Append judge votes in one transaction (batched multi-row INSERTs); a vote
        already stored for the same run, claim and judge version is kept, not replaced.
        ``components``: judge versions to record first. Returns how many rows were new."""
        with self._tx() as conn:
            self._record_components(conn, components)
            return self._insert_votes(conn, run_id, votes)

    def _insert_votes(self, conn: Connection, run_id: str, votes: Sequence[VoteRecord]) -> int:
        now, added = _now(), 0
        for model in (m.JudgeVoteRow, m.SupersededVoteRow):
            table = _table(model)
            before = conn.execute(
                select(func.count()).select_from(table).where(table.c.run_id == run_id)
            ).scalar_one()
            self._insert_ignore(
                conn, model, [_vote_row(run_id, v, now) for v in votes if _vote_model(v) is model]
            )
            after = conn.execute(
                select(func.count()).select_from(table).where(table.c.run_id == run_id)
            ).scalar_one()
            added += int(after) - int(before)
        return added

    @_retrying
    def record_bridge(
        self,
        run_id: str,
        *,
        panel: ComponentLike,
        stacker: ComponentLike,
        judges: Sequence[ComponentLike],
        votes: Sequence[VoteRecord],
        verdicts: Sequence[VerdictRecord],
        reader_scores: Sequence[ReaderScoreRecord] = (),
    ) -> tuple[int, int]:
        """Store a re-judging of a run's claims by another panel/stacker version beside the
        old verdicts, in one transaction: the components, the new judges' votes, the
        verdicts keyed by the new panel and stacker digests and the entailment reader
        scores the re-judging asked for (beside the run's own). Nothing is overwritten;
        rows already there are kept. Returns ``(new votes, new verdicts)``."""
        self.get_run(run_id)
        table = _table(m.VerdictRow)
        with self._tx() as conn:
            self._record_components(conn, [panel, stacker, *judges])
            n_votes = self._insert_votes(conn, run_id, votes)
            where = (
                (table.c.run_id == run_id)
                & (table.c.panel_digest == panel.digest)
                & (table.c.stacker_digest == stacker.digest)
            )
            before = conn.execute(select(func.count()).select_from(table).where(where)).scalar_one()
            now = _now()
            self._insert_ignore(
                conn,
                m.VerdictRow,
                [
                    {
                        "run_id": run_id,
                        "claim_id": v.claim_id,
                        "panel_digest": panel.digest,
                        "stacker_digest": stacker.digest,
                        "label": v.label,
                        "p_hallucinated": v.p_hallucinated,
                        "reason": v.reason,
                        "error_spans": [list(s) for s in v.error_spans],
                        "created_at": now,
                    }
                    for v in verdicts
                ],
            )
            after = conn.execute(select(func.count()).select_from(table).where(where)).scalar_one()
            self._insert_ignore(conn, m.ReaderScoreRow, _reader_score_rows(run_id, reader_scores))
        return n_votes, int(after) - int(before)

    def reader_scores(
        self, run_id: str, *, weights_digest: str, quantized: bool
    ) -> list[ReaderScoreRecord]:
        """The entailment reader scores stored with a run for one set of weights (their
        sha256 and whether they ran quantised), at every token limit: one range scan of
        the ``reader_score`` primary key."""
        table = _table(m.ReaderScoreRow)
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(
                    table.c.pair_digest,
                    table.c.max_length,
                    table.c.entailment,
                    table.c.neutral,
                    table.c.contradiction,
                ).where(
                    table.c.run_id == run_id,
                    table.c.weights_digest == weights_digest,
                    table.c.quantized == quantized,
                )
            ).all()
        return [
            ReaderScoreRecord(
                weights_digest, quantized, str(p), int(n), float(e), float(u), float(c)
            )
            for p, n, e, u, c in rows
        ]

    def verdict_versions(self, run_id: str) -> list[dict[str, Any]]:
        """The panel/stacker versions with verdicts in a run (the run's own first, then
        bridged ones by first write), with their claim counts."""
        table, comps = _table(m.VerdictRow), _table(m.ComponentRow)
        with self.engine.connect() as conn:
            own = (
                self._run_component_or_none(conn, run_id, "panel"),
                self._run_component_or_none(conn, run_id, "stacker"),
            )
            rows = (
                conn.execute(
                    select(
                        table.c.panel_digest,
                        table.c.stacker_digest,
                        func.count().label("n_claims"),
                        func.min(table.c.created_at).label("created_at"),
                    )
                    .where(table.c.run_id == run_id)
                    .group_by(table.c.panel_digest, table.c.stacker_digest)
                )
                .mappings()
                .all()
            )
            names = {
                r["digest"]: r
                for r in conn.execute(
                    select(comps.c.digest, comps.c.name, comps.c.config).where(
                        comps.c.kind == "panel"
                    )
                ).mappings()
            }
        out = []
        for r in rows:
            panel = names.get(r["panel_digest"])
            out.append(
                {
                    "panel_digest": r["panel_digest"],
                    "stacker_digest": r["stacker_digest"],
                    "n_claims": int(r["n_claims"]),
                    "created_at": utc(r["created_at"]),
                    "panel_name": panel["name"] if panel else None,
                    "members": (panel["config"] or {}).get("members") if panel else None,
                    "own": (r["panel_digest"], r["stacker_digest"]) == own,
                }
            )
        out.sort(key=lambda v: (not v["own"], v["created_at"] or datetime.min.replace(tzinfo=UTC)))
        return out

    def vote_statistics(self, run_id: str) -> list[dict[str, Any]]:
        """Per judge version in a run: votes, how many were 0 (supported), 1
        (hallucinated) or 0.5 (abstentions), errors and mean latency (one SQL query)."""
        v = _table(m.JudgeVoteRow)
        with self.engine.connect() as conn:
            rows = (
                conn.execute(
                    select(
                        v.c.judge_name,
                        v.c.judge_digest,
                        func.count().label("n"),
                        func.sum(case((v.c.value == 0.0, 1), else_=0)).label("n_supported"),
                        func.sum(case((v.c.value == 1.0, 1), else_=0)).label("n_hallucinated"),
                        func.sum(case((v.c.value == 0.5, 1), else_=0)).label("n_abstain"),
                        func.sum(case((v.c.error.is_not(None), 1), else_=0)).label("n_error"),
                        func.avg(v.c.latency_s).label("mean_latency_s"),
                    )
                    .where(v.c.run_id == run_id)
                    .group_by(v.c.judge_name, v.c.judge_digest)
                    .order_by(v.c.judge_name, v.c.judge_digest)
                )
                .mappings()
                .all()
            )
        counts = ("n", "n_supported", "n_hallucinated", "n_abstain", "n_error")
        return [
            {
                "judge_name": r["judge_name"],
                "judge_digest": r["judge_digest"],
                **{k: int(r[k] or 0) for k in counts},
                "mean_latency_s": float(r["mean_latency_s"] or 0.0),
            }
            for r in rows
        ]

    def judged_claims(self, run_id: str) -> int:
        """How many claims of a run have at least one judge vote."""
        v = _table(m.JudgeVoteRow)
        with self.engine.connect() as conn:
            return int(
                conn.execute(
                    select(func.count(func.distinct(v.c.claim_id))).where(v.c.run_id == run_id)
                ).scalar_one()
            )

    def answer_label_counts(self, run_id: str) -> list[tuple[str, str | None, int]]:
        """``(answer_id, label, claims)`` of a run under its own panel and stacker (label
        None for claims without such a verdict): one grouped query, for run histories."""
        claims, verdicts = _table(m.ClaimRow), _table(m.VerdictRow)
        with self.engine.connect() as conn:
            panel = self._run_component_or_none(conn, run_id, "panel")
            stacker = self._run_component_or_none(conn, run_id, "stacker")
            on = (verdicts.c.run_id == claims.c.run_id) & (verdicts.c.claim_id == claims.c.claim_id)
            if panel is not None:
                on = on & (verdicts.c.panel_digest == panel)
            if stacker is not None:
                on = on & (verdicts.c.stacker_digest == stacker)
            rows = conn.execute(
                select(claims.c.answer_id, verdicts.c.label, func.count().label("n"))
                .outerjoin(verdicts, on)
                .where(claims.c.run_id == run_id)
                .group_by(claims.c.answer_id, verdicts.c.label)
            ).all()
        return [(str(a), None if label is None else str(label), int(n)) for a, label, n in rows]

    def human_audits(self, run_id: str) -> list[dict[str, Any]]:
        """Every human audit of a run's claims, oldest first."""
        table = _table(m.HumanAuditRow)
        with self.engine.connect() as conn:
            rows = (
                conn.execute(
                    select(table)
                    .where(table.c.run_id == run_id)
                    .order_by(table.c.created_at, table.c.id)
                )
                .mappings()
                .all()
            )
        return [{**dict(r), "created_at": utc(r["created_at"])} for r in rows]

    def claim_labels(self, run_id: str) -> list[tuple[str, str, str | None, float | None]]:
        """``(claim_id, answer_id, label, p_hallucinated)`` of every claim of a run under
        its own panel and stacker (label None without such a verdict), in answer order:
        one query and no JSON decoding, for review queues over large runs."""
        claims, verdicts, answers = (_table(m.ClaimRow), _table(m.VerdictRow), _table(m.AnswerRow))
        with self.engine.connect() as conn:
            panel = self._run_component_or_none(conn, run_id, "panel")
            stacker = self._run_component_or_none(conn, run_id, "stacker")
            on = (verdicts.c.run_id == claims.c.run_id) & (verdicts.c.claim_id == claims.c.claim_id)
            if panel is not None:
                on = on & (verdicts.c.panel_digest == panel)
            if stacker is not None:
                on = on & (verdicts.c.stacker_digest == stacker)
            rows = conn.execute(
                select(
                    claims.c.claim_id,
                    claims.c.answer_id,
                    verdicts.c.label,
                    verdicts.c.p_hallucinated,
                )
                .join(
                    answers,
                    (answers.c.run_id == claims.c.run_id)
                    & (answers.c.answer_id == claims.c.answer_id),
                )
                .outerjoin(verdicts, on)
                .where(claims.c.run_id == run_id)
                .order_by(answers.c.seq, claims.c.seq)
            ).all()
        return [
            (str(c), str(a), None if label is None else str(label), None if p is None else float(p))
            for c, a, label, p in rows
        ]

    def claim_ids(self, run_id: str) -> set[str]:
        """The ids of a run's claims."""
        table = _table(m.ClaimRow)
        with self.engine.connect() as conn:
            return set(
                conn.execute(select(table.c.claim_id).where(table.c.run_id == run_id)).scalars()
            )

    # ------------------------------------------------------------------ freshness
    @_retrying
    def record_run_link(
        self,
        run_id: str,
        parent_run_id: str,
        *,
        relation: str,
        details: Mapping[str, Any] | None = None,
    ) -> None:
        """Record that ``run_id`` derives from ``parent_run_id`` (e.g. ``reaudit``);
        idempotent (an existing link is kept)."""
        self.get_run(run_id)
        self.get_run(parent_run_id)
        with self._tx() as conn:
            self._insert_ignore(
                conn,
                m.RunLinkRow,
                [
                    {
                        "run_id": run_id,
                        "parent_run_id": parent_run_id,
                        "relation": relation,
                        "details": _plain(dict(details or {})),
                        "created_at": _now(),
                    }
                ],
            )

    def run_links(self) -> list[dict[str, Any]]:
        """Every run link ``{run_id, parent_run_id, relation, details, created_at}``,
        oldest first."""
        table = _table(m.RunLinkRow)
        with self.engine.connect() as conn:
            rows = (
                conn.execute(select(table).order_by(table.c.created_at, table.c.run_id))
                .mappings()
                .all()
            )
        return [{**dict(r), "created_at": utc(r["created_at"])} for r in rows]

    @_retrying
    def record_carried(self, run_id: str, carried: Sequence[tuple[str, str, str]]) -> int:
        """Mark claims of ``run_id`` as carried over ``(claim_id, from_run_id, reason)``
        (their votes and verdict were copied, not re-judged); idempotent. Returns how
        many marks were new."""
        table = _table(m.CarriedVerdictRow)
        with self._tx() as conn:
            before = conn.execute(
                select(func.count()).select_from(table).where(table.c.run_id == run_id)
            ).scalar_one()
            now = _now()
            self._insert_ignore(
                conn,
                m.CarriedVerdictRow,
                [
                    {
                        "run_id": run_id,
                        "claim_id": claim_id,
                        "from_run_id": source,
                        "reason": reason,
                        "created_at": now,
                    }
                    for claim_id, source, reason in carried
                ],
            )
            after = conn.execute(
                select(func.count()).select_from(table).where(table.c.run_id == run_id)
            ).scalar_one()
        return int(after) - int(before)

    def carried_claims(self, run_id: str) -> dict[str, dict[str, str]]:
        """The carried claims of a run: claim id -> ``{"from_run_id", "reason"}``."""
        table = _table(m.CarriedVerdictRow)
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(table.c.claim_id, table.c.from_run_id, table.c.reason).where(
                    table.c.run_id == run_id
                )
            ).all()
        return {str(c): {"from_run_id": str(f), "reason": str(r)} for c, f, r in rows}

    def changed_versions(
        self,
        *,
        created_since: datetime | None = None,
        window: tuple[datetime, datetime] | None = None,
    ) -> list[dict[str, Any]]:
        """Document versions (without their text) that were added to the ledger at or
        after ``created_since``, or whose publication (``published_at``, else
        ``valid_from``) or end of validity (``valid_to``) falls in ``window`` =
        ``(after, up_to]``. Indexed range queries; each version once."""
        versions = _table(m.DocumentVersionRow)
        columns = [
            versions.c.doc_id,
            versions.c.digest,
            versions.c.version,
            versions.c.published_at,
            versions.c.valid_from,
            versions.c.valid_to,
            versions.c.created_at,
        ]
        conditions: list[Any] = []
        if created_since is not None:
            conditions.append(versions.c.created_at >= utc(created_since))
        if window is not None:
            lo, hi = utc(window[0]), utc(window[1])
            conditions.append((versions.c.published_at > lo) & (versions.c.published_at <= hi))
            conditions.append(
                versions.c.published_at.is_(None)
                & (versions.c.valid_from > lo)
                & (versions.c.valid_from <= hi)
            )
            conditions.append((versions.c.valid_to > lo) & (versions.c.valid_to <= hi))
        found: dict[tuple[str, str], dict[str, Any]] = {}
        with self.engine.connect() as conn:
            for condition in conditions:  # one indexed range scan each (no OR across them)
                for r in conn.execute(select(*columns).where(condition)).mappings():
                    item = dict(r)
                    for key in ("published_at", "valid_from", "valid_to", "created_at"):
                        item[key] = utc(item[key])
                    found[(item["doc_id"], item["digest"])] = item
        return sorted(found.values(), key=lambda v: (v["doc_id"], v["version"]))

    def document_versions(self, doc_ids: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
        """Every version (without its text) of each of ``doc_ids``, oldest label first."""
        versions = _table(m.DocumentVersionRow)
        out: dict[str, list[dict[str, Any]]] = {}
        with self.engine.connect() as conn:
            for start in range(0, len(doc_ids), 500):
                rows = (
                    conn.execute(
                        select(
                            versions.c.doc_id,
                            versions.c.digest,
                            versions.c.version,
                            versions.c.published_at,
                            versions.c.valid_from,
                            versions.c.valid_to,
                            versions.c.created_at,
                        ).where(versions.c.doc_id.in_(list(doc_ids[start : start + 500])))
                    )
                    .mappings()
                    .all()
                )
                for r in rows:
                    item = dict(r)
                    for key in ("published_at", "valid_from", "valid_to", "created_at"):
                        item[key] = utc(item[key])
                    out.setdefault(item["doc_id"], []).append(item)
        for items in out.values():
            items.sort(
                key=lambda v: (v["created_at"] or datetime.min.replace(tzinfo=UTC), v["version"])
            )
        return out

    def citing_evidence(
        self, doc_ids: Sequence[str], *, run_ids: Sequence[str] | None = None
    ) -> list[dict[str, Any]]:
        """The retrieved (not inline) evidence rows that cite any version of ``doc_ids``
        (of ``run_ids`` only, when given): ``{run_id, claim_id, rank, chunk_id, doc_id,
        version_digest, superseded, score, coverage}``, by run, claim and rank. One
        lookup on the ``(doc_id, version_digest)`` index of ``retrieval`` per 500
        documents, no join (the runs are filtered here, so the index is always used)."""
        retr = _table(m.RetrievalRow)
        keys = (
            "run_id",
            "claim_id",
            "rank",
            "chunk_id",
            "doc_id",
            "version_digest",
            "superseded",
            "score",
            "coverage",
        )
        wanted = set(run_ids) if run_ids is not None else None
        out: list[dict[str, Any]] = []
        with self.engine.connect() as conn:
            for start in range(0, len(doc_ids), 500):
                rows = conn.execute(
                    select(
                        retr.c.run_id,
                        retr.c.claim_id,
                        retr.c.rank,
                        retr.c.chunk_id,
                        retr.c.doc_id,
                        retr.c.version_digest,
                        retr.c.superseded,
                        retr.c.score,
                        retr.c.coverage,
                        retr.c.inline,
                    ).where(retr.c.doc_id.in_(list(doc_ids[start : start + 500])))
                ).all()
                out.extend(
                    dict(zip(keys, row[:-1], strict=True))
                    for row in rows
                    if not row[-1] and (wanted is None or row[0] in wanted)
                )
        out.sort(key=lambda r: (r["run_id"], r["claim_id"], r["rank"]))
        return out

    def claims_of(self, run_id: str, claim_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """``{answer_id, text, answer_as_of}`` of each of ``claim_ids`` in ``run_id``
        (primary-key lookups, 500 at a time)."""
        claims, answers = _table(m.ClaimRow), _table(m.AnswerRow)
        out: dict[str, dict[str, Any]] = {}
        with self.engine.connect() as conn:
            for start in range(0, len(claim_ids), 500):
                rows = conn.execute(
                    select(claims.c.claim_id, claims.c.answer_id, claims.c.text, answers.c.as_of)
                    .join(
                        answers,
                        (answers.c.run_id == claims.c.run_id)
                        & (answers.c.answer_id == claims.c.answer_id),
                    )
                    .where(
                        claims.c.run_id == run_id,
                        claims.c.claim_id.in_(list(claim_ids[start : start + 500])),
                    )
                ).all()
                for claim_id, answer_id, text, as_of in rows:
                    out[str(claim_id)] = {
                        "answer_id": answer_id,
                        "text": text,
                        "answer_as_of": utc(as_of),
                    }
        return out

    def labels_of_claims(self, run_id: str, claim_ids: Sequence[str]) -> dict[str, str]:
        """The label of each of ``claim_ids`` under the run's own panel and stacker
        (claims without such a verdict are left out); chunked primary-key lookups."""
        verdicts = _table(m.VerdictRow)
        out: dict[str, str] = {}
        with self.engine.connect() as conn:
            panel = self._run_component_or_none(conn, run_id, "panel")
            stacker = self._run_component_or_none(conn, run_id, "stacker")
            for start in range(0, len(claim_ids), 500):
                query = select(verdicts.c.claim_id, verdicts.c.label).where(
                    verdicts.c.run_id == run_id,
                    verdicts.c.claim_id.in_(list(claim_ids[start : start + 500])),
                )
                if panel is not None:
                    query = query.where(verdicts.c.panel_digest == panel)
                if stacker is not None:
                    query = query.where(verdicts.c.stacker_digest == stacker)
                out.update({str(c): str(label) for c, label in conn.execute(query)})
        return out

    def versions_chunks(
        self, versions: Sequence[tuple[str, str]]
    ) -> dict[tuple[str, str], list[dict[str, Any]]]:
        """The chunks ``{chunk_id, start, end, text}`` of each ``(doc_id, digest)``
        version, in order (one chunked query on the chunk digest index)."""
        chunks = _table(m.ChunkRow)
        wanted = set(versions)
        digests = sorted({d for _, d in wanted})
        out: dict[tuple[str, str], list[dict[str, Any]]] = {}
        with self.engine.connect() as conn:
            for start in range(0, len(digests), 500):
                rows = (
                    conn.execute(
                        select(
                            chunks.c.chunk_id,
                            chunks.c.doc_id,
                            chunks.c.digest,
                            chunks.c.start,
                            chunks.c.end,
                            chunks.c.text,
                        ).where(chunks.c.digest.in_(digests[start : start + 500]))
                    )
                    .mappings()
                    .all()
                )
                for r in rows:
                    key = (str(r["doc_id"]), str(r["digest"]))
                    if key in wanted:
                        out.setdefault(key, []).append(
                            {k: r[k] for k in ("chunk_id", "start", "end", "text")}
                        )
        for items in out.values():
            items.sort(key=lambda c: c["start"])
        return out

    def chunk_texts(self, chunk_ids: Sequence[str]) -> dict[str, str]:
        """The text of each of ``chunk_ids`` that the ledger holds."""
        chunks = _table(m.ChunkRow)
        out: dict[str, str] = {}
        with self.engine.connect() as conn:
            for start in range(0, len(chunk_ids), 500):
                out.update(
                    {
                        str(c): str(t)
                        for c, t in conn.execute(
                            select(chunks.c.chunk_id, chunks.c.text).where(
                                chunks.c.chunk_id.in_(list(chunk_ids[start : start + 500]))
                            )
                        )
                    }
                )
        return out

    def response_cache(self) -> LedgerResponseCache:
        """The LLM response cache kept in this ledger (``get``/``put`` by key)."""
        return LedgerResponseCache(self)


class LedgerResponseCache:
    """LLM responses keyed on model, prompt digest, parameters and input digest."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    def get(self, key: str) -> str | None:
        table = _table(m.LlmCacheRow)
        with self.ledger.engine.connect() as conn:
            value = conn.execute(select(table.c.response).where(table.c.key == key)).scalar()
        return None if value is None else str(value)

    def put(self, key: str, value: str, meta: Mapping[str, Any]) -> None:
        def write() -> None:
            with self.ledger._tx() as conn:
                self.ledger._insert_ignore(
                    conn,
                    m.LlmCacheRow,
                    [
                        {
                            "key": key,
                            "model": str(meta.get("model", "")),
                            "response": value,
                            "meta": _plain(dict(meta)),
                            "created_at": _now(),
                        }
                    ],
                )

        self.ledger._with_retries(write)


def _sqlite_pragmas(busy_timeout_ms: int) -> Any:
    def on_connect(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
        cursor.close()

    return on_connect


def open_ledger(
    location: str | Path,
    *,
    create: bool = True,
    busy_timeout_s: float = 30.0,
    pool: Mapping[str, int] | None = None,
    retry_attempts: int = DEFAULT_RETRY_ATTEMPTS,
) -> Ledger:
    """Open (and create or upgrade) a ledger: a SQLite file path or a SQLAlchemy URL.

    Refuses, writing nothing, a ledger whose schema is newer than this code, a
    locked or corrupted SQLite file, or (with ``create=False``) a missing file.
    ``busy_timeout_s``: how long SQLite waits for another writer's lock. ``pool``
    overrides :data:`DEFAULT_POOL` (PostgreSQL connection pool: ``pool_size``,
    ``max_overflow``, ``pool_timeout``, ``pool_recycle``); ``retry_attempts``: how
    often a write aborted as a serialisation failure or deadlock is tried.
    """
    if not isinstance(retry_attempts, int) or retry_attempts < 1:
        raise LedgerError(f"retry_attempts: expected a positive integer, got {retry_attempts!r}")
    url = normalise_url(location)
    shown = mask_url(location)
    if url.startswith("sqlite:///") and url != "sqlite:///:memory:":
        path = Path(url.removeprefix("sqlite:///"))
        if not path.exists():
            if not create:
                raise LedgerError(f"{shown}: no ledger at this path")
            path.parent.mkdir(parents=True, exist_ok=True)
    try:
        if url.startswith("sqlite"):
            engine = create_engine(url)
        else:
            engine = create_engine(url, pool_pre_ping=True, **{**DEFAULT_POOL, **(pool or {})})
    except (SQLAlchemyError, ImportError, ValueError) as exc:
        raise LedgerError(f"{shown}: cannot open ledger: {_describe(exc, location)}") from None
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", _sqlite_pragmas(int(busy_timeout_s * 1000)))
    elif engine.dialect.name != "postgresql":
        raise LedgerError(
            f"{shown}: unsupported database {engine.dialect.name!r} (SQLite or PostgreSQL)"
        )
    ledger = Ledger(engine, str(location))
    ledger.retry_attempts = retry_attempts

    def schema() -> None:
        with ledger._tx() as conn:
            ensure_schema(conn, location=shown)

    try:
        ledger._with_retries(schema)
    except LedgerError:
        engine.dispose()
        raise
    except SQLAlchemyError as exc:
        engine.dispose()
        raise LedgerError(f"{shown}: cannot open ledger: {_describe(exc, location)}") from None
    return ledger
