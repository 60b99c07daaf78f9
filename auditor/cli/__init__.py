"""The ``auditor`` command line: a thin layer over the library.

Each feature lives in its own module and registers its commands on :data:`app`.
Domain errors (:class:`auditor.errors.AuditorError`) become one clean line on
stderr and exit status 2; no traceback for user mistakes.
"""

from __future__ import annotations

import sys
from typing import Any

import typer

from auditor.errors import AuditorError
from ledger.errors import LedgerError

app = typer.Typer(
    name="auditor",
    help="Claim-level audit of RAG answers, with a verification ledger.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        from auditor import __version__

        typer.echo(f"rag-auditor {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print the version and exit."),
) -> None:
    """Claim-level audit of RAG answers, with a verification ledger."""


def _register_commands() -> None:
    import importlib

    for module in _COMMAND_MODULES:
        importlib.import_module(f"auditor.cli.{module}")


_COMMAND_MODULES = ("demo", "audit", "index", "claims", "panel", "judge", "spans", "review",
                    "serve")


def command() -> Any:
    """The click command tree of :data:`app`, with placeholders that name what a value is
    (``--db DB``, ``--k K``) instead of its Python type (``<str>``, ``<int>``)."""
    _register_commands()
    root = typer.main.get_command(app)

    def tidy(cmd: Any) -> None:
        for param in cmd.params:
            if getattr(param, "is_flag", False):
                continue
            if param.metavar is None and param.name:
                param.metavar = param.name.upper()
            if param.param_type_name == "argument":  # "ANSWERS", not "{ANSWERS} <path>"
                shown = param.metavar
                vars(param)["display_type_rich"] = lambda ctx: None
                vars(param)["_usage_display_name"] = (
                    lambda shown=shown, p=param: shown if p.required else f"[{shown}]")
        for sub in getattr(cmd, "commands", {}).values():
            tidy(sub)

    tidy(root)
    return root


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``auditor`` console script."""
    try:
        command()(args=argv, standalone_mode=True)
    except (AuditorError, LedgerError) as exc:
        from ledger.url import redact

        typer.echo(f"error: {redact(str(exc))}", err=True)
        sys.exit(2)
    except OSError as exc:
        from auditor.cli._common import os_error_message

        message = os_error_message(exc)
        if message is None:
            raise
        typer.echo(f"error: {message}", err=True)
        sys.exit(2)
