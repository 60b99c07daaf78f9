"""Cross-fitted RAIM stacking (docs/stacking.md).

P(y=1 | v) = sigmoid(b0 + sum_i b_i v_i), L2-penalised logistic regression with
C = 1, votes in {0, 0.5, 1} (abstain = 0.5). Evaluation predictions are
out-of-fold: 5 folds grouped by cluster (items of one source document or answer
stay in one fold), stratified by label where possible. Threshold 0.5.

Bad input raises :class:`auditor.errors.InputError` naming the parameter:
labels outside {0, 1}, votes outside [0, 1] or not finite, fewer items or
clusters than folds, a single class overall, or a training fold holding a
single class.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from auditor.digest import content_digest
from auditor.errors import InputError
from auditor.stacking.model import Stacker

N_FOLDS = 5
C_PENALTY = 1.0
THRESHOLD = 0.5


@dataclass(frozen=True)
class Validated:
    """Checked inputs: votes (n, m) float64, labels (n,) int64, cluster codes (n,) int64."""

    votes: NDArray[np.float64]
    labels: NDArray[np.int64]
    clusters: NDArray[np.int64]
    n_clusters: int


def validate_inputs(
    votes: ArrayLike,
    labels: ArrayLike,
    clusters: ArrayLike | None,
    *,
    n_folds: int = N_FOLDS,
    members: Sequence[str] | None = None,
) -> Validated:
    """Check a vote matrix, labels and clusters; raise :class:`InputError` naming the bad one.

    ``clusters=None`` makes every item its own cluster.
    """
    matrix = np.asarray(votes, dtype=np.float64)
    if matrix.ndim != 2:
        raise InputError(
            f"expected a 2-D (items, members) matrix, got shape {matrix.shape}", field="votes"
        )
    n, m = matrix.shape
    if m == 0:
        raise InputError("the panel has no members", field="votes")
    if members is not None and len(members) != m:
        raise InputError(f"{m} vote columns but {len(members)} member names", field="members")
    if not np.all(np.isfinite(matrix)) or np.any((matrix < 0) | (matrix > 1)):
        raise InputError("votes must be finite and in [0, 1] (abstain = 0.5)", field="votes")
    raw_labels = np.asarray(labels)
    if raw_labels.shape != (n,):
        raise InputError(f"expected {n} labels, got shape {raw_labels.shape}", field="labels")
    bad = [x for x in raw_labels.tolist() if x not in (0, 1) or isinstance(x, bool)]
    if bad:
        raise InputError(f"labels must be 0 or 1, got {bad[0]!r}", field="labels")
    y = raw_labels.astype(np.int64)
    if clusters is None:
        codes = np.arange(n, dtype=np.int64)
    else:
        raw_clusters = np.asarray(clusters)
        if raw_clusters.shape != (n,):
            raise InputError(
                f"expected {n} cluster ids, got shape {raw_clusters.shape}", field="clusters"
            )
        _, codes = np.unique(raw_clusters.astype(str), return_inverse=True)
        codes = codes.astype(np.int64).reshape(-1)
    n_clusters = int(codes.max()) + 1 if n else 0
    if n < n_folds:
        raise InputError(f"{n} items: cross-fitting needs at least {n_folds}", field="labels")
    if n_clusters < n_folds:
        raise InputError(
            f"{n_clusters} clusters: cross-fitting needs at least {n_folds}", field="clusters"
        )
    if len(np.unique(y)) < 2:
        raise InputError(
            f"every label is {int(y[0])}: the stacker needs both classes", field="labels"
        )
    return Validated(matrix, y, codes, n_clusters)


def make_folds(
    labels: NDArray[np.int64], clusters: NDArray[np.int64], n_folds: int, seed: int
) -> NDArray[np.int64]:
    """Fold index per item, grouped by cluster and stratified by label (vectorised).

    Clusters are shuffled with ``seed``, stably sorted by their share of positive
    items, then dealt to folds in snake order (0, 1, .., k-1, k-1, .., 0, ...): every
    cluster lands in exactly one fold, and each fold gets clusters across the whole
    range of positive shares (the intent of sklearn's StratifiedGroupKFold, at a
    fraction of its cost on many clusters).
    """
    n_clusters = int(clusters.max()) + 1
    size = np.bincount(clusters, minlength=n_clusters).astype(np.float64)
    positives = np.bincount(clusters, weights=labels.astype(np.float64), minlength=n_clusters)
    share = np.divide(positives, size, out=np.zeros(n_clusters), where=size > 0)
    order = np.random.default_rng(seed).permutation(n_clusters)
    order = order[np.argsort(share[order], kind="stable")]
    rank = np.empty(n_clusters, dtype=np.int64)
    rank[order] = np.arange(n_clusters)
    block, pos = np.divmod(rank, n_folds)
    fold_of_cluster = np.where(block % 2 == 0, pos, n_folds - 1 - pos)
    return fold_of_cluster[clusters].astype(np.int64)


def _fit_logistic(
    x: NDArray[np.float64], y: NDArray[np.int64], c: float
) -> tuple[NDArray[np.float64], float]:
    """L2 logistic regression (C = ``c``, intercept unpenalised).

    A column that is constant on the training items (a member that always abstains, or
    always votes the same) carries no information and gets coefficient 0; with no
    varying column the model is the intercept alone, the log-odds of the base rate.
    """
    from sklearn.linear_model import LogisticRegression

    coef = np.zeros(x.shape[1])
    varying = np.ptp(x, axis=0) > 0
    if not varying.any():
        rate = float(np.clip(y.mean(), 1e-6, 1 - 1e-6))
        return coef, float(np.log(rate / (1 - rate)))
    model = LogisticRegression(C=c, solver="newton-cholesky", max_iter=200)  # L2 penalty
    model.fit(x[:, varying], y)
    coef[varying] = model.coef_[0]
    return coef, float(model.intercept_[0])


@dataclass(frozen=True)
class CrossFit:
    """Out-of-fold stacked probabilities and the per-fold coefficients."""

    proba: NDArray[np.float64]
    fold: NDArray[np.int64]
    coefs: NDArray[np.float64]
    """(n_folds, n_members)"""
    intercepts: NDArray[np.float64]


def cross_fit(
    votes: ArrayLike,
    labels: ArrayLike,
    clusters: ArrayLike | None = None,
    *,
    n_folds: int = N_FOLDS,
    c: float = C_PENALTY,
    seed: int = 0,
) -> CrossFit:
    """Out-of-fold stacked P(hallucinated) for every item (5 folds grouped by cluster).

    Raises :class:`InputError` when a training fold holds a single class.
    """
    data = validate_inputs(votes, labels, clusters, n_folds=n_folds)
    return _cross_fit(data, n_folds=n_folds, c=c, seed=seed)


def _cross_fit(data: Validated, *, n_folds: int, c: float, seed: int) -> CrossFit:
    fold = make_folds(data.labels, data.clusters, n_folds, seed)
    proba = np.empty(len(data.labels))
    coefs = np.empty((n_folds, data.votes.shape[1]))
    intercepts = np.empty(n_folds)
    for k in range(n_folds):
        train = fold != k
        if len(np.unique(data.labels[train])) < 2:
            raise InputError(
                f"fold {k}: its training part holds one class only; "
                "add items of the other class or more clusters",
                field="labels",
            )
        coef, intercept = _fit_logistic(data.votes[train], data.labels[train], c)
        coefs[k], intercepts[k] = coef, intercept
        logits = intercept + data.votes[~train] @ coef
        proba[~train] = 1.0 / (1.0 + np.exp(-logits))
    return CrossFit(proba, fold, coefs, intercepts)


def data_digest(
    votes: NDArray[np.float64], labels: NDArray[np.int64], extra: dict[str, Any] | None = None
) -> str:
    """Digest of the fitting data (votes and labels, plus any identifying metadata)."""
    return content_digest(
        {"votes": np.round(votes, 6).tolist(), "labels": labels.tolist(), "extra": extra or {}}
    )


def fit_stacker(
    votes: ArrayLike,
    labels: ArrayLike,
    members: Sequence[str],
    clusters: ArrayLike | None = None,
    *,
    c: float = C_PENALTY,
    threshold: float = THRESHOLD,
    n_folds: int = N_FOLDS,
    fallback_member: str | None = None,
    info: dict[str, Any] | None = None,
) -> Stacker:
    """Fit the deployable stacker on every item (the cross-fitted one is for evaluation).

    ``fallback_member`` marks a non-admissible calibration set: audits then use that
    member's vote. ``fitted_on`` is the digest of the votes and labels.
    """
    data = validate_inputs(votes, labels, clusters, n_folds=n_folds, members=members)
    if fallback_member is not None and fallback_member not in members:
        raise InputError(f"{fallback_member!r} is not a member", field="fallback_member")
    coef, intercept = _fit_logistic(data.votes, data.labels, c)
    return Stacker(
        members=tuple(members),
        coef=tuple(float(x) for x in coef),
        intercept=intercept,
        threshold=threshold,
        fitted_on=data_digest(data.votes, data.labels, {"members": list(members)}),
        fallback_member=fallback_member,
        info=dict(info or {}),
    )


def cross_fit_features(
    features: ArrayLike, labels: NDArray[np.int64], fold: NDArray[np.int64], *, c: float = C_PENALTY
) -> NDArray[np.float64]:
    """Out-of-fold P(hallucinated) of a score stacker on given folds (the vote stacker's,
    so the two are compared on the same items and splits)."""
    x = np.asarray(features, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] != len(labels) or not np.all(np.isfinite(x)):
        raise InputError(
            f"expected a finite ({len(labels)}, k) matrix, got shape {x.shape}", field="features"
        )
    proba = np.empty(len(labels))
    for k in np.unique(fold):
        train = fold != k
        if len(np.unique(labels[train])) < 2:
            raise InputError(f"fold {k}: its training part holds one class only", field="labels")
        coef, intercept = _fit_logistic(x[train], labels[train], c)
        proba[~train] = 1.0 / (1.0 + np.exp(-(intercept + x[~train] @ coef)))
    return proba


def fit_score_stacker(
    features: ArrayLike,
    labels: ArrayLike,
    members: Sequence[str],
    feature_names: Sequence[str],
    *,
    c: float = C_PENALTY,
    threshold: float = THRESHOLD,
    fallback_member: str | None = None,
    info: dict[str, Any] | None = None,
) -> Stacker:
    """Fit a score stacker (``kind="scores"``) on every item; see
    :mod:`auditor.stacking.features` for the feature columns."""
    x = np.asarray(features, dtype=np.float64)
    y = np.asarray(labels, dtype=np.int64)
    if x.ndim != 2 or x.shape != (len(y), len(feature_names)) or not np.all(np.isfinite(x)):
        raise InputError(
            f"expected a finite ({len(y)}, {len(feature_names)}) matrix, got shape {x.shape}",
            field="features",
        )
    if len(np.unique(y)) < 2:
        raise InputError("the stacker needs both classes", field="labels")
    if fallback_member is not None and fallback_member not in members:
        raise InputError(f"{fallback_member!r} is not a member", field="fallback_member")
    coef, intercept = _fit_logistic(x, y, c)
    return Stacker(
        members=tuple(members),
        coef=tuple(float(v) for v in coef),
        intercept=intercept,
        threshold=threshold,
        fitted_on=data_digest(
            np.round(x, 6), y, {"members": list(members), "features": list(feature_names)}
        ),
        fallback_member=fallback_member,
        info=dict(info or {}),
        kind="scores",
        features=tuple(feature_names),
    )
