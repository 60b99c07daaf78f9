"""Commands of the freshness watch: ``impact``, ``reaudit`` and ``trend``."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from auditor.cli import app
from auditor.cli._common import DEFAULT_DB, DEFAULT_INDEX, DbOption, IndexOption
from auditor.clock import DEFAULT_AS_OF_RULE, as_of_or_default, parse_datetime
from auditor.errors import InputError

_DATE = "ISO-8601; timezone-less means UTC"


@app.command()
def impact(
    db: DbOption = DEFAULT_DB,
    since: Annotated[
        str | None,
        typer.Option(
            "--since",
            help=f"Only changes ingested, published or withdrawn at or after this "
            f"date ({_DATE}). Default: since each run finished.",
        ),
    ] = None,
    run: Annotated[
        list[str] | None,
        typer.Option(
            "--run", help="A run id or prefix to look at (repeatable; default: every audit run)."
        ),
    ] = None,
    as_of: Annotated[
        str | None,
        typer.Option(
            "--as-of",
            help=f"The date the evidence of answers without their own as_of is looked at "
            f"({_DATE}; default: {DEFAULT_AS_OF_RULE}). An answer's own as_of wins.",
        ),
    ] = None,
    override_answer_dates: Annotated[
        bool,
        typer.Option(
            "--override-answer-dates",
            help="Look at every answer's evidence as of --as-of, its own as_of too (what "
            "`reaudit --override-answer-dates` judges).",
        ),
    ] = False,
    index: Annotated[
        Path | None,
        typer.Option(
            "--index",
            help="An evidence index: its manifest (generation, corpus digest) is "
            "shown, with any versions it holds that the ledger does not "
            "know.",
        ),
    ] = None,
    fmt: Annotated[str, typer.Option("--format", help="table or json.")] = "table",
) -> None:
    """List the audited claims whose deciding evidence changed after an ingest.

    A version a claim rested on was superseded or withdrawn, or a new version of a
    document it cited appeared; grouped by run and answer, with both versions' dates and
    digests and a character diff of the passage. Read from the ledger; nothing is judged.
    """
    from auditor.freshness import find_impact, index_version_order
    from ledger import open_ledger

    if fmt not in ("table", "json"):
        raise InputError(f"unsupported format {fmt!r} (table, json)", field="--format")
    manifest = None
    pairs: list[tuple[str, str]] = []
    order = None
    if index is not None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from auditor.retrieval import store
        from auditor.retrieval.reader import read_versions

        gen = store.require_generation(index)
        manifest = store.read_json(gen / store.MANIFEST)
        versions = read_versions(gen, manifest)  # in the index's version order
        pairs = [(v.doc_id, v.digest) for v in versions]
        order = index_version_order(versions)
    with open_ledger(db, create=False) as ledger:
        report = find_impact(
            ledger,
            runs=run or None,
            since=parse_datetime(since, field="--since"),
            as_of=as_of_or_default(as_of, field="--as-of"),
            index_manifest=manifest,
            index_versions=pairs,
            override_answer_dates=override_answer_dates,
            version_order=order,
        )
    if fmt == "json":
        sys.stdout.write(json.dumps(report.to_list(), indent=2) + "\n")
        return
    missing = report.index.get("versions_not_in_ledger") if report.index else None
    if report.index:
        typer.echo(
            f"index generation {report.index.get('generation')}, corpus "
            f"{str(report.index.get('corpus_digest'))[:12]}, "
            f"{report.index.get('versions')} versions"
        )
    if missing:
        typer.echo(
            f"warning: {len(missing)} index versions are not in the ledger (ingest "
            f"with `auditor ingest --db` so impact can see them): "
            f"{', '.join(missing[:5])}"
        )
    typer.echo(
        f"{len(report.claims)} impacted claims in {len(report.grouped())} runs (as of "
        f"{report.as_of.date().isoformat()}; {report.changed_versions} changed versions "
        f"looked at)"
    )
    for run_id, answers in report.grouped().items():
        typer.echo(f"\nrun {run_id[:12]}")
        for answer_id, claims in answers.items():
            typer.echo(f"  answer {answer_id}")
            for c in claims:
                typer.echo(f"    claim {c.claim_id[:12]} [{c.label or '-'}] {c.text}")
                for change in c.changes:
                    old, new = change.old, change.new
                    ended = f", valid to {_day(old.valid_to)}" if old.valid_to else ""
                    line = (
                        f"      {change.kind}: {change.doc_id}@{old.version} sha256 "
                        f"{old.digest[:12]} (published {_day(old.visible_from)}{ended})"
                    )
                    for later in change.chain or ((new,) if new is not None else ()):
                        line += (
                            f" -> {later.version} sha256 {later.digest[:12]} (published "
                            f"{_day(later.visible_from)})"
                        )
                    typer.echo(line)
                    if change.diff is not None:
                        typer.echo(f"        diff: {change.diff}")


def _day(value: object) -> str:
    from datetime import datetime

    return value.date().isoformat() if isinstance(value, datetime) else "undated"


@app.command()
def reaudit(
    run: Annotated[str, typer.Argument(help="The run to re-audit (id or unique prefix).")],
    index: IndexOption = Path(DEFAULT_INDEX),
    db: DbOption = DEFAULT_DB,
    as_of: Annotated[
        str | None,
        typer.Option(
            "--as-of",
            help=f"The new audit date of answers without their own as_of ({_DATE}). "
            "Required: a re-audit has no default date.",
        ),
    ] = None,
    override_answer_dates: Annotated[
        bool,
        typer.Option(
            "--override-answer-dates",
            help="Re-audit every answer as of --as-of, also those with their own as_of "
            "(by default an answer's own date wins, as in `auditor audit`).",
        ),
    ] = False,
    only_impacted: Annotated[
        bool,
        typer.Option(
            "--only-impacted",
            help="Judge again only the claims whose evidence changed at the "
            "new date; carry the others' verdicts over (marked, with "
            "the reason). Default: judge every claim again.",
        ),
    ] = False,
    panel: Annotated[
        Path | None, typer.Option(help="Panel TOML: the run's own (default: offline panel).")
    ] = None,
    stacker: Annotated[
        Path | None, typer.Option(help="Stacker JSON: the run's own (default: shipped).")
    ] = None,
    fmt: Annotated[str, typer.Option("--format", help="Output format: jsonl.")] = "jsonl",
    quiet: Annotated[bool, typer.Option("--quiet", help="No summary on stderr.")] = False,
) -> None:
    """Re-audit a run's answers as of a new date, as a new run linked to the old one.

    --as-of is required. Evidence is gathered again for every claim at the new date (an
    answer with its own as_of at that date, unless --override-answer-dates); with
    --only-impacted only claims whose evidence changed are judged again. Prints the new run like
    `auditor audit --format jsonl`, each claim with "carried" (null when judged).
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from auditor import Auditor
    from auditor.freshness import reaudit as run_reaudit
    from auditor.jsonl import write_jsonl

    if fmt != "jsonl":
        raise InputError(f"unsupported format {fmt!r} (jsonl)", field="--format")
    when = parse_datetime(as_of, field="--as-of")
    if when is None:  # before anything is opened: nothing is written
        raise InputError(
            "a re-audit needs its new audit date: give --as-of DATE (ISO-8601, e.g. "
            "--as-of 2025-06-01); answers with their own as_of keep it unless "
            "--override-answer-dates",
            field="--as-of",
        )
    with Auditor(index, db, panel=panel, stacker=stacker) as auditor:
        result = run_reaudit(
            auditor,
            run,
            as_of=when,
            only_impacted=only_impacted,
            override_answer_dates=override_answer_dates,
        )
    write_jsonl(result.answers, sys.stdout)
    if not quiet:
        state = "reused (nothing new written)" if result.reused else "complete"
        typer.echo(
            f"run {result.run_id} {state}: re-audit of {result.parent_run_id[:12]} "
            f"as of {when.date().isoformat()}; {result.n_claims} claims, "
            f"{result.n_claims - result.n_carried} judged again, "
            f"{result.n_carried} carried; ledger {db}",
            err=True,
        )


