"""Scores of the ladder and their paired cluster-bootstrap intervals (docs/stacking.md).

- Cohen's κ with abstentions excluded (only items where the system voted 0 or 1).
- Balanced accuracy with abstentions as errors for their class.
- Paired cluster bootstrap: every system is scored on the same resamples, so a
  comparison reads the per-resample difference. Resampling is vectorised: items
  are summed per cluster into confusion indicators, and a ``(B, n_clusters)``
  multiplicity matrix (:func:`auditor.stats.bootstrap.cluster_bootstrap_weights`
  over the cluster ids) times that ``(n_clusters, 4 S + 2)`` matrix scores all S
  systems on all B resamples in one matrix product.

Undefined figures (no decided item, one class only, chance agreement of 1) are
NaN; point estimates warn, resamples do not (intervals ignore NaN resamples).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from auditor.stats.bootstrap import cluster_bootstrap_weights, percentile_interval

ABSTAIN = 0.5
FloatArray = NDArray[np.float64]


def _confusion_columns(pred: FloatArray, labels: NDArray[np.int64]) -> FloatArray:
    """(n, 4 S + 2) indicators: per system TP, FP, FN, TN, then positives and negatives."""
    pos = (labels == 1)[:, None]
    neg = (labels == 0)[:, None]
    one, zero = pred == 1.0, pred == 0.0
    blocks = [one & pos, one & neg, zero & pos, zero & neg]
    stacked = np.stack(blocks, axis=2).reshape(pred.shape[0], -1)  # per system: tp fp fn tn
    return np.concatenate([stacked, pos, neg], axis=1).astype(np.float64)


def _scores_from_sums(sums: FloatArray, n_systems: int) -> tuple[FloatArray, FloatArray]:
    """κ and balanced accuracy from summed indicators (..., 4 S + 2) -> (..., S) each."""
    conf = sums[..., : 4 * n_systems].reshape(*sums.shape[:-1], n_systems, 4)
    tp, fp, fn, tn = conf[..., 0], conf[..., 1], conf[..., 2], conf[..., 3]
    pos, neg = sums[..., -2][..., None], sums[..., -1][..., None]
    with np.errstate(invalid="ignore", divide="ignore"):
        decided = tp + fp + fn + tn
        p_o = (tp + tn) / decided
        p_e = ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)) / decided**2
        kappa = np.where((decided > 0) & (p_e < 1.0 - 1e-12), (p_o - p_e) / (1.0 - p_e), np.nan)
        bacc = np.where((pos > 0) & (neg > 0), (tp / pos + tn / neg) / 2.0, np.nan)
    return kappa, bacc


def _check(pred: ArrayLike, labels: ArrayLike) -> tuple[FloatArray, NDArray[np.int64]]:
    p = np.asarray(pred, dtype=np.float64)
    if p.ndim == 1:
        p = p[:, None]
    y = np.asarray(labels).astype(np.int64)
    if p.ndim != 2 or p.shape[0] != y.shape[0]:
        raise ValueError(f"pred: expected (n,) or (n, S) with n = {y.shape[0]}, got {p.shape}")
    if not np.all(np.isin(p, (0.0, ABSTAIN, 1.0))):
        raise ValueError("pred: values must be 0, 1 or 0.5 (abstain)")
    if not np.all(np.isin(y, (0, 1))):
        raise ValueError("labels: values must be 0 or 1")
    return p, y


def scores(
    pred: ArrayLike, labels: ArrayLike, *, warn: bool = True
) -> tuple[FloatArray, FloatArray]:
    """Point κ (abstentions excluded) and balanced accuracy (abstentions are errors).

    ``pred`` is ``(n,)`` or ``(n, S)`` with values 0, 1 or 0.5; returns two ``(S,)``
    arrays. Undefined figures are NaN, with a RuntimeWarning when ``warn``.
    """
    p, y = _check(pred, labels)
    kappa, bacc = _scores_from_sums(_confusion_columns(p, y).sum(axis=0), p.shape[1])
    if warn and (np.isnan(kappa).any() or np.isnan(bacc).any()):
        warnings.warn(
            "kappa or balanced accuracy undefined for some system (no decided "
            "item, one class only, or chance agreement of 1): NaN",
            RuntimeWarning,
            stacklevel=2,
        )
    return kappa, bacc


def cohen_kappa(pred: ArrayLike, labels: ArrayLike) -> float:
    """Cohen's κ of one system, abstentions (0.5) excluded; NaN with a warning if undefined."""
    return float(scores(pred, labels)[0][0])


def balanced_accuracy(pred: ArrayLike, labels: ArrayLike) -> float:
    """Balanced accuracy of one system, abstentions counted as errors; NaN if undefined."""
    return float(scores(pred, labels)[1][0])


@dataclass(frozen=True)
class BootstrapScores:
    """Point and per-resample κ and balanced accuracy of S systems."""

    kappa: FloatArray
    """(S,)"""
    bacc: FloatArray
    boot_kappa: FloatArray
    """(B, S)"""
    boot_bacc: FloatArray


def bootstrap_scores(
    pred: ArrayLike,
    labels: ArrayLike,
    clusters: ArrayLike,
    *,
    n_boot: int = 2000,
    rng: np.random.Generator,
) -> BootstrapScores:
    """Point and paired cluster-bootstrap κ and balanced accuracy of every system (column).

    All systems are scored on the same resamples (paired). Vectorised: one
    ``(B, n_clusters) @ (n_clusters, 4 S + 2)`` product.
    """
    p, y = _check(pred, labels)
    cl = np.asarray(clusters)
    if cl.shape != y.shape:
        raise ValueError("clusters: must have one id per item")
    _, codes = np.unique(cl.astype(str), return_inverse=True)
    codes = codes.reshape(-1)
    n_clusters = int(codes.max()) + 1 if codes.size else 0
    columns = _confusion_columns(p, y)
    per_cluster = np.zeros((n_clusters, columns.shape[1]))
    np.add.at(per_cluster, codes, columns)
    counts = cluster_bootstrap_weights(np.arange(n_clusters), n_boot, rng)
    boot_sums = counts @ per_cluster
    kappa, bacc = scores(p, y)
    boot_kappa, boot_bacc = _scores_from_sums(boot_sums, p.shape[1])
    return BootstrapScores(kappa, bacc, boot_kappa, boot_bacc)


def interval(samples: ArrayLike, level: float = 0.95) -> tuple[float, float]:
    """Percentile interval ignoring NaN resamples; (NaN, NaN) with a warning if none is finite."""
    return percentile_interval(samples, level)


def paired_verdict(
    delta_ci: tuple[float, float], oracle_ci: tuple[float, float] | None = None
) -> str:
    """``clean_win`` / ``win`` / ``tie`` / ``loss`` / ``undefined`` from paired Δκ intervals.

    *win*: lower bound of Δκ > 0; *clean win*: also the lower bound of Δκ against the
    oracle > 0 (when ``oracle_ci`` is given); *tie*: the interval spans 0; *loss*:
    upper bound < 0.
    """
    lo, hi = delta_ci
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return "undefined"
    if lo > 0:
        if oracle_ci is not None and np.isfinite(oracle_ci[0]) and oracle_ci[0] > 0:
            return "clean_win"
        return "win"
    if hi < 0:
        return "loss"
    return "tie"
