"""Per-run aggregates for reports and run histories (one grouped query each)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import case, func, select

from auditor.clock import utc
from ledger import models as m
from ledger._engine import _table
from ledger._runs import RunRepository


class ReportRepository(RunRepository):
    """Verdict versions, vote statistics and label counts of a run."""

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
