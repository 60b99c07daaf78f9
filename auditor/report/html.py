"""The report as one self-contained HTML file: inline CSS, plots as base64 PNG.

Plots (matplotlib, Agg backend, no display needed): label distribution with 95%
intervals, support precision of every audit run over time with intervals,
reliability diagram of the stacked probabilities against human audits (or a note
that there is nothing to compare against) and, with a comparison, the paired
differences with their intervals.
"""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any
from urllib.parse import quote

import numpy as np

from auditor.report.agreement import Agreement
from auditor.report.compare import Comparison
from auditor.report.full import FullReport
from auditor.report.render import nearest_heading

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2em auto;
padding:0 1.5em;max-width:1000px;color:#222;line-height:1.4}
h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ddd;padding-bottom:.2em;
margin-top:1.8em}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em}
th,td{border:1px solid #ddd;padding:.25em .6em;text-align:left}
td.n{text-align:right;font-variant-numeric:tabular-nums}
th{background:#f4f4f4;white-space:nowrap}
.warn{background:#fff4e0;border-left:4px solid #e69500;padding:.4em .8em;margin:.4em 0}
.note{color:#555;font-style:italic}
.improved{color:#1a7f37;font-weight:bold}.worse{color:#c62828;font-weight:bold}
.unresolved{color:#666}code,pre{font-size:.85em}pre{background:#f7f7f7;padding:.8em;
overflow:auto;white-space:pre-wrap;word-break:break-word}img{max-width:100%;height:auto}
ol.flagged{list-style:none;padding:0;margin:.6em 0}
li.flag{border:1px solid #ddd;border-left:4px solid #bbb;border-radius:4px;padding:.4em .8em;
margin:.5em 0}li.flag p{margin:.25em 0}
.flag-head{font-size:.88em;color:#555}.flag-claim{font-weight:600}
.flag-error,.flag-reason{font-size:.88em;color:#555}.flag-evidence{font-size:.92em}
.what{font-weight:600;color:#555}.what.nearest{font-style:italic}
ul.nearest{margin:.2em 0;padding-left:1.3em}
.label{display:inline-block;border-radius:10px;padding:0 .55em;font-size:.9em;font-weight:600;
background:#eaeef2;color:#24292f}.l-contradicted{background:#ffebe9;color:#a40e26}
.l-not_supported{background:#fff1e5;color:#953800}.l-stale{background:#fbefff;color:#6e40c9}
.l-unknown{background:#eaeef2;color:#424a53}
.scroll{overflow-x:auto;max-width:100%}
"""


def _png(fig: Any) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return f'<img alt="plot" src="data:image/png;base64,{data}">'


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _errors(values: Sequence[float], cis: Sequence[tuple[float, float] | None]) -> np.ndarray:
    lo = [v - ci[0] if ci else 0.0 for v, ci in zip(values, cis, strict=True)]
    hi = [ci[1] - v if ci else 0.0 for v, ci in zip(values, cis, strict=True)]
    return np.clip(np.array([lo, hi], dtype=np.float64), 0.0, None)


def label_plot(shares: Mapping[str, tuple[float, tuple[float, float] | None]]) -> str:
    """Bar chart of the label shares with 95% interval whiskers (an <img> tag)."""
    plt = _pyplot()
    names = list(shares)
    values = [shares[n][0] for n in names]
    fig, ax = plt.subplots(figsize=(7, 3))
    ax.bar(
        names,
        values,
        yerr=_errors(values, [shares[n][1] for n in names]),
        capsize=4,
        color="#4c78a8",
    )
    ax.set_ylabel("share of claims")
    ax.set_ylim(0, 1)
    ax.set_title("Claims by label (95% cluster-bootstrap intervals)")
    ax.tick_params(axis="x", labelrotation=20)
    return _png(fig)


def history_plot(
    history: Sequence[Mapping[str, Any]],
    current: str,
    *,
    title: str = "Support precision across audit runs (red: this run)",
) -> str:
    """Support precision of every audit run, in creation order, with intervals."""
    plt = _pyplot()
    points = [h for h in history if h["support_precision"] is not None]
    fig, ax = plt.subplots(figsize=(7, 3))
    if points:
        x = np.arange(len(points))
        values = [float(h["support_precision"]) for h in points]
        cis = [tuple(h["ci"]) if h["ci"] else None for h in points]
        colors = ["#e45756" if h["run_id"] == current else "#4c78a8" for h in points]
        ax.errorbar(x, values, yerr=_errors(values, cis), fmt="none", ecolor="#888", capsize=4)
        ax.scatter(x, values, c=colors, zorder=3)
        ax.plot(x, values, color="#bbb", zorder=1)
        labels = [f"{h['run_id'][:8]}\n{str(h['created_at'])[:10]}" for h in points]
        ax.set_xticks(x, labels, fontsize=7)
    ax.set_ylim(0, 1.02)
    ax.set_ylabel("support precision")
    ax.set_title(title)
    return _png(fig)


def reliability_plot(bins: Sequence[Mapping[str, float]]) -> str:
    """Reliability diagram: observed hallucination share against mean stacked
    probability per bin (marker area ~ claims in the bin)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(4, 4))
    ax.plot([0, 1], [0, 1], "--", color="#999", label="perfect calibration")
    mean_p = [b["mean_p"] for b in bins]
    observed = [b["observed"] for b in bins]
    sizes = [20 + 200 * b["n"] / max(x["n"] for x in bins) for b in bins]
    ax.plot(mean_p, observed, color="#4c78a8")
    ax.scatter(mean_p, observed, s=sizes, color="#4c78a8", zorder=3, label="bins")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("stacked P(hallucinated)")
    ax.set_ylabel("share hallucinated (human audits)")
    ax.legend(loc="upper left", fontsize=8)
    return _png(fig)


def comparison_plot(c: Comparison) -> str:
    """Forest plot of the paired differences (B - A) with their 95% intervals."""
    plt = _pyplot()
    rows = [f for f in c.figures if f.delta is not None]
    fig, ax = plt.subplots(figsize=(7, 0.4 * max(len(rows), 1) + 1))
    y = np.arange(len(rows))
    deltas = [float(f.delta) for f in rows if f.delta is not None]
    colors = {"improved": "#1a7f37", "worse": "#c62828"}
    ax.errorbar(
        deltas, y, xerr=_errors(deltas, [f.ci for f in rows]), fmt="none", ecolor="#888", capsize=3
    )
    ax.scatter(deltas, y, c=[colors.get(f.verdict, "#666") for f in rows], zorder=3)
    ax.axvline(0, color="#999", lw=1)
    ax.set_yticks(y, [f.name for f in rows], fontsize=8)
    ax.set_xlabel("run B - run A (95% paired interval)")
    return _png(fig)


def _table(
    headers: Sequence[str], rows: Sequence[Sequence[Any]], numeric: Sequence[bool] | None = None
) -> str:
    numeric = numeric or [False] * len(headers)
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = []
    for row in rows:
        cells = "".join(
            f'<td class="n">{cell}</td>' if num else f"<td>{cell}</td>"
            for cell, num in zip(row, numeric, strict=True)
        )
        body.append(f"<tr>{cells}</tr>")
    # a table wider than a narrow window scrolls on its own, not the whole page
    return f'<div class="scroll"><table><tr>{head}</tr>{"".join(body)}</table></div>'


def _fmt(x: float | None, ci: Sequence[float] | None = None) -> str:
    if x is None or not np.isfinite(x):
        return "n/a"
    text = f"{x:.3f}"
    if ci:
        text += f" [{ci[0]:.3f}, {ci[1]:.3f}]"
    return text


def _agreement_html(a: Agreement) -> str:
    parts = [
        f"<p>{a.n_used} of {a.n_items} claims compared on the binary mapping "
        "(supported vs contradicted / not_supported / stale; unknown and not_factual "
        "excluded).</p>",
        _table(
            ["measure", "value [95% CI]"],
            [
                ["Cohen's kappa", _fmt(a.kappa, a.kappa_ci)],
                ["balanced accuracy", _fmt(a.bacc, a.bacc_ci)],
                ["same label (all labels)", _fmt(a.share_equal)],
                *[[f"excluded: {escape(k)}", str(v)] for k, v in sorted(a.excluded.items())],
                *[[escape(k.replace("_", " ")), escape(str(v))] for k, v in a.extra.items()],
            ],
        ),
    ]
    cols = sorted({b for row in a.confusion.values() for b in row})
    parts.append(
        _table(
            ["reference \\ compared", *cols],
            [[escape(r), *[str(row.get(c, 0)) for c in cols]] for r, row in a.confusion.items()],
            [False] + [True] * len(cols),
        )
    )
    return "".join(parts)


DEFAULT_REVIEW_BASE = "http://127.0.0.1:8765"
"""Where ``auditor serve`` listens by default: flagged claims link to its review queue."""


def review_link(base: str, run_id: str, claim_id: str) -> str:
    """The URL of a claim in the review queue of ``auditor serve`` at ``base``."""
    claim = quote(claim_id)
    return f"{base.rstrip('/')}/runs/{quote(run_id)}/review?claim={claim}#claim-{claim}"


def to_html(report: FullReport, *, review_base: str | None = DEFAULT_REVIEW_BASE) -> str:
    """The whole report as one self-contained HTML document; flagged claims link to the
    review queue of ``auditor serve`` at ``review_base`` (None: no links)."""
    card = report.card
    head = [
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>Report card - run {escape(card.run_id[:12])}</title>",
        f"<style>{_CSS}</style></head><body>",
    ]
    return "\n".join([*head, report_body(report, review_base=review_base), "</body></html>"]) + "\n"


def report_css() -> str:
    """The report's style sheet (inline in :func:`to_html`, served by ``auditor serve``)."""
    return _CSS


def report_body(report: FullReport, *, review_base: str | None = DEFAULT_REVIEW_BASE) -> str:
    """The report's HTML body (every section of :func:`to_html`, without the document
    around it), for pages that embed it; all text from the ledger is escaped."""
    card = report.card
    out = [
        f"<h1>Report card - run <code>{escape(card.run_id[:12])}</code></h1>",
        f"<p>{card.n_answers} answers, {card.n_claims} claims. Intervals: 95% cluster "
        f"bootstrap (clusters = answers, B = {card.n_boot}, seed {card.seed}, percentile "
        "method).</p>",
    ]
    for note in card.warnings:
        out.append(f'<div class="warn">warning: {escape(note)}</div>')
    out.append("<h2>Figures</h2>")
    out.append(
        _table(
            ["figure", "value [95% CI]", "num / den", "definition"],
            [
                [
                    escape(f.name),
                    _fmt(f.value, f.ci),
                    f"{f.numerator:g} / {f.denominator:g}",
                    escape(f.description),
                ]
                for f in card.figures
            ],
            [False, True, True, False],
        )
    )
    out.append("<h2>Claims by label</h2>")
    out.append(
        _table(
            ["label", "claims", "share [95% CI]"],
            [
                [escape(k), str(card.labels.get(k, 0)), _fmt(v, ci)]
                for k, (v, ci) in report.label_shares.items()
            ],
            [False, True, True],
        )
    )
    if report.label_shares:
        out.append(label_plot(report.label_shares))
    if report.flagged:
        out.append("<h2>Flagged claims</h2>")
        out.append(
            '<p class="note">Contradicted, not supported, stale and unknown claims'
            + (
                ", each linked to its place in the review queue of <code>auditor serve</code>"
                if review_base is not None
                else ""
            )
            + ".</p>"
        )
        out.append(_flagged_html(card.run_id, report.flagged, review_base))
    out.append("<h2>Support precision over time</h2>")
    if report.history:
        out.append(history_plot(report.history, card.run_id))
        out.append(
            _table(
                ["run", "created", "as of", "claims", "support precision [95% CI]"],
                [
                    [
                        f"<code>{escape(h['run_id'][:12])}</code>",
                        escape(str(h["created_at"])[:19]),
                        escape(str(h["as_of"])[:10]),
                        str(h["n_claims"]),
                        _fmt(h["support_precision"], h["ci"]),
                    ]
                    for h in report.history
                ],
                [False, False, False, True, True],
            )
        )
    else:
        out.append('<p class="note">no audit runs in the ledger to plot.</p>')
    out.append("<h2>Reliability of the stacked probabilities</h2>")
    if report.reliability is not None:
        out.append(
            f"<p>{report.reliability.n} claims with a stacked probability and a "
            f"human audit; expected calibration error "
            f"{_fmt(report.reliability.ece)}.</p>"
        )
        out.append(reliability_plot(report.reliability.bins))
    else:
        out.append(
            '<p class="note">no human audits with a binary label on claims with a '
            "stacked probability: there is nothing to compare the stacked "
            "probabilities against.</p>"
        )
    out.append("<h2>Agreement with human audits</h2>")
    if report.human is not None:
        out.append(_agreement_html(report.human))
    else:
        out.append('<p class="note">no human audits for this run.</p>')
    out.append("<h2>Judges: votes and abstentions</h2>")
    out.append(
        _table(
            [
                "judge",
                "digest",
                "votes",
                "supported",
                "hallucinated",
                "abstain rate",
                "errors",
                "mean latency s",
            ],
            [
                [
                    escape(j["judge_name"]),
                    f"<code>{escape(j['judge_digest'][:12])}</code>",
                    str(j["n"]),
                    str(j["n_supported"]),
                    str(j["n_hallucinated"]),
                    f"{j['abstain_rate']:.1%}",
                    str(j["n_error"]),
                    f"{j['mean_latency_s']:.4f}",
                ]
                for j in report.judges
            ],
            [False, False, True, True, True, True, True, True],
        )
    )
    if len(report.verdict_versions) > 1:
        out.append("<h2>Verdict versions (bridged panels)</h2>")
        out.append(
            _table(
                ["panel", "stacker", "claims", "version"],
                [
                    [
                        f"{escape(str(v['panel_name'] or ''))} "
                        f"<code>{escape(v['panel_digest'][:12])}</code>",
                        f"<code>{escape(v['stacker_digest'][:12])}</code>",
                        str(v["n_claims"]),
                        "own" if v["own"] else "bridged",
                    ]
                    for v in report.verdict_versions
                ],
            )
        )
    if report.comparison is not None:
        out.append(_comparison_html(report.comparison))
    for note in report.notes:
        out.append(f'<p class="note">{escape(note)}</p>')
    out.append("<h2>Configuration</h2>")
    config = json.dumps(json.loads(json.dumps(card.config, default=str)), indent=2, sort_keys=True)
    out.append(f"<pre>{escape(config)}</pre>")
    return "\n".join(out)


def _claim_cell(run_id: str, claim_id: str, review_base: str | None) -> str:
    shown = f"<code>{escape(claim_id[:16])}</code>"
    if review_base is None:
        return shown
    return f'<a href="{escape(review_link(review_base, run_id, claim_id))}">{shown}</a>'


def _marked(text: str, marks: Sequence[str]) -> tuple[str, list[str]]:
    """``text`` escaped with each of ``marks`` it holds in <mark> (the first occurrence
    after the previous one), and the marks it does not hold."""
    out, rest, at = [], [], 0
    for m in marks:
        i = text.find(m, at) if m else -1
        if i < 0:
            rest.append(m)
            continue
        out.append(escape(text[at:i]) + f"<mark>{escape(m)}</mark>")
        at = i + len(m)
    return "".join(out) + escape(text[at:]), rest


def _flagged_html(
    run_id: str, flagged: Sequence[Mapping[str, Any]], review_base: str | None
) -> str:
    """Flagged claims as a list of blocks, one per claim (a table of eight columns wraps
    every cell into a tall narrow column on a narrow window): label, stacked
    probability, claim id (linked to the review queue) and answer; the claim with its
    error text marked; the deciding sentence or the nearest passages; the label's reason."""
    items = []
    for f in flagged:
        label = str(f.get("label") or "")
        claim, rest = _marked(str(f.get("claim") or ""), f.get("error_text") or ())
        errors = " / ".join(f"<mark>{escape(t)}</mark>" for t in rest)
        items.append(
            '<li class="flag">'
            f'<div class="flag-head"><span class="label l-{escape(label)}">{escape(label)}</span>'
            f" p {_fmt(f.get('p_hallucinated'), None)} &middot; claim "
            f"{_claim_cell(run_id, str(f['claim_id']), review_base)} &middot; answer "
            f"<code>{escape(str(f.get('answer_id')))}</code></div>"
            f'<p class="flag-claim">{claim}</p>'
            + (f'<p class="flag-error">error: {errors}</p>' if errors else "")
            + f'<div class="flag-evidence">'
            f"{_deciding_html(f.get('deciding_evidence'), f.get('nearest_evidence'), lead=True)}"
            "</div>"
            + (f'<p class="flag-reason">{escape(str(f["reason"]))}</p>' if f.get("reason") else "")
            + "</li>"
        )
    return f'<ol class="flagged">{"".join(items)}</ol>'


def _where(item: Mapping[str, Any]) -> str:
    where = f"{item.get('doc_id')}@{item.get('version')}"
    return where + ", superseded" if item.get("superseded") else where


def _deciding_html(
    decided: Mapping[str, Any] | None,
    nearest: Sequence[Mapping[str, Any]] | None = None,
    *,
    lead: bool = False,
) -> str:
    """The deciding sentence; without one, the nearest passages under a "nearest, not
    relevant" heading (:func:`auditor.report.render.nearest_heading`). ``lead``: say
    which it is before it ("deciding:")."""
    if decided:
        return (
            ('<span class="what">deciding:</span> ' if lead else "")
            + f"&ldquo;{escape(str(decided['text']))}&rdquo; <small>({escape(_where(decided))}; "
            f"{escape(str(decided.get('via')))})</small>"
        )
    if nearest:
        items = "".join(
            f"<li>&ldquo;{escape(str(n['text']))}&rdquo; <small>({escape(_where(n))})</small></li>"
            for n in nearest
        )
        return (
            f'<span class="what nearest">{escape(nearest_heading(nearest))}:</span>'
            f'<ul class="nearest">{items}</ul>'
        )
    return '<span class="note">no evidence retrieved</span>'


def _comparison_html(c: Comparison) -> str:
    parts = [
        "<h2>Comparison</h2>",
        f"<p>Run B <code>{escape(c.run_b[:12])}</code> against run A "
        f"<code>{escape(c.run_a[:12])}</code> on {c.n_shared_claims} shared claims in "
        f"{c.n_shared_answers} shared answers ({c.n_only_a} claims only in A, "
        f"{c.n_only_b} only in B). Differences are B - A with 95% paired cluster-"
        f"bootstrap intervals (B = {c.n_boot}, same resample for both runs).</p>",
        _table(
            ["figure", "A", "B", "B - A [95% CI]", "better", "verdict"],
            [
                [
                    escape(f.name),
                    _fmt(f.value_a),
                    _fmt(f.value_b),
                    _fmt(f.delta, f.ci),
                    f.better,
                    f'<span class="{f.verdict}">{escape(f.verdict)}</span>',
                ]
                for f in c.figures
            ],
            [False, True, True, True, False, False],
        ),
    ]
    if any(f.delta is not None for f in c.figures):
        parts.append(comparison_plot(c))
    cols = sorted({b for row in c.transitions.values() for b in row})
    parts.append("<p>Label in A (rows) against label in B (columns), shared claims:</p>")
    parts.append(
        _table(
            ["A \\ B", *cols],
            [[escape(a), *[str(row.get(b, 0)) for b in cols]] for a, row in c.transitions.items()],
            [False] + [True] * len(cols),
        )
    )
    return "".join(parts)
