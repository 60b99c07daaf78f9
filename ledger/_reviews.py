"""Human audits (reviewer verdicts) and the review queue's per-claim labels."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import select

from auditor.clock import utc
from ledger import models as m
from ledger._engine import _now, _retrying, _table
from ledger._runs import RunRepository


class ReviewRepository(RunRepository):
    """Reviewer verdicts (append-only) and the labels a review queue is built from."""

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
