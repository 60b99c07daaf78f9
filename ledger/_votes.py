"""Judge votes (current and superseded evidence) and bridged verdicts of other
panel/stacker versions."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import func, select, true
from sqlalchemy.engine import Connection

from ledger import models as m
from ledger._engine import _now, _plain, _retrying, _table
from ledger._reader_scores import _reader_score_rows
from ledger._runs import RunRepository
from ledger.records import ComponentLike, ReaderScoreRecord, VerdictRecord, VoteRecord


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


class VoteRepository(RunRepository):
    """Judge votes and re-judgings (bridges) of a run's claims."""

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
