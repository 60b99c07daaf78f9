"""Every command and subcommand of ``auditor`` is documented in ``docs/commands.md`` (as
sqlite-utils checks its own CLI reference): a command added without its line fails here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from auditor.cli import command

COMMANDS_DOC = Path(__file__).resolve().parents[1] / "docs" / "commands.md"


def _names(group: Any, prefix: str = "") -> list[str]:
    names = []
    for name, sub in getattr(group, "commands", {}).items():
        full = f"{prefix} {name}".strip()
        names += [full, *_names(sub, full)]
    return names


def test_every_command_is_in_the_commands_reference() -> None:
    names = _names(command([]))
    assert {"audit", "import", "review add", "spans score"} <= set(names)
    doc = COMMANDS_DOC.read_text(encoding="utf-8")
    missing = [n for n in names if f"auditor {n}" not in doc and f"`{n}`" not in doc]
    assert not missing, f"docs/commands.md does not mention: {missing}"
