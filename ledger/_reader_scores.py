"""Entailment reader scores stored with a run."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import select

from ledger import models as m
from ledger._engine import LedgerCore, _table
from ledger.records import ReaderScoreRecord


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


class ReaderScoreRepository(LedgerCore):
    """The ``reader_score`` rows of runs (written with answers or bridges)."""

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
