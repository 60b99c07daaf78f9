"""Rendering a trend (:mod:`auditor.freshness.trend`): plain table rows and one
self-contained HTML page with the plot."""

from __future__ import annotations

from collections.abc import Sequence

from auditor.freshness._common import _date
from auditor.freshness.trend import TREND_FIGURES, Trend
from auditor.report.card import Figure


def _fmt(f: Figure | None) -> str:
    if f is None or f.value is None:
        return "-"
    ci = f" [{f.ci[0]:.2f}, {f.ci[1]:.2f}]" if f.ci else ""
    return f"{f.value:.3f}{ci}"


def trend_rows(trend: Trend) -> tuple[list[list[str]], list[list[str]]]:
    """Plain table rows: one per run (figures with intervals) and one per consecutive
    change and figure (delta with its paired interval and the verdict)."""
    runs = [
        [
            p.run_id[:12],
            p.kind,
            _date(p.as_of),
            str(p.n_claims),
            *(_fmt(p.figures[n]) for n in TREND_FIGURES),
        ]
        for p in trend.points
    ]
    changes = []
    for s in trend.steps:
        for n in TREND_FIGURES:
            d = s.figure(n)
            delta = "-" if d.delta is None else f"{d.delta:+.3f}"
            ci = f"[{d.ci[0]:+.3f}, {d.ci[1]:+.3f}]" if d.ci else "-"
            changes.append(
                [
                    f"{s.run_a[:12]} -> {s.run_b[:12]}",
                    str(s.n_shared_claims),
                    n,
                    delta,
                    ci,
                    d.verdict,
                ]
            )
    return runs, changes


def trend_html(trend: Trend) -> str:
    """The trend as one self-contained HTML file: a plot of the four figures over the
    as-of dates with their intervals (inline PNG), the table of runs and the changes."""
    from html import escape

    from auditor.report.html import _CSS, _errors, _png, _pyplot

    runs, changes = trend_rows(trend)
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 4))
    xs = list(range(len(trend.points)))
    for name in TREND_FIGURES:
        pts = [
            (x, p.figures[name])
            for x, p in zip(xs, trend.points, strict=True)
            if p.figures[name].value is not None
        ]
        if not pts:
            continue
        values = [float(f.value) for _, f in pts]  # type: ignore[arg-type]
        ax.errorbar(
            [x for x, _ in pts],
            values,
            yerr=_errors(values, [f.ci for _, f in pts]),
            marker="o",
            capsize=4,
            label=name.replace("_", " "),
        )
    ax.set_xticks(xs, [_date(p.as_of) for p in trend.points], rotation=20)
    ax.set_ylim(-0.02, 1.02)
    ax.set_ylabel("share")
    ax.set_xlabel("as of")
    ax.set_title("Factuality over time (95% cluster-bootstrap intervals)")
    ax.legend(fontsize=8)
    plot = _png(fig)

    def table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
        th = "".join(f"<th>{escape(h)}</th>" for h in head)
        body = "".join(
            "<tr>"
            + "".join(
                f'<td class="{escape(c) if c in ("improved", "worse", "unresolved") else ""}">'
                f"{escape(c)}</td>"
                for c in row
            )
            + "</tr>"
            for row in rows
        )
        return f"<table><tr>{th}</tr>{body}</table>"

    return (
        '<!DOCTYPE html><html><head><meta charset="utf-8"><title>Factuality trend'
        f"</title><style>{_CSS}</style></head><body><h1>Factuality over time</h1>"
        f"{plot}<h2>Runs</h2>"
        + table(["run", "kind", "as of", "claims", *TREND_FIGURES], runs)
        + "<h2>Paired change between consecutive runs (shared claims)</h2>"
        + table(["runs", "shared claims", "figure", "delta", "95% interval", "verdict"], changes)
        + f'<p class="note">Intervals: 95% cluster bootstrap over answers, B = '
        f"{trend.n_boot}, seed {trend.seed}; changes are paired on the claims both "
        "runs share.</p></body></html>\n"
    )
