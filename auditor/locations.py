"""Where the ledger and the evidence index live when nothing says otherwise: one default
for the library, the CLI and the pytest gate."""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_LEDGER = ".auditor/ledger.db"
"""Where the ledger lives when neither ``db`` nor ``$AUDITOR_DB`` says otherwise."""
DEFAULT_INDEX = ".auditor/index"
"""Where the evidence index lives when neither ``index`` nor ``$AUDITOR_INDEX`` says."""


def ledger_location(db: str | Path | None = None) -> str | Path:
    """``db``, else ``$AUDITOR_DB``, else :data:`DEFAULT_LEDGER`."""
    return db if db else os.environ.get("AUDITOR_DB", DEFAULT_LEDGER)


def index_location(index: str | Path | None = None) -> str | Path:
    """``index``, else ``$AUDITOR_INDEX``, else :data:`DEFAULT_INDEX`."""
    return index if index is not None else os.environ.get("AUDITOR_INDEX", DEFAULT_INDEX)
