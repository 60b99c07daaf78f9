"""Rendering report cards: a rich table for the terminal, JSON and Markdown files."""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape as _rich_escape
from rich.table import Table
from rich.text import Text

from auditor.report.card import Figure, ReportCard

# C0 and C1 control characters (ESC starts terminal sequences; CR/BS overwrite text),
# DEL, and bidirectional overrides/isolates that reorder what the terminal shows.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~#])")


def strip_controls(text: object) -> str:
    """``text`` with terminal escape sequences and control characters removed (newlines
    and tabs become spaces), so untrusted text cannot move the cursor, recolour,
    retitle or hide output. Bidi overrides are removed too."""
    value = str(text)
    value = _ANSI.sub("", value)
    value = value.replace("\r\n", " ").replace("\n", " ").replace("\t", " ")
    return _CONTROL.sub("", value)


def terminal_safe(text: object) -> str:
    """Untrusted text for a rich table cell or ``console.print``: controls removed and
    rich markup (``[red]``...) escaped, so it is shown literally."""
    return _rich_escape(strip_controls(text))


def md_escape(text: object) -> str:
    """Untrusted text for one Markdown table cell or line: HTML made inert (``<`` ``>``
    ``&`` as entities), Markdown punctuation backslash-escaped, controls removed and
    line breaks flattened, so answer text can neither inject HTML nor break the table."""
    value = unicodedata.normalize("NFC", strip_controls(text))
    value = value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MD_SPECIAL.sub(r"\\\1", value)


def _md_name(text: object) -> str:
    """A name this code defines (a label, a figure and its definition): shown as it is
    unless it holds something that would break the table or inject markup."""
    value = str(text)
    if re.search(r"[<>&|`\[\]\\\n\r\x00-\x1f]", value):
        return md_escape(value)
    return value


