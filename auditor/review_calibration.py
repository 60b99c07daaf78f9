"""Refit the learned label decision on a team's own reviewed claims (``auditor calibrate
--from-reviews RUN``).

The run's stored claims are replayed through the audit graph with the default panel and
stacker (:func:`auditor.bridging.replay`: stored votes are reused, nothing is written),
which gives every claim's :class:`~auditor.labels.ClaimSignals`; each factual claim a
reviewer labelled with one of the model's five labels is a row (the latest review of a
claim counts). The shipped model and a model refitted on the reviews are compared on the
same claims: the refit is cross-fitted (each fold of answers predicted by a model fitted
on the other folds), and the paired accuracy difference carries a 95 % cluster-bootstrap
interval over answers. The model fitted on all reviewed claims is returned for saving.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from auditor.errors import ConfigError
from auditor.label_model import CLASSES, LabelModel, features, fit_label_model
from auditor.labels import LabelPolicy
from auditor.stats.bootstrap import cluster_bootstrap_weights, percentile_interval

if TYPE_CHECKING:
    from ledger import Ledger

MIN_REVIEWED = 20
"""Fewest reviewed factual claims a refit is attempted on."""


@dataclass(frozen=True)
class ReviewCalibration:
    """The comparison on a run's reviewed claims, and the model fitted on all of them."""

    run_id: str
    n_claims: int
    n_answers: int
    shipped_accuracy: float
    refit_accuracy: float
    """Cross-fitted: each claim predicted by a model that never saw its answer."""
    difference: float
    interval: tuple[float, float]
    model: LabelModel

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready summary (without the model)."""
        return {
            "run_id": self.run_id,
            "reviewed_claims": self.n_claims,
            "answers": self.n_answers,
            "shipped_accuracy": round(self.shipped_accuracy, 4),
            "refit_accuracy_cross_fitted": round(self.refit_accuracy, 4),
            "difference": round(self.difference, 4),
            "difference_interval": [round(self.interval[0], 4), round(self.interval[1], 4)],
        }


def reviewed_labels(ledger: Ledger, run_id: str) -> dict[str, str]:
    """The latest reviewer label of each reviewed claim of a run."""
    return {row["claim_id"]: str(row["label"]) for row in ledger.human_audits(run_id)}


def calibrate_from_reviews(
    ledger: Ledger,
    run_id: str,
    *,
    c: float = 0.01,
    folds: int = 5,
    seed: int = 0,
    n_boot: int = 2000,
) -> ReviewCalibration:
    """Compare the shipped label model with one refitted on the run's reviewed claims."""
    from auditor.bridging import replay
    from auditor.decision import label_model
    from auditor.judges.panel import load_panel
    from auditor.stacking.model import load_stacker

    reviews = reviewed_labels(ledger, run_id)
    audits = replay(ledger, run_id, load_panel(None), load_stacker(None))
    policy = LabelPolicy()
    allowed = {label.value for label in CLASSES}
    chosen = [a for a in audits if a.claim.factual and reviews.get(a.claim.id, "") in allowed]
    if len(chosen) < MIN_REVIEWED:
        raise ConfigError(
            f"run {run_id[:12]}: {len(chosen)} reviewed factual claims with a label among "
            f"{sorted(allowed)}; a refit needs at least {MIN_REVIEWED} "
            "(add reviews with `auditor review add`)"
        )
    x = np.array([features(a.signals(), policy) for a in chosen])
    y = np.array([reviews[a.claim.id] for a in chosen])
    answers = np.array([a.claim.answer_id for a in chosen])
    shipped = label_model(policy)
    if shipped is None:
        raise ConfigError("no shipped label model to compare with")
    shipped_pred = np.array([shipped.decide(a.signals(), policy)[0].value for a in chosen])
    refit_pred = _cross_fitted(x, y, answers, c=c, folds=folds, seed=seed)
    diff = (refit_pred == y).astype(float) - (shipped_pred == y).astype(float)
    weights = cluster_bootstrap_weights(answers, n_boot, np.random.default_rng(seed))
    lo, hi = percentile_interval((weights @ diff) / weights.sum(axis=1))
    model = fit_label_model(
        x, y, c=c, provenance={"data": f"reviewed claims of run {run_id}", "run_id": run_id}
    )
    return ReviewCalibration(
        run_id,
        len(chosen),
        len(set(answers.tolist())),
        float((shipped_pred == y).mean()),
        float((refit_pred == y).mean()),
        float(diff.mean()),
        (lo, hi),
        model,
    )


def _cross_fitted(
    x: np.ndarray, y: np.ndarray, clusters: np.ndarray, *, c: float, folds: int, seed: int
) -> np.ndarray:
    """Each row predicted by a model fitted on the folds of answers it is not in (a fold
    whose training side has a single label predicts that label)."""
    names = np.unique(clusters)
    order = np.random.default_rng(seed).permutation(len(names)) % folds
    fold_of = dict(zip(names, order, strict=True))
    fold = np.array([fold_of[name] for name in clusters])
    pred = np.empty(len(y), dtype=object)
    for k in range(folds):
        held = fold == k
        if not held.any():
            continue
        train_y = y[~held]
        if len(set(train_y.tolist())) < 2:
            pred[held] = train_y[0] if len(train_y) else y[held][0]
            continue
        model = fit_label_model(x[~held], train_y, c=c)
        pred[held] = np.array(model.classes)[model.probabilities(x[held]).argmax(axis=1)]
    return pred.astype(str)
