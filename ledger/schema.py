"""Schema revisions: upgrade an older ledger, refuse one from the future."""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import inspect, text
from sqlalchemy.engine import Connection

from ledger.errors import LedgerError

if TYPE_CHECKING:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

_LOCK_KEY = 0x6C6564676572  # "ledger": the advisory lock of schema creation/upgrade

HEAD_REVISION = "0010"
"""The newest schema revision, the head of ``migrations/versions`` (``tests/test_ledger.py``
checks it against Alembic's). A ledger already at it is opened with one query and
without importing Alembic (whose import, with Mako and Pygments, every command that
opens a ledger paid); any other ledger goes through Alembic."""


def migrations_dir() -> Path:
    """The Alembic scripts directory: ``migrations/`` at the project root, shipped inside
    the package as ``ledger/migrations`` (found through :mod:`importlib.resources`)."""
    return Path(str(resources.files("ledger").joinpath("migrations")))


@cache
def _script() -> ScriptDirectory:
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(_config())


def _config() -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    return config


def head_revision() -> str:
    """The newest schema revision this code knows."""
    head = _script().get_current_head()
    if head is None:
        raise LedgerError("no schema revisions found in migrations/")
    return head


def current_revision(connection: Connection) -> str | None:
    """The schema revision recorded in the database (None for an empty database)."""
    from alembic.runtime.migration import MigrationContext

    return MigrationContext.configure(connection).get_current_revision()


def _at_head(connection: Connection) -> bool:
    """True when the database records exactly :data:`HEAD_REVISION` (plain SQL)."""
    if not inspect(connection).has_table("alembic_version"):
        return False
    rows = connection.execute(text("SELECT version_num FROM alembic_version")).all()
    return [r[0] for r in rows] == [HEAD_REVISION]


def ensure_schema(connection: Connection, *, location: str) -> None:
    """Upgrade the database to head; refuse (writing nothing) if it is newer than the code.

    On PostgreSQL a transaction-scoped advisory lock serialises processes that open the
    same fresh database at once (only one creates the schema; the others then see it).
    """
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _LOCK_KEY})
    if _at_head(connection):
        return
    current = current_revision(connection)
    head = head_revision()
    if current == head:
        return
    known = {rev.revision for rev in _script().walk_revisions()}
    if current is not None and current not in known:
        raise LedgerError(
            f"{location}: ledger schema revision {current!r} is newer than this version of "
            f"rag-auditor (which knows up to {head!r}); upgrade rag-auditor to open it"
        )
    from alembic import command

    config = _config()
    config.attributes["connection"] = connection
    command.upgrade(config, "head")
