"""Domain errors: user mistakes the CLI turns into clean messages (no traceback)."""

from __future__ import annotations


class AuditorError(Exception):
    """Base class for errors caused by input or configuration, not by a bug."""


class InputError(AuditorError):
    """Bad input: names the file, line and field when they are known."""

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.file = file
        self.line = line
        self.field = field
        where = []
        if file is not None:
            where.append(str(file))
        if line is not None:
            where.append(f"line {line}")
        if field is not None:
            where.append(f"field '{field}'")
        prefix = ", ".join(where)
        super().__init__(f"{prefix}: {message}" if prefix else message)


class ConfigError(AuditorError):
    """A configuration file or component specification is invalid."""
