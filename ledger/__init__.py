"""The verification ledger: SQLModel tables, Alembic migrations and a facade.

This is the only package that imports SQLModel/SQLAlchemy; it never imports
``auditor``.
"""

from ledger.errors import LedgerError
from ledger.records import (
    AnswerResult,
    ClaimRecord,
    ClaimResult,
    ReaderScoreRecord,
    RetrievalRecord,
    RunInfo,
    VerdictRecord,
    VoteRecord,
)
from ledger.store import Ledger, open_ledger
from ledger.url import DEFAULT_DB, normalise_url

__all__ = [
    "DEFAULT_DB",
    "AnswerResult",
    "ClaimRecord",
    "ClaimResult",
    "Ledger",
    "LedgerError",
    "ReaderScoreRecord",
    "RetrievalRecord",
    "RunInfo",
    "VerdictRecord",
    "VoteRecord",
    "normalise_url",
    "open_ledger",
]
