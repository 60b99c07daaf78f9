"""JSONL input/output with errors that name the file, line and field."""

from __future__ import annotations

import difflib
import json
import sys
from collections.abc import Collection, Iterable, Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import IO, Any, TypeVar

from auditor.errors import InputError

T = TypeVar("T")


def read_jsonl(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line (1-based numbers).

    Raises :class:`InputError` naming the file and line for a file that is not
    UTF-8, a line that is not JSON, or a line that is not a JSON object. A UTF-8
    byte-order mark at the start of the file is accepted (and skipped).
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise InputError("no such file", file=str(path)) from None
    except IsADirectoryError:
        raise InputError("is a directory, expected a JSONL file", file=str(path)) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", file=str(path)) from None
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    for number, line in enumerate(raw.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(
                f"not valid UTF-8 (byte {exc.start})", file=str(path), line=number
            ) from None
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"malformed JSON: {exc.msg} (column {exc.colno})", file=str(path), line=number
            ) from None
        if not isinstance(obj, dict):
            raise InputError(
                f"expected a JSON object, got {type(obj).__name__}", file=str(path), line=number
            )
        yield number, obj


def check_fields(
    record: Mapping[str, Any],
    known: Collection[str],
    *,
    file: str | Path | None,
    line: int | None,
    where: str = "",
) -> None:
    """Refuse a record with a field not in ``known``, naming it and the closest known one.

    A misspelt optional field (``"publised_at"``) would otherwise be silently
    ignored. ``where`` prefixes the field name in the message (``contexts[0].``).
    """
    for name in record:
        if name in known:
            continue
        close = difflib.get_close_matches(str(name), sorted(known), n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise InputError(
            f"unknown field{hint} (known: {', '.join(sorted(known))})",
            file=_s(file),
            line=line,
            field=f"{where}{name}",
        )


def require(
    record: dict[str, Any],
    field: str,
    kind: type[T] | tuple[type, ...],
    *,
    file: str | Path | None,
    line: int | None,
    optional: bool = False,
) -> Any:
    """Return ``record[field]`` checked against ``kind``; ``None`` if optional and absent."""
    if field not in record or record[field] is None:
        if optional:
            return None
        raise InputError("missing required field", file=_s(file), line=line, field=field)
    value = record[field]
    if isinstance(value, bool) and kind in (int, float, (int, float)):
        raise InputError(f"expected a number, got {value!r}", file=_s(file), line=line, field=field)
    if not isinstance(value, kind):
        expected = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise InputError(
            f"expected {expected}, got {type(value).__name__}",
            file=_s(file),
            line=line,
            field=field,
        )
    return value


def write_jsonl(records: Iterable[dict[str, Any]], out: IO[str] | None = None) -> None:
    """Write one compact JSON object per line (UTF-8 kept)."""
    stream = out if out is not None else sys.stdout
    for record in records:
        stream.write(json.dumps(record, ensure_ascii=False, default=_default) + "\n")


def _default(obj: Any) -> Any:
    if isinstance(obj, datetime):
        return obj.isoformat()
    if isinstance(obj, (set, frozenset, tuple)):
        return list(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def _s(file: str | Path | None) -> str | None:
    return None if file is None else str(file)
