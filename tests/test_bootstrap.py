"""Cluster bootstrap: resampling whole clusters, vectorised, seeded."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from auditor.stats.bootstrap import (
    cluster_bootstrap_weights,
    percentile_interval,
    ratio_with_interval,
)


def test_weights_resample_whole_clusters() -> None:
    clusters = np.array(["a", "a", "b", "c", "c", "c"])
    w = cluster_bootstrap_weights(clusters, 500, np.random.default_rng(0))
    assert w.shape == (500, 6)
    # items of one cluster always share their multiplicity
    assert np.all(w[:, 0] == w[:, 1]) and np.all(w[:, 3] == w[:, 5])
    # each resample draws as many clusters as there are
    per_cluster = w[:, [0, 2, 3]]
    assert np.all(per_cluster.sum(axis=1) == 3)


def test_same_seed_same_resamples() -> None:
    a = cluster_bootstrap_weights(np.arange(20) // 2, 50, np.random.default_rng(7))
    b = cluster_bootstrap_weights(np.arange(20) // 2, 50, np.random.default_rng(7))
    assert np.array_equal(a, b)


def test_ratio_is_none_when_the_denominator_is_empty() -> None:
    value, ci = ratio_with_interval(
        [0, 0], [0, 0], ["x", "y"], n_boot=10, rng=np.random.default_rng(0)
    )
    assert value is None and ci is None


def test_ratio_interval_brackets_the_point_and_widens_with_clustering() -> None:
    rng = np.random.default_rng(1)
    n = 400
    hits = rng.random(n) < 0.7
    ones = np.ones(n)
    value, ci = ratio_with_interval(
        hits, ones, np.arange(n), n_boot=2000, rng=np.random.default_rng(2)
    )
    assert value is not None and ci is not None
    assert ci[0] <= value <= ci[1]
    # perfectly correlated clusters of 20: same point, a wider interval
    clustered = np.repeat(hits[:20], 20)
    v2, ci2 = ratio_with_interval(
        clustered, ones, np.arange(n) // 20, n_boot=2000, rng=np.random.default_rng(2)
    )
    assert v2 is not None and ci2 is not None
    assert (ci2[1] - ci2[0]) > (ci[1] - ci[0])


def test_percentile_interval_of_nothing_finite_is_nan_with_a_warning() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lo, hi = percentile_interval([np.nan, np.nan])
    assert np.isnan(lo) and np.isnan(hi)
    assert any("undefined" in str(w.message) for w in caught)


def test_bad_parameters_are_named() -> None:
    with pytest.raises(ValueError, match="n_boot"):
        cluster_bootstrap_weights([1, 2], 0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="level"):
        percentile_interval([1.0], level=1.5)
