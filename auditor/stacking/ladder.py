"""The comparison ladder of docs/stacking.md, all on the same items.

Rungs, each a prediction column with values 0, 1 or 0.5 (abstain):

- ``mean_member``: the average member score (κ and balanced accuracy averaged over
  members, per resample); it has no prediction column of its own.
- ``majority``: unweighted majority of the votes; abstentions count 0.5, so the
  mean vote decides and a tie (mean exactly 0.5, every member abstaining included)
  is decided by the threshold: mean >= 0.5 -> 1.
- ``dawid_skene``: unsupervised Dawid–Skene EM (abstentions are missing), posterior >= 0.5.
- ``best_avg``: the member best on average across datasets (given by the caller).
- ``best_cv``: in each fold, the member with the best κ on the training part; its
  votes on the test part (so it may abstain).
- ``oracle_best``: argmax κ on the test items, re-chosen on every resample
  (generous, not deployable).
- ``stacked``: the cross-fitted stacker's out-of-fold probability >= threshold.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from auditor.stacking.metrics import scores

FloatArray = NDArray[np.float64]


def majority_vote(votes: FloatArray, threshold: float = 0.5) -> FloatArray:
    """Unweighted majority: the mean vote (abstain = 0.5) against ``threshold``; ties -> 1."""
    return (votes.mean(axis=1) >= threshold).astype(np.float64)


def dawid_skene(
    votes: FloatArray, *, n_iter: int = 100, tol: float = 1e-6, smoothing: float = 0.01
) -> FloatArray:
    """Posterior P(y = 1) per item from Dawid–Skene EM on binary votes (0.5 = missing).

    Initialised from the majority vote (which fixes the label orientation); each
    member has a 2x2 confusion matrix, class prior estimated; Laplace ``smoothing``.
    Items without any vote get the class prior.
    """
    said1 = (votes == 1.0).astype(np.float64)
    said0 = (votes == 0.0).astype(np.float64)
    answered = said0 + said1
    n_votes = answered.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        post = np.where(n_votes > 0, said1.sum(axis=1) / n_votes, 0.5)
    post = np.clip(post, 0.05, 0.95)
    for _ in range(n_iter):
        prior = np.clip(post.mean(), 1e-3, 1 - 1e-3)
        # member sensitivity P(say 1 | y=1) and specificity P(say 0 | y=0)
        sens = (post @ said1 + smoothing) / (post @ answered + 2 * smoothing)
        spec = ((1 - post) @ said0 + smoothing) / ((1 - post) @ answered + 2 * smoothing)
        log1 = np.log(prior) + said1 @ np.log(sens) + said0 @ np.log(1 - sens)
        log0 = np.log(1 - prior) + said0 @ np.log(spec) + said1 @ np.log(1 - spec)
        new = 1.0 / (1.0 + np.exp(np.clip(log0 - log1, -500, 500)))
        if np.max(np.abs(new - post)) < tol:
            post = new
            break
        post = new
    return post


def best_cv_votes(
    votes: FloatArray, labels: NDArray[np.int64], fold: NDArray[np.int64]
) -> tuple[FloatArray, list[int]]:
    """Out-of-fold votes of the member chosen (best κ, NaN last) on each training part."""
    out = np.empty(len(labels))
    chosen: list[int] = []
    for k in np.unique(fold):
        train = fold != k
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            kappa, _ = scores(votes[train], labels[train], warn=False)
        best = int(np.nanargmax(kappa)) if np.isfinite(kappa).any() else 0
        chosen.append(best)
        out[~train] = votes[~train, best]
    return out, chosen


@dataclass(frozen=True)
class LadderColumns:
    """Prediction columns of the ladder's rungs (mean_member and oracle_best are derived
    from the member columns at scoring time)."""

    names: tuple[str, ...]
    pred: FloatArray
    """(n, len(names)) values 0, 1 or 0.5"""
    best_cv_chosen: tuple[str, ...]
    best_avg: str | None


def ladder_columns(
    votes: FloatArray,
    labels: NDArray[np.int64],
    fold: NDArray[np.int64],
    stacked_proba: FloatArray,
    members: Sequence[str],
    *,
    threshold: float = 0.5,
    best_avg: str | None = None,
) -> LadderColumns:
    """The rungs with a prediction column: majority, Dawid–Skene, best_avg, best_cv, stacked."""
    names = ["majority", "dawid_skene"]
    cols = [majority_vote(votes, threshold), (dawid_skene(votes) >= threshold).astype(np.float64)]
    if best_avg is not None:
        if best_avg not in members:
            raise ValueError(f"best_avg: {best_avg!r} is not a member")
        names.append("best_avg")
        cols.append(votes[:, list(members).index(best_avg)])
    cv, chosen = best_cv_votes(votes, labels, fold)
    names += ["best_cv", "stacked"]
    cols += [cv, (stacked_proba >= threshold).astype(np.float64)]
    return LadderColumns(
        tuple(names), np.stack(cols, axis=1), tuple(members[i] for i in chosen), best_avg
    )
