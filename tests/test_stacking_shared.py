"""The shared-data loaders of bench/calibrate_shared.py map labels and clusters as issue 5 says.

Skips cleanly when the shared data folder (``AUDITOR_DATA`` or ../shared/data) is missing.
"""

from __future__ import annotations

import collections
import csv
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import calibrate_shared as shared

ROOT = shared.data_dir()
pytestmark = pytest.mark.skipif(not (ROOT / "wice").is_dir(), reason="shared data not found")


def test_wice_mapping_and_clusters() -> None:
    records = shared.load("wice", ROOT)
    raw = [json.loads(line) for line in (ROOT / "wice/claim/dev.jsonl").open(encoding="utf-8")]
    assert len(records) == len(raw)
    expected = [0 if r["label"] == "supported" else 1 for r in raw]
    assert [r["label"] for r in records] == expected
    same_claim = collections.defaultdict(set)
    for r, src in zip(records, raw, strict=True):
        same_claim[src["claim"]].add(r["cluster"])
    assert all(len(c) == 1 for c in same_claim.values())


def test_summedits_label_is_flipped_and_cluster_is_the_document() -> None:
    records = shared.load("summedits:samsum", ROOT)
    raw = json.loads((ROOT / "summedits/summedits_samsum.json").read_text("utf-8"))
    assert [r["label"] for r in records] == [1 - int(x["label"]) for x in raw]
    assert len({r["cluster"] for r in records}) == len({x["doc"] for x in raw})


def test_factcheck_drops_partial_support() -> None:
    records = shared.load("factcheck", ROOT)
    path = ROOT / "factcheck_gpt/subtask3_claim_evidence_stance.jsonl"
    stances = collections.Counter(json.loads(line)["stance"] for line in path.open())
    assert len(records) == sum(stances.values()) - stances["partially-support"]
    assert sum(1 - r["label"] for r in records) == stances["completely-support"]


def test_faithbench_drops_questionable() -> None:
    records = shared.load("faithbench", ROOT)
    with (ROOT / "faithbench/FaithBench.csv").open(encoding="utf-8", newline="") as handle:
        worst = collections.Counter(
            row["worst-label"].split(".")[0] for row in csv.DictReader(handle)
        )
    assert len(records) == sum(worst.values()) - worst["Questionable"]
    assert sum(r["label"] for r in records) == worst["Unwanted"]


def test_limit_subsamples_reproducibly() -> None:
    a = shared.load("factcheck", ROOT, limit=50, seed=1)
    b = shared.load("factcheck", ROOT, limit=50, seed=1)
    assert [r["id"] for r in a] == [r["id"] for r in b] and len(a) == 50


def test_reader_and_stacker_parts_split_the_training_side_by_cluster() -> None:
    name = "summedits:news"
    train = shared.split_records(name, ROOT, "train", None, 0)
    reader = shared.split_records(name, ROOT, "reader", None, 0)
    stacker = shared.split_records(name, ROOT, "stacker", None, 0)
    assert sorted(r["id"] for r in reader + stacker) == sorted(r["id"] for r in train)
    assert reader and stacker
    assert not {r["cluster"] for r in reader} & {r["cluster"] for r in stacker}
    held_out = {r["id"] for r in shared.split_records(name, ROOT, "eval", None, 0)}
    assert not held_out & {r["id"] for r in train}
    with pytest.raises(ValueError, match="side"):
        shared.split_records(name, ROOT, "test", None, 0)


def test_reader_pairs_come_from_the_reader_part_only() -> None:
    import reader_pairs

    pairs = reader_pairs.summedits_pairs(ROOT, "news")
    reader = {r["cluster"] for r in shared.split_records("summedits:news", ROOT, "reader", None, 0)}
    assert pairs and {p.doc for p in pairs} <= reader
    assert {p.label for p in pairs} == {0, 3}  # entailed, or not entailed (class unknown)
    assert all(p.split == "train" for p in pairs)
