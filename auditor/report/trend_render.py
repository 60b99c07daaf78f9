"""A trend (:class:`auditor.freshness.trend.Trend`) for people: terminal tables that stay
legible at 80 columns (:func:`trend_tables`) and one self-contained HTML page
(:func:`trend_page`) that reads at 800 pixels as at 1280.

Both show the runs (numbered, with their whole as-of dates), one small table per figure
(each run's value with its interval, and the paired change from the run before with its
verdict) and the label transitions between consecutive runs. The figures are rows of
their own tables rather than columns of one: four figures with intervals side by side
need some 110 columns, and a narrow terminal would cut the dates and squeeze each
interval into a column three lines tall.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from html import escape
from typing import Any

from rich.table import Table

from auditor.clock import utc
from auditor.report.render import terminal_safe, transition_rows, transitions_table

_DIRECTION = {"higher": "higher is better", "lower": "lower is better"}


def _figures() -> tuple[str, ...]:
    from auditor.freshness.trend import TREND_FIGURES

    return tuple(TREND_FIGURES)


def _day(value: datetime | None) -> str:
    return "undated" if value is None else utc(value).date().isoformat()


def _interval(value: float | None, ci: Sequence[float] | None, signed: bool = False) -> str:
    if value is None:
        return "-"
    spec = "+.3f" if signed else ".3f"
    text = format(value, spec)
    if ci:
        text += f" [{format(ci[0], spec)}, {format(ci[1], spec)}]"
    return text


def _figure_rows(trend: Any, name: str) -> tuple[str, list[tuple[str, str, str, str, str]]]:
    """``(direction, rows)`` of one figure: per run its number, as-of date, value with
    its interval, and the paired change from the run before with its verdict."""
    steps: dict[tuple[str, str], Any] = {(s.run_a, s.run_b): s for s in trend.steps}
    better = ""
    rows = []
    previous = None
    for i, p in enumerate(trend.points, start=1):
        f = p.figures[name]
        change, verdict = "", ""
        step: Any = steps.get((previous.run_id, p.run_id)) if previous is not None else None
        if step is not None:
            d = step.figure(name)
            better = better or _DIRECTION.get(d.better, "")
            change = _interval(d.delta, d.ci, signed=True)
            verdict = d.verdict
        rows.append((str(i), _day(p.as_of), _interval(f.value, f.ci), change, verdict))
        previous = p
    return better, rows


def _steps(trend: Any) -> list[tuple[str, Mapping[str, Mapping[str, int]]]]:
    number = {p.run_id: i for i, p in enumerate(trend.points, start=1)}
    return [
        (f"#{number.get(s.run_a, '?')} -> #{number.get(s.run_b, '?')}", s.transitions)
        for s in trend.steps
    ]


# ---------------------------------------------------------------------- terminal
def runs_table(trend: Any) -> Table:
    """The runs of the series, oldest as-of date first, numbered for the other tables."""
    table = Table(title="Runs of the series (by as-of date)", title_justify="left")
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("run", no_wrap=True)
    table.add_column("kind", no_wrap=True)
    table.add_column("as of", no_wrap=True, min_width=10)
    table.add_column("answers", justify="right", no_wrap=True)
    table.add_column("claims", justify="right", no_wrap=True)
    for i, p in enumerate(trend.points, start=1):
        table.add_row(
            str(i),
            terminal_safe(p.run_id[:12]),
            terminal_safe(p.kind),
            _day(p.as_of),
            str(p.n_answers),
            str(p.n_claims),
        )
    return table


def figure_table(trend: Any, name: str) -> Table:
    """One figure over the series: each run's value with its 95% interval and the paired
    change from the run before on their shared claims, with its verdict."""
    better, rows = _figure_rows(trend, name)
    table = Table(title=name + (f" ({better})" if better else ""), title_justify="left")
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("as of", no_wrap=True, min_width=10)
    table.add_column("value [95% CI]", justify="right", no_wrap=True)
    table.add_column("change [95% CI]", justify="right")
    table.add_column("verdict", no_wrap=True)
    for row in rows:
        table.add_row(*row)
    return table


def trend_tables(trend: Any) -> list[Table]:
    """Every table of a trend in the table format: the runs, one table per figure of
    :data:`auditor.freshness.trend.TREND_FIGURES` and the label transitions between
    consecutive runs (:func:`auditor.report.render.transitions_table`)."""
    tables = [runs_table(trend)]
    tables += [figure_table(trend, name) for name in _figures()]
    if trend.steps:
        tables.append(transitions_table(_steps(trend), title="Label transitions (shared claims)"))
    return tables


# ---------------------------------------------------------------------- HTML
def _plot(trend: Any) -> str:
    from auditor.report.html import _errors, _png, _pyplot

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 3.6))
    xs = list(range(len(trend.points)))
    for name in _figures():
        pts = [
            (x, p.figures[name])
            for x, p in zip(xs, trend.points, strict=True)
            if p.figures[name].value is not None
        ]
        if not pts:
            continue
        values = [float(f.value) for _, f in pts]
        ax.errorbar(
            [x for x, _ in pts],
            values,
            yerr=_errors(values, [f.ci for _, f in pts]),
            marker="o",
            capsize=4,
            label=name.replace("_", " "),
        )
    ax.set_xticks(xs, [_day(p.as_of) for p in trend.points])
    ax.set_ylim(-0.02, 1.02)
    ax.set_ylabel("share")
    ax.set_xlabel("as of")
    ax.set_title("Factuality over time (95% cluster-bootstrap intervals)")
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    return _png(fig)


def _html_table(head: Sequence[str], rows: Sequence[Sequence[str]], classes: Sequence[str]) -> str:
    th = "".join(f'<th class="{c}">{escape(h)}</th>' for h, c in zip(head, classes, strict=True))
    body = []
    for row in rows:
        cells = []
        for cell, c in zip(row, classes, strict=True):
            verdict = f" {cell}" if cell in ("improved", "worse", "unresolved") else ""
            cells.append(f'<td class="{c}{verdict}">{escape(cell)}</td>')
        body.append(f"<tr>{''.join(cells)}</tr>")
    return f'<div class="scroll"><table><tr>{th}</tr>{"".join(body)}</table></div>'


_PAGE_CSS = """
td.d,th.d{white-space:nowrap}td.n,th.n{text-align:right;white-space:nowrap}
.figures h3{margin:1em 0 .2em;font-size:1em}.figures small{color:#555;font-weight:normal}
"""


def trend_page(trend: Any) -> str:
    """The trend as one self-contained HTML page: the plot of the figures over the as-of
    dates (inline PNG), the runs, one table per figure (value, paired change from the
    run before and its verdict) and the label transitions between consecutive runs."""
    from auditor.report.html import report_css

    runs = [
        (str(i), p.run_id[:12], p.kind, _day(p.as_of), str(p.n_answers), str(p.n_claims))
        for i, p in enumerate(trend.points, start=1)
    ]
    out = [
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>Factuality trend</title><style>{report_css()}{_PAGE_CSS}</style></head><body>",
        "<h1>Factuality over time</h1>",
        f"<p>{len(trend.points)} runs of the same answers"
        + (
            f", as of {escape(_day(trend.points[0].as_of))} to "
            f"{escape(_day(trend.points[-1].as_of))}"
            if trend.points
            else ""
        )
        + ".</p>",
    ]
    if trend.points:
        out.append(_plot(trend))
    out.append("<h2>Runs</h2>")
    out.append(
        _html_table(
            ["#", "run", "kind", "as of", "answers", "claims"],
            runs,
            ["n", "d", "d", "d", "n", "n"],
        )
    )
    out.append("<h2>Figures</h2>")
    out.append('<div class="figures">')
    for name in _figures():
        better, rows = _figure_rows(trend, name)
        out.append(
            f"<section><h3>{escape(name)}"
            + (f" <small>({better})</small>" if better else "")
            + "</h3>"
        )
        out.append(
            _html_table(
                ["#", "as of", "value [95% CI]", "change [95% CI]", "verdict"],
                rows,
                ["n", "d", "n", "n", "d"],
            )
        )
        out.append("</section>")
    out.append("</div>")
    if trend.steps:
        out.append("<h2>Label transitions (shared claims)</h2>")
        moves = [(step, a, b, str(k)) for step, a, b, k in transition_rows(_steps(trend))]
        out.append(_html_table(["runs", "from", "to", "claims"], moves, ["d", "d", "d", "n"]))
    out.append(
        f'<p class="note">Intervals: 95% cluster bootstrap over answers, B = {trend.n_boot}, '
        f"seed {trend.seed}; changes are paired on the claims both runs share.</p>"
    )
    out.append("</body></html>")
    return "\n".join(out) + "\n"
