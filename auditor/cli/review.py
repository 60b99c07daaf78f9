"""Commands: ``rejudge`` (judge bridging) and ``review`` (human audits: add, import, list)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from auditor.cli import app
from auditor.cli._common import (
    DEFAULT_DB,
    DbOption,
    refuse_memory_ledger,
    require_write_prefix,
)
from auditor.errors import InputError

review_app = typer.Typer(
    help="Human audits: append reviewer verdicts on claims (never edited), list them.",
    no_args_is_help=True,
)
app.add_typer(review_app, name="review")


@app.command()
def rejudge(
    run: Annotated[str, typer.Argument(help="Run id (or a unique prefix).")],
    panel: Annotated[Path, typer.Option(help="The new panel's TOML config.")],
    stacker: Annotated[
        Path | None,
        typer.Option(
            help="Stacker JSON fitted for the new panel (default: the shipped one, which only "
            "fits the default panel)."
        ),
    ] = None,
    db: DbOption = DEFAULT_DB,
    fmt: Annotated[str, typer.Option("--format", help="table or json.")] = "table",
    bootstrap: Annotated[int, typer.Option(help="Bootstrap resamples B for kappa.")] = 2000,
    seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = 0,
) -> None:
    """Re-judge a run's claims with another panel on the same stored evidence.

    New votes and verdicts are stored beside the old ones (never overwritten); prints the
    agreement between old and new labels. Running the same bridge again adds nothing.
    """
    from auditor import Auditor
    from auditor.judges.panel import load_panel
    from auditor.stacking.model import load_stacker
    from ledger import open_ledger

    if fmt not in ("table", "json"):
        raise InputError(f"unsupported format {fmt!r} (table, json)", field="--format")
    refuse_memory_ledger(db, "rejudge")
    new_panel = load_panel(panel)
    new_stacker = load_stacker(stacker)
    require_write_prefix(run, "run id prefix")
    with (
        open_ledger(db, create=False) as ledger,
        Auditor(db=ledger, panel=new_panel, stacker=new_stacker) as auditor,
    ):
        run_id = auditor.run_id(run)
        result = auditor.rejudge(run_id, n_boot=bootstrap, seed=seed)
    if fmt == "json":
        sys.stdout.write(json.dumps(result.to_dict(), indent=2, default=str) + "\n")
        return
    from auditor.report.full import agreement_markdown

    console = Console()
    state = (
        "already bridged: nothing new written"
        if result.reused
        else f"{result.votes_written} votes and {result.verdicts_written} verdicts written"
    )
    console.print(
        f"run {run_id[:12]}: panel {result.old_panel[:12]} -> {result.new_panel[:12]}"
        f", stacker {result.old_stacker[:12]} -> {result.new_stacker[:12]}; {state}"
    )
    console.print(
        "\n".join(agreement_markdown("Old labels (rows) against new labels", result.agreement)),
        markup=False,
    )


@review_app.command("add")
def review_add(
    run: Annotated[str, typer.Argument(help="Run id (or a unique prefix).")],
    claim: Annotated[str, typer.Argument(help="Claim id (or a unique prefix).")],
    label: Annotated[
        str,
        typer.Option(
            help="supported, contradicted, not_supported, stale, "
            "hallucinated, unknown or not_factual."
        ),
    ],
    reviewer: Annotated[str, typer.Option(help="Who reviewed the claim.")],
    note: Annotated[str | None, typer.Option(help="Free-text note.")] = None,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Append one reviewer verdict on a claim (append-only; the auditor's verdict stays)."""
    from auditor.human_audit import HumanAudit, add_audits
    from ledger import open_ledger

    refuse_memory_ledger(db, "review add")
    require_write_prefix(run, "run id prefix")
    require_write_prefix(claim, "claim id prefix")
    with open_ledger(db, create=False) as ledger:
        added = add_audits(ledger, [HumanAudit(run, claim, reviewer, label, note)])
    typer.echo(f"{added} audit added" if added else "already recorded: nothing added")


@review_app.command("import")
def review_import(
    file: Annotated[
        Path, typer.Argument(help="JSONL: {run_id?, claim_id, label, reviewer, note?} per line.")
    ],
    run: Annotated[str | None, typer.Option(help="Run for lines without run_id.")] = None,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Append reviewer verdicts from a JSONL file; nothing is written if any line is bad."""
    from auditor.human_audit import import_audits
    from ledger import open_ledger

    refuse_memory_ledger(db, "review import")
    from auditor.human_audit import read_audits

    if not read_audits(file, run=run):  # every bad line named, before the ledger is opened
        raise InputError("no audits (the file is empty)", file=str(file))
    with open_ledger(db, create=False) as ledger:
        added = import_audits(ledger, file, run=run)
    typer.echo(f"{added} audits added")


@review_app.command("list")
def review_list(
    run: Annotated[str, typer.Argument(help="Run id (or a unique prefix).")],
    db: DbOption = DEFAULT_DB,
    fmt: Annotated[str, typer.Option("--format", help="table or json.")] = "table",
) -> None:
    """List a run's human audits, oldest first, next to the auditor's label."""
    from auditor.report.render import terminal_safe
    from ledger import open_ledger

    with open_ledger(db, create=False) as ledger:
        run_id = ledger.find_run(run)
        audits = ledger.human_audits(run_id)
        labels = {c.claim_id: c.label for c in ledger.claim_results(run_id)}
    if fmt == "json":
        sys.stdout.write(
            json.dumps(
                [{**a, "auditor_label": labels.get(a["claim_id"])} for a in audits],
                indent=2,
                default=str,
            )
            + "\n"
        )
        return
    table = Table(title=f"Human audits of run {run_id[:12]}")
    for column in ("claim", "reviewer", "label", "auditor label", "when", "note"):
        table.add_column(column)
    for a in audits:
        table.add_row(
            *(
                terminal_safe(cell)
                for cell in (
                    a["claim_id"][:12],
                    a["reviewer"],
                    a["label"],
                    labels.get(a["claim_id"]) or "-",
                    str(a["created_at"])[:19],
                    a["note"] or "",
                )
            )
        )
    Console().print(table)
