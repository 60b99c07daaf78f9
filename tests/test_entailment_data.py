"""NLI loaders: label mapping, splits, neutral pairs and errors (tiny fixtures, no shared data)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _nli_fixtures import write_sick

from auditor.entailment.data import (
    CONTRADICTION,
    ENTAILMENT,
    NEUTRAL,
    detokenize,
    load_fm2,
    load_mix,
    load_sick,
)
from auditor.errors import InputError


def test_sick_maps_three_labels_and_keeps_its_test_split_for_evaluation(tmp_path: Path) -> None:
    write_sick(
        tmp_path,
        {
            "SICK_train.txt": [
                ("A man plays", "A person plays", "ENTAILMENT"),
                ("A man plays", "Nobody plays", "CONTRADICTION"),
            ],
            "SICK_trial.txt": [("A dog runs", "A dog runs fast", "NEUTRAL")],
            "SICK_test_annotated.txt": [("A cat sleeps", "An animal sleeps", "ENTAILMENT")],
        },
    )
    pairs = load_sick(tmp_path)
    assert [(p.label, p.split) for p in pairs] == [
        (ENTAILMENT, "train"),
        (CONTRADICTION, "train"),
        (NEUTRAL, "train"),
        (ENTAILMENT, "eval"),
    ]
    assert pairs[0].premise == "A man plays" and pairs[0].hypothesis == "A person plays"


def test_unknown_label_names_file_line_and_field(tmp_path: Path) -> None:
    write_sick(tmp_path, {"SICK_train.txt": [("a", "b", "ENTAILMENT"), ("a", "b", "MAYBE")]})
    with pytest.raises(InputError) as exc:
        load_sick(tmp_path)
    message = str(exc.value)
    assert "SICK_train.txt" in message and "line 3" in message
    assert "entailment_judgment" in message and "MAYBE" in message


def test_fm2_adds_a_neutral_pair_from_a_non_gold_sentence(tmp_path: Path) -> None:
    folder = tmp_path / "fm2"
    folder.mkdir()
    gold = {"section_header": "Plot", "text": "The film was shot in 1981."}
    other = {"section_header": "Cast", "text": "The cast included many actors."}
    record = {
        "id": "x1",
        "text": "The film was shot in 1990.",
        "label": "REFUTES",
        "gold_evidence": [gold],
        "retrieved_evidence": [gold, other],
    }
    (folder / "dev.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    pairs = load_fm2(tmp_path)
    assert [(p.premise, p.label) for p in pairs] == [
        ("The film was shot in 1981.", CONTRADICTION),
        ("The cast included many actors.", NEUTRAL),
    ]
    assert pairs[0].split == pairs[1].split  # one claim never straddles the split


def test_detokenize_undoes_ptb_escapes() -> None:
    assert (
        detokenize("Soul Food -LRB- 1997 -RRB- is a film , by `` Babyface '' .")
        == 'Soul Food (1997) is a film, by " Babyface ".'
    )


def test_load_mix_rejects_unknown_sources_and_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not found"):
        load_mix(tmp_path / "missing")
    with pytest.raises(InputError, match="unknown NLI sources"):
        load_mix(tmp_path, ["imaginary"])


def test_a_pair_file_round_trips_and_names_a_bad_line(tmp_path: Path) -> None:
    from auditor.entailment.data import NLIPair, read_pair_file, write_pair_file

    pairs = [
        NLIPair("Tickets are free.", "There is no charge.", 0, "authored", "train"),
        NLIPair("Entry costs £6.", "Entry is free.", 2, "authored", "eval"),
        NLIPair("A long page.", "Not stated.", 3, "docnli", "train"),
    ]
    path = tmp_path / "pairs.jsonl.xz"
    write_pair_file(pairs, path)
    assert read_pair_file(path) == pairs
    import lzma

    with lzma.open(path, "at", encoding="utf-8") as handle:
        handle.write('{"p": "x", "h": "y"}\n')
    with pytest.raises(InputError, match="line 4"):
        read_pair_file(path)
