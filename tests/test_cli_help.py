"""Every command has help text, and user mistakes give one clean line, no traceback."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from auditor.cli import _register_commands, app


def _commands() -> list[tuple[str, Any]]:
    """Every (sub)command as (space-separated name, command); groups have ``commands``."""
    _register_commands()
    root = typer.main.get_command(app)
    assert hasattr(root, "commands")
    found: list[tuple[str, Any]] = []

    def walk(prefix: str, group: Any) -> None:
        for name, cmd in group.commands.items():
            found.append((f"{prefix}{name}", cmd))
            if hasattr(cmd, "commands"):
                walk(f"{prefix}{name} ", cmd)

    walk("", root)
    return found


def test_every_command_has_help_text() -> None:
    commands = _commands()
    assert {"demo"} <= {name for name, _ in commands}
    for name, cmd in commands:
        assert (cmd.help or cmd.short_help or "").strip(), f"'{name}' has no help text"
        result = CliRunner().invoke(app, [*name.split(), "--help"])
        assert result.exit_code == 0, f"{name} --help failed: {result.output}"


def test_top_level_help_lists_every_command() -> None:
    result = CliRunner().invoke(app, ["--help"])
    assert result.exit_code == 0
    for name, _ in _commands():
        if " " not in name:
            assert name in result.output


def test_user_errors_are_one_clean_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from auditor.cli import main

    bad = tmp_path / "answers.jsonl"
    bad.write_text('{"id": "a", "answer": "x"}\n{"id": "b"}\n')
    for argv in (["report", "nope", "--db", str(tmp_path / "absent.db")], ["claims", str(bad)]):
        with pytest.raises(SystemExit) as info:
            main(argv)
        assert info.value.code == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and "Traceback" not in err
    assert "line 2" in err and "answer" in err


def test_every_option_and_argument_has_help_and_a_readable_placeholder() -> None:
    """As sqlite-utils checks: no option without help text, and the help never shows a
    Python type placeholder (<bool>, <str>, <int>, <path>)."""
    import re

    from click.testing import CliRunner as ClickRunner

    from auditor.cli import command

    root = command()
    found: list[tuple[str, Any]] = []

    def walk(prefix: list[str], cmd: Any) -> None:
        found.append((" ".join(prefix), cmd))
        for name, sub in getattr(cmd, "commands", {}).items():
            walk([*prefix, name], sub)

    walk([], root)
    assert len(found) > 15
    for name, cmd in found:
        for param in cmd.params:
            if param.name == "help":
                continue
            assert (getattr(param, "help", None) or "").strip(), (
                f"auditor {name}: {param.name} has no help text"
            )
        result = ClickRunner().invoke(root, [*name.split(), "--help"], terminal_width=80)
        assert result.exit_code == 0, result.output
        assert not re.search(r"<(bool|str|int|float|path|list\[\w+\])>", result.output), (
            f"auditor {name} --help shows a type placeholder:\n{result.output}"
        )
        assert all(len(line) <= 80 for line in result.output.splitlines()), name
