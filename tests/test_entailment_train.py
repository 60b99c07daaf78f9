"""A tiny real training run: weights, digest and training record are written and load back."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from _nli_fixtures import write_sick

from auditor.digest import sha256_bytes
from auditor.entailment.model import load_model
from auditor.entailment.train import TrainConfig, train_entailment
from auditor.errors import ConfigError, InputError

pytestmark = pytest.mark.slow  # loads the MiniLM weights and trains two steps


def test_training_writes_loadable_fp16_weights_with_digest_and_record(tmp_path: Path) -> None:
    rows = [
        ("A man is playing a guitar", "A man is playing music", "ENTAILMENT"),
        ("A man is playing a guitar", "Nobody is playing", "CONTRADICTION"),
        ("A man is playing a guitar", "The man is famous", "NEUTRAL"),
    ] * 4
    write_sick(tmp_path / "nli", {"SICK_train.txt": rows, "SICK_test_annotated.txt": rows[:3]})
    config = TrainConfig(
        seed=3,
        epochs=1.0,
        batch_size=6,
        sources=["sick"],
        max_per_source={"sick": 12},
        eval_per_source=3,
        threads=1,
    )
    out = tmp_path / "weights"
    messages: list[str] = []
    record = train_entailment(tmp_path / "nli", out, config, progress=messages.append)

    assert record["steps"] == 2 and record["train_counts"] == {
        "sick": {"contradiction": 4, "entailment": 4, "neutral": 4}
    }
    assert record["held_out"]["sick"]["n"] == 3.0
    assert record["weights_sha256"] == sha256_bytes((out / "model.safetensors").read_bytes())
    assert (out / "SHA256").read_text().startswith(record["weights_sha256"])
    assert json.loads((out / "training_record.json").read_text()) == record
    assert record["config"]["seed"] == 3 and record["peak_rss_mb"] > 0
    assert any("12 training pairs" in m for m in messages)

    model = load_model(out)
    probs = model.predict(["A man is playing a guitar"], ["A man is playing music"])
    assert probs.shape == (1, 3) and np.isclose(probs.sum(), 1.0)
    assert model.labels == ("entailment", "neutral", "contradiction")

    (out / "model.safetensors").write_bytes(b"not the weights")
    with pytest.raises(ConfigError, match="sha256"):
        load_model(out)


def test_continued_training_with_document_pairs_checkpoints_and_records_the_mix(
    tmp_path: Path,
) -> None:
    from auditor.entailment.model import WEIGHTS_DIR
    from auditor.entailment.synth import SynthPair, write_pairs

    rows = [("A man is playing a guitar", "A man is playing music", "ENTAILMENT")] * 4
    write_sick(tmp_path / "nli", {"SICK_train.txt": rows, "SICK_test_annotated.txt": rows[:2]})
    premise = "The bridge opened in 1932. It is 503 metres long. Trains cross it daily."
    synth = [
        SynthPair(premise, "The bridge opened in 1932.", 0, "wice", "support:copy", "d1", "train"),
        SynthPair(premise, "The bridge opened in 1950.", 2, "wice", "date_change", "d1", "train"),
        SynthPair(
            premise,
            "The bridge, designed by Ann Lee, opened in 1932.",
            1,
            "wice",
            "added_detail",
            "d2",
            "eval",
        ),
    ]
    write_pairs(synth, tmp_path / "synth.jsonl")
    config = TrainConfig(
        seed=3,
        epochs=1.0,
        batch_size=6,
        sources=["sick"],
        max_per_source={"sick": 4},
        eval_per_source=2,
        threads=1,
        init_from=str(WEIGHTS_DIR),
        synth_path=str(tmp_path / "synth.jsonl"),
        checkpoint_every_s=0.0,
    )
    out = tmp_path / "weights"
    record = train_entailment(tmp_path / "nli", out, config)

    assert record["train_counts"]["synth_wice"] == {"contradiction": 1, "entailment": 1}
    assert record["held_out_counts"]["synth_wice"] == {"neutral": 1}  # eval docs stay out
    assert record["initialised_from_weights_sha256"] == load_model().digest
    assert record["synthetic_document_pairs"]["n"] == 3
    assert record["steps"] == 1 and record["stopped_by"] == "steps"
    assert (out / "checkpoint" / "SHA256").is_file()
    assert json.loads((out / "checkpoint" / "progress.json").read_text())["step"] == 1
    assert load_model(out / "checkpoint").labels == ("entailment", "neutral", "contradiction")


def test_not_entailment_accepts_neutral_and_contradiction_together() -> None:
    import torch

    from auditor.entailment.data import NOT_ENTAILMENT
    from auditor.entailment.train import allowed_classes, target_loss

    mask = allowed_classes([0, 2, NOT_ENTAILMENT])
    assert mask.tolist() == [[True, False, False], [False, False, True], [False, True, True]]
    with pytest.raises(InputError, match="label"):
        allowed_classes([4])
    logits = torch.tensor([[2.0, 0.5, -1.0], [0.1, 0.2, 0.3], [1.0, 0.0, 0.0]])
    probs = torch.softmax(logits, dim=-1)
    loss = target_loss(logits, torch.from_numpy(mask), torch)
    expected = -(probs[0, 0].log() + probs[1, 2].log() + (probs[2, 1] + probs[2, 2]).log()) / 3
    assert torch.isclose(loss, expected)
    plain = torch.nn.functional.cross_entropy(logits[:2], torch.tensor([0, 2]))
    assert torch.isclose(target_loss(logits[:2], torch.from_numpy(mask[:2]), torch), plain)


def test_pairs_labelled_only_unsupported_train_and_are_counted(tmp_path: Path) -> None:
    from auditor.entailment.data import NOT_ENTAILMENT
    from auditor.entailment.model import WEIGHTS_DIR
    from auditor.entailment.synth import SynthPair, read_pairs, write_pairs

    rows = [("A man is playing a guitar", "A man is playing music", "ENTAILMENT")] * 2
    write_sick(tmp_path / "nli", {"SICK_train.txt": rows, "SICK_test_annotated.txt": rows[:1]})
    premise = "The ferry sails twice a day. It carries 300 passengers."
    pairs = [
        SynthPair(premise, "The ferry sails twice a day.", 0, "se_news", "label", "d", "train"),
        SynthPair(
            premise, "The ferry sails 9 times.", NOT_ENTAILMENT, "se_news", "label", "d", "train"
        ),
        SynthPair(
            premise, "It carries 900 people.", NOT_ENTAILMENT, "se_news", "label", "e", "eval"
        ),
        SynthPair(premise, "It carries 300 people.", 0, "se_news", "label", "e", "eval"),
    ]
    write_pairs(pairs, tmp_path / "pairs.jsonl")
    assert read_pairs(tmp_path / "pairs.jsonl") == pairs
    config = TrainConfig(
        seed=3,
        epochs=1.0,
        batch_size=4,
        sources=["sick"],
        max_per_source={"sick": 2},
        eval_per_source=1,
        threads=1,
        init_from=str(WEIGHTS_DIR),
        synth_path=str(tmp_path / "pairs.jsonl"),
    )
    record = train_entailment(tmp_path / "nli", tmp_path / "weights", config)

    assert record["train_counts"]["synth_se_news"] == {"entailment": 1, "not_entailment": 1}
    assert record["synthetic_document_pairs"]["per_source"]["se_news/eval"] == {
        "entailment": 1,
        "not_entailment": 1,
    }
    held_out = record["held_out"]["synth_se_news"]
    assert held_out["n"] == 2.0 and "accuracy" not in held_out  # binary only
    assert "binary_balanced_accuracy" in held_out
