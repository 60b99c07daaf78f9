"""``auditor calibrate``: the issue's output shape, the saved stacker, clean errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import RunCli

from auditor.stacking.model import load_stacker

PANEL = """
name = "cheap"
[[judges]]
name = "content_overlap"
[[judges]]
name = "entity_consistency"
[[judges]]
name = "bm25_alignment"
[[judges]]
name = "bigram_overlap"
[[judges]]
name = "numeric_consistency"
"""

PEOPLE = [
    "Marie Curie",
    "Alan Turing",
    "Ada Lovelace",
    "Niels Bohr",
    "Lise Meitner",
    "Emmy Noether",
    "Paul Dirac",
    "Rosalind Franklin",
]
CITIES = ["Paris", "London", "Vienna", "Copenhagen", "Berlin", "Zurich", "Cambridge", "Rome"]


def _data(path: Path, n: int = 80, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        person, city = PEOPLE[i % 8], CITIES[(i * 3) % 8]
        year = 1900 + i
        evidence = [
            f"{person} moved to {city} in {year} to open a laboratory.",
            "The laboratory studied radiation and chemistry.",
        ]
        label = int(rng.random() < 0.5)
        if label:
            other = PEOPLE[(i + 1 + int(rng.integers(0, 6))) % 8]
            claim = f"{other} moved to {CITIES[(i * 3 + 1) % 8]} in {year + 7} to teach music."
        else:
            claim = f"{person} moved to {city} in {year}."
        if rng.random() < 0.1:  # label noise, so that figures vary across resamples
            label = 1 - label
        rows.append(
            {
                "id": f"i{i}",
                "cluster": f"doc{i // 4}",
                "claim": claim,
                "evidence": evidence if i % 2 else " ".join(evidence),
                "label": label,
            }
        )
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_calibrate_json_has_the_issue_shape(tmp_path: Path, run_cli: RunCli) -> None:
    panel = tmp_path / "panel.toml"
    panel.write_text(PANEL, encoding="utf-8")
    data = _data(tmp_path / "data.jsonl")
    saved = tmp_path / "stacker.json"
    code, out, _ = run_cli(
        [
            "calibrate",
            str(data),
            "--panel",
            str(panel),
            "--seed",
            "3",
            "--bootstrap",
            "200",
            "--save-stacker",
            str(saved),
            "--format",
            "json",
        ]
    )
    assert code == 0
    report = json.loads(out)
    assert {"members", "ladder", "paired", "admissibility", "predictions"} <= set(report)
    names = [m["name"] for m in report["members"]]
    assert names == [
        "content_overlap",
        "entity_consistency",
        "bm25_alignment",
        "bigram_overlap",
        "numeric_consistency",
    ]
    for m in report["members"]:
        assert set(m) >= {"name", "kappa", "kappa_ci", "bacc", "bacc_ci", "abstain_rate"}
    rungs = [r["name"] for r in report["ladder"]]
    assert rungs == [
        "mean_member",
        "majority",
        "dawid_skene",
        "best_cv",
        "oracle_best",
        "stacked",
        "score_stacked",
    ]  # one dataset: no best_avg
    for r in report["ladder"]:
        assert set(r) >= {"kappa", "kappa_ci", "bacc", "bacc_ci"}
    for key in ("stacked_vs_best_cv", "stacked_vs_oracle", "scores_vs_votes"):
        assert set(report["paired"][key]) >= {"delta_kappa", "ci", "verdict"}
    assert set(report["admissibility"]) >= {
        "admissible",
        "share_competent",
        "mean_error_corr",
        "thresholds",
    }
    assert len(report["predictions"]) == 80
    pred = report["predictions"][0]
    assert set(pred) >= {"id", "stacked_prob", "stacked_label", "votes"}
    assert list(pred["votes"]) == names
    stacked = {r["name"]: r for r in report["ladder"]}["stacked"]
    assert stacked["kappa"] > 0.5  # the synthetic task is easy for these judges
    assert load_stacker(saved).members == tuple(names)
    assert report["seed"] == 3 and report["n_boot"] == 200


def test_calibrate_is_reproducible_with_a_seed(tmp_path: Path, run_cli: RunCli) -> None:
    panel = tmp_path / "panel.toml"
    panel.write_text(PANEL, encoding="utf-8")
    data = _data(tmp_path / "data.jsonl", n=40)
    argv = ["calibrate", str(data), "--panel", str(panel), "--bootstrap", "100"]
    first = json.loads(run_cli(argv)[1])
    second = json.loads(run_cli(argv)[1])
    assert first["ladder"] == second["ladder"]
    third = json.loads(run_cli([*argv, "--seed", "7"])[1])
    assert third["ladder"] != first["ladder"]


def test_bad_label_is_a_clean_error(tmp_path: Path, run_cli: RunCli) -> None:
    data = tmp_path / "bad.jsonl"
    data.write_text(
        json.dumps({"id": "a", "cluster": "c", "claim": "x", "evidence": "y", "label": 0})
        + "\n"
        + json.dumps({"id": "b", "cluster": "c", "claim": "x", "evidence": "y", "label": 3})
        + "\n",
        encoding="utf-8",
    )
    code, out, err = run_cli(["calibrate", str(data)])
    assert code == 2 and out == ""
    assert err.startswith("error: ") and "line 2" in err and "field 'label'" in err


def test_too_few_clusters_is_a_clean_error(tmp_path: Path, run_cli: RunCli) -> None:
    panel = tmp_path / "panel.toml"
    panel.write_text(PANEL, encoding="utf-8")
    rows = [
        {
            "id": str(i),
            "cluster": str(i % 3),
            "claim": "Ada Lovelace wrote.",
            "evidence": "Ada Lovelace wrote notes.",
            "label": i % 2,
        }
        for i in range(12)
    ]
    data = tmp_path / "few.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    code, _, err = run_cli(["calibrate", str(data), "--panel", str(panel)])
    assert code == 2 and "3 clusters" in err and "field 'clusters'" in err


def test_calibrate_with_an_llm_member_records_failures_as_abstentions(
    tmp_path: Path, run_cli: RunCli
) -> None:
    from tests.llm_fault_server import FaultServer

    def responder(body: dict[str, object]) -> tuple[str, object]:
        user = body["messages"][1]["content"]  # type: ignore[index]
        if "in 1905 to open" in user:
            return ("status", 500)  # persistent server error for one item
        if "music" in user:
            return ("ok", '{"label": "not_supported"}')
        return ("ok", '{"label": "supported"}')

    data = _data(tmp_path / "data.jsonl", n=40)
    with FaultServer(responder=responder) as server:
        panel = tmp_path / "panel.toml"
        panel.write_text(
            PANEL
            + f"""
