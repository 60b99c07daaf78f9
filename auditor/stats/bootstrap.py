"""Vectorised cluster bootstrap (percentile method).

Clusters (answers, source documents) are resampled with replacement; every item
of a drawn cluster comes along. Instead of materialising resampled index arrays
we return, per resample, the multiplicity of every item: a ``(B, n_items)``
weight matrix. Any statistic that is a ratio of sums becomes two matrix
products, so B = 2000 resamples cost one BLAS call, not a Python loop.
"""

from __future__ import annotations

import warnings

import numpy as np
from numpy.typing import ArrayLike, NDArray


def _validate_clusters(clusters: ArrayLike) -> tuple[NDArray[np.int64], int]:
    arr = np.asarray(clusters)
    if arr.ndim != 1:
        raise ValueError(f"clusters: expected a 1-D array, got shape {arr.shape}")
    _, codes = np.unique(arr, return_inverse=True)
    n_clusters = int(codes.max()) + 1 if codes.size else 0
    return codes.astype(np.int64), n_clusters


def cluster_bootstrap_weights(
    clusters: ArrayLike, n_boot: int, rng: np.random.Generator
) -> NDArray[np.float64]:
    """Item multiplicities for ``n_boot`` cluster-bootstrap resamples.

    Parameters
    ----------
    clusters:
        One cluster label per item (any hashable dtype numpy can sort).
    n_boot:
        Number of resamples B (>= 1).
    rng:
        The random generator; pass ``np.random.default_rng(seed)``.

    Returns
    -------
    Array of shape ``(n_boot, n_items)``: how often each item appears in each
    resample (all items of a cluster share their cluster's draw count).
    """
    if n_boot < 1:
        raise ValueError(f"n_boot: must be >= 1, got {n_boot}")
    codes, n_clusters = _validate_clusters(clusters)
    if n_clusters == 0:
        return np.zeros((n_boot, 0))
    counts = rng.multinomial(n_clusters, np.full(n_clusters, 1.0 / n_clusters), size=n_boot)
    return counts[:, codes].astype(np.float64)


def percentile_interval(samples: ArrayLike, level: float = 0.95) -> tuple[float, float]:
    """Percentile interval of bootstrap samples, ignoring NaN resamples.

    Returns ``(nan, nan)`` with a warning when no resample is finite.
    """
    if not 0.0 < level < 1.0:
        raise ValueError(f"level: must be in (0, 1), got {level}")
    arr = np.asarray(samples, dtype=np.float64)
    finite = arr[np.isfinite(arr)]
    if finite.size == 0:
        warnings.warn(
            "bootstrap interval undefined: no finite resample", RuntimeWarning, stacklevel=2
        )
        return (float("nan"), float("nan"))
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(finite, [alpha, 1.0 - alpha])
    return (float(lo), float(hi))


def ratio_with_interval(
    numerator: ArrayLike,
    denominator: ArrayLike,
    clusters: ArrayLike,
    *,
    n_boot: int = 2000,
    rng: np.random.Generator,
    level: float = 0.95,
) -> tuple[float | None, tuple[float, float] | None]:
    """A ratio of item sums with its cluster-bootstrap percentile interval.

    ``numerator`` and ``denominator`` are per-item contributions (e.g. 1 when a
    claim is supported / 1 when it is decidable). Returns ``(None, None)`` when
    the denominator sums to zero: the figure is undefined, never 0 or 1.
    """
    num = np.asarray(numerator, dtype=np.float64)
    den = np.asarray(denominator, dtype=np.float64)
    if num.shape != den.shape or num.ndim != 1:
        raise ValueError("numerator, denominator: must be 1-D arrays of the same length")
    if len(np.asarray(clusters)) != num.size:
        raise ValueError("clusters: must have one label per item")
    total = den.sum()
    if total == 0:
        return None, None
    point = float(num.sum() / total)
    weights = cluster_bootstrap_weights(clusters, n_boot, rng)
    boot_den = weights @ den
    with np.errstate(invalid="ignore", divide="ignore"):
        boot = np.where(boot_den > 0, (weights @ num) / boot_den, np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        interval = percentile_interval(boot, level)
    return point, interval
