"""auditor report RUN --compare RUN2: paired differences on the shared claims."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from typer.testing import CliRunner

from auditor.cli import _register_commands, app
from auditor.report.compare import compare_runs
from ledger import ClaimResult, open_ledger
from tests._ledger_runs import Item, add_run, claim_id


def _items(n_answers: int, labels: list[str], prefix: str = "a") -> list[Item]:
    return [
        Item(f"{prefix}{i}", f"claim {i}-{j}", label)
        for i in range(n_answers)
        for j, label in enumerate(labels)
    ]


def test_a_clear_improvement_is_improved_and_a_clear_loss_is_worse(sqlite_url: str) -> None:
    with open_ledger(sqlite_url) as ledger:
        a = add_run(ledger, "A", _items(30, ["supported", "contradicted", "unknown", "unknown"]))
        b = add_run(ledger, "B", _items(30, ["supported", "supported", "supported", "unknown"]))
        ca, cb = ledger.claim_results(a), ledger.claim_results(b)
    comp = compare_runs(a, ca, b, cb, n_boot=400, seed=1)
    assert comp.n_shared_claims == 120 and comp.n_shared_answers == 30
    sp = comp.figure("support_precision")
    assert sp.value_a == 0.5 and sp.value_b == 1.0 and sp.delta == 0.5
    assert sp.verdict == "improved" and sp.better == "higher"
    unknown = comp.figure("unknown_rate")
    assert unknown.delta is not None and np.isclose(unknown.delta, 0.25 - 0.5)
    assert unknown.verdict == "improved" and unknown.better == "lower"
    reverse = compare_runs(b, cb, a, ca, n_boot=400, seed=1)
    assert reverse.figure("support_precision").verdict == "worse"
    assert reverse.figure("unknown_rate").verdict == "worse"
    assert comp.transitions["contradicted"] == {"supported": 30}
    assert comp.figure("not_factual_share").verdict in ("no direction", "undefined")


def test_paired_interval_is_narrower_than_unpaired_and_zero_change_is_unresolved(
    sqlite_url: str,
) -> None:
    rng = np.random.default_rng(0)
    labels = rng.choice(["supported", "not_supported"], size=(40, 5), p=[0.6, 0.4])
    a_items = [Item(f"a{i}", f"c{i}-{j}", str(labels[i, j])) for i in range(40) for j in range(5)]
    # B flips exactly one claim per answer for 4 answers: a tiny change
    b_items = [
        Item(
            it.answer_id,
            it.text,
            "supported" if it.text.endswith("-0") and int(it.answer_id[1:]) < 4 else it.label,
        )
        for it in a_items
    ]
    with open_ledger(sqlite_url) as ledger:
        a = add_run(ledger, "A", a_items)
        b = add_run(ledger, "B", b_items)
        ca, cb = ledger.claim_results(a), ledger.claim_results(b)
    comp = compare_runs(a, ca, b, cb, n_boot=500, seed=0)
    sp = comp.figure("support_precision")
    assert sp.ci is not None and sp.delta is not None and sp.delta >= 0
    # the same run compared with itself: zero difference on every resample
    same = compare_runs(a, ca, a, ca, n_boot=200).figure("support_precision")
    assert same.delta == 0 and same.ci == (0.0, 0.0) and same.verdict == "unresolved"
    from auditor.report.card import build_report_card

    ci_a = build_report_card(a, ca, n_boot=500).figure("support_precision").ci
    assert ci_a is not None
    assert (sp.ci[1] - sp.ci[0]) < (ci_a[1] - ci_a[0])  # pairing removes shared noise


def test_only_shared_claims_count(sqlite_url: str) -> None:
    with open_ledger(sqlite_url) as ledger:
        a = add_run(ledger, "A", _items(10, ["supported", "contradicted"]))
        b_items = _items(10, ["supported", "contradicted"])[:10] + _items(
            5, ["supported"], prefix="new"
        )
        b = add_run(ledger, "B", b_items)
        comp = compare_runs(a, ledger.claim_results(a), b, ledger.claim_results(b), n_boot=50)
    assert comp.n_shared_claims == 10 and comp.n_only_a == 10 and comp.n_only_b == 5
    assert comp.n_shared_answers == 5
    assert claim_id("new0", "claim 0-0") not in {c.claim_id for c in ledger_claims(sqlite_url, a)}


def ledger_claims(url: str, run_id: str) -> list[ClaimResult]:
    with open_ledger(url) as ledger:
        return ledger.claim_results(run_id)


def test_no_shared_claim_gives_undefined_not_a_crash(sqlite_url: str) -> None:
    with open_ledger(sqlite_url) as ledger:
        a = add_run(ledger, "A", _items(3, ["supported"]))
        b = add_run(ledger, "B", _items(3, ["supported"], prefix="z"))
        comp = compare_runs(a, ledger.claim_results(a), b, ledger.claim_results(b), n_boot=50)
    assert comp.n_shared_claims == 0
    assert all(f.verdict == "undefined" and f.delta is None for f in comp.figures)


def test_cli_compare_in_every_format(sqlite_url: str, tmp_path: Path) -> None:
    _register_commands()
    with open_ledger(sqlite_url) as ledger:
        a = add_run(ledger, "A", _items(12, ["supported", "contradicted", "unknown"]))
        b = add_run(ledger, "B", _items(12, ["supported", "supported", "unknown"]))
    runner = CliRunner()
    out = tmp_path / "cmp.json"
    res = runner.invoke(
        app,
        [
            "report",
            a[:10],
            "--compare",
            b[:10],
            "--db",
            sqlite_url,
            "--format",
            "json",
            "--out",
            str(out),
            "--bootstrap",
            "200",
        ],
    )
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    fig = data["comparison"]["figures"]["support_precision"]
    assert fig["verdict"] == "improved" and fig["delta"] == 0.5
    assert data["comparison"]["bootstrap"]["paired"] is True
    md = runner.invoke(
        app,
        [
            "report",
            a[:10],
            "--compare",
            b[:10],
            "--db",
            sqlite_url,
            "--format",
            "md",
            "--bootstrap",
            "100",
        ],
    )
    assert md.exit_code == 0 and "## Comparison" in md.output and "**improved**" in md.output
    html = tmp_path / "cmp.html"
    res = runner.invoke(
        app,
        [
            "report",
            a[:10],
            "--compare",
            b[:10],
            "--db",
            sqlite_url,
            "--format",
            "html",
            "--out",
            str(html),
            "--bootstrap",
            "100",
        ],
    )
    assert res.exit_code == 0, res.output
    assert '<span class="improved">improved</span>' in html.read_text()
    bad = runner.invoke(app, ["report", a[:10], "--compare", "nope", "--db", sqlite_url])
    assert bad.exit_code != 0 and "nope" in str(bad.exception)
