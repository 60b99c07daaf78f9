"""Runs and their configuration: component versions, the run row, its components
(roles) and the links between runs."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.engine import Connection

from auditor.clock import utc
from ledger import models as m
from ledger._engine import LedgerCore, _now, _plain, _retrying, _table
from ledger.errors import LedgerError
from ledger.records import ComponentLike, RunInfo


class RunRepository(LedgerCore):
    """Component versions, runs (begin, finish, look up) and run links."""

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
