"""Options shared by several commands."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Annotated

import typer

from auditor.locations import DEFAULT_INDEX as DEFAULT_INDEX
from auditor.locations import DEFAULT_LEDGER

DEFAULT_DB = DEFAULT_LEDGER
"""The ``--db`` default (:data:`auditor.locations.DEFAULT_LEDGER`)."""

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
    typer.Option(
        "--index", envvar="AUDITOR_INDEX", help="Evidence index directory (env AUDITOR_INDEX)."
    ),
]

FormatOption = Annotated[
    str,
    typer.Option("--format", help="Output format.", case_sensitive=False),
]


_CLEAN_ERRNOS = {
    errno.ENOSPC: "no space left on device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EROFS: "read-only file system",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EFBIG: "file too large",
    errno.EIO: "input/output error",
}


def os_error_message(exc: OSError) -> str | None:
    """A one-line message for an operating-system failure the user can fix (disk full,
    quota, read-only or unwritable location), or ``None`` for anything else.

    The writers this CLI calls are atomic (a temporary file or folder renamed into
    place, one transaction per ledger unit), so such a failure leaves earlier
    results as they were; the message says so.
    """
    reason = _CLEAN_ERRNOS.get(exc.errno or -1)
    if reason is None:
        return None
    where = f"{exc.filename}: " if exc.filename else ""
    from ledger.url import redact

    return redact(
        f"{where}{reason} (nothing was half-written; free space or choose "
        "another location and run it again)"
    )


def refuse_memory_ledger(db: str, command: str) -> None:
    """Refuse an in-memory ledger for a command that writes a run: it would report a
    complete run and keep nothing. Call at the start of ``audit``, ``rejudge``,
    ``demo`` and ``review add``."""
    from auditor.errors import AuditorError

    text = str(db).strip()
    if text in (":memory:", "sqlite://", "sqlite:///:memory:") or (
        text.startswith("sqlite") and "mode=memory" in text
    ):
        raise AuditorError(
            f"--db {text}: an in-memory ledger keeps nothing once "
            f"`auditor {command}` exits; give a file path or a database URL"
        )


MIN_WRITE_PREFIX = 6
"""Shortest id prefix accepted by commands that write (``review add``)."""


def require_write_prefix(prefix: str, what: str) -> None:
    """Refuse an id prefix shorter than :data:`MIN_WRITE_PREFIX` for a command that
    writes to the append-only ledger (a typo would write to the wrong record)."""
    from auditor.errors import AuditorError

    if len(prefix.strip()) < MIN_WRITE_PREFIX:
        raise AuditorError(
            f"{what} {prefix!r}: give at least {MIN_WRITE_PREFIX} characters "
            "of the id for a command that writes (the ledger is append-only)"
        )


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that a failure (disk full) leaves the old file, or
    none, never a partial one: a temporary file beside it, fsynced, renamed over it.
    ``auditor report --out`` should write through this."""
    import tempfile

    path = Path(path)
    data = text.encode("utf-8")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or ".")
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
        os.close(fd)
        fd = -1
        os.replace(tmp, path)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        Path(tmp).unlink(missing_ok=True)
        raise


QuietOption = Annotated[bool, typer.Option("--quiet", help="No progress on stderr.")]

ShowProgressOption = Annotated[
    bool,
    typer.Option(
        "--progress",
        help="Progress on stderr even when it is not a terminal (one line every 10 s).",
    ),
]
