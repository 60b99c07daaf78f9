"""The six span metrics: canonicalisation, validation, hand-computed cases, and
agreement with the set-of-characters reference implementation."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from auditor.errors import InputError
from auditor.spans import (
    METRICS,
    SpanMetricParams,
    SpanValidationError,
    aggregate,
    batch_from_lists,
    canonicalize,
    character_f1,
    character_iou,
    cleval_1d,
    deteval_1d,
    exact_span_f1,
    per_item_scores,
    score_spans,
    span_counts,
    span_coverage_f1,
)
from auditor.spans._reference import naive_canonical, naive_counts, naive_score

# --------------------------------------------------------------------------- canonical form


def test_canonicalize_drops_empty_and_merges_overlapping_and_adjacent() -> None:
    assert canonicalize([[5, 8], [0, 2], [2, 3], [7, 9], [4, 4], [12, 14]]) == (
        (0, 3),
        (5, 9),
        (12, 14),
    )


def test_canonicalize_keeps_spans_separated_by_one_character() -> None:
    assert canonicalize([[0, 2], [3, 5]]) == ((0, 2), (3, 5))


def test_batch_items_never_merge_across_items() -> None:
    b = batch_from_lists([[[0, 5]], [[0, 1], [1, 3]], []])
    assert b.to_lists() == [[(0, 5)], [(0, 3)], []]
    assert b.counts().tolist() == [1, 1, 0]


@pytest.mark.parametrize(
    ("spans", "fragment"),
    [
        ([[0, 2], [5, 3]], "span 1 [5, 3]: end is before start"),
        ([[-1, 2]], "span 0 [-1, 2]: start is negative"),
        ([[0, 2], [1, 2, 3]], "span 1 [1, 2, 3]"),
        ([[0, 2.5]], "span 0 [0, 2.5]"),
        ([["a", 2]], "span 0 ['a', 2]"),
    ],
)
def test_validation_names_the_bad_span(spans: list[list[object]], fragment: str) -> None:
    with pytest.raises(SpanValidationError) as err:
        batch_from_lists([[], spans], name="pred", ids=["x", "y"])
    assert "pred['y']" in str(err.value)
    assert fragment in str(err.value)
    assert isinstance(err.value, InputError) and isinstance(err.value, ValueError)


def test_span_past_text_is_an_error_or_clipped() -> None:
    with pytest.raises(SpanValidationError, match=r"span 0 \[3, 12\]: ends past the text"):
        canonicalize([[3, 12]], text_length=10)
    assert canonicalize([[3, 12], [11, 15]], text_length=10, clip=True) == ((3, 10),)


# --------------------------------------------------------------------------- hand-computed cases


def test_exact_and_character_metrics_by_hand() -> None:
    gold, pred = [[(0, 5), (10, 15)]], [[(0, 5), (10, 14)]]
    assert exact_span_f1(gold, pred) == {"precision": 0.5, "recall": 0.5, "f1": 0.5}
    ch = character_f1(gold, pred)
    assert ch["precision"] == 1.0 and ch["recall"] == 0.9
    assert ch["f1"] == pytest.approx(2 * 0.9 / 1.9)
    assert character_iou(gold, pred) == {"score": 0.9}


def test_deteval_one_to_one_needs_both_coverages() -> None:
    assert deteval_1d([[(0, 10)]], [[(1, 10)]])["f1"] == 1.0  # sigma 0.9, tau 1
    assert deteval_1d([[(0, 10)]], [[(0, 5)]])["f1"] == 0.0  # sigma 0.5 < 0.8
    assert deteval_1d([[(0, 10)]], [[(0, 30)]])["f1"] == 0.0  # tau 1/3 < 0.4
    # thresholds are parameters: a stricter gold coverage rejects sigma 0.9
    assert deteval_1d([[(0, 10)]], [[(1, 10)]], gold_coverage=0.95)["f1"] == 0.0


def test_deteval_split_and_merge_earn_partial_credit() -> None:
    split = deteval_1d([[(0, 10)]], [[(0, 5), (6, 10)]])
    assert split == {"precision": 0.8, "recall": 0.8, "f1": pytest.approx(0.8)}
    merge = deteval_1d([[(0, 4), (5, 10)]], [[(0, 10)]])
    assert merge["precision"] == 0.8 and merge["recall"] == 0.8
    half = deteval_1d([[(0, 4), (5, 10)]], [[(0, 10)]], split_merge_credit=0.5)
    assert half["f1"] == pytest.approx(0.5)


def test_cleval_split_and_merge_penalised_per_extra_instance() -> None:
    split = cleval_1d([[(0, 10)]], [[(0, 5), (6, 10)]])
    assert split["precision"] == 1.0  # 9 correct of 9 predicted characters
    assert split["recall"] == pytest.approx((9 - 1) / 10)
    merge = cleval_1d([[(0, 4), (5, 10)]], [[(0, 10)]])
    assert merge["precision"] == pytest.approx((9 - 1) / 10)
    assert merge["recall"] == 1.0
    heavier = cleval_1d([[(0, 10)]], [[(0, 5), (6, 10)]], granularity_penalty=3.0)
    assert heavier["recall"] == pytest.approx((9 - 3) / 10)


def test_cleval_area_precision_threshold() -> None:
    # the prediction has 2 of its 10 characters inside the gold span: 0.2 < 0.3
    assert cleval_1d([[(0, 2)]], [[(0, 10)]])["recall"] == 0.0
    assert cleval_1d([[(0, 2)]], [[(0, 10)]], area_precision=0.1)["recall"] == 1.0


def test_span_coverage_is_directional() -> None:
    sc = span_coverage_f1([[(0, 10)]], [[(2, 4), (8, 12)]])
    assert sc["precision"] == 0.5 and sc["recall"] == 1.0
    assert sc["f1"] == pytest.approx(2 / 3)
    # a prediction that overflows its gold span is not contained
    assert span_coverage_f1([[(2, 4)]], [[(0, 10)]])["f1"] == 0.0


def test_one_character_per_gold_span_fools_coverage_not_iou() -> None:
    gold, pred = [[(0, 20), (30, 50)]], [[(10, 11), (40, 41)]]
    scores = score_spans(gold, pred)
    assert scores["span_coverage"]["f1"] == 1.0
    assert scores["character_iou"]["score"] == pytest.approx(2 / 40)


def test_empty_conventions() -> None:
    both = score_spans([[]], [[]])
    assert all(
        v == {"score": 1.0} or v == {"precision": 1.0, "recall": 1.0, "f1": 1.0}
        for v in both.values()
    )
    miss = score_spans([[(0, 3)]], [[]])
    assert miss["character"] == {"precision": 1.0, "recall": 0.0, "f1": 0.0}
    assert miss["character_iou"] == {"score": 0.0}
    extra = score_spans([[]], [[(0, 3)]])
    assert extra["deteval_1d"] == {"precision": 0.0, "recall": 1.0, "f1": 0.0}


def test_macro_is_mean_of_item_scores_micro_pools() -> None:
    gold = [[(0, 10)], [(0, 2)]]
    pred = [[(0, 10)], [(0, 1)]]
    macro = score_spans(gold, pred)
    micro = score_spans(gold, pred, average="micro")
    assert macro["character"]["f1"] == pytest.approx((1.0 + 2 / 3) / 2)
    assert macro["character_iou"]["score"] == pytest.approx((1.0 + 0.5) / 2)
    assert micro["character"]["recall"] == pytest.approx(11 / 12)
    assert micro["character_iou"]["score"] == pytest.approx(11 / 12)
    assert micro["exact_span"]["f1"] == pytest.approx(0.5)


def test_output_shape() -> None:
    out = score_spans([[(0, 1)]], [[(0, 1)]])
    assert tuple(out) == METRICS
    for key, value in out.items():
        assert set(value) == (
            {"score"} if key == "character_iou" else {"precision", "recall", "f1"}
        )


def test_bad_parameters_are_named() -> None:
    with pytest.raises(SpanValidationError, match="deteval_pred_coverage"):
        SpanMetricParams(deteval_pred_coverage=1.5)
    with pytest.raises(SpanValidationError, match="cleval_granularity_penalty"):
        SpanMetricParams(cleval_granularity_penalty=-1.0)
    with pytest.raises(SpanValidationError, match="average"):
        score_spans([[]], [[]], average="weighted")
    with pytest.raises(SpanValidationError, match="gold has 2 span sets but pred has 1"):
        score_spans([[], []], [[]])


def test_no_items_gives_nan_with_warning() -> None:
    counts = span_counts([], [])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = aggregate(counts, "macro")
    assert math.isnan(out["character"]["f1"])
    assert any("NaN" in str(w.message) for w in caught)


# --------------------------------------------------------------------------- vs the reference


def _random_sets(
    rng: np.random.Generator, n: int, length: int, k: int, max_len: int
) -> list[list[list[int]]]:
    out = []
    for _ in range(n):
        spans = []
        for _ in range(int(rng.integers(0, k + 1))):
            s = int(rng.integers(0, length))
            spans.append([s, min(length, s + int(rng.integers(0, max_len)))])
        out.append(spans)
    return out


@pytest.mark.parametrize(
    ("seed", "params"),
    [
        (0, SpanMetricParams()),
        (
            1,
            SpanMetricParams(
                deteval_gold_coverage=0.3,
                deteval_pred_coverage=0.1,
                deteval_split_merge_credit=0.5,
                cleval_area_precision=0.1,
                cleval_granularity_penalty=2.0,
            ),
        ),
        (2, SpanMetricParams(deteval_gold_coverage=0.5, deteval_pred_coverage=0.2)),
    ],
)
def test_vectorised_counts_equal_the_reference(seed: int, params: SpanMetricParams) -> None:
    rng = np.random.default_rng(seed)
    gold = _random_sets(rng, 800, 60, 8, 14)
    pred = _random_sets(rng, 800, 60, 8, 14)
    counts = span_counts(gold, pred, params)
    canon = batch_from_lists(gold)
    for k in range(len(gold)):
        assert list(canon.spans(k)) == naive_canonical(gold[k])
        ref = naive_counts(
            naive_canonical(gold[k]),
            naive_canonical(pred[k]),
            tr=params.deteval_gold_coverage,
            tp=params.deteval_pred_coverage,
            pen=params.deteval_split_merge_credit,
            ap=params.cleval_area_precision,
            w=params.cleval_granularity_penalty,
        )
        for key, values in ref.items():
            assert tuple(float(a[k]) for a in counts.stats[key]) == values, (key, k)


def test_averages_equal_the_reference() -> None:
    rng = np.random.default_rng(3)
    gold = _random_sets(rng, 300, 50, 5, 20)
    pred = _random_sets(rng, 300, 50, 5, 20)
    for avg in ("macro", "micro"):
        fast, slow = score_spans(gold, pred, average=avg), naive_score(gold, pred, average=avg)
        for key in METRICS:
            for name, value in fast[key].items():
                assert value == pytest.approx(slow[key][name], abs=1e-12)


def test_per_item_scores_shapes() -> None:
    scores = per_item_scores(span_counts([[(0, 2)], []], [[(0, 2)], [(1, 2)]]))
    assert scores["exact_span"]["f1"].tolist() == [1.0, 0.0]
    assert scores["character_iou"]["score"].tolist() == [1.0, 0.0]
