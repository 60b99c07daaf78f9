"""Which evidence rows a claim's label can rest on (``retrieval.deciding``): the flag the
label step stored, and, for rows stored before it existed (NULL), the relevance rule
applied to their stored values. The one place a reader of the ledger falls back to the
rule (:func:`auditor.decision.stored_deciding`); no query restates it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import select, true
from sqlalchemy.engine import Connection

from ledger import models as m
from ledger._engine import _table

_CHUNK = 500
"""Claim ids per IN list."""


def unflagged_rows(
    conn: Connection, run_id: str, claim_ids: Sequence[str] | None = None
) -> list[dict[str, Any]]:
    """The evidence rows of ``run_id`` (of ``claim_ids`` only, when given) stored without
    a ``deciding`` flag, each with the flag the relevance rule gives it on its stored
    values under the run's recorded policy (``deciding``) and its version's
    ``published_at``; by claim and rank. Nothing is read beyond one indexed query when
    every row carries its flag."""
    retr = _table(m.RetrievalRow)
    missing = retr.c.deciding.is_(None)
    if claim_ids is None:
        if (
            conn.execute(
                select(retr.c.rank).where(retr.c.run_id == run_id, missing).limit(1)
            ).first()
            is None
        ):
            return []
        groups: list[Sequence[str] | None] = [None]
    else:
        groups = [claim_ids[i : i + _CHUNK] for i in range(0, len(claim_ids), _CHUNK)]
    rows: list[dict[str, Any]] = []
    for group in groups:
        rows.extend(_claim_rows(conn, run_id, group))
    if not rows:
        return []
    from auditor.decision import recorded_policy, stored_deciding

    runs = _table(m.RunRow)
    policy = recorded_policy(
        conn.execute(select(runs.c.config).where(runs.c.run_id == run_id)).scalar()
    )
    by_claim: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_claim.setdefault(row["claim_id"], []).append(row)
    out: list[dict[str, Any]] = []
    for claim_rows in by_claim.values():
        first = claim_rows[0]
        flags = stored_deciding(first["claim_text"], first["topic"], claim_rows, policy)
        out.extend(
            {
                "claim_id": r["claim_id"],
                "rank": r["rank"],
                "published_at": r["published_at"],
                "deciding": flag,
            }
            for r, flag in zip(claim_rows, flags, strict=True)
            if r["deciding"] is None
        )
    return out


def _claim_rows(
    conn: Connection, run_id: str, claim_ids: Sequence[str] | None
) -> list[dict[str, Any]]:
    """Every evidence row (with its chunk text, claim text and topic) of the claims of
    ``run_id`` (among ``claim_ids``) that have a row without a flag: the rule reads a
    claim's whole evidence (whether any of it names the claim's subject)."""
    retr, chunks, claims = _table(m.RetrievalRow), _table(m.ChunkRow), _table(m.ClaimRow)
    versions = _table(m.DocumentVersionRow)
    chosen = retr.c.claim_id.in_(list(claim_ids)) if claim_ids is not None else true()
    unflagged = (
        select(retr.c.claim_id)
        .where(retr.c.run_id == run_id, retr.c.deciding.is_(None), chosen)
        .distinct()
    )
    result = conn.execute(
        select(
            retr.c.claim_id,
            retr.c.rank,
            retr.c.score,
            retr.c.sentence_relevance,
            retr.c.coverage,
            retr.c.superseded,
            retr.c.inline,
            retr.c.deciding,
            chunks.c.text,
            claims.c.text.label("claim_text"),
            claims.c.topic,
            versions.c.published_at,
        )
        .join(chunks, chunks.c.chunk_id == retr.c.chunk_id)
        .join(claims, (claims.c.run_id == retr.c.run_id) & (claims.c.claim_id == retr.c.claim_id))
        .join(
            versions,
            (versions.c.digest == retr.c.version_digest) & (versions.c.doc_id == retr.c.doc_id),
        )
        .where(retr.c.run_id == run_id, retr.c.claim_id.in_(unflagged))
        .order_by(retr.c.claim_id, retr.c.rank)
    )
    return [dict(r) for r in result.mappings()]
