"""Commands: ``calibrate`` (judge panel calibration and RAIM stacking, docs/stacking.md)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Annotated, Any

import typer

from auditor.cli import app
from auditor.cli._common import DEFAULT_DB, DbOption, FormatOption, QuietOption, ShowProgressOption
from auditor.errors import InputError

JUDGE_CHUNK = 64
"""Items judged per panel call during calibration (progress is reported after each)."""


class _PanelProgress:
    """A panel judging in chunks of :data:`JUDGE_CHUNK` items, reporting progress (what
    :func:`auditor.stacking.calibrate.calibrate` needs: member names and ``judge``)."""

    def __init__(self, panel: Any, progress: Any) -> None:
        self.panel, self.progress = panel, progress
        self.member_names = panel.member_names
        self.name, self.digest = panel.name, panel.digest

    async def judge(self, pairs: list[Any]) -> list[Any]:
        rows: list[Any] = []
        self.progress.update(0, len(pairs))
        for lo in range(0, len(pairs), JUDGE_CHUNK):
            rows.extend(await self.panel.judge(pairs[lo : lo + JUDGE_CHUNK]))
            self.progress.update(len(rows), len(pairs))
        return rows


def _fmt(x: float | None) -> str:
    return "  nan" if x is None else f"{x:6.3f}"


def _ci(ci: list[float | None]) -> str:
    return f"[{_fmt(ci[0])}, {_fmt(ci[1])}]"


def render_text(report: dict[str, Any]) -> str:
    """A short human-readable summary of a calibration report."""
    lines = [
        f"items {report['n_items']}  clusters {report['n_clusters']}  "
        f"positives {report['n_positive']}  B={report['n_boot']}  seed={report['seed']}",
        "",
        "members                    kappa  95% CI              bacc   95% CI              abstain",
    ]
    for m in report["members"]:
        lines.append(
            f"  {m['name']:24s}{_fmt(m['kappa'])} {_ci(m['kappa_ci'])} "
            f"{_fmt(m['bacc'])} {_ci(m['bacc_ci'])} {m['abstain_rate']:6.2f}"
        )
    lines.append("ladder")
    for r in report["ladder"]:
        lines.append(
            f"  {r['name']:24s}{_fmt(r['kappa'])} {_ci(r['kappa_ci'])} "
            f"{_fmt(r['bacc'])} {_ci(r['bacc_ci'])}"
        )
    for key, p in report["paired"].items():
        lines.append(
            f"{key}: delta kappa {_fmt(p['delta_kappa'])} {_ci(p['ci'])} -> {p['verdict']}"
        )
    a = report["admissibility"]
    lines.append(
        f"admissible: {a['admissible']} (share competent {a['share_competent']:.2f}, "
        f"mean error corr {_fmt(a['mean_error_corr'])}; {a['reason']})"
    )
    return "\n".join(lines)


@app.command("calibrate")
def calibrate_command(
    data: Annotated[
        Path | None,
        typer.Argument(
            help='Labelled DATA.jsonl: {"id", "cluster", "claim", "evidence": "..." or [...], '
            '"label": 0 or 1} (1 = hallucinated/unsupported); optional "question", '
            '"dataset". Not with --from-reviews.'
        ),
    ] = None,
    from_reviews: Annotated[
        str | None,
        typer.Option(
            "--from-reviews",
            help="A run whose reviewed claims refit the learned label decision (compared "
            "with the shipped one, cross-fitted, paired interval); see --save-label-model.",
        ),
    ] = None,
    save_label_model: Annotated[
        Path | None,
        typer.Option(
            "--save-label-model",
            help="With --from-reviews: write the label model fitted on all reviewed claims "
            '(use it with label_model = "PATH" in a --policy file).',
        ),
    ] = None,
    panel: Annotated[
        Path | None,
        typer.Option("--panel", help="Panel TOML (default: the built-in offline panel)."),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of folds and bootstrap.")] = 0,
    bootstrap: Annotated[
        int, typer.Option("--bootstrap", help="Bootstrap resamples B.", min=1)
    ] = 2000,
    save_stacker: Annotated[
        Path | None,
        typer.Option(
            "--save-stacker", help="Write the stacker fitted on all items to this JSON file."
        ),
    ] = None,
    fmt: FormatOption = "json",
    db: DbOption = DEFAULT_DB,
    quiet: QuietOption = False,
    show_progress: ShowProgressOption = False,
) -> None:
    """Calibrate a judge panel on labelled items: per-member kappa and balanced accuracy, the
    ladder (mean member, majority, Dawid-Skene, best_avg, CV-best, oracle, stacked) with
    95% paired cluster-bootstrap intervals, win/tie verdicts, the admissibility test and
    out-of-fold stacked predictions. Output: one JSON object (--format json) or a summary
    (--format text). The calibration is written to the ledger as a run of kind
    "calibration" (votes, out-of-fold verdicts, gold labels as audits)."""
    from auditor.judges.panel import load_panel
    from auditor.progress import Progress, progress_enabled
    from auditor.stacking.calibrate import calibrate, read_calibration_data

    if fmt.lower() not in ("json", "text"):
        raise InputError(f"unknown format {fmt!r}; use json or text", field="--format")
    from auditor.runner import attach_cache, record_calibration
    from ledger import open_ledger

    if (data is None) == (from_reviews is None):
        raise InputError("give DATA.jsonl or --from-reviews RUN (one of them)", field="DATA")
    if from_reviews is not None:
        _calibrate_from_reviews(from_reviews, db, save_label_model, fmt, seed, bootstrap)
        return
    assert data is not None
    items = read_calibration_data(data)
    loaded = load_panel(panel)
    with open_ledger(db) as ledger:
        attach_cache(loaded, ledger)
        bar = Progress(
            "calibrate: judging",
            unit="items",
            enabled=progress_enabled(quiet=quiet, force=show_progress),
        )
        with warnings.catch_warnings(record=True) as caught, bar:
            warnings.simplefilter("always", RuntimeWarning)
            result = calibrate(items, _PanelProgress(loaded, bar), seed=seed, n_boot=bootstrap)
        summary = record_calibration(ledger, items, result, loaded)
    result.report["run_id"] = summary.run_id
    notes = sorted({str(w.message) for w in caught})
    for note in notes:
        typer.echo(f"warning: {note}", err=True)
    if save_stacker is not None:
        result.stacker.save(save_stacker)
    report = result.as_dict()
    if fmt.lower() == "json":
        typer.echo(json.dumps(report, allow_nan=False))
    else:
        typer.echo(render_text(report))


def _calibrate_from_reviews(
    run: str, db: str, out: Path | None, fmt: str, seed: int, n_boot: int
) -> None:
    """``auditor calibrate --from-reviews RUN``: the library's comparison, printed."""
    from auditor.review_calibration import calibrate_from_reviews
    from ledger import open_ledger

    with open_ledger(db) as ledger:
        result = calibrate_from_reviews(ledger, ledger.find_run(run), seed=seed, n_boot=n_boot)
    if out is not None:
        result.model.save(out)
    report = result.as_dict()
    if fmt.lower() == "json":
        typer.echo(json.dumps(report, allow_nan=False))
        return
    lo, hi = report["difference_interval"]
    typer.echo(
        f"run {report['run_id'][:12]}: {report['reviewed_claims']} reviewed claims in "
        f"{report['answers']} answers; shipped label model accuracy "
        f"{report['shipped_accuracy']:.3f}, refit (cross-fitted) "
        f"{report['refit_accuracy_cross_fitted']:.3f}, difference "
        f"{report['difference']:+.3f} [{lo:+.3f}, {hi:+.3f}]"
    )
