"""auditor report --format html: one self-contained file with plots."""

from __future__ import annotations

import base64
import re
from pathlib import Path

from typer.testing import CliRunner

from auditor.cli import _register_commands, app
from auditor.report.full import build_full_report
from auditor.report.html import to_html
from ledger import open_ledger
from tests._ledger_runs import Item, add_run, claim_id

LABELS = ["supported", "contradicted", "unknown", "not_factual", "stale"]


def _items(n: int, p_shift: float = 0.0) -> list[Item]:
    return [
        Item(
            f"a{i}",
            f"claim {i}-{j}",
            label,
            p=min(1.0, 0.1 + 0.2 * j + p_shift),
            votes=(("j1", 0.0), ("j2", 0.5 if j == 2 else 1.0)),
        )
        for i in range(n)
        for j, label in enumerate(LABELS)
    ]


def _images(html: str) -> list[bytes]:
    return [base64.b64decode(m) for m in re.findall(r'src="data:image/png;base64,([^"]+)"', html)]


def test_html_is_self_contained_with_plots(sqlite_url: str, tmp_path: Path) -> None:
    with open_ledger(sqlite_url) as ledger:
        old = add_run(ledger, "old", _items(6), judges=("j1", "j2"))
        run = add_run(ledger, "new", _items(8), judges=("j1", "j2"))
    _register_commands()
    out = tmp_path / "r.html"
    res = CliRunner().invoke(
        app,
        [
            "report",
            run[:12],
            "--db",
            sqlite_url,
            "--format",
            "html",
            "--out",
            str(out),
            "--bootstrap",
            "100",
        ],
    )
    assert res.exit_code == 0, res.output
    html = out.read_text()
    assert html.startswith("<!DOCTYPE html>") and "<style>" in html
    # nothing is fetched from elsewhere: no external src, no style sheet links, no scripts
    # (the only hrefs are links to flagged claims in the review queue of `auditor serve`)
    assert not re.search(r'src="(?!data:)', html) and "<script" not in html
    assert "<link" not in html
    assert all(
        h.startswith("http://127.0.0.1:8765/runs/") for h in re.findall(r'href="([^"]*)"', html)
    )
    images = _images(html)
    assert len(images) == 2  # label distribution and history; no reliability without audits
    assert all(img.startswith(b"\x89PNG") for img in images)
    assert "nothing to compare the stacked probabilities against" in html
    # both audit runs appear in the history, oldest first
    history = html[html.index("Support precision over time") : html.index("Reliability of")]
    assert history.index(old[:12]) < history.index(run[:12])
    # per-judge statistics: j2 abstained on one claim of the four judged per answer
    row = re.search(r"<td>j2</td>.*?</tr>", html)
    assert row is not None and "25.0%" in row.group(0)
    assert "Configuration" in html and run in html


def test_reliability_plot_appears_with_human_audits(sqlite_url: str) -> None:
    with open_ledger(sqlite_url) as ledger:
        run = add_run(ledger, "r", _items(10), judges=("j1", "j2"))
        ledger.record_human_audits(
            run,
            [
                (
                    claim_id(f"a{i}", f"claim {i}-{j}"),
                    "ann",
                    "supported" if j == 0 else "contradicted",
                    None,
                )
                for i in range(10)
                for j in (0, 1, 4)
            ],
        )
        report = build_full_report(ledger, run, n_boot=100)
    html = to_html(report)
    assert len(_images(html)) == 3
    assert report.reliability is not None and report.reliability.n == 30
    assert "expected calibration error" in html
    assert report.human is not None and report.human.n_used == 30
    assert "Cohen&#x27;s kappa" in html or "Cohen's kappa" in html


def test_label_shares_have_intervals_that_contain_the_share(sqlite_url: str) -> None:
    with open_ledger(sqlite_url) as ledger:
        run = add_run(ledger, "r", _items(12), judges=("j1", "j2"))
        report = build_full_report(ledger, run, n_boot=200)
    (entry,) = report.history  # one audit run; read from per-answer label counts
    assert entry["support_precision"] == report.card.figure("support_precision").value
    assert entry["n_claims"] == report.card.n_claims
    for label, (share, ci) in report.label_shares.items():
        if label in LABELS:
            assert abs(share - 0.2) < 1e-12
            assert ci is not None and ci[0] <= share <= ci[1]
