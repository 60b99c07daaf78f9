"""Ledger errors (user-facing: the CLI prints them without a traceback)."""


class LedgerError(Exception):
    """The ledger cannot be opened or used: newer schema, locked, corrupted, unknown run."""