@app.command()
def trend(
    runs: Annotated[
        list[str] | None,
        typer.Option(
            "--runs",
            help="A run of the series (id or prefix; repeatable). Default: the one "
            "series of audit runs (same answers, or linked by re-audits).",
        ),
    ] = None,
    since: Annotated[
        str | None,
        typer.Option("--since", help=f"Only runs audited as of this date or later ({_DATE})."),
    ] = None,
    db: DbOption = DEFAULT_DB,
    fmt: Annotated[str, typer.Option("--format", help="table, json or html.")] = "table",
    out: Annotated[Path | None, typer.Option(help="Write to this file instead of stdout.")] = None,
    bootstrap: Annotated[int, typer.Option(help="Bootstrap resamples B.")] = 2000,
    seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = 0,
) -> None:
    """Factuality over time: support precision, stale, contradicted and decidable rates
    of a series of runs over their as-of dates (95% intervals), and the paired change
    between consecutive runs on their shared claims (improved / worse / unresolved),
    with the label transitions. The tables fit 80 columns; the html format is one
    self-contained file with the plot and the same tables."""
    from auditor.freshness import build_trend
    from ledger import open_ledger

    if fmt not in ("table", "json", "html"):
        raise InputError(f"unsupported format {fmt!r} (table, json, html)", field="--format")
    if bootstrap < 1:
        raise InputError(f"must be >= 1, got {bootstrap}", field="--bootstrap")
    with open_ledger(db, create=False) as ledger:
        result = build_trend(
            ledger,
            runs=runs or None,
            since=parse_datetime(since, field="--since"),
            n_boot=bootstrap,
            seed=seed,
        )
    if fmt == "table":
        import io

        from auditor.cli._common import write_text_atomic
        from auditor.report.trend_render import trend_tables

        # legible at 80 columns: the runs, one table per figure (value, paired change
        # and verdict), the label transitions; dates are never cut
        console = Console(file=io.StringIO(), width=100) if out else Console()
        for table in trend_tables(result):
            console.print(table)
        console.print(
            f"Intervals: 95% cluster bootstrap over answers (B = {bootstrap}, seed {seed}); "
            "changes are paired on the claims both runs share."
        )
        if out:
            write_text_atomic(out, console.file.getvalue())  # type: ignore[attr-defined]
        return
    if fmt == "html":
        from auditor.report.trend_render import trend_page

        text = trend_page(result)  # legible at 800 pixels; label transitions included
    else:
        text = json.dumps(result.to_dict(), indent=2) + "\n"
    if out:
        out.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
