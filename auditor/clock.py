"""The one clock: every date the auditor reads is parsed, normalised to UTC and defaulted
here.

- :func:`parse_datetime` reads an ISO-8601 date or datetime (input files, flags, stored
  values); errors name the file, line and field.
- :func:`utc` normalises a datetime to UTC: a timezone-less one means UTC.
- :func:`default_as_of` is the one default audit date of every command and of the Python
  API: **the start (00:00 UTC) of the current UTC day**. It is day-granular, so the same
  answers audited twice on one day get the same date, hence the same run id (the second
  audit resumes or reuses the first).
- :func:`answer_as_of` is the one rule for a claim's date: its answer's own ``as_of`` wins
  over the run's date, unless the caller overrides answer dates (``reaudit
  --override-answer-dates``).
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time
from pathlib import Path
from typing import Any, overload

from auditor.errors import InputError

DEFAULT_AS_OF_RULE = "today, 00:00 UTC"
"""How :func:`default_as_of` is worded in help texts and messages."""


def now() -> datetime:
    """The current time in UTC (the one place the auditor reads the wall clock for dates)."""
    return datetime.now(UTC)


def default_as_of() -> datetime:
    """The default audit date: the start (00:00 UTC) of the current UTC day."""
    today = now()
    return datetime(today.year, today.month, today.day, tzinfo=UTC)


@overload
def utc(value: datetime) -> datetime: ...
@overload
def utc(value: None) -> None: ...
@overload
def utc(value: datetime | None) -> datetime | None: ...
def utc(value: datetime | None) -> datetime | None:
    """``value`` in UTC; a timezone-less datetime means UTC. ``None`` stays ``None``."""
    if value is None:
        return None
    if not isinstance(value, datetime):
        raise TypeError(f"expected a datetime, got {type(value).__name__}")
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def parse_datetime(
    value: Any,
    *,
    file: str | Path | None = None,
    line: int | None = None,
    field: str | None = None,
) -> datetime | None:
    """Parse an ISO-8601 date or datetime; timezone-less means UTC. ``None`` (and ``""``)
    stay ``None``; a datetime is normalised to UTC, a date (a YAML front-matter date)
    is its 00:00 UTC. Anything else is an :class:`~auditor.errors.InputError` naming
    ``file``, ``line`` and ``field``."""
    if value is None or value == "":
        return None
    name = None if file is None else str(file)
    if isinstance(value, datetime):
        return utc(value)
    if isinstance(value, date):
        return datetime.combine(value, time(), tzinfo=UTC)
    if not isinstance(value, str):
        raise InputError(
            f"expected an ISO-8601 date string, got {type(value).__name__}",
            file=name,
            line=line,
            field=field,
        )
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise InputError(
            f"not an ISO-8601 date: {value!r}", file=name, line=line, field=field
        ) from None
    return utc(parsed)


def as_of_or_default(value: Any, *, field: str = "as_of") -> datetime:
    """``value`` parsed (see :func:`parse_datetime`), else :func:`default_as_of`."""
    parsed = parse_datetime(value, field=field)
    return parsed if parsed is not None else default_as_of()


def answer_as_of(
    own: datetime | None, run_as_of: datetime | None, *, override: bool = False
) -> datetime | None:
    """The date a claim is audited as of: its answer's own ``as_of`` when it has one
    (unless ``override``), else the run's."""
    return run_as_of if override or own is None else own
