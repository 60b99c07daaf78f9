"""Fewer passes of the cyclic garbage collector while long-lived objects pile up.

A command loads millions of objects that live as long as the process (modules, the
models, spaCy's vocabulary, the index's versions), and an audit keeps allocating
around them. With CPython's default thresholds ``(700, 10, 10)`` the collector
rescanned all of them in full 8 or 9 times in an audit of 100 answers (2.3 s of its
19 s outside the models, ``bench/audit_overhead.py``). With the first threshold at
:data:`THRESHOLD0` it still runs, on every 20,000 net allocations instead of 700.
Collecting later never changes a result.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

THRESHOLD0 = 20_000
"""Net allocations between two young-generation collections (CPython's default: 700)."""


def collect_less() -> None:
    """Raise the collector's first threshold to :data:`THRESHOLD0` for the rest of the
    process (the command line does this at start-up; never lowers it)."""
    first, *older = gc.get_threshold()
    gc.set_threshold(max(first, THRESHOLD0), *older)


@contextmanager
def collecting_less() -> Iterator[None]:
    """:func:`collect_less` for the block, then the thresholds as they were (a library
    call such as an audit; the collector stays enabled throughout)."""
    before = gc.get_threshold()
    collect_less()
    try:
        yield
    finally:
        gc.set_threshold(*before)
