"""Benchmark: bulk vote writes to the ledger (votes/s), batched against per-row commits.

Writes ``--n`` (default 100,000) judge votes in one batched transaction
(:meth:`ledger.Ledger.record_votes`: multi-row INSERT ... ON CONFLICT DO NOTHING)
and, as the baseline in the same process, ``--baseline-n`` votes with one
transaction per vote; prints votes/s of each and their ratio. SQLite always
(a temporary file); PostgreSQL too when ``--pg URL`` or ``AUDITOR_TEST_PG_URL`` is
given (a fresh database is created and dropped).

Usage::

    python bench/bench_ledger.py [--n 100000] [--baseline-n 2000] [--pg URL]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from auditor.digest import content_digest, sha256_text
from auditor.types import Component
from ledger import VoteRecord, open_ledger

JUDGES = [
    Component("judge", f"j{i}", "1", content_digest(["bench-judge", i]), {}) for i in range(10)
]


def _votes(n: int, tag: str) -> list[VoteRecord]:
    out = []
    for k in range(n):
        judge = JUDGES[k % len(JUDGES)]
        out.append(
            VoteRecord(
                sha256_text(f"{tag}:{k // len(JUDGES)}"),
                judge.digest,
                judge.name,
                (0.0, 0.5, 1.0)[k % 3],
                '{"why": "bench"}',
                {"support": 0.5},
                0.001,
                None,
            )
        )
    return out


def measure(url: str, n: int, baseline_n: int) -> dict[str, float]:
    """Votes/s for one batched write of ``n`` votes and for ``baseline_n`` single commits."""
    with open_ledger(url) as ledger:
        ledger.record_components(JUDGES)
        votes = _votes(n, "batched")
        t0 = time.perf_counter()
        written = ledger.record_votes("bench-run", votes)
        batched = time.perf_counter() - t0
        assert written == n, (written, n)
        single = _votes(baseline_n, "single")
        t0 = time.perf_counter()
        for v in single:
            ledger.record_votes("bench-run-single", [v])
        per_row = time.perf_counter() - t0
        again = ledger.record_votes("bench-run", votes[:1000])
        assert again == 0
    return {
        "batched_votes_per_s": n / batched,
        "batched_s": batched,
        "per_row_votes_per_s": baseline_n / per_row,
        "ratio": (n / batched) / (baseline_n / per_row),
    }


@contextmanager
def _pg_database(url: str) -> Iterator[str]:
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    admin = create_engine(url, isolation_level="AUTOCOMMIT")
    name = f"auditor_bench_{uuid.uuid4().hex[:10]}"
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield make_url(url).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def _print(name: str, r: dict[str, float], n: int, baseline_n: int) -> None:
    print(
        f"{name}: {n} votes batched in {r['batched_s']:.2f} s = "
        f"{r['batched_votes_per_s']:,.0f} votes/s; baseline one commit per vote "
        f"({baseline_n} votes) {r['per_row_votes_per_s']:,.0f} votes/s; "
        f"ratio {r['ratio']:.0f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--baseline-n", type=int, default=2000)
    parser.add_argument("--pg", default=os.environ.get("AUDITOR_TEST_PG_URL"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        _print(
            "sqlite",
            measure(str(Path(tmp) / "bench.db"), args.n, args.baseline_n),
            args.n,
            args.baseline_n,
        )
    if args.pg:
        with _pg_database(args.pg) as url:
            _print("postgresql", measure(url, args.n, args.baseline_n), args.n, args.baseline_n)
    else:
        print("postgresql: skipped (no --pg URL and no AUDITOR_TEST_PG_URL)")


if __name__ == "__main__":
    main()
