"""Alembic environment for the ledger.

The database URL comes from, in order: ``alembic -x db=URL``, a connection
passed in ``config.attributes["connection"]`` (programmatic upgrades), the
``AUDITOR_DB`` environment variable, or the default SQLite file. SQLite uses
batch mode so that ALTER TABLE operations work.
"""

from __future__ import annotations

import os

from alembic import context
from sqlalchemy import create_engine

from ledger.models import SQLModel
from ledger.url import DEFAULT_DB, normalise_url

config = context.config
target_metadata = SQLModel.metadata


def _url() -> str:
    x_args = context.get_x_argument(as_dictionary=True)
    return normalise_url(x_args.get("db") or os.environ.get("AUDITOR_DB") or DEFAULT_DB)


def run_migrations_offline() -> None:
    url = _url()
    context.configure(
        url=url,
        target_metadata=target_metadata,
        literal_binds=True,
        render_as_batch=url.startswith("sqlite"),
    )
    with context.begin_transaction():
        context.run_migrations()


def _run(connection: object) -> None:
    is_sqlite = connection.dialect.name == "sqlite"  # type: ignore[attr-defined]
    context.configure(
        connection=connection,
        target_metadata=target_metadata,  # type: ignore[arg-type]
        render_as_batch=is_sqlite,
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    engine = create_engine(_url())
    with engine.connect() as conn:
        _run(conn)
    engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