def md_fence(text: str, info: str = "") -> list[str]:
    """``text`` in a backtick fence longer than any backtick run inside it (so the
    content cannot close the fence)."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence + info, text, fence]


def _value(figure: Figure) -> str:
    if figure.value is None:
        return "n/a (empty denominator)"
    text = f"{figure.value:.3f}"
    if figure.ci is not None:
        text += f" [{figure.ci[0]:.3f}, {figure.ci[1]:.3f}]"
    return text


def rich_tables(card: ReportCard, *, explain: bool = False) -> list[Table]:
    """Two tables: label distribution, and figures with 95% intervals. Each figure's
    definition is not a column (it would wrap into a tall narrow one at 80 columns):
    :func:`definitions_table` lists them below (``explain``), and the caption says how
    to get them otherwise."""
    labels = Table(title=f"Claims by label - run {card.run_id[:12]}", show_lines=False)
    labels.add_column("label", no_wrap=True)
    labels.add_column("claims", justify="right")
    labels.add_column("share", justify="right")
    for label, count in card.labels.items():
        share = count / card.n_claims if card.n_claims else 0.0
        labels.add_row(terminal_safe(label), str(count), f"{share:.1%}")
    figures = Table(
        title=f"Figures (95% cluster-bootstrap CI, B={card.n_boot}, clusters = answers)",
        caption="num / den: claims counted" + ("" if explain else "; definitions: --explain"),
    )
    figures.add_column("figure", no_wrap=True)
    figures.add_column("value [95% CI]", justify="right", no_wrap=True)
    figures.add_column("num / den", justify="right", no_wrap=True)
    for f in card.figures:
        figures.add_row(
            terminal_safe(f.name),
            _value(f),
            f"{f.numerator:g} / {f.denominator:g}",
        )
    return [labels, figures]


def definitions_table(card: ReportCard) -> Table:
    """What each figure of the card counts, one figure a row (two columns, so the
    definitions wrap across the width of the terminal, not in a narrow column)."""
    table = Table(
        title="What the figures count (S supported, U unsupported, K unknown, A factual)",
        box=None,
        show_header=False,
        padding=(0, 1),
    )
    table.add_column("figure", no_wrap=True, style="bold")
    table.add_column("definition", overflow="fold")
    for f in card.figures:
        table.add_row(terminal_safe(f.name), terminal_safe(f.description))
    return table


def agreement_table(agreement: Any, title: str = "Agreement with human audits") -> Table:
    """An :class:`auditor.report.agreement.Agreement` as a rich table: κ and balanced
    accuracy with their 95% intervals, exclusions, and the confusion table below."""
    a = agreement
    table = Table(
        title=title,
        caption=f"{a.n_used} of {a.n_items} claims compared on the "
        "binary mapping (supported vs contradicted/"
        "not_supported/stale)",
    )
    table.add_column("measure")
    table.add_column("value [95% CI]", justify="right")

    def num(x: float | None, ci: Any = None) -> str:
        if x is None or x != x:  # NaN: undefined
            return "n/a"
        return f"{x:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")

    table.add_row("Cohen's kappa", num(a.kappa, a.kappa_ci))
    table.add_row("balanced accuracy", num(a.bacc, a.bacc_ci))
    table.add_row("same label (all labels)", num(a.share_equal))
    for reason, n in sorted(a.excluded.items()):
        table.add_row(Text(f"excluded, {reason}"), str(n))
    for key, value in a.extra.items():
        table.add_row(key.replace("_", " "), str(value))
    cols = sorted({b for row in a.confusion.values() for b in row})
    if cols:
        table.add_section()
        table.add_row("reference \\ compared", "  ".join(cols))
        for ref, row in a.confusion.items():
            table.add_row(Text(ref), "  ".join(str(row.get(c, 0)).rjust(len(c)) for c in cols))
    return table


def _where(item: Mapping[str, Any]) -> str:
    where = f"{item.get('doc_id')}@{item.get('version')}"
    return where + ", superseded" if item.get("superseded") else where


def nearest_heading(nearest: Sequence[Mapping[str, Any]]) -> str:
    """What the nearest passages of an undecided claim are: "nearest, not relevant"
    (no deciding evidence), or "nearest, relevant but undecided" (the panel did not
    decide on relevant evidence)."""
    if any(n.get("relevant") for n in nearest):
        return "nearest, relevant but undecided"
    return "nearest, not relevant"


def deciding_text(
    decided: Mapping[str, Any] | None, nearest: Sequence[Mapping[str, Any]] = ()
) -> str:
    """One line for a claim's evidence: the deciding sentence and where it is from;
    without one, the nearest passages, said to be nearest (:func:`nearest_heading`);
    "(no evidence)" when nothing was retrieved."""
    if decided:
        return f'"{decided["text"]}" ({_where(decided)}; {decided.get("via")})'
    if nearest:
        shown = "; ".join(f'"{n["text"]}" ({_where(n)})' for n in nearest)
        return f"{nearest_heading(nearest)}: {shown}"
    return "(no evidence)"


def _plain(text: object) -> Text:
    return Text(strip_controls(text))


def flagged_list(flagged: Any) -> Table:
    """Flagged claims (contradicted, not_supported, stale, unknown), one block per
    claim so they stay legible at 80 columns: label, stacked probability, claim and
    answer ids on one line; then the claim, its error text and the deciding evidence
    sentence (or the nearest passages, said to be not deciding) in a two-column grid
    that wraps across the terminal's width."""
    table = Table(
        title="Flagged claims (review one: auditor review add RUN CLAIM_ID ...)",
        box=None,
        show_header=False,
        padding=(0, 1),
        expand=False,
    )
    table.add_column("what", no_wrap=True)
    table.add_column("text", overflow="fold")
    for i, f in enumerate(flagged):
        p = f.get("p_hallucinated")
        head = (
            f"p {'-' if p is None else f'{p:.2f}'} · claim {str(f.get('claim_id'))[:16]} · "
            f"answer {f.get('answer_id', '')}"
        )
        if i:
            table.add_row("", "")
        table.add_row(Text(strip_controls(f.get("label")), style="bold"), _plain(head))
        table.add_row("claim", _plain(f.get("claim", "")))
        errors = " / ".join(f.get("error_text") or ())
        if errors and errors.strip() != str(f.get("claim", "")).strip():
            table.add_row("error", _plain(errors))
        decided = f.get("deciding_evidence")
        nearest = f.get("nearest_evidence") or ()
        if decided:
            table.add_row("deciding", _plain(f'"{decided["text"]}"'))
            table.add_row("", _plain(f"{_where(decided)}; {decided.get('via')}"))
        elif nearest:
            table.add_row("evidence", _plain(f"{nearest_heading(nearest)}:"))
            for n in nearest:
                table.add_row("", _plain(f'"{n["text"]}" ({_where(n)})'))
        else:
            table.add_row("evidence", Text("none retrieved"))
    return table


def print_card(
    card: ReportCard,
    console: Console | None = None,
    *,
    human: Any = None,
    flagged: Any = (),
    explain: bool = False,
) -> None:
    """Print the report card to the terminal; with ``human`` (an
    :class:`~auditor.report.agreement.Agreement`) the agreement with human audits, and
    with ``flagged`` (:attr:`~auditor.report.full.FullReport.flagged`) the flagged claims
    with their ids and deciding evidence; with ``explain`` what each figure counts.
    Text from the ledger is printed literally (never read as console markup)."""
    console = console or Console()
    for table in rich_tables(card, explain=explain):
        console.print(table)
    if explain:
        console.print(definitions_table(card))
    if flagged:
        console.print(flagged_list(flagged))
    if human is not None:
        console.print(agreement_table(human))
    for note in card.warnings:
        console.print(f"[yellow]warning:[/yellow] {terminal_safe(note)}")


def print_report(report: Any, console: Console | None = None, *, explain: bool = False) -> None:
    """Print a :class:`~auditor.report.full.FullReport` in the table format: the card,
    the flagged claims and the agreement with human audits when there are any; with
    ``explain`` what each figure counts."""
    print_card(report.card, console, human=report.human, flagged=report.flagged, explain=explain)


