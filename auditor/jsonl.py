"""JSONL input/output with errors that name the file, line and field.

A file with bad lines is refused whole, with every bad line named (the first
:data:`MAX_REPORTED`, and how many there are): :func:`read_jsonl` checks every line
before it yields one, and a loader that validates records collects its errors line by
line in a :class:`BadLines` and raises them together (:class:`InputErrors`) before it
returns anything, so no command writes anything from a file that has a bad line.
"""

from __future__ import annotations

import difflib
import heapq
import json
import sys
from collections.abc import Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import IO, Any, TypeVar

from auditor.errors import InputError

T = TypeVar("T")

MAX_REPORTED = 20
"""Bad lines of one file named in its error (the count says how many there are)."""


class InputErrors(InputError):
    """Several bad lines of one file: ``errors`` (each an :class:`InputError` naming its
    line and field; the first :data:`MAX_REPORTED`) and ``total``, how many there are.
    ``line`` and ``field`` are the first error's; the message lists every one kept."""

    def __init__(self, file: str | None, errors: list[InputError], total: int) -> None:
        self.errors = errors
        self.total = total
        first = errors[0]
        noun = "line" if total == 1 else "lines"
        head = f"{file}: {total} bad {noun}" if file is not None else f"{total} bad {noun}"
        if total > len(errors):
            head += f" (the first {len(errors)} below)"
        body = [f"  {_without_file(e, file)}" for e in errors]
        if total > len(errors):
            body.append(f"  ... and {total - len(errors)} more")
        Exception.__init__(self, "\n".join([head + ":", *body]))
        self.file, self.line, self.field = file, first.line, first.field


def _without_file(error: InputError, file: str | None) -> str:
    text = str(error)
    prefix = f"{file}, " if file is not None else ""
    if prefix and text.startswith(prefix):
        return text[len(prefix) :]
    if file is not None and text.startswith(f"{file}: "):
        return text[len(file) + 2 :]
    return text


class BadLines:
    """The bad lines of one file, collected while it is read, raised together by
    :meth:`check` (one :class:`InputError` as it is; several as :class:`InputErrors`,
    by line number: the first ``cap`` lines of the file that are bad, and the count).

    ``with bad.collect(): ...`` (around the reading of one line) records an
    :class:`InputError` raised inside and goes on after the block."""

    def __init__(self, file: str | Path | None, *, cap: int = MAX_REPORTED) -> None:
        self.file = None if file is None else str(file)
        self.cap = cap
        self.total = 0
        self._kept: list[tuple[int, int, InputError]] = []  # a heap: the first lines kept

    @property
    def errors(self) -> list[InputError]:
        """The errors kept (at most ``cap``), by line number."""
        return [e for _, _, e in sorted(self._kept, key=lambda t: (-t[0], t[1]))]

    def add(self, error: InputError) -> None:
        if isinstance(error, InputErrors):
            self.total += error.total - len(error.errors)
            for e in error.errors:
                self.add(e)
            return
        self.total += 1
        item = (-(error.line or 0), self.total, error)  # max-heap on the line number
        if len(self._kept) < self.cap:
            heapq.heappush(self._kept, item)
        elif item[0] > self._kept[0][0]:
            heapq.heapreplace(self._kept, item)

    @contextmanager
    def collect(self) -> Iterator[None]:
        try:
            yield
        except InputError as exc:
            self.add(exc)

    def __bool__(self) -> bool:
        return self.total > 0

    def check(self) -> None:
        """Raise what was collected: nothing when every line was good."""
        if not self.total:
            return
        errors = self.errors
        if self.total == 1:
            raise errors[0]
        raise InputErrors(self.file, errors, self.total)


def read_jsonl(
    path: str | Path, *, bad: BadLines | None = None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line (1-based numbers).

    A file that is not UTF-8, a line that is not JSON or not a JSON object is an
    :class:`InputError` naming the file and line. Every line is checked before the
    first is yielded, and every bad one is named (:class:`InputErrors`). With ``bad``,
    a bad line is recorded there instead and skipped, for a loader that goes on to
    validate the records and raise every error of the file together
    (:meth:`BadLines.check`). A UTF-8 byte-order mark at the start of the file is
    accepted (and skipped).
    """
    own = bad is None
    found = BadLines(path) if bad is None else bad
    records = list(_parse_lines(path, found))
    if own:
        found.check()
    yield from records


def _parse_lines(path: str | Path, bad: BadLines) -> Iterator[tuple[int, dict[str, Any]]]:
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
            bad.add(InputError(f"not valid UTF-8 (byte {exc.start})", file=str(path), line=number))
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            bad.add(
                InputError(
                    f"malformed JSON: {exc.msg} (column {exc.colno})", file=str(path), line=number
                )
            )
            continue
        if not isinstance(obj, dict):
            bad.add(
                InputError(
                    f"expected a JSON object, got {type(obj).__name__}",
                    file=str(path),
                    line=number,
                )
            )
            continue
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