[[judges]]
name = "llm"
[judges.params]
name = "loopback"
base_url = "{server.base_url}"
model = "m"
max_retries = 1
backoff_base_s = 0.01
timeout_s = 5
""",
            encoding="utf-8",
        )
        code, out, _ = run_cli(
            ["calibrate", str(data), "--panel", str(panel), "--bootstrap", "100"]
        )
    assert code == 0
    report = json.loads(out)
    llm = {m["name"]: m for m in report["members"]}["loopback"]
    assert 0 < llm["abstain_rate"] < 0.1 and llm["kappa"] > 0.5
    reasons = report["abstention_reasons"]["loopback"]
    assert any("HTTP 500" in reason for reason in reasons)


def test_calibration_is_written_to_the_ledger_once(tmp_path: Path, run_cli: RunCli) -> None:
    from ledger import open_ledger

    panel = tmp_path / "panel.toml"
    panel.write_text(PANEL, encoding="utf-8")
    data = _data(tmp_path / "data.jsonl", n=40)
    db = tmp_path / "ledger.db"
    argv = ["calibrate", str(data), "--panel", str(panel), "--bootstrap", "50", "--db", str(db)]
    code, out, _ = run_cli(argv)
    assert code == 0
    report = json.loads(out)
    with open_ledger(db) as ledger:
        run = ledger.get_run(report["run_id"])
        assert run.kind == "calibration" and run.status == "complete"
        assert run.n_answers_done == 40
        assert ledger.count("judge_vote") == 40 * 5
        assert ledger.count("human_audit") == 40
        rows = ledger.claim_results(run.run_id)
        probs = {p["id"]: p["stacked_prob"] for p in report["predictions"]}
        assert {r.answer_id: r.p_hallucinated for r in rows} == pytest.approx(probs)
        counts = {t: ledger.count(t) for t in ("run", "claim", "judge_vote", "human_audit")}
    code, out, _ = run_cli(argv)
    assert code == 0 and json.loads(out)["run_id"] == report["run_id"]
    with open_ledger(db) as ledger:
        assert {t: ledger.count(t) for t in counts} == counts


@pytest.mark.slow  # ingests a document (the embedding model) and audits twice
def test_a_downloaded_checker_joins_the_panel_fits_a_stacker_and_pins_the_run_id(
    tmp_path: Path, run_cli: RunCli
) -> None:
    """As a user with a checkpoint on disk: add it to panel.toml, fit a stacker for the
    panel in one command, audit; the same audit with other weights is another run."""
    import torch
    from safetensors.torch import load_file, save_file

    from auditor import AuditConfig, audit_answers
    from tests.tiny_checkpoints import roberta

    first = roberta(tmp_path / "checker", {0: "entailment", 1: "neutral", 2: "contradiction"})
    panel = tmp_path / "with-checker.toml"
    panel.write_text(
        PANEL + f'[[judges]]\nname = "hf_classifier"\nparams = {{ checkpoint = "{first}" }}\n',
        encoding="utf-8",
    )
    stacker = tmp_path / "with-checker.json"
    data = _data(tmp_path / "data.jsonl", n=40)
    argv = ["calibrate", str(data), "--panel", str(panel), "--bootstrap", "50"]
    code, out, err = run_cli([*argv, "--save-stacker", str(stacker)])
    assert code == 0, err
    assert "hf_classifier" in {m["name"] for m in json.loads(out)["members"]}
    assert "hf_classifier" in load_stacker(stacker).members

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(
        json.dumps({"id": "lab", "title": "Lab", "text": "Marie Curie moved to Paris in 1891."})
        + "\n",
        encoding="utf-8",
    )
    answers = [{"id": "a1", "question": "When?", "answer": "Marie Curie moved to Paris in 1891."}]
    config = AuditConfig(as_of="2026-01-01")

    def audit() -> str:
        run = audit_answers(answers, documents=corpus, config=config, panel=panel, stacker=stacker)
        assert run.claims and all(c["label"] for c in run.claims)
        return run.run_id

    before = audit()
    assert audit() == before  # the same checkpoint, the same run
    weights = first / "model.safetensors"
    state = load_file(str(weights))
    state["classifier.out_proj.bias"] = state["classifier.out_proj.bias"] + torch.tensor(
        [0.5, 0.0, 0.0]
    )
    save_file(state, str(weights))  # the checkpoint updated in place
    assert audit() != before  # other weights: another run (same panel file, same path)
