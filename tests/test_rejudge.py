"""auditor rejudge: new votes and verdicts beside the old ones, on the stored evidence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from auditor.bridging import rejudge, stored_run
from auditor.cli import _register_commands, app
from auditor.errors import ConfigError
from auditor.judges.panel import load_panel
from auditor.stacking.model import Stacker
from ledger import open_ledger
from tests._ledger_runs import Item, add_run, claim_id

MEMBERS = ("content_overlap", "numeric_consistency")
EVIDENCE = "The Harbour Bridge opened to traffic in 1990 after four years of work."


def _items() -> list[Item]:
    items = []
    for i in range(6):
        items.append(
            Item(
                f"a{i}", "The Harbour Bridge opened to traffic in 1990.", "supported", 0.1, EVIDENCE
            )
        )
        # the old panel caught this one in half of the answers only
        items.append(
            Item(
                f"a{i}",
                "The Harbour Bridge opened to traffic in 1985.",
                "contradicted" if i < 3 else "supported",
                0.2,
                EVIDENCE,
            )
        )
    return items


def _panel(tmp_path: Path) -> tuple[Path, Path]:
    toml = tmp_path / "panel.toml"
    toml.write_text(
        'name = "bridge-test"\n' + "".join(f'[[judges]]\nname = "{m}"\n' for m in MEMBERS)
    )
    stacker = tmp_path / "stacker.json"
    Stacker(members=MEMBERS, coef=(2.0, 4.0), intercept=-3.0, fitted_on="test").save(stacker)
    return toml, stacker


def test_stored_evidence_is_rebuilt_from_the_ledger(sqlite_url: str) -> None:
    with open_ledger(sqlite_url) as ledger:
        run = add_run(ledger, "old", _items())
        stored = stored_run(ledger, run)
    assert len(stored.audits) == 12 and set(stored.answers) == {f"a{i}" for i in range(6)}
    ev = stored.audits[0].evidence
    assert [h.chunk.text for h in ev.current] == [EVIDENCE] and ev.superseded == ()
    assert ev.best_current == pytest.approx(0.9)
    assert ev.current[0].document.text == EVIDENCE


def test_rejudge_adds_beside_the_old_and_is_idempotent(ledger_url: str, tmp_path: Path) -> None:
    from auditor.stacking.model import load_stacker

    toml, stacker_path = _panel(tmp_path)
    panel, stacker = load_panel(toml), load_stacker(stacker_path)
    with open_ledger(ledger_url) as ledger:
        run = add_run(ledger, "old", _items())
        votes_before = ledger.count("judge_vote")
        old_labels = [c.label for c in ledger.claim_results(run)]
        result = rejudge(ledger, run, panel, stacker, n_boot=200)
        assert not result.reused
        assert result.votes_written == 12 * 2 and result.verdicts_written == 12
        assert ledger.count("judge_vote") == votes_before + 24
        assert ledger.count("verdict") == 24
        # the run's own verdicts are still what claim_results returns by default
        assert [c.label for c in ledger.claim_results(run)] == old_labels
        new = {
            c.claim_id: c
            for c in ledger.claim_results(
                run, panel_digest=panel.digest, stacker_digest=stacker.digest
            )
        }
        wrong = new[claim_id("a0", "The Harbour Bridge opened to traffic in 1985.")]
        right = new[claim_id("a0", "The Harbour Bridge opened to traffic in 1990.")]
        assert right.label == "supported"
        assert wrong.label in ("contradicted", "not_supported")
        assert wrong.p_hallucinated is not None and wrong.p_hallucinated > 0.5
        assert result.agreement.confusion["supported"] == {"supported": 6, wrong.label: 3}
        assert result.agreement.confusion["contradicted"] == {wrong.label: 3}
        equal = 6 + (3 if wrong.label == "contradicted" else 0)
        assert result.agreement.share_equal == equal / 12
        # binary: old 9 supported / 3 hallucinated, new 6 / 6: kappa = 0.5
        assert result.agreement.kappa == pytest.approx(0.5)
        again = rejudge(ledger, run, panel, stacker, n_boot=200)
        assert again.reused and again.votes_written == 0 and again.verdicts_written == 0
        assert ledger.count("judge_vote") == votes_before + 24
        assert ledger.count("verdict") == 24
        assert again.agreement.confusion == result.agreement.confusion
        versions = ledger.verdict_versions(run)
        assert [v["own"] for v in versions] == [True, False]
        assert versions[1]["panel_digest"] == panel.digest
        trail = ledger.claim_trail(wrong.claim_id)
        assert {v["panel_digest"] for v in trail[0]["verdicts"]} == {
            versions[0]["panel_digest"],
            panel.digest,
        }


def test_a_stacker_for_another_panel_is_refused(sqlite_url: str, tmp_path: Path) -> None:
    toml, _ = _panel(tmp_path)
    with open_ledger(sqlite_url) as ledger:
        run = add_run(ledger, "old", _items())
        with pytest.raises(ConfigError, match="stacker was fitted"):
            rejudge(
                ledger, run, load_panel(toml), Stacker(members=("x",), coef=(1.0,), intercept=0.0)
            )
        assert ledger.count("verdict") == 12


def test_cli_rejudge_and_report_show_the_bridge(sqlite_url: str, tmp_path: Path) -> None:
    toml, stacker = _panel(tmp_path)
    with open_ledger(sqlite_url) as ledger:
        run = add_run(ledger, "old", _items())
    _register_commands()
    runner = CliRunner()
    args = [
        "rejudge",
        run[:10],
        "--panel",
        str(toml),
        "--stacker",
        str(stacker),
        "--db",
        sqlite_url,
        "--bootstrap",
        "100",
    ]
    res = runner.invoke(app, [*args, "--format", "json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["verdicts_written"] == 12 and data["agreement"]["kappa"] == pytest.approx(0.5)
    res = runner.invoke(app, args)
    assert res.exit_code == 0 and "nothing new written" in res.output
    md = runner.invoke(
        app, ["report", run[:10], "--db", sqlite_url, "--format", "md", "--bootstrap", "50"]
    )
    assert md.exit_code == 0 and "bridged" in md.output


def test_user_errors_are_one_clean_line(
    sqlite_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from auditor.cli import main

    toml, stacker = _panel(tmp_path)
    with open_ledger(sqlite_url) as ledger:
        add_run(ledger, "old", _items())
    for argv, expected in (
        (
            [
                "rejudge",
                "nopenope",
                "--panel",
                str(toml),
                "--stacker",
                str(stacker),
                "--db",
                sqlite_url,
            ],
            "no run with id 'nopenope'",
        ),
        (
            [
                "rejudge",
                "nope",
                "--panel",
                str(toml),
                "--stacker",
                str(stacker),
                "--db",
                sqlite_url,
            ],
            "at least 6 characters",
        ),
        (
            [
                "rejudge",
                "nopenope",
                "--panel",
                str(toml),
                "--stacker",
                str(stacker),
                "--db",
                ":memory:",
            ],
            "in-memory ledger",
        ),
        (
            ["rejudge", "", "--panel", str(tmp_path / "absent.toml"), "--db", sqlite_url],
            "absent.toml",
        ),
    ):
        with pytest.raises(SystemExit) as info:
            main(argv)
        assert info.value.code == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and expected in err and "Traceback" not in err
    with open_ledger(sqlite_url) as ledger:
        assert ledger.count("verdict") == 12


@pytest.mark.slow  # loads the entailment reader
def test_a_rejudge_with_an_unchanged_reader_reads_nothing_again(
    sqlite_url: str, tmp_path: Path
) -> None:
    from auditor.bridging import replay
    from auditor.entailment.model import load_model
    from auditor.steps import ClaimAudit

    members = ("content_overlap", "entailment")
    toml = tmp_path / "panel.toml"
    toml.write_text('name = "reader"\n' + "".join(f'[[judges]]\nname = "{m}"\n' for m in members))
    panel = load_panel(toml)
    stacker = Stacker(members=members, coef=(1.0, 3.0), intercept=-2.0, fitted_on="test")
    model = load_model()
    model.clear_scores()
    before = model.forward_pairs
    with open_ledger(sqlite_url) as ledger:
        run = add_run(ledger, "old", _items())
        first = replay(ledger, run, panel, stacker)
        read = model.forward_pairs - before
        assert read > 0
        other = Stacker(members=members, coef=(2.0, 2.0), intercept=-1.0, fitted_on="test")
        second = replay(ledger, run, load_panel(toml), other)
    assert model.forward_pairs - before == read

    def seen(audits: list[ClaimAudit]) -> list[list[tuple[str, float, object]]]:
        return [[(v.judge, v.value, dict(v.scores)) for v in a.votes] for a in audits]

    assert seen(second) == seen(first)


def test_a_rejudge_reuses_the_stored_votes_of_unchanged_judges(
    sqlite_url: str, tmp_path: Path
) -> None:
    """A re-judge started afresh (empty reader cache, as in a new process) asks no judge
    whose digest already voted on the run's claims; a changed judge votes again."""
    from auditor.bridging import replay
    from auditor.entailment.model import load_model
    from auditor.steps import ClaimAudit

    members = ("content_overlap", "entailment")
    toml = tmp_path / "panel.toml"
    toml.write_text('name = "reader"\n' + "".join(f'[[judges]]\nname = "{m}"\n' for m in members))
    stacker = Stacker(members=members, coef=(1.0, 3.0), intercept=-2.0, fitted_on="test")
    model = load_model()

    def seen(audits: list[ClaimAudit]) -> list[list[tuple[str, float, str, object]]]:
        return [[(v.judge, v.value, v.raw, dict(v.scores)) for v in a.votes] for a in audits]

    with open_ledger(sqlite_url) as ledger:
        run = add_run(ledger, "old", _items())
        fresh = replay(ledger, run, load_panel(toml), stacker)  # no stored votes of this panel
        rejudge(ledger, run, load_panel(toml), stacker, n_boot=50)  # stores them
        model.clear_scores()
        before, asked = model.forward_pairs, model.requested_pairs
        other = Stacker(members=members, coef=(2.0, 2.0), intercept=-1.0, fitted_on="test")
        reused = replay(ledger, run, load_panel(toml), other)
        assert model.forward_pairs == before  # the reader read nothing again
        assert model.requested_pairs == asked  # nor was it asked: the votes were stored
        assert seen(reused) == seen(fresh)
        assert [a.verdict for a in reused] != [None] * len(reused)

        changed = tmp_path / "changed.toml"
        changed.write_text(
            toml.read_text() + "[judges.params]\nsupport_at = 0.6\n"  # the entailment member
        )
        revised = replay(ledger, run, load_panel(changed), stacker)
        # a judge of another digest votes again, on the reader's pair scores the re-judge
        # stored with the run: nothing read, the reader not even asked
        # (tests/test_reader_scores.py)
        assert model.forward_pairs == before and model.requested_pairs == asked
    entailment = [v for a in revised for v in a.votes if v.judge == "entailment"]
    assert entailment and all(v.error is None for v in entailment)
    overlap = [[v for v in a.votes if v.judge == "content_overlap"] for a in revised]
    assert overlap == [[v for v in a.votes if v.judge == "content_overlap"] for a in reused]
