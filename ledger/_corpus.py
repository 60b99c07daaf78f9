"""Documents, their versions and chunks, and the evidence rows that cite them."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.engine import Connection

from auditor.clock import utc
from ledger import models as m
from ledger._deciding import unflagged_rows
from ledger._engine import LedgerCore, _now, _retrying, _table
from ledger.records import ChunkLike, DocumentVersionLike


class CorpusRepository(LedgerCore):
    """Documents, versions and chunks (written with a run's evidence or by indexing)."""

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

    def citing_evidence(
        self, doc_ids: Sequence[str], *, run_ids: Sequence[str] | None = None
    ) -> list[dict[str, Any]]:
        """The retrieved (not inline) evidence rows that cite any version of ``doc_ids``
        (of ``run_ids`` only, when given): ``{run_id, claim_id, rank, chunk_id, doc_id,
        version_digest, superseded, score, coverage, deciding}``, by run, claim and rank
        (``deciding``: whether the claim's label can rest on the row, label rule 2 as
        the label step decided it; for rows stored before that flag, the rule on their
        stored values, :mod:`ledger._deciding`). One lookup on the
        ``(doc_id, version_digest)`` index of ``retrieval`` per 500 documents, no join
        (the runs are filtered here, so the index is always used)."""
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
            "deciding",
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
                        retr.c.deciding,
                        retr.c.inline,
                    ).where(retr.c.doc_id.in_(list(doc_ids[start : start + 500])))
                ).all()
                out.extend(
                    dict(zip(keys, row[:-1], strict=True))
                    for row in rows
                    if not row[-1] and (wanted is None or row[0] in wanted)
                )
            unflagged: dict[str, set[str]] = {}
            for r in out:
                if r["deciding"] is None:
                    unflagged.setdefault(r["run_id"], set()).add(r["claim_id"])
            decided = {
                (run_id, d["claim_id"], d["rank"]): bool(d["deciding"])
                for run_id, claim_ids in unflagged.items()
                for d in unflagged_rows(conn, run_id, sorted(claim_ids))
            }
        for r in out:
            if r["deciding"] is None:
                r["deciding"] = decided.get((r["run_id"], r["claim_id"], r["rank"]), False)
            r["deciding"] = bool(r["deciding"])
        out.sort(key=lambda r: (r["run_id"], r["claim_id"], r["rank"]))
        return out
