"""Commands: ``audit`` (answers -> ledger -> JSONL), ``runs`` and ``report``."""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from auditor.cli import app
from auditor.cli._common import (
    DEFAULT_DB,
    DEFAULT_INDEX,
    DbOption,
    IndexOption,
    refuse_memory_ledger,
    write_text_atomic,
)
from auditor.clock import DEFAULT_AS_OF_RULE, as_of_or_default
from auditor.config import AuditConfig
from auditor.engine import AUDIT_BATCH_ANSWERS, Engine
from auditor.errors import InputError
from auditor.progress import Progress, progress_enabled

_DEFAULTS = AuditConfig()


@app.command()
def audit(
    answers: Annotated[
        Path,
        typer.Argument(help="Answers JSONL: {id, question, answer, contexts?, as_of?} per line."),
    ],
    index: IndexOption = Path(DEFAULT_INDEX),
    db: DbOption = DEFAULT_DB,
    panel: Annotated[Path | None, typer.Option(help="Panel TOML (default: offline panel).")] = None,
    stacker: Annotated[Path | None, typer.Option(help="Stacker JSON (default: shipped).")] = None,
    as_of: Annotated[
        str | None,
        typer.Option(
            "--as-of",
            help=f"Audit date of answers without their own as_of, ISO-8601 (default: "
            f"{DEFAULT_AS_OF_RULE}).",
        ),
    ] = None,
    mode: Annotated[
        str, typer.Option(help="Retrieval: dense, lexical or hybrid.")
    ] = _DEFAULTS.mode,
    k: Annotated[int, typer.Option("--k", help="Passages retrieved per claim.")] = _DEFAULTS.k,
    n_current: Annotated[
        int, typer.Option(help="Current passages the panel judges each claim against.")
    ] = _DEFAULTS.n_current,
    n_superseded: Annotated[
        int, typer.Option(help="Superseded passages judged for stale.")
    ] = _DEFAULTS.n_superseded,
    policy: Annotated[
        Path | None,
        typer.Option(help="Label policy TOML (threshold = 0.5, min_relevance = 0.35, ...)."),
    ] = None,
    extractor: Annotated[
        str, typer.Option(help="Claim extractor: rules or llm.")
    ] = _DEFAULTS.extractor,
    second_opinion: Annotated[
        str | None,
        typer.Option(help="A registered judge asked about claims the stack leaves uncertain."),
    ] = None,
    second_opinion_band: Annotated[
        float,
        typer.Option(
            help="Distance of the stacked probability from the threshold that asks the second "
            "opinion."
        ),
    ] = 0.1,
    localizer: Annotated[
        str,
        typer.Option(
            help="Error spans of contradicted / not_supported claims: reader (the entailment "
            "reader's phrase with the lexical marks) or lexical."
        ),
    ] = _DEFAULTS.localizer,
    reader_calls: Annotated[
        int, typer.Option(help="Reader calls per claim at most (--localizer reader).")
    ] = _DEFAULTS.reader_calls,
    fmt: Annotated[str, typer.Option("--format", help="Output format: jsonl.")] = "jsonl",
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress on stderr.")] = False,
    engine: Annotated[
        str,
        typer.Option(
            help="Where batches run: local (this process) or ray (Ray actors; the same run "
            "id, labels and ledger rows)."
        ),
    ] = "local",
    workers: Annotated[
        int,
        typer.Option(
            help="Ray actors (with --engine ray); without --ray-address a local Ray cluster "
            "with this many CPUs is started and stopped."
        ),
    ] = 1,
    ray_address: Annotated[
        str | None,
        typer.Option("--ray-address", help="An existing Ray cluster (host:port or auto)."),
    ] = None,
    batch_size: Annotated[
        int, typer.Option(help="Answers per batch (a batch runs through the graph at once).")
    ] = AUDIT_BATCH_ANSWERS,
) -> None:
    """Audit answers claim by claim; write the run to the ledger and print JSONL.

    Each answer's line is printed as soon as its transaction commits, so the output of
    a killed run matches its ledger; re-running resumes (or finds the finished run).
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from auditor import Auditor
    from auditor.answers import load_answers
    from auditor.config import load_policy
    from auditor.jsonl import write_jsonl
    from auditor.labels import LabelPolicy
    from ledger.url import mask_url

    refuse_memory_ledger(db, "audit")
    if fmt != "jsonl":
        raise InputError(f"unsupported format {fmt!r} (jsonl)", field="--format")
    config = AuditConfig(
        mode=mode,
        k=k,
        n_current=n_current,
        n_superseded=n_superseded,
        as_of=as_of_or_default(as_of, field="--as-of"),
        policy=load_policy(policy) if policy else LabelPolicy(),
        extractor=extractor,
        second_opinion_band=second_opinion_band if second_opinion else 0.0,
        localizer=localizer,
        reader_calls=reader_calls,
    )
    how = Engine(kind=engine, workers=workers, address=ray_address)
    if how.kind == "ray":
        from auditor.engine import require_ray

        require_ray()  # before loading anything
    items = load_answers(answers)
    bar = Progress(
        "audit", len(items), unit="answers", enabled=progress_enabled(quiet=quiet, force=True)
    )
    with Auditor(
        index, db, panel=panel, stacker=stacker, config=config, second_opinion=second_opinion
    ) as auditor:
        printed: set[str] = set()

        def emit(record: dict[str, Any]) -> None:
            write_jsonl([record], sys.stdout)
            sys.stdout.flush()
            printed.add(record["id"])
            bar.count("claims", len(record["claims"]))

        with bar:
            run = auditor.audit(
                items,
                progress=bar.callback(),
                on_record=emit,
                engine=how,
                batch_size=batch_size,
            )
            if run.reused:
                bar.enabled = False  # nothing ran; the closing line says so
        write_jsonl([r for r in run.answers if r["id"] not in printed], sys.stdout)
    state = "reused (nothing new written)" if run.reused else "complete"
    if not quiet:
        typer.echo(f"run {run.run_id} {state}; ledger {mask_url(db)}", err=True)


@app.command()
def runs(db: DbOption = DEFAULT_DB) -> None:
    """List the runs in the ledger, oldest first."""
    from auditor.clock import utc
    from auditor.report.render import terminal_safe
    from ledger import open_ledger
    from ledger.url import mask_url

    table = Table(title=f"Runs in {terminal_safe(mask_url(db))}")
    for column in ("run id", "kind", "status", "answers", "as of", "created (UTC)"):
        # ids and dates are never cut (fits 80 columns: the time to the minute)
        table.add_column(column, no_wrap=True)
    with open_ledger(db, create=False) as ledger:
        for run in ledger.list_runs():
            table.add_row(
                run.run_id[:12],
                run.kind,
                run.status,
                f"{run.n_answers_done}/{run.n_answers}",
                run.as_of.date().isoformat() if run.as_of else "-",
                utc(run.created_at).strftime("%Y-%m-%d %H:%M") if run.created_at else "-",
            )
    Console().print(table)


@app.command()
def report(
    run: Annotated[str, typer.Argument(help="Run id (or a unique prefix).")],
    db: DbOption = DEFAULT_DB,
    fmt: Annotated[str, typer.Option("--format", help="table, md, json or html.")] = "table",
    out: Annotated[Path | None, typer.Option(help="Write to this file instead of stdout.")] = None,
    compare: Annotated[
        str | None,
        typer.Option(
            "--compare",
            help="Another run (id or prefix): paired differences (this run = A, "
            "the other = B) on the shared claims, with intervals and a verdict.",
        ),
    ] = None,
    bootstrap: Annotated[int, typer.Option(help="Bootstrap resamples B.")] = 2000,
    seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = 0,
    explain: Annotated[
        bool,
        typer.Option("--explain", help="table: also say what each figure counts (below it)."),
    ] = False,
) -> None:
    """Build a run's report card from the ledger (95% cluster-bootstrap intervals).

    md, json and html add per-judge vote statistics, agreement with human audits,
    support precision of every audit run over time and, with --compare, paired
    differences; html is one self-contained file with plots.
    """
    from auditor.report.full import build_full_report, full_to_json, full_to_markdown
    from auditor.report.render import comparison_tables, print_report
    from ledger import open_ledger

    if fmt not in ("md", "json", "table", "html"):
        raise InputError(f"unsupported format {fmt!r} (md, json, table, html)", field="--format")
    if bootstrap < 1:
        raise InputError(f"must be >= 1, got {bootstrap}", field="--bootstrap")
    with open_ledger(db, create=False) as ledger:
        run_id = ledger.find_run(run)
        other = ledger.find_run(compare) if compare is not None else None
        full = build_full_report(
            ledger, run_id, compare_to=other, n_boot=bootstrap, seed=seed, history=fmt == "html"
        )
    if fmt == "table":
        console = Console(file=io.StringIO(), width=100) if out else Console()
        # card, flagged claims, agreement with human audits; definitions with --explain
        print_report(full, console, explain=explain)
        if full.comparison is not None:
            for table in comparison_tables(full.comparison):
                console.print(table)
        if out:
            write_text_atomic(out, console.file.getvalue())  # type: ignore[attr-defined]
        return
    if fmt == "html":
        from auditor.report.html import to_html

        text = to_html(full)
    else:
        text = full_to_json(full) if fmt == "json" else full_to_markdown(full)
    if out:
        out.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)


@app.command()
def gate(
    run: Annotated[str, typer.Argument(help="Run id (or a unique prefix).")],
    baseline: Annotated[
        str | None,
        typer.Option(
            help="A baseline run: fail when a checked figure is worse on the shared claims "
            "(paired interval excluding zero)."
        ),
    ] = None,
    minimum: Annotated[
        list[str] | None,
        typer.Option(
            "--min",
            help="FIGURE=VALUE: the figure's lower 95% bound must reach VALUE (repeatable).",
        ),
    ] = None,
    maximum: Annotated[
        list[str] | None,
        typer.Option(
            "--max",
            help="FIGURE=VALUE: the figure's upper 95% bound must stay at or below "
            "VALUE (repeatable).",
        ),
    ] = None,
    db: DbOption = DEFAULT_DB,
    fmt: Annotated[str, typer.Option("--format", help="text, json or junit.")] = "text",
    out: Annotated[Path | None, typer.Option(help="Also write the result to this file.")] = None,
    bootstrap: Annotated[int, typer.Option(help="Bootstrap resamples B.")] = 2000,
    seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = 0,
) -> None:
    """Pass or fail a run for a release: exit 0 pass, 1 fail, 2 usage error.

    Example: auditor gate RUN --min support_precision=0.8 --max contradicted_rate=0.05
    --baseline LAST_RELEASE --format junit --out gate.xml
    """
    from auditor.gate import GateRule, gate_run
    from ledger import open_ledger

    if fmt not in ("text", "json", "junit"):
        raise InputError(f"unsupported format {fmt!r} (text, json, junit)", field="--format")
    if bootstrap < 1:
        raise InputError(f"must be >= 1, got {bootstrap}", field="--bootstrap")
    rules = [GateRule.parse(r, "min") for r in minimum or []] + [
        GateRule.parse(r, "max") for r in maximum or []
    ]
    with open_ledger(db, create=False) as ledger:
        result = gate_run(ledger, run, rules=rules, baseline=baseline, n_boot=bootstrap, seed=seed)
    text = result.render(fmt)
    sys.stdout.write(text)
    if out is not None:
        out.write_text(text, encoding="utf-8")
    raise typer.Exit(0 if result.passed else 1)


@app.command()
def show(
    claim: Annotated[str, typer.Argument(help="Claim id (or a unique prefix).")],
    db: DbOption = DEFAULT_DB,
    fmt: Annotated[str, typer.Option("--format", help="text or json.")] = "text",
) -> None:
    """Print a claim's whole trail: answer and span, evidence, votes, stacker, label, audits."""
    import json

    from ledger import open_ledger

    with open_ledger(db, create=False) as ledger:
        trail = ledger.claim_trail(claim)
    if fmt == "json":
        sys.stdout.write(json.dumps(trail, indent=2, default=str) + "\n")
        return
    from auditor.report.render import terminal_safe as safe

    console = Console()
    for entry in trail:
        c = entry["claim"]
        console.rule(f"claim {c['claim_id'][:16]} - run {entry['run_id'][:12]}")
        console.print(f"[bold]{safe(c['text'])}[/bold]  ({c['kind']}, factual={c['factual']})")
        console.print(f"answer {safe(repr(c['answer_id']))}: spans {c['spans']}")
        if c.get("topic"):
            console.print(f"about {safe(repr(c['topic']))} (searched with the claim)")
        for start, end in c["spans"] or []:
            console.print(f"  > {safe(repr(c['answer'][start:end]))}")
        console.print(f"extractor digest {c['extractor_digest'][:16]}")
        for e in entry["evidence"]:
            flags = " ".join(
                f for f, on in (("superseded", e["superseded"]), ("inline", e["inline"])) if on
            )
            console.print(
                f"evidence #{e['rank']} {safe(e['doc_id'])}@{safe(e['version'])} "
                f"[{e['start']}:{e['end']}] sha256 {e['digest'][:16]} "
                f"published {e['published_at'] or 'undated'} "
                f"relevance {e['score']:.2f} {flags}"
            )
            console.print(f"    {safe(repr(e['text'][:160]))}")
        for kind, key in (("vote", "votes"), ("superseded-evidence vote", "superseded_votes")):
            for v in entry[key]:
                error = f" error={v['error']}" if v["error"] else ""
                console.print(
                    f"{kind} {v['judge_name']} v{v['judge_version']} "
                    f"({v['judge_digest'][:12]}) = {v['value']}{safe(error)}: "
                    f"{safe(v['raw'])}"
                )
        for v in entry["verdicts"]:
            p = "-" if v["p_hallucinated"] is None else f"{v['p_hallucinated']:.3f}"
            console.print(
                f"verdict [bold]{v['label']}[/bold] p={p} stacker "
                f"{v['stacker_digest'][:12]} panel {v['panel_digest'][:12]}: "
                f"{safe(v['reason'])} error spans {v['error_spans']}"
            )
        for a in entry["audits"]:
            console.print(
                f"audit by {safe(a['reviewer'])} at {a['created_at']}: "
                f"{safe(a['label'])} {safe(a['note'] or '')}"
            )