def to_json(card: ReportCard) -> str:
    """The report card as pretty JSON."""
    return json.dumps(card.to_dict(), indent=2, sort_keys=True, default=str) + "\n"


def to_markdown(card: ReportCard) -> str:
    """The report card as a Markdown document."""
    lines = [
        f"# Report card - run `{card.run_id[:12]}`",
        "",
        f"{card.n_answers} answers, {card.n_claims} claims. Intervals: 95% cluster "
        f"bootstrap (clusters = answers, B = {card.n_boot}, seed {card.seed}, "
        "percentile method).",
        "",
        "## Claims by label",
        "",
        "| label | claims | share |",
        "|---|---:|---:|",
    ]
    for label, count in card.labels.items():
        share = count / card.n_claims if card.n_claims else 0.0
        lines.append(f"| {_md_name(label)} | {count} | {share:.1%} |")
    if card.warnings:
        lines += ["", "## Warnings", ""] + [f"- {md_escape(note)}" for note in card.warnings]
    lines += [
        "",
        "## Figures",
        "",
        "| figure | value [95% CI] | num / den | definition |",
        "|---|---:|---:|---|",
    ]
    for f in card.figures:
        lines.append(
            f"| {_md_name(f.name)} | {_value(f)} | "
            f"{f.numerator:g} / {f.denominator:g} | {_md_name(f.description)} |"
        )
    config = json.dumps(_jsonable(card.config), indent=2, sort_keys=True, default=str)
    lines += ["", "## Configuration", "", *md_fence(config, "json"), ""]
    return "\n".join(lines)


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def comparison_tables(comparison: Any) -> list[Table]:
    """A :class:`auditor.report.compare.Comparison` as two rich tables that stay legible
    at 80 columns: paired differences with their verdicts (each figure's better
    direction is in its verdict), and the label transitions
    (:func:`transitions_table`)."""
    c = comparison
    figures = Table(
        title=f"Run B {c.run_b[:12]} - run A {c.run_a[:12]} on {c.n_shared_claims} "
        f"shared claims, {c.n_shared_answers} answers (95% paired CI, "
        f"B={c.n_boot})"
    )
    figures.add_column("figure", no_wrap=True)
    figures.add_column("A", justify="right", no_wrap=True)
    figures.add_column("B", justify="right", no_wrap=True)
    figures.add_column("B - A [95% CI]", justify="right")
    figures.add_column("verdict", no_wrap=True)

    def num(x: float | None) -> str:
        return "n/a" if x is None else f"{x:.3f}"

    for f in c.figures:
        delta = num(f.delta) + (f" [{f.ci[0]:.3f}, {f.ci[1]:.3f}]" if f.ci else "")
        figures.add_row(
            terminal_safe(f.name),
            num(f.value_a),
            num(f.value_b),
            delta,
            terminal_safe(f.verdict),
        )
    transitions = transitions_table(
        [("A -> B", c.transitions)], title="Label in run A -> label in run B (shared claims)"
    )
    return [figures, transitions]


UNCHANGED = "(label unchanged)"
"""The ``from`` of a transition row that counts the claims that kept their label."""


def transition_rows(
    steps: Sequence[tuple[str, Mapping[str, Mapping[str, int]]]],
) -> list[tuple[str, str, str, int]]:
    """Label transitions as rows ``(step, from, to, claims)``: per step (named on its
    first row only), the claims whose label changed, most first, then how many kept
    theirs (``from`` :data:`UNCHANGED`, ``to`` empty)."""
    rows: list[tuple[str, str, str, int]] = []
    for name, matrix in steps:
        changed = sorted(
            ((a, b, k) for a, row in matrix.items() for b, k in row.items() if a != b and k),
            key=lambda t: (-t[2], t[0], t[1]),
        )
        kept = sum(k for a, row in matrix.items() for b, k in row.items() if a == b)
        first = name
        for a, b, k in changed:
            rows.append((first, a, b, k))
            first = ""
        rows.append((first, UNCHANGED, "", kept))
    return rows


def transitions_table(
    steps: Sequence[tuple[str, Mapping[str, Mapping[str, int]]]], *, title: str
) -> Table:
    """Label transitions (:func:`transition_rows`) as a table narrow at any number of
    labels (a label-by-label matrix needs some 100 columns), one section per step."""
    table = Table(title=title, title_justify="left")
    table.add_column("runs", no_wrap=True)
    table.add_column("from", no_wrap=True)
    table.add_column("to", no_wrap=True)
    table.add_column("claims", justify="right", no_wrap=True)
    for n, (step, a, b, k) in enumerate(transition_rows(steps)):
        if step and n:
            table.add_section()
        shown = Text(a, style="dim") if a == UNCHANGED else terminal_safe(a)
        table.add_row(terminal_safe(step), shown, terminal_safe(b), str(k))
    return table
