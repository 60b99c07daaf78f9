"""Calibration of a judge panel on labelled items: ladder, paired bootstrap, admissibility,
and the fitted stacker (what ``auditor calibrate`` runs).

DATA lines: ``{"id", "cluster", "claim", "evidence": "..." or ["...", ...], "label": 0|1}``
(1 = hallucinated/unsupported), optional ``"question"`` and ``"dataset"``; with two
or more datasets the ``best_avg`` rung (best member on average across datasets) is
added.

Documented degenerate cases:

- a label outside {0, 1}, a missing field, a duplicate id: :class:`InputError` with
  file, line and field;
- fewer items or clusters than folds, one class only, a training fold with one
  class: :class:`InputError` (field ``labels`` or ``clusters``);
- a member that abstains on every item (or every member doing so): its κ and
  balanced accuracy are NaN (κ) / its errors (balanced accuracy), with a
  RuntimeWarning; the stacker is still fitted (a constant column gets ~0 weight);
- the verdicts read Δκ (docs/stacking.md); ``delta_bacc``/``bacc_ci`` are given beside them
  because κ leaves abstentions out while the stacker never abstains;
- a figure undefined on some resamples: those resamples are ignored; undefined on
  all: the interval is ``[NaN, NaN]`` (JSON ``null``) with a warning.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from auditor.digest import content_digest
from auditor.errors import InputError
from auditor.jsonl import read_jsonl
from auditor.stacking.admissibility import KAPPA0, PHI0, SHARE_C, Admissibility, admissibility
from auditor.stacking.features import feature_names, features_from_outputs
from auditor.stacking.fit import (
    N_FOLDS,
    THRESHOLD,
    _cross_fit,
    cross_fit_features,
    fit_score_stacker,
    fit_stacker,
    validate_inputs,
)
from auditor.stacking.ladder import ladder_columns
from auditor.stacking.metrics import bootstrap_scores, interval, paired_verdict, scores
from auditor.stacking.model import Stacker
from auditor.types import JudgePair, Vote

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class CalibrationItem:
    """One labelled (claim, evidence) item."""

    id: str
    cluster: str
    claim: str
    evidence: tuple[str, ...]
    label: int
    question: str | None = None
    dataset: str | None = None

    def pair(self) -> JudgePair:
        return JudgePair(claim=self.claim, evidence=self.evidence, question=self.question)


def read_calibration_data(path: str | Path) -> list[CalibrationItem]:
    """Read and validate a calibration DATA.jsonl; errors name file, line and field."""
    file = str(path)
    items: list[CalibrationItem] = []
    seen: dict[str, int] = {}
    for line, record in read_jsonl(path):

        def need(
            name: str, kinds: type | tuple[type, ...], rec: dict[str, Any] = record, ln: int = line
        ) -> Any:
            if name not in rec or rec[name] is None:
                raise InputError("missing required field", file=file, line=ln, field=name)
            value = rec[name]
            if not isinstance(value, kinds) or isinstance(value, bool):
                raise InputError(
                    f"unexpected type {type(value).__name__}", file=file, line=ln, field=name
                )
            return value

        ident = str(need("id", (str, int)))
        if ident in seen:
            raise InputError(
                f"duplicate id {ident!r} (first on line {seen[ident]})",
                file=file,
                line=line,
                field="id",
            )
        seen[ident] = line
        cluster = str(need("cluster", (str, int)))
        claim = need("claim", str)
        evidence = need("evidence", (str, list))
        if isinstance(evidence, list):
            if not all(isinstance(e, str) for e in evidence):
                raise InputError(
                    "expected a string or a list of strings", file=file, line=line, field="evidence"
                )
            evidence_t = tuple(evidence)
        else:
            evidence_t = (evidence,)
        label = record.get("label")
        if label not in (0, 1) or isinstance(label, bool | float):
            raise InputError(
                f"label must be 0 or 1, got {label!r}", file=file, line=line, field="label"
            )
        question = record.get("question")
        dataset = record.get("dataset")
        items.append(
            CalibrationItem(
                ident,
                cluster,
                claim,
                evidence_t,
                int(label),
                str(question) if question is not None else None,
                str(dataset) if dataset is not None else None,
            )
        )
    if not items:
        raise InputError("no items", file=file)
    return items


@dataclass
class CalibrationResult:
    """Everything a calibration produced; :meth:`as_dict` is the command's JSON output."""

    report: dict[str, Any]
    stacker: Stacker
    votes: list[list[Vote]] = field(default_factory=list)
    """Per item, the members' votes (for the ledger); empty when called on a vote matrix."""

    def as_dict(self) -> dict[str, Any]:
        return self.report


def _num(x: float | np.floating[Any]) -> float | None:
    return float(x) if np.isfinite(x) else None


