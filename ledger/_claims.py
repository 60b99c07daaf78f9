"""Answers, their claims, evidence and verdicts: the rows an audit writes per answer,
and the claim-level reads of them."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import case, func, select, true
from sqlalchemy.engine import Connection

from auditor.clock import utc
from ledger import models as m
from ledger._corpus import CorpusRepository
from ledger._deciding import unflagged_rows
from ledger._engine import _now, _plain, _retrying, _table
from ledger._reader_scores import _reader_score_rows
from ledger._runs import RunRepository
from ledger._votes import _vote_model, _vote_row
from ledger.errors import LedgerError
from ledger.records import AnswerResult, ClaimResult


class ClaimRepository(RunRepository, CorpusRepository):
    """Answers, claims, retrieved evidence and verdicts of runs; carried-over claims."""

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
                "origin": dict(result.origin) or None,
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
                "deciding": r.deciding,
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

    def run_answers(self, run_id: str) -> list[dict[str, Any]]:
        """The answers of a run (id, question, answer text, as-of date, origin: ``{}`` when
        none), in input order."""
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
                        table.c.origin,
                    )
                    .where(table.c.run_id == run_id)
                    .order_by(table.c.seq)
                )
                .mappings()
                .all()
            )
        return [{**dict(r), "as_of": utc(r["as_of"]), "origin": r["origin"] or {}} for r in rows]

    def earliest_answer_as_of(self, run_ids: Sequence[str]) -> datetime | None:
        """The earliest own ``as_of`` among the answers of ``run_ids`` (None when none has
        one): one aggregate per run over the answer table's ``run_id`` key prefix."""
        table = _table(m.AnswerRow)
        found: list[datetime] = []
        with self.engine.connect() as conn:
            for run_id in dict.fromkeys(run_ids):
                value = conn.execute(
                    select(func.min(table.c.as_of)).where(table.c.run_id == run_id)
                ).scalar()
                if value is not None:
                    found.append(utc(value))
        return min(found, default=None)

    def claim_ids(self, run_id: str) -> set[str]:
        """The ids of a run's claims."""
        table = _table(m.ClaimRow)
        with self.engine.connect() as conn:
            return set(
                conn.execute(select(table.c.claim_id).where(table.c.run_id == run_id)).scalars()
            )

    def claim_results(
        self,
        run_id: str,
        *,
        panel_digest: str | None = None,
        stacker_digest: str | None = None,
        answer_ids: Sequence[str] | None = None,
    ) -> list[ClaimResult]:
        """Every claim of a run (or of ``answer_ids`` only) with its verdict and evidence
        counts, in answer order.

        Relevant evidence (``n_relevant_evidence``, ``n_dated_relevant_evidence``) is the
        rows the label step flagged ``deciding`` (label rule 2 under the run's policy);
        rows stored before that flag are decided by the rule on their stored values
        (:mod:`ledger._deciding`).

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
            deciding = retr.c.deciding.is_(True)
            evidence = (
                conn.execute(
                    select(
                        retr.c.claim_id,
                        func.count().label("n"),
                        func.sum(case((retr.c.inline, 1), else_=0)).label("n_inline"),
                        func.sum(case((retr.c.superseded, 1), else_=0)).label("n_sup"),
                        func.count(versions.c.published_at).label("n_dated"),
                        func.sum(case((deciding, 1), else_=0)).label("n_rel"),
                        func.sum(
                            case((deciding & versions.c.published_at.is_not(None), 1), else_=0)
                        ).label("n_dated_rel"),
                        func.sum(case((retr.c.deciding.is_(None), 1), else_=0)).label(
                            "n_unflagged"
                        ),
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
            unflagged = [r["claim_id"] for r in evidence if r["n_unflagged"]]
            decided = unflagged_rows(conn, run_id, unflagged) if unflagged else []
        relevant: dict[str, list[bool]] = {}
        for row in decided:
            if row["deciding"]:
                relevant.setdefault(row["claim_id"], []).append(row["published_at"] is not None)
        ev = {r["claim_id"]: r for r in evidence}
        out = []
        for r in rows:
            e = dict(ev.get(r["claim_id"], {}))
            fallback = relevant.get(r["claim_id"], [])
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
                    n_relevant_evidence=int(e.get("n_rel") or 0) + len(fallback),
                    n_dated_relevant_evidence=int(e.get("n_dated_rel") or 0) + sum(fallback),
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
        version (id, label, digest, source, publication date), stored relevance score,
        the superseded/inline flags and ``deciding`` (whether the claim's label can rest
        on the row: the flag the label step stored, or for rows stored before it the
        relevance rule on their stored values, :mod:`ledger._deciding`); with
        ``with_document_text`` also the version's whole text (``doc_text``), enough to
        replay the run's evidence."""
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
            retr.c.deciding,
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
            unflagged = sorted({r["claim_id"] for r in rows if r["deciding"] is None})
            decided = (
                {
                    (d["claim_id"], d["rank"]): bool(d["deciding"])
                    for d in unflagged_rows(conn, run_id, unflagged)
                }
                if unflagged
                else {}
            )
        out: dict[str, list[dict[str, Any]]] = {}
        for r in rows:
            item = dict(r)
            for key in ("published_at", "valid_from", "valid_to"):
                item[key] = utc(item[key])
            if item["deciding"] is None:
                item["deciding"] = decided.get((r["claim_id"], r["rank"]), False)
            item["deciding"] = bool(item["deciding"])
            out.setdefault(r["claim_id"], []).append(item)
        return out

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
