"""Loaders of ``../shared/data/nli_more``: each loads, maps to known labels and splits by group.

Runs against the shared data (skipped where it is absent).
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path

import pytest

PART_1 = [
    "anli",
    "breaking_nli",
    "cad_nli",
    "conjnli",
    "control_nli",
    "docnli",
    "drop_nli",
    "fever_train",
    "imppres",
    "mpe",
]
PART_2 = [
    "averitec",
    "check_covid",
    "citation_integrity",
    "contractnli",
    "entailment_tree",
    "folio",
    "nli4ct",
    "scitail",
    "tracie",
    "wice_nst",
]

DATA = Path(os.environ.get("RAG_AUDITOR_DATA", "../shared/data")) / "nli_more"


@pytest.mark.parametrize("name", PART_1 + PART_2)
def test_loader_yields_labelled_pairs_split_by_premise(name: str) -> None:
    if not DATA.is_dir():
        pytest.skip(f"{DATA} not found")
    module = importlib.import_module(f"auditor.entailment.more.{name}")
    pairs = module.load(DATA)
    assert pairs
    assert {p.label for p in pairs} <= {0, 1, 2, 3}
    assert {p.split for p in pairs} == {"train", "eval"}
    train = {p.premise for p in pairs if p.split == "train"}
    held_out = {p.premise for p in pairs if p.split == "eval"}
    assert not train & held_out
    assert all(p.source == module.SOURCE for p in pairs)
    assert all(p.premise and p.hypothesis for p in pairs)
