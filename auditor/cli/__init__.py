"""The ``auditor`` command line: a thin layer over the library.

Each feature lives in its own module and registers its commands on :data:`app`.
Domain errors (:class:`auditor.errors.AuditorError`) become one clean line on
stderr and exit status 2; no traceback for user mistakes.

Start-up is kept short: only the module of the command being run is imported (all
of them for ``--help`` or an unknown command), and no module imports the ledger,
models or spaCy at import time, so ``auditor spans score`` never loads SQLAlchemy or
torch.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from auditor.errors import AuditorError

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
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Claim-level audit of RAG answers, with a verification ledger."""


def _register_commands(argv: list[str] | None = None) -> None:
    """Import the command modules: the one that defines ``argv``'s command when known,
    else (help, no command, a command the map does not name) all of them."""
    import importlib

    if argv == ["--version"]:
        return
    command = next((a for a in (argv or []) if not a.startswith("-")), None)
    module = _COMMAND_MODULE.get(command or "")
    if module is not None:
        importlib.import_module(f"auditor.cli.{module}")
        if command in _registered_names():
            return
    for name in _COMMAND_MODULES:
        importlib.import_module(f"auditor.cli.{name}")


def _registered_names() -> set[str]:
    names = {
        info.name or (info.callback.__name__.replace("_", "-") if info.callback else "")
        for info in app.registered_commands
    }
    return names | {info.name or "" for info in app.registered_groups}


_COMMAND_MODULES = (
    "demo",
    "audit",
    "index",
    "claims",
    "panel",
    "judge",
    "spans",
    "review",
    "serve",
    "fresh",
    "importing",
)
_COMMAND_MODULE = {
    "demo": "demo",
    "audit": "audit",
    "runs": "audit",
    "report": "audit",
    "show": "audit",
    "gate": "audit",
    "ingest": "index",
    "search": "index",
    "compact": "index",
    "claims": "claims",
    "calibrate": "panel",
    "judge": "judge",
    "train-judge": "judge",
    "spans": "spans",
    "rejudge": "review",
    "review": "review",
    "serve": "serve",
    "impact": "fresh",
    "reaudit": "fresh",
    "trend": "fresh",
    "import": "importing",
}
"""Where each command is defined (a shortcut: a name missing here loads every module)."""


def _is_domain_error(exc: BaseException) -> bool:
    if isinstance(exc, AuditorError):
        return True
    ledger_errors = sys.modules.get("ledger.errors")  # loaded by any command using the ledger
    return ledger_errors is not None and isinstance(exc, ledger_errors.LedgerError)


def command(argv: list[str] | None = None) -> Any:
    """The click command tree of :data:`app`, with placeholders that name what a value is
    (``--db DB``, ``--k K``) instead of its Python type (``<str>``, ``<int>``). With
    ``argv``, only the module of its command is imported (see :func:`_register_commands`)."""
    _register_commands(argv)
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
                vars(param)["_usage_display_name"] = lambda shown=shown, p=param: (
                    shown if p.required else f"[{shown}]"
                )
        for sub in getattr(cmd, "commands", {}).values():
            tidy(sub)

    tidy(root)
    _plain_coercion(root)
    return root


def _plain_coercion(cmd: Any, parent: Any = None) -> None:
    """Give every plain ``str``, ``bool`` and ``Path`` parameter of ``cmd``'s tree a
    coercion without pydantic.

    Typer (0.2x) converts each value through a pydantic ``TypeAdapter``; importing
    pydantic and building the adapters is about 0.2 s of every command's start-up, for
    values that are already strings. Such a parameter gets :class:`_PlainRuntimeParam`
    instead; every other type, and a typer without this hook, keep typer's own.
    """
    if _PlainRuntimeParam is None:
        return
    # the context the command would get (its help option depends on the settings)
    ctx = cmd.context_class(cmd, parent=parent, **cmd.context_settings)
    help_option = cmd.get_help_option(ctx)  # made once, cached on the command
    for param in [*cmd.params, *([help_option] if help_option is not None else [])]:
        if getattr(param, "_runtime_param", False) is not None:
            continue  # not a typer parameter of this typer version, or already built
        info = param.type_descriptor.parameter_info
        annotation = param.type_descriptor.annotation
        plain_path = (
            isinstance(annotation, type)
            and issubclass(annotation, Path)
            and info.path_type is None
            and info.parser is None
        )
        if (annotation in (str, bool) and info.parser is None) or plain_path:
            param._runtime_param = _PlainRuntimeParam(parameter_info=info, annotation=annotation)
    for sub in getattr(cmd, "commands", {}).values():
        _plain_coercion(sub, ctx)


_PlainRuntimeParam: Any = None
try:  # typer's coercion hook (typer >= 0.2x): already imported by typer itself
    from typer._coercion import RuntimeParam, build_runtime_param
    from typer._param_types import coerce_cli_path

    class _PlainRuntimeParamImpl(RuntimeParam):
        """A ``str`` or ``bool`` value of that type as it is; a ``Path`` built from the
        string and checked by typer's own path checks (``exists=``, ``dir_okay=``...);
        anything else (a flag's value from an environment variable...) through typer's
        pydantic coercion, as without this class."""

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            if self.annotation in (str, bool):
                if type(value) is self.annotation:
                    return value
            elif isinstance(value, (str, self.annotation)):  # a path or a Path default
                path_type = self.annotation
                return coerce_cli_path(
                    value if isinstance(value, path_type) else path_type(value),
                    self.parameter_info,
                    path_type=path_type,
                    param=param,
                    ctx=ctx,
                )
            return build_runtime_param(param.type_descriptor)._coerce_value(
                value, param=param, ctx=ctx
            )

    _PlainRuntimeParam = _PlainRuntimeParamImpl
except ImportError:  # pragma: no cover - an older or newer typer: its own coercion
    pass


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``auditor`` console script."""
    from auditor.gctune import collect_less
    from auditor.progress import end_open_line, quiet_third_party

    collect_less()  # start-up allocates millions of long-lived objects (auditor.gctune)
    quiet_third_party()  # no model-loading bars or advisory lines from libraries
    try:
        command(sys.argv[1:] if argv is None else argv)(args=argv, standalone_mode=True)
    except Exception as exc:
        end_open_line()
        if _is_domain_error(exc):
            from ledger.url import redact

            typer.echo(f"error: {redact(str(exc))}", err=True)
            sys.exit(2)
        if not isinstance(exc, OSError):
            raise
        from auditor.cli._common import os_error_message

        message = os_error_message(exc)
        if message is None:
            raise
        typer.echo(f"error: {message}", err=True)
        sys.exit(2)
