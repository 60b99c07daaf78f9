"""Comparing two audit ledgers row by row (tests that audit the same answers two ways:
batch sizes, engines, a resumed run)."""

from __future__ import annotations

import contextlib
import json
import math
import sqlite3
from pathlib import Path
from typing import Any

VOLATILE = {"created_at", "finished_at", "latency_s"}
"""Columns that differ between any two runs (clock readings), whatever the engine."""


def ledger_rows(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table of a SQLite ledger, sorted, without clock readings."""
    out: dict[str, list[tuple[Any, ...]]] = {}
    conn = sqlite3.connect(db)
    with contextlib.closing(conn):
        tables = [
            r[0]
            for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if r[0] != "alembic_version"
        ]
        for table in tables:
            cols = [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')]
            keep = [c for c in cols if c not in VOLATILE]
            select = ", ".join(f'"{c}"' for c in keep)
            out[table] = sorted(
                conn.execute(f'SELECT {select} FROM "{table}"').fetchall(), key=repr
            )
    return out


def same(a: Any, b: Any) -> bool:
    """Equal, floats to float32 rounding (an embedding computed in another batch, by
    another process, differs in its last bits: the encoder pads a batch to its longest
    text); JSON texts are compared parsed."""
    if isinstance(a, str) and isinstance(b, str) and a != b and a[:1] in "[{":
        try:
            return same(json.loads(a), json.loads(b))
        except ValueError:
            return False
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-6)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)
