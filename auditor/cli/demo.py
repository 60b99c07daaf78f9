"""Command: ``auditor demo`` (the whole flow on the bundled samples)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from auditor.cli import app
from auditor.cli._common import DEFAULT_DB, DbOption, refuse_memory_ledger


@app.command()
def demo(
    db: DbOption = DEFAULT_DB,
    workdir: Annotated[Path, typer.Option(help="Where the demo index and report files go.")] = Path(
        ".auditor/demo"
    ),
    bootstrap: Annotated[int, typer.Option(help="Bootstrap resamples B.")] = 2000,
) -> None:
    """Ingest the sample corpus, audit the sample answers, print and save a report card."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from auditor.demo import run_demo
    from ledger.url import mask_url

    refuse_memory_ledger(db, "demo")
    from auditor.report.render import print_card
    from ledger import open_ledger

    console = Console(stderr=True, log_path=False)
    started = time.perf_counter()
    with (
        open_ledger(db) as ledger,
        Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
        ) as bar,
    ):
        task = bar.add_task("auditing answers", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        result = run_demo(
            ledger, workdir, status=lambda m: console.log(m), progress=progress, n_boot=bootstrap
        )
    print_card(result.card, Console())
    summary = result.run
    state = (
        "already in the ledger (nothing new written)"
        if summary.reused
        else (f"{summary.answers_written} answers written")
    )
    console.print(f"run {summary.run_id[:12]}: {state}; ledger {mask_url(db)}", markup=False)
    console.print(
        f"report: {result.json_path} and {result.markdown_path} "
        f"({time.perf_counter() - started:.1f} s)"
    )