def _ci(samples: FloatArray) -> list[float | None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        lo, hi = interval(samples)
    if not np.isfinite(lo):
        warnings.warn(
            "bootstrap interval undefined: no finite resample", RuntimeWarning, stacklevel=3
        )
    return [_num(lo), _num(hi)]


def _best_avg(
    votes: FloatArray,
    labels: NDArray[np.int64],
    datasets: Sequence[str | None],
    members: Sequence[str],
) -> str | None:
    names = sorted({d for d in datasets if d is not None})
    if len(names) < 2 or any(d is None for d in datasets):
        return None
    arr = np.asarray(datasets, dtype=object)
    per = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for name in names:
            mask = arr == name
            per.append(scores(votes[mask], labels[mask], warn=False)[0])
    mean = np.nanmean(np.vstack(per), axis=0) if per else np.array([])
    return members[int(np.nanargmax(mean))] if np.isfinite(mean).any() else None


def calibrate_votes(
    ids: Sequence[str],
    votes: FloatArray,
    labels: Sequence[int] | NDArray[Any],
    clusters: Sequence[str] | NDArray[Any],
    members: Sequence[str],
    *,
    seed: int = 0,
    n_boot: int = 2000,
    n_folds: int = N_FOLDS,
    datasets: Sequence[str | None] | None = None,
    best_avg: str | None = None,
    kappa0: float = KAPPA0,
    c: float = SHARE_C,
    phi0: float = PHI0,
    threshold: float = THRESHOLD,
    scores: Sequence[Sequence[Mapping[str, float]]] | None = None,
    kind: str = "votes",
) -> CalibrationResult:
    """The numeric core of :func:`calibrate`, on a ready ``(n, m)`` vote matrix.

    ``best_avg`` names the best-on-average member when the caller chose it across
    other datasets; otherwise it is chosen from ``datasets`` when two or more are given.

    ``scores`` (per item, each member's named scores) adds the ``score_stacked`` rung: a
    stacker on the judges' scores with abstention indicators
    (:mod:`auditor.stacking.features`), cross-fitted on the vote stacker's folds and
    compared with it by the paired cluster bootstrap (``paired["scores_vs_votes"]``).
    ``kind`` picks the stacker that is fitted and returned: ``votes`` (RAIM's vote
    stacker), ``scores``, or ``best`` (the score stacker when its paired Δκ interval lies
    above 0, else the vote stacker). The admissibility test reads the members, so it
    governs whichever is shipped: not admissible, the audit uses the CV-best member.
    """
    if kind not in ("votes", "scores", "best"):
        raise InputError(f"must be 'votes', 'scores' or 'best', got {kind!r}", field="kind")
    if kind != "votes" and scores is None:
        raise InputError(f"kind {kind!r} needs the judges' scores", field="scores")
    if len(ids) != len(labels):
        raise InputError(f"{len(ids)} ids for {len(labels)} labels", field="ids")
    if n_boot < 1:
        raise InputError(f"must be >= 1, got {n_boot}", field="n_boot")
    data = validate_inputs(votes, labels, clusters, n_folds=n_folds, members=members)
    x, y = data.votes, data.labels
    cross = _cross_fit(data, n_folds=n_folds, c=1.0, seed=seed)
    if best_avg is None and datasets is not None:
        best_avg = _best_avg(x, y, datasets, members)
    ladder = ladder_columns(
        x, y, cross.fold, cross.proba, members, threshold=threshold, best_avg=best_avg
    )
    m = x.shape[1]
    all_pred = np.concatenate([x, ladder.pred], axis=1)
    names_f: tuple[str, ...] = ()
    features = score_proba = None
    if scores is not None:
        if len(scores) != len(y):
            raise InputError(f"{len(scores)} score rows for {len(y)} items", field="scores")
        names_f = feature_names(scores, members)
        features = features_from_outputs(x, scores, members, names_f)
        score_proba = cross_fit_features(features, y, cross.fold, c=1.0)
        all_pred = np.concatenate(
            [all_pred, (score_proba >= threshold).astype(np.float64)[:, None]], axis=1
        )
    rng = np.random.default_rng(seed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RuntimeWarning)
        boot = bootstrap_scores(all_pred, y, np.asarray(clusters), n_boot=n_boot, rng=rng)
    undefined = [str(w.message) for w in caught]
    mk, mb = boot.kappa[:m], boot.bacc[:m]
    bk, bb = boot.boot_kappa[:, :m], boot.boot_bacc[:, :m]
    abstain = (x == 0.5).mean(axis=0)
    for j, name in enumerate(members):
        if abstain[j] == 1.0:
            warnings.warn(
                f"member {name!r} abstained on every item: kappa is NaN",
                RuntimeWarning,
                stacklevel=2,
            )
    member_rows = [
        {
            "name": name,
            "kappa": _num(mk[j]),
            "kappa_ci": _ci(bk[:, j]),
            "bacc": _num(mb[j]),
            "bacc_ci": _ci(bb[:, j]),
            "abstain_rate": float(abstain[j]),
        }
        for j, name in enumerate(members)
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean_k, mean_b = np.nanmean(mk), np.nanmean(mb)
        boot_mean_k, boot_mean_b = np.nanmean(bk, axis=1), np.nanmean(bb, axis=1)
        finite_k = np.where(np.isfinite(mk))[0]
        oracle_j = int(finite_k[np.argmax(mk[finite_k])]) if finite_k.size else 0
        boot_oracle_k = np.nanmax(np.where(np.isfinite(bk), bk, -np.inf), axis=1)
        boot_oracle_k[~np.isfinite(boot_oracle_k)] = np.nan
    rungs: dict[str, dict[str, Any]] = {
        "mean_member": {
            "kappa": _num(mean_k),
            "kappa_ci": _ci(boot_mean_k),
            "bacc": _num(mean_b),
            "bacc_ci": _ci(boot_mean_b),
        }
    }
    col = {name: m + i for i, name in enumerate(ladder.names)}
    for name in ladder.names:
        j = col[name]
        rungs[name] = {
            "kappa": _num(boot.kappa[j]),
            "kappa_ci": _ci(boot.boot_kappa[:, j]),
            "bacc": _num(boot.bacc[j]),
            "bacc_ci": _ci(boot.boot_bacc[:, j]),
        }
    rungs["best_cv"]["chosen"] = list(ladder.best_cv_chosen)
    if best_avg is not None:
        rungs["best_avg"]["member"] = best_avg
    rungs["oracle_best"] = {
        "kappa": _num(mk[oracle_j]),
        "kappa_ci": _ci(boot_oracle_k),
        "bacc": _num(mb[oracle_j]),
        "bacc_ci": _ci(bb[:, oracle_j]),
        "member": members[oracle_j],
        "note": "argmax kappa on the test items, re-chosen per resample",
    }
    order = [
        "mean_member",
        "majority",
        "dawid_skene",
        "best_avg",
        "best_cv",
        "oracle_best",
        "stacked",
        "score_stacked",
    ]
    sc = all_pred.shape[1] - 1 if score_proba is not None else None
    if sc is not None:
        rungs["score_stacked"] = {
            "kappa": _num(boot.kappa[sc]),
            "kappa_ci": _ci(boot.boot_kappa[:, sc]),
            "bacc": _num(boot.bacc[sc]),
            "bacc_ci": _ci(boot.boot_bacc[:, sc]),
            "n_features": len(names_f),
        }
    ladder_rows = [{"name": name, **rungs[name]} for name in order if name in rungs]
    st = col["stacked"]
    d_cv = boot.boot_kappa[:, st] - boot.boot_kappa[:, col["best_cv"]]
    d_or = boot.boot_kappa[:, st] - boot_oracle_k
    ci_cv, ci_or = _ci(d_cv), _ci(d_or)
    ci_cv_t = (np.nan if ci_cv[0] is None else ci_cv[0], np.nan if ci_cv[1] is None else ci_cv[1])
    ci_or_t = (np.nan if ci_or[0] is None else ci_or[0], np.nan if ci_or[1] is None else ci_or[1])
    d_bacc_cv = boot.boot_bacc[:, st] - boot.boot_bacc[:, col["best_cv"]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        boot_oracle_b = np.take_along_axis(
            bb, np.nanargmax(np.where(np.isfinite(bk), bk, -np.inf), axis=1)[:, None], axis=1
        )[:, 0]
    d_bacc_or = boot.boot_bacc[:, st] - boot_oracle_b
    paired = {
        "stacked_vs_best_cv": {
            "delta_kappa": _num(boot.kappa[st] - boot.kappa[col["best_cv"]]),
            "ci": ci_cv,
            "verdict": paired_verdict(ci_cv_t, ci_or_t),
            "delta_bacc": _num(boot.bacc[st] - boot.bacc[col["best_cv"]]),
            "bacc_ci": _ci(d_bacc_cv),
        },
        "stacked_vs_oracle": {
            "delta_kappa": _num(boot.kappa[st] - mk[oracle_j]),
            "ci": ci_or,
            "verdict": paired_verdict(ci_or_t),
            "delta_bacc": _num(boot.bacc[st] - mb[oracle_j]),
            "bacc_ci": _ci(d_bacc_or),
        },
    }
    chosen = "votes"
    if sc is not None:
        d_k = boot.boot_kappa[:, sc] - boot.boot_kappa[:, st]
        d_b = boot.boot_bacc[:, sc] - boot.boot_bacc[:, st]
        ci_k = _ci(d_k)
        paired["scores_vs_votes"] = {
            "delta_kappa": _num(boot.kappa[sc] - boot.kappa[st]),
            "ci": ci_k,
            "verdict": paired_verdict(
                (np.nan if ci_k[0] is None else ci_k[0], np.nan if ci_k[1] is None else ci_k[1])
            ),
            "delta_bacc": _num(boot.bacc[sc] - boot.bacc[st]),
            "bacc_ci": _ci(d_b),
        }
        clear_win = ci_k[0] is not None and ci_k[0] > 0
        chosen = "scores" if kind == "scores" or (kind == "best" and clear_win) else "votes"
    adm: Admissibility = admissibility(mk, x, y, kappa0=kappa0, c=c, phi0=phi0)
    fallback = None if adm.admissible else members[oracle_j]
    fit_info = {
        "n_items": len(y),
        "n_clusters": data.n_clusters,
        "seed": seed,
        "admissible": adm.admissible,
    }
    if chosen == "scores":
        assert features is not None
        stacker = fit_score_stacker(
            features,
            y,
            members,
            names_f,
            threshold=threshold,
            fallback_member=fallback,
            info=fit_info,
        )
    else:
        stacker = fit_stacker(
            x,
            y,
            members,
            clusters,
            threshold=threshold,
            n_folds=n_folds,
            fallback_member=fallback,
            info=fit_info,
        )
    stacked_label = (cross.proba >= threshold).astype(int)
    predictions = [
        {
            "id": str(ids[i]),
            "stacked_prob": float(cross.proba[i]),
            **({} if score_proba is None else {"score_stacked_prob": float(score_proba[i])}),
            "stacked_label": int(stacked_label[i]),
            "fold": int(cross.fold[i]),
            "votes": dict(zip(members, map(float, x[i]), strict=True)),
        }
        for i in range(len(y))
    ]
    report: dict[str, Any] = {
        "n_items": len(y),
        "n_clusters": int(data.n_clusters),
        "n_positive": int(y.sum()),
        "seed": seed,
        "n_boot": n_boot,
        "n_folds": n_folds,
        "members": member_rows,
        "ladder": ladder_rows,
        "paired": paired,
        "admissibility": adm.as_dict(),
        "stacker_kind": chosen,
        "decision": (
            {"use": "stacked", "kind": chosen}
            if adm.admissible
            else {
                "use": "fallback",
                "member": fallback,
                "note": "not admissible: audits use the CV-best member's vote",
            }
        ),
        "stacker": stacker.to_dict(),
        "undefined": sorted(set(undefined)),
        "predictions": predictions,
    }
    return CalibrationResult(report=report, stacker=stacker)


def calibrate(
    items: Sequence[CalibrationItem],
    panel: Any,
    *,
    seed: int = 0,
    n_boot: int = 2000,
    n_folds: int = N_FOLDS,
    kappa0: float = KAPPA0,
    c: float = SHARE_C,
    phi0: float = PHI0,
    kind: str = "votes",
) -> CalibrationResult:
    """Judge every item with the panel, then run the ladder, the paired bootstrap, the
    admissibility test and fit the stacker (see :func:`calibrate_votes`).

    ``panel`` is an :class:`auditor.judges.panel.Panel` (anything with ``member_names``
    and an async ``judge(pairs)``). The report also records the panel's digest and the
    data digest.
    """
    if not items:
        raise InputError("no items", field="items")
    pairs = [item.pair() for item in items]
    votes_per_item: list[list[Vote]] = asyncio.run(panel.judge(pairs))
    matrix = np.array([[v.value for v in row] for row in votes_per_item], dtype=np.float64)
    members = list(panel.member_names)
    result = calibrate_votes(
        [i.id for i in items],
        matrix,
        [i.label for i in items],
        [i.cluster for i in items],
        members,
        seed=seed,
        n_boot=n_boot,
        n_folds=n_folds,
        datasets=[i.dataset for i in items],
        kappa0=kappa0,
        c=c,
        phi0=phi0,
        kind=kind,
        scores=[[{} if v.error else dict(v.scores) for v in row] for row in votes_per_item],
    )
    errors = {}
    for j, name in enumerate(members):
        reasons: dict[str, int] = {}
        for row in votes_per_item:
            reason = row[j].error
            if reason:
                reasons[reason] = reasons.get(reason, 0) + 1
        if reasons:
            errors[name] = reasons
    result.report["panel"] = {
        "name": getattr(panel, "name", None),
        "digest": getattr(panel, "digest", None),
        "members": members,
    }
    result.report["data_digest"] = content_digest(
        [[i.id, i.cluster, i.claim, list(i.evidence), i.label] for i in items]
    )
    result.report["abstention_reasons"] = errors
    result.votes = votes_per_item
    return result
