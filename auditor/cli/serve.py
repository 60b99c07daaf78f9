"""Command: ``auditor serve`` (the review application in the browser)."""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path
from typing import Annotated

import typer

from auditor.cli import app
from auditor.cli._common import DEFAULT_DB, DbOption
from auditor.errors import InputError


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or ``localhost``) only listens on this machine."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def server_token(host: str, token_env: str | None) -> str | None:
    """The token a server on ``host`` requires: the value of the variable ``token_env``
    names; an error when that variable is unset or empty, or when ``host`` is not a
    loopback address and no variable is named (the server refuses to start)."""
    if token_env is None:
        if not is_loopback(host):
            raise InputError(
                f"listening on {host!r} needs a token: put one in an "
                "environment variable and name it with --token-env VAR",
                field="--token-env",
            )
        return None
    token = os.environ.get(token_env, "")
    if not token.strip():
        raise InputError(
            f"the environment variable {token_env!r} is unset or empty", field="--token-env"
        )
    if len(token.strip()) < 16:
        raise InputError(
            f"the token in {token_env!r} is shorter than 16 characters", field="--token-env"
        )
    return token.strip()


@app.command()
def serve(
    db: DbOption = DEFAULT_DB,
    host: Annotated[
        str,
        typer.Option(
            help="Address to listen on (any address but a loopback one needs --token-env)."
        ),
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8765,
    token_env: Annotated[
        str | None,
        typer.Option(
            "--token-env",
            help="Name of the environment variable holding the token every "
            "request must carry (Authorization: Bearer, or open a page "
            "once with ?token=...).",
        ),
    ] = None,
    bootstrap: Annotated[int, typer.Option(help="Bootstrap resamples B of the figures.")] = 2000,
    per_page: Annotated[int, typer.Option(help="Claims per page of the review queue.")] = 20,
    index: Annotated[
        Path | None,
        typer.Option(
            help="Evidence index that live checks (POST /api/check) search besides the "
            "answer's contexts (default: the contexts only)."
        ),
    ] = None,
    warm_checks: Annotated[
        bool,
        typer.Option(help="Load the live check's models at start-up, not on the first check."),
    ] = False,
) -> None:
    """Serve the review application: runs, report cards, the review queue and agreement.

    Reviews are human audits appended to the ledger (the rows of `auditor review add`);
    the JSON API is under /api/, with live checks of single answers at POST /api/check.
    Stop with Ctrl-C or SIGTERM (checks queued for the ledger are written first).
    """
    if not 0 < port < 65536:
        raise InputError(f"must be between 1 and 65535, got {port}", field="--port")
    if bootstrap < 1:
        raise InputError(f"must be >= 1, got {bootstrap}", field="--bootstrap")
    if per_page < 1:
        raise InputError(f"must be >= 1, got {per_page}", field="--per-page")
    if index is not None and not index.is_dir():
        raise InputError(f"no evidence index at {index}", field="--index")
    token = server_token(host, token_env)
    import uvicorn

    from auditor.web import create_app

    application = create_app(
        db,
        token=token,
        n_boot=bootstrap,
        per_page=per_page,
        index=index,
        warm_checks=warm_checks,
    )
    shown = f"[{host}]" if ":" in host else host
    typer.echo(
        f"serving the ledger {db} at http://{shown}:{port}/"
        + (" (token required)" if token else "")
        + "  (Ctrl-C to stop)",
        err=True,
    )
    uvicorn.run(
        application,
        host=host,
        port=port,
        log_level="warning",
        server_header=False,
        proxy_headers=False,
    )
