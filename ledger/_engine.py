"""The ledger's shared plumbing: engine, transactions, conflict retries, batched inserts.

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
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Self, TypeVar

from sqlalchemy import Table, create_engine, event, func, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DatabaseError, DBAPIError, OperationalError, SQLAlchemyError

from ledger import models as m
from ledger.errors import LedgerError
from ledger.url import mask_url, normalise_url, redact

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
    def wrapper(self: LedgerCore, *args: Any, **kwargs: Any) -> _T:
        return self._with_retries(lambda: method(self, *args, **kwargs))

    return wrapper


def _now() -> datetime:
    return datetime.now(UTC)


def _plain(value: Any) -> Any:
    """A JSON-safe copy (datetimes and other objects become strings)."""
    return json.loads(json.dumps(value, default=str))


def _table(model: type[Any]) -> Table:
    return model.__table__  # type: ignore[no-any-return,unused-ignore]


def _describe(exc: BaseException, *locations: str | Path) -> str:
    """The first line of a database error, with any secret of ``locations`` masked."""
    text = str(getattr(exc, "orig", exc)) or type(exc).__name__
    return redact(text.splitlines()[0], *locations)


class LedgerCore:
    """A connection to one ledger database (SQLite file or PostgreSQL): the engine,
    transactions re-run on conflicts and batched idempotent inserts, which every
    repository of :class:`ledger.store.Ledger` builds on."""

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

    def __enter__(self) -> Self:
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

    def count(self, table: str) -> int:
        """Number of rows in a ledger table (for checks and reports)."""
        tables = {t.name: t for t in m.SQLModel.metadata.sorted_tables}
        if table not in tables:
            raise LedgerError(f"unknown table {table!r}")
        with self.engine.connect() as conn:
            return int(conn.execute(select(func.count()).select_from(tables[table])).scalar_one())


def _sqlite_pragmas(busy_timeout_ms: int) -> Any:
    def on_connect(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
        cursor.close()

    return on_connect


def open_engine(
    location: str | Path, *, create: bool, busy_timeout_s: float, pool: Mapping[str, int] | None
) -> Engine:
    """The engine of a ledger location (a SQLite file path or a SQLAlchemy URL), with
    SQLite's pragmas set on every connection; see :func:`ledger.store.open_ledger`."""
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
    return engine
