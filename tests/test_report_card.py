"""Report-card figures from claim rows (docs/report-card.md denominators)."""

from __future__ import annotations

from dataclasses import dataclass

from auditor.report.card import build_report_card
from auditor.report.render import to_json, to_markdown


@dataclass
class Row:
    answer_id: str
    factual: bool
    label: str | None
    n_evidence: int = 1
    n_inline_evidence: int = 0
    n_dated_evidence: int = 1
    text: str = "A claim."


def test_figures_follow_the_design_denominators() -> None:
    rows = [
        Row("a1", True, "supported"),
        Row("a1", True, "contradicted"),
        Row("a1", True, "unknown", n_evidence=0),
        Row("a2", True, "supported", n_inline_evidence=1),
        Row("a2", True, "stale", n_dated_evidence=0),
        Row("a2", False, "not_factual", 0),
    ]
    card = build_report_card("run", rows, n_boot=200)
    assert card.labels["supported"] == 2 and card.labels["not_factual"] == 1
    sp = card.figure("support_precision")
    assert (sp.numerator, sp.denominator) == (2, 4) and sp.value == 0.5
    assert sp.ci is not None and sp.ci[0] <= 0.5 <= sp.ci[1]
    assert card.figure("decidable_rate").value == 4 / 5
    assert card.figure("unknown_rate").value == 1 / 5
    assert card.figure("citation_coverage").value == 1 / 5
    assert card.figure("undisclosed_update_share").value == 1 / 4
    assert card.figure("not_factual_share").value == 1 / 6


def test_support_precision_is_none_when_nothing_is_decidable() -> None:
    rows = [Row("a1", True, "unknown"), Row("a2", False, "not_factual")]
    card = build_report_card("run", rows, n_boot=50)
    sp = card.figure("support_precision")
    assert sp.value is None and sp.ci is None
    assert '"value": null' in to_json(card)
    assert "n/a (empty denominator)" in to_markdown(card)


def test_same_seed_same_intervals() -> None:
    rows = [Row(f"a{i % 7}", True, "supported" if i % 3 else "contradicted") for i in range(60)]
    a = build_report_card("r", rows, n_boot=300, seed=3).figure("support_precision").ci
    b = build_report_card("r", rows, n_boot=300, seed=3).figure("support_precision").ci
    assert a == b


def test_a_non_admissible_stacker_is_flagged_on_the_card() -> None:
    rows = [Row("a1", True, "supported")]
    config = {
        "status": "complete",
        "components": {"stacker": {"name": "raim", "info": {"admissible": False}}},
    }
    card = build_report_card("run", rows, config=config, n_boot=20)
    assert any("admissibility" in w for w in card.warnings)
    assert "## Warnings" in to_markdown(card)
    ok = build_report_card("run", rows, config={"status": "complete"}, n_boot=20)
    assert ok.warnings == [] or list(ok.warnings) == []


def test_time_scoped_share_counts_claims_that_state_their_time() -> None:
    rows = [
        Row("a1", True, "supported", text="From 2004 to 2005, Ada chaired the board."),
        Row("a1", True, "supported", text="Ada chairs the board."),
        Row("a2", True, "stale", text="As of 2010, the fare was 2 euros."),
        Row("a2", False, "not_factual", text="In 2004, hello?"),
    ]
    figure = build_report_card("run", rows, n_boot=50).figure("time_scoped_share")
    assert (figure.numerator, figure.denominator) == (2, 3)
