"""Leave-one-annotator-out protocol, Mu-SHROOM loading and the diagnostic subsets."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from auditor.errors import InputError
from auditor.spans import (
    AnnotatedItem,
    batch_from_lists,
    classify_relations,
    diagnose,
    leave_one_annotator_out,
    load_annotated,
    loo_comparisons,
    score_spans,
    span_counts,
)
from auditor.spans._reference import naive_canonical, naive_counts


def _item(item_id: str, text: str, **ann: list[tuple[int, int]]) -> AnnotatedItem:
    return AnnotatedItem(item_id, text, tuple((k, tuple(v)) for k, v in ann.items()))


THREE = _item("a", "x" * 20, A=[(0, 5)], B=[(0, 5)], C=[(10, 15)])


def test_majority_is_strictly_more_than_half_of_the_others() -> None:
    cmp_ = loo_comparisons([THREE], "majority")
    # held out A: others B, C mark disjoint spans -> no character reaches > 1 of 2
    assert cmp_.gold.to_lists() == [[], [], [(0, 5)]]
    assert cmp_.pred.to_lists() == [[(0, 5)], [(0, 5)], [(10, 15)]]
    union = loo_comparisons([THREE], "union")
    assert union.gold.to_lists() == [[(0, 5), (10, 15)], [(0, 5), (10, 15)], [(0, 5)]]


def test_majority_of_three_others_needs_two() -> None:
    item = _item("b", "y" * 10, A=[(0, 4)], B=[(2, 6)], C=[(3, 8)], D=[])
    cmp_ = loo_comparisons([item], "majority")
    # held out D: others A, B, C; characters 2..5 are marked by >= 2 of 3
    assert cmp_.gold.spans(3) == ((2, 6),)


def test_macro_averages_within_item_first() -> None:
    two = _item("b", "z" * 10, A=[(0, 4)], B=[(0, 4)])
    out = leave_one_annotator_out([THREE, two])
    assert out["n_items"] == 2 and out["n_annotations"] == 5
    # item a, majority: A vs [] (0), B vs [] (0), C vs (0,5) (0) -> 0; item b: 1 and 1
    assert out["majority"]["macro"]["exact_span"]["f1"] == pytest.approx((0 + 1) / 2)
    # a record-level mean would give 2/5 instead
    per_record = score_spans(
        loo_comparisons([THREE, two], "majority").gold,
        loo_comparisons([THREE, two], "majority").pred,
    )
    assert per_record["exact_span"]["f1"] == pytest.approx(2 / 5)
    micro = out["union"]["micro"]["exact_span"]
    # union: A->{(0,5),(10,15)} 1 of 2, B same, C->{(0,5)} 0 of 1, b: 1 of 1 twice
    assert micro["precision"] == pytest.approx(4 / 5)
    assert micro["recall"] == pytest.approx(4 / 7)


def test_items_with_one_annotator_are_skipped() -> None:
    single = _item("c", "w" * 5, A=[(0, 2)])
    out = leave_one_annotator_out([single, THREE])
    assert out["n_items"] == 1 and out["n_annotations"] == 3
    assert set(out) == {"majority", "union", "n_items", "n_annotations"}
    assert set(out["union"]) == {"macro", "micro"}


def _write(tmp_path: Path, rows: list[dict[str, object]]) -> Path:
    path = tmp_path / "m.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_load_clips_spans_past_the_text_with_a_warning(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        [
            {
                "id": "i1",
                "model_output_text": "0123456789",
                "annotations": {"a1": [[2, 4], [8, 13]], "a2": [[5, 5]]},
            },
        ],
    )
    warnings: list[str] = []
    items = load_annotated(path, warnings_out=warnings)
    assert items[0].annotations == (("a1", ((2, 4), (8, 10))), ("a2", ()))
    assert len(warnings) == 1 and "'a1'" in warnings[0] and "[8, 13]" in warnings[0]
    with pytest.raises(InputError, match=r"line 1, field 'annotations'.*\['a1'\] span 1"):
        load_annotated(path, clip=False)


def test_load_reports_file_line_and_field(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        [
            {"id": "i1", "model_output_text": "abc", "annotations": {}},
            {"id": "i2", "model_output_text": "abc", "annotations": {"a": [[2, 1]]}},
        ],
    )
    with pytest.raises(InputError, match=r"m.jsonl, line 2, field 'annotations'.*end is before"):
        load_annotated(path)
    dup = _write(tmp_path, [{"id": "i", "model_output_text": "", "annotations": {}}] * 2)
    with pytest.raises(InputError, match="line 2, field 'id': duplicate id"):
        load_annotated(dup)


def test_relations_and_diagnostic_subsets() -> None:
    gold = batch_from_lists([[(0, 10)], [(0, 10)], [(0, 10), (20, 30)], [(0, 10)], [], [(5, 8)]])
    pred = batch_from_lists([[(2, 5)], [(5, 15)], [(2, 4)], [(0, 10)], [], [(20, 25)]])
    rel = classify_relations(span_counts(gold, pred)).tolist()
    assert rel == [
        "pred_inside_gold_boundary",
        "partial_overlap",
        "pred_inside_gold_extra_components",
        "exact",
        "both_empty",
        "disjoint",
    ]
    d = diagnose(gold, pred)
    assert d["nested_boundary"]["n"] == 1
    assert d["nested_boundary"]["macro"]["span_coverage"]["f1"] == 1.0
    assert d["nested_boundary"]["macro"]["character_iou"]["score"] == pytest.approx(0.3)
    assert d["partial_overlap"]["macro"]["span_coverage"]["f1"] == 0.0
    one = d["one_char_per_gold"]
    assert one["n"] == 5  # items with gold spans
    assert one["macro"]["span_coverage"]["f1"] == 1.0
    assert one["macro"]["character_iou"]["score"] < 0.2
    assert one["reference_char_fraction"] == pytest.approx(np.mean([0.1, 0.1, 2 / 20, 0.1, 1 / 3]))


def test_loo_diagnostics_present_on_request() -> None:
    out = leave_one_annotator_out([THREE], diagnostics=True)
    diag = out["diagnostics"]
    assert set(diag) == {"majority", "union", "one_char_per_gold"}
    assert sum(diag["union"]["relations"].values()) == 3


# --------------------------------------------------------------------------- real data

DATA = Path(
    os.environ.get("AUDITOR_DATA", Path(__file__).resolve().parents[1] / ".." / "shared" / "data")
)
EN_VAL = DATA / "mushroom_val" / "mushroom.en-val.v2.extra.jsonl"


def _naive_loo(path: Path) -> dict[str, float]:
    """Independent LOO with character sets and Counters (majority, macro F1)."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    per_item: list[float] = []
    for row in rows:
        length = len(row["model_output_text"])
        masks = [
            {c for s, e in spans for c in range(s, min(e, length))}
            for spans in row["annotations"].values()
        ]
        if len(masks) < 2:
            continue
        scores = []
        for a, held in enumerate(masks):
            others = [m for b, m in enumerate(masks) if b != a]
            votes = Counter(c for m in others for c in m)
            ref = {c for c, v in votes.items() if v > len(others) / 2}
            counts = naive_counts(
                naive_canonical([(c, c + 1) for c in ref]),
                naive_canonical([(c, c + 1) for c in held]),
            )
            pc, pt, rc, rt = counts["character"]
            p = pc / pt if pt else 1.0
            r = rc / rt if rt else 1.0
            f = 1.0 if pt == 0 and rt == 0 else (2 * p * r / (p + r) if p + r else 0.0)
            scores.append(f)
        per_item.append(sum(scores) / len(scores))
    return {"character_f1": sum(per_item) / len(per_item), "n_items": len(per_item)}


@pytest.mark.skipif(not EN_VAL.exists(), reason="Mu-SHROOM validation data not available")
def test_mushroom_en_val_matches_an_independent_computation() -> None:
    items = load_annotated(EN_VAL)
    out = leave_one_annotator_out(items)
    ref = _naive_loo(EN_VAL)
    assert out["n_items"] == ref["n_items"] == 50
    assert out["n_annotations"] == sum(len(it.annotations) for it in items)
    assert out["majority"]["macro"]["character"]["f1"] == pytest.approx(
        ref["character_f1"], abs=1e-12
    )
