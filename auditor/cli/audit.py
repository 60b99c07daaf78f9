"""Commands: ``audit`` (answers -> ledger -> JSONL), ``runs`` and ``report``."""

from __future__ import annotations

import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from auditor.cli import app
from auditor.cli._common import DEFAULT_DB, DEFAULT_INDEX, DbOption, IndexOption
from auditor.errors import InputError


def _today() -> datetime:
    now = datetime.now(UTC)
    return datetime(now.year, now.month, now.day, tzinfo=UTC)


@app.command()
def audit(
    answers: Annotated[Path, typer.Argument(help="Answers JSONL: {id, question, answer, "
                                                 "contexts?, as_of?} per line.")],
    index: IndexOption = Path(DEFAULT_INDEX),
    db: DbOption = DEFAULT_DB,
    panel: Annotated[Path | None, typer.Option(help="Panel TOML (default: offline panel).")
                     ] = None,
    stacker: Annotated[Path | None, typer.Option(help="Stacker JSON (default: shipped).")
                       ] = None,
    as_of: Annotated[str | None, typer.Option(
        "--as-of", help="Audit date, ISO-8601 (default: today, 00:00 UTC).")] = None,
    mode: Annotated[str, typer.Option(help="Retrieval: dense, lexical or hybrid.")
                    ] = "hybrid",
    fmt: Annotated[str, typer.Option("--format", help="Output format: jsonl.")] = "jsonl",
) -> None:
    """Audit answers claim by claim; write the run to the ledger and print JSONL."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from auditor.answers import load_answers
    from auditor.jsonl import parse_datetime, write_jsonl
    from auditor.report.claims import claim_records
    from auditor.retrieval import EvidenceIndex
    from auditor.runner import attach_cache, index_component, make_components, run_audit
    from ledger import open_ledger

    if fmt != "jsonl":
        raise InputError(f"unsupported format {fmt!r} (jsonl)", field="--format")
    when = parse_datetime(as_of, field="--as-of") if as_of else _today()
    items = load_answers(answers)
    idx = EvidenceIndex.open(index)
    components = make_components(idx, as_of=when, panel_path=panel, stacker_path=stacker,
                                 mode=mode)
    console = Console(stderr=True)
    with open_ledger(db) as ledger:
        attach_cache(components.panel, ledger)
        summary = run_audit(items, components, ledger,
                            index_component=index_component(idx.manifest),
                            progress=lambda d, t: console.print(f"\r{d}/{t} answers", end=""))
        console.print()
        write_jsonl(claim_records(ledger, summary.run_id), sys.stdout)
    state = "reused (nothing new written)" if summary.reused else "complete"
    console.print(f"run {summary.run_id} {state}; ledger {db}")


@app.command()
def runs(db: DbOption = DEFAULT_DB) -> None:
    """List the runs in the ledger, oldest first."""
    from ledger import open_ledger

    table = Table(title=f"Runs in {db}")
    for column in ("run id", "kind", "status", "answers", "as of", "created"):
        table.add_column(column)
    with open_ledger(db, create=False) as ledger:
        for run in ledger.list_runs():
            table.add_row(run.run_id[:12], run.kind, run.status,
                          f"{run.n_answers_done}/{run.n_answers}",
                          run.as_of.date().isoformat() if run.as_of else "-",
                          run.created_at.isoformat(timespec="seconds") if run.created_at
                          else "-")
    Console().print(table)


@app.command()
def report(
    run: Annotated[str, typer.Argument(help="Run id (or a unique prefix).")],
    db: DbOption = DEFAULT_DB,
    fmt: Annotated[str, typer.Option("--format", help="table, md, json or html.")] = "table",
    out: Annotated[Path | None, typer.Option(help="Write to this file instead of stdout.")
                   ] = None,
    compare: Annotated[str | None, typer.Option(
        "--compare", help="Another run (id or prefix): paired differences (this run = A, "
                          "the other = B) on the shared claims, with intervals and a verdict."
    )] = None,
    bootstrap: Annotated[int, typer.Option(help="Bootstrap resamples B.")] = 2000,
    seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = 0,
) -> None:
    """Build a run's report card from the ledger (95% cluster-bootstrap intervals).

    md, json and html add per-judge vote statistics, agreement with human audits,
    support precision of every audit run over time and, with --compare, paired
    differences; html is one self-contained file with plots.
    """
    from auditor.report.card import build_report_card, report_config
    from auditor.report.full import build_full_report, full_to_json, full_to_markdown
    from auditor.report.render import comparison_tables, print_card
    from ledger import open_ledger

    if fmt not in ("md", "json", "table", "html"):
        raise InputError(f"unsupported format {fmt!r} (md, json, table, html)",
                         field="--format")
    if bootstrap < 1:
        raise InputError(f"must be >= 1, got {bootstrap}", field="--bootstrap")
    with open_ledger(db, create=False) as ledger:
        run_id = ledger.find_run(run)
        other = ledger.find_run(compare) if compare is not None else None
        if fmt == "table":
            info = ledger.get_run(run_id)
            card = build_report_card(info.run_id, ledger.claim_results(info.run_id),
                                     config=report_config(info), n_boot=bootstrap, seed=seed)
            full = (build_full_report(ledger, run_id, compare_to=other, n_boot=bootstrap,
                                      seed=seed, history=False) if other else None)
        else:
            full = build_full_report(ledger, run_id, compare_to=other, n_boot=bootstrap,
                                     seed=seed, history=fmt == "html")
    if fmt == "table":
        console = Console(file=out.open("w", encoding="utf-8")) if out else None
        print_card(card, console)
        if full is not None and full.comparison is not None:
            for table in comparison_tables(full.comparison):
                (console or Console()).print(table)
        return
    assert full is not None
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
    console = Console()
    for entry in trail:
        c = entry["claim"]
        console.rule(f"claim {c['claim_id'][:16]} - run {entry['run_id'][:12]}")
        console.print(f"[bold]{c['text']}[/bold]  ({c['kind']}, factual={c['factual']})")
        console.print(f"answer {c['answer_id']!r}: spans {c['spans']}")
        for start, end in c["spans"] or []:
            console.print(f"  > {c['answer'][start:end]!r}")
        console.print(f"extractor digest {c['extractor_digest'][:16]}")
        for e in entry["evidence"]:
            flags = " ".join(f for f, on in (("superseded", e["superseded"]),
                                             ("inline", e["inline"])) if on)
            console.print(f"evidence #{e['rank']} {e['doc_id']}@{e['version']} "
                          f"[{e['start']}:{e['end']}] sha256 {e['digest'][:16]} "
                          f"published {e['published_at'] or 'undated'} "
                          f"relevance {e['score']:.2f} {flags}")
            console.print(f"    {e['text'][:160]!r}", markup=False)
        for v in entry["votes"]:
            error = f" error={v['error']}" if v["error"] else ""
            console.print(f"vote {v['judge_name']} v{v['judge_version']} "
                          f"({v['judge_digest'][:12]}) = {v['value']}{error}: {v['raw']}",
                          markup=False)
        for v in entry["verdicts"]:
            p = "-" if v["p_hallucinated"] is None else f"{v['p_hallucinated']:.3f}"
            console.print(f"verdict [bold]{v['label']}[/bold] p={p} stacker "
                          f"{v['stacker_digest'][:12]} panel {v['panel_digest'][:12]}: "
                          f"{v['reason']} error spans {v['error_spans']}")
        for a in entry["audits"]:
            console.print(f"audit by {a['reviewer']} at {a['created_at']}: {a['label']} "
                          f"{a['note'] or ''}")
