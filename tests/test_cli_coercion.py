"""The CLI's pydantic-free coercion of plain ``str``/``bool``/``Path`` parameters
(:func:`auditor.cli._plain_coercion`) gives the same values and the same errors as
typer's own, and keeps pydantic out of a command's start-up."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Annotated, Any

import pytest
import typer

from auditor.cli import _plain_coercion


def _app() -> typer.Typer:
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)

    @app.command()
    def run(
        name: Annotated[str, typer.Option("--name")] = "x",
        path: Annotated[Path, typer.Option("--path")] = Path("default"),
        must_exist: Annotated[
            Path | None, typer.Option("--must-exist", exists=True, dir_okay=False)
        ] = None,
        count: Annotated[int, typer.Option("--count")] = 1,
        flag: Annotated[bool, typer.Option("--flag", envvar="T_FLAG")] = False,
    ) -> None:
        typer.echo(repr((name, path, must_exist, count, flag)))

    @app.command()
    def other() -> None:
        """A second command, so the app is a group."""

    return app


def _invoke(
    args: list[str], plain: bool, capsys: pytest.CaptureFixture[str]
) -> tuple[int | str | None, str, str]:
    """Exit code, stdout and stderr of the test app (a fresh one, so nothing is cached)."""
    cmd = typer.main.get_command(_app())
    if plain:
        _plain_coercion(cmd)
    with pytest.raises(SystemExit) as exc:
        cmd.main(args, prog_name="t", standalone_mode=True)
    out = capsys.readouterr()
    return exc.value.code, out.out, out.err


@pytest.mark.parametrize(
    ("args", "env"),
    [
        (["run"], None),
        (["run", "--name", "abc", "--path", "some/where", "--count", "3", "--flag"], None),
        (["run", "--must-exist", "{here}"], None),
        (["run", "--must-exist", "{missing}"], None),
        (["run", "--must-exist", "{folder}"], None),
        (["run", "--count", "three"], None),
        (["run"], {"T_FLAG": "true"}),
        (["run"], {"T_FLAG": "maybe"}),
        (["run", "--help"], None),
        (["--help"], None),
    ],
)
def test_same_values_and_errors_as_typers_own_coercion(
    tmp_path: Path,
    args: list[str],
    env: dict[str, str] | None,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    here = tmp_path / "here.txt"
    here.write_text("x", encoding="utf-8")
    names: dict[str, Any] = {"here": here, "missing": tmp_path / "no", "folder": tmp_path}
    args = [a.format(**names) for a in args]
    for key, value in (env or {}).items():
        monkeypatch.setenv(key, value)
    plain = _invoke(args, True, capsys)
    assert plain == _invoke(args, False, capsys)
    assert plain[1] or plain[2]  # it did print something (values, help or an error)


def test_plain_params_get_the_plain_coercion_others_keep_typers() -> None:
    cmd = typer.main.get_command(_app())
    _plain_coercion(cmd)
    run = cmd.commands["run"]  # type: ignore[attr-defined]
    kinds = {p.name: type(p._runtime_param).__name__ for p in run.params}
    plain = {kinds[k] for k in ("name", "path", "must_exist", "flag")}
    assert plain == {"_PlainRuntimeParamImpl"}
    assert kinds["count"] == "NoneType"  # built by typer (pydantic) when first used


def test_spans_score_starts_without_pydantic(tmp_path: Path) -> None:
    gold = tmp_path / "g.jsonl"
    gold.write_text('{"id": "a", "spans": [[0, 2]]}\n', encoding="utf-8")
    code = (
        "import sys\nfrom auditor.cli import main\n"
        "try:\n    main(['spans', 'score', '--gold', sys.argv[1], '--pred', sys.argv[1]])\n"
        "except SystemExit:\n    pass\n"
        "print('PYDANTIC', 'pydantic' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(gold)], capture_output=True, text=True, check=True
    ).stdout
    assert "PYDANTIC False" in out, out


def test_path_and_str_defaults_need_no_pydantic() -> None:
    code = """
import sys
from pathlib import Path
from typing import Annotated
import typer
from auditor.cli import _plain_coercion

app = typer.Typer(add_completion=False)

@app.command()
def run(
    name: Annotated[str, typer.Option("--name")] = "x",
    path: Annotated[Path, typer.Option("--path")] = Path("default"),
    flag: Annotated[bool, typer.Option("--flag")] = False,
) -> None:
    print(repr((name, path, flag)))

cmd = typer.main.get_command(app)
_plain_coercion(cmd)
try:
    cmd.main([], prog_name="t")
except SystemExit:
    pass
print("PYDANTIC", "pydantic" in sys.modules)
"""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert "('x', PosixPath('default'), False)" in out, out
    assert "PYDANTIC False" in out, out
