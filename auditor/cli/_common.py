"""Options shared by several commands."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

DEFAULT_DB = ".auditor/ledger.db"
DEFAULT_INDEX = ".auditor/index"

DbOption = Annotated[
    str,
    typer.Option(
        "--db",
        envvar="AUDITOR_DB",
        help="Ledger: a SQLite file path or a SQLAlchemy URL (env AUDITOR_DB).",
        show_default=True,
    ),
]

IndexOption = Annotated[
    Path,
    typer.Option("--index", envvar="AUDITOR_INDEX",
                 help="Evidence index directory (env AUDITOR_INDEX)."),
]

FormatOption = Annotated[
    str,
    typer.Option("--format", help="Output format.", case_sensitive=False),
]
