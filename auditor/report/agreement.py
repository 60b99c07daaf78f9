"""Agreement of the auditor's labels with human audits, and between two label versions.

Binary mapping (docs/stacking.md: 1 = hallucinated, 0 = supported): ``supported`` -> 0;
``contradicted``, ``not_supported``, ``stale`` (and a reviewer's ``hallucinated``)
-> 1. ``unknown`` and ``not_factual`` (on either side) are excluded, and counted.
Cohen's κ and balanced accuracy come from :mod:`auditor.stacking.metrics`, with
95% cluster-bootstrap intervals (clusters = answers). A claim audited more than
once counts with its latest audit (the current human label is a query); claims
whose reviewers disagree are counted.
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from auditor.report.resample import quiet_interval
from auditor.stacking.metrics import bootstrap_scores
from auditor.types import Label

POSITIVE = frozenset(
    {Label.CONTRADICTED.value, Label.NOT_SUPPORTED.value, Label.STALE.value, "hallucinated"}
)
NEGATIVE = frozenset({Label.SUPPORTED.value})
EXCLUDED = frozenset({Label.UNKNOWN.value, Label.NOT_FACTUAL.value})
HUMAN_LABELS = POSITIVE | NEGATIVE | EXCLUDED
"""Labels a reviewer may give."""


def binary_label(label: str | None) -> int | None:
    """1 hallucinated, 0 supported, None when excluded (unknown, not factual, missing)."""
    if label in POSITIVE:
        return 1
    if label in NEGATIVE:
        return 0
    return None


class AuditedClaim(Protocol):
    @property
    def claim_id(self) -> str: ...
    @property
    def answer_id(self) -> str: ...
    @property
    def label(self) -> str | None: ...
    @property
    def p_hallucinated(self) -> float | None: ...


@dataclass(frozen=True)
class Agreement:
    """κ and balanced accuracy of one labelling against another (the reference)."""

    n_items: int
    """Items compared (before exclusions)."""
    n_used: int
    excluded: Mapping[str, int]
    """Items left out of κ and balanced accuracy, by reason (each item counted once:
    the reference's label first, else the compared one)."""
    kappa: float
    kappa_ci: tuple[float, float] | None
    bacc: float
    bacc_ci: tuple[float, float] | None
    share_equal: float | None
    """Share of the items with exactly the same label (all labels, before exclusion)."""
    confusion: Mapping[str, Mapping[str, int]]
    """Reference label -> compared label -> items."""
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        def num(x: float) -> float | None:
            return None if not np.isfinite(x) else float(x)

        return {
            "n_items": self.n_items,
            "n_used": self.n_used,
            "excluded": dict(self.excluded),
            "kappa": num(self.kappa),
            "kappa_ci": list(self.kappa_ci) if self.kappa_ci else None,
            "balanced_accuracy": num(self.bacc),
            "balanced_accuracy_ci": list(self.bacc_ci) if self.bacc_ci else None,
            "share_equal": self.share_equal,
            "confusion": {k: dict(v) for k, v in self.confusion.items()},
            "binary_mapping": {
                "1 (hallucinated)": sorted(POSITIVE),
                "0": sorted(NEGATIVE),
                "excluded": sorted(EXCLUDED),
            },
            **dict(self.extra),
        }


def label_agreement(
    reference: Sequence[str | None],
    compared: Sequence[str | None],
    clusters: Sequence[str],
    *,
    n_boot: int = 2000,
    seed: int = 0,
    extra: Mapping[str, Any] | None = None,
) -> Agreement:
    """κ and balanced accuracy of ``compared`` labels against ``reference`` labels on the
    binary mapping (module doc), with cluster-bootstrap intervals; NaN when undefined."""
    if not len(reference) == len(compared) == len(clusters):
        raise ValueError("reference, compared, clusters: must have the same length")
    if n_boot < 1:
        raise ValueError(f"n_boot: must be >= 1, got {n_boot}")
    ref = [binary_label(x) for x in reference]
    cmp_ = [binary_label(x) for x in compared]
    excluded: Counter[str] = Counter()
    keep = []
    for i, (r, c) in enumerate(zip(ref, cmp_, strict=True)):
        if r is None:  # each item counted once, under the reference's reason first
            excluded[f"reference {reference[i] or 'missing'}"] += 1
        elif c is None:
            excluded[f"compared {compared[i] or 'missing'}"] += 1
        else:
            keep.append(i)
    confusion: dict[str, dict[str, int]] = {}
    for (a, b), n in sorted(
        Counter(
            (x or "missing", y or "missing") for x, y in zip(reference, compared, strict=True)
        ).items()
    ):
        confusion.setdefault(a, {})[b] = n
    share = (
        float(np.mean([x == y for x, y in zip(reference, compared, strict=True)]))
        if reference
        else None
    )
    kappa = bacc = float("nan")
    kappa_ci = bacc_ci = None
    if keep:
        y = np.array([ref[i] for i in keep], dtype=np.int64)
        p = np.array([cmp_[i] for i in keep], dtype=np.float64)
        cl = np.array([clusters[i] for i in keep], dtype=object).astype(str)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            boot = bootstrap_scores(p, y, cl, n_boot=n_boot, rng=np.random.default_rng(seed))
        kappa, bacc = float(boot.kappa[0]), float(boot.bacc[0])
        kappa_ci = quiet_interval(boot.boot_kappa[:, 0])
        bacc_ci = quiet_interval(boot.boot_bacc[:, 0])
    if not (np.isfinite(kappa) and np.isfinite(bacc)):
        warnings.warn(
            "agreement: kappa or balanced accuracy undefined (no usable item, or "
            "one class only): NaN",
            RuntimeWarning,
            stacklevel=2,
        )
    return Agreement(
        n_items=len(reference),
        n_used=len(keep),
        excluded=dict(excluded),
        kappa=kappa,
        kappa_ci=kappa_ci,
        bacc=bacc,
        bacc_ci=bacc_ci,
        share_equal=share,
        confusion=confusion,
        extra=dict(extra or {}),
    )


def latest_audits(audits: Sequence[Mapping[str, Any]]) -> tuple[dict[str, str], int]:
    """The latest audit label per claim (audits oldest first) and how many claims have
    reviewers that disagree."""
    labels: dict[str, str] = {}
    seen: dict[str, set[str]] = {}
    for a in audits:
        labels[a["claim_id"]] = a["label"]
        seen.setdefault(a["claim_id"], set()).add(a["label"])
    return labels, sum(1 for v in seen.values() if len(v) > 1)


def human_agreement(
    claims: Sequence[AuditedClaim],
    audits: Sequence[Mapping[str, Any]],
    *,
    n_boot: int = 2000,
    seed: int = 0,
) -> Agreement | None:
    """The auditor's labels (compared) against human audits (reference) on the audited
    claims; None when the run has no human audit."""
    if not audits:
        return None
    human, conflicting = latest_audits(audits)
    audited = [c for c in claims if c.claim_id in human]
    extra = {
        "n_audits": len(audits),
        "n_reviewers": len({a["reviewer"] for a in audits}),
        "n_claims_with_conflicting_audits": conflicting,
        "n_audits_for_unknown_claims": len(set(human) - {c.claim_id for c in claims}),
    }
    return label_agreement(
        [human[c.claim_id] for c in audited],
        [c.label for c in audited],
        [c.answer_id for c in audited],
        n_boot=n_boot,
        seed=seed,
        extra=extra,
    )


@dataclass(frozen=True)
class Reliability:
    """Stacked P(hallucinated) against the human label, in equal-width bins."""

    bins: Sequence[Mapping[str, float]]
    """Per non-empty bin: lo, hi, n, mean_p, observed (share hallucinated)."""
    n: int
    ece: float
    """Expected calibration error: sum over bins of n_bin / n * |observed - mean_p|."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "bins": [dict(b) for b in self.bins],
            "n": self.n,
            "ece": None if not np.isfinite(self.ece) else self.ece,
        }


def reliability(
    claims: Sequence[AuditedClaim], audits: Sequence[Mapping[str, Any]], n_bins: int = 10
) -> Reliability | None:
    """Reliability of the stacked probabilities against human audits (claims with a
    stacked probability and a binary human label); None when there is no such claim."""
    if n_bins < 1:
        raise ValueError(f"n_bins: must be >= 1, got {n_bins}")
    human, _ = latest_audits(audits)
    pairs = [(c.p_hallucinated, binary_label(human.get(c.claim_id))) for c in claims]
    used = [(p, y) for p, y in pairs if p is not None and y is not None]
    if not used:
        return None
    p = np.array([u[0] for u in used], dtype=np.float64)
    y = np.array([u[1] for u in used], dtype=np.float64)
    which = np.clip((p * n_bins).astype(np.int64), 0, n_bins - 1)
    n = np.bincount(which, minlength=n_bins).astype(np.float64)
    sum_p = np.bincount(which, weights=p, minlength=n_bins)
    sum_y = np.bincount(which, weights=y, minlength=n_bins)
    bins = []
    for b in np.flatnonzero(n):
        bins.append(
            {
                "lo": b / n_bins,
                "hi": (b + 1) / n_bins,
                "n": float(n[b]),
                "mean_p": float(sum_p[b] / n[b]),
                "observed": float(sum_y[b] / n[b]),
            }
        )
    nz = n > 0
    ece = float(np.sum(np.abs(sum_y[nz] / n[nz] - sum_p[nz] / n[nz]) * n[nz]) / n.sum())
    return Reliability(bins=bins, n=len(used), ece=ece)


def label_shares(
    claims: Sequence[AuditedClaim], *, n_boot: int = 2000, seed: int = 0
) -> dict[str, tuple[float, tuple[float, float] | None]]:
    """Share of all claims per label with its cluster-bootstrap interval (clusters =
    answers): one draw-count matrix for every label."""
    from auditor.report.resample import boot_ratio, cluster_codes, draw_counts, per_cluster

    labels = np.array([c.label or "unlabelled" for c in claims], dtype=object)
    if labels.size == 0:
        return {}
    codes, n_clusters = cluster_codes(np.array([c.answer_id for c in claims], dtype=object))
    counts = draw_counts(n_clusters, n_boot, np.random.default_rng([seed, 2000]))
    den = per_cluster(np.ones(labels.size), codes, n_clusters)
    order = [x.value for x in Label] + sorted(set(labels.tolist()) - {x.value for x in Label})
    out: dict[str, tuple[float, tuple[float, float] | None]] = {}
    for label in order:
        hit = (labels == label).astype(np.float64)
        boot = boot_ratio(per_cluster(hit, codes, n_clusters), den, counts)
        out[label] = (float(hit.mean()), quiet_interval(boot))
    return out


def reviewer_agreement(
    claims: Sequence[AuditedClaim],
    audits: Sequence[Mapping[str, Any]],
    *,
    n_boot: int = 2000,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Reviewer against reviewer: for every pair of reviewers, κ and balanced accuracy on
    the claims both labelled (each reviewer's latest label per claim; the first name in
    alphabetical order is the reference), with cluster-bootstrap intervals (clusters =
    answers). Pairs that share no claim are left out."""
    answer_of = {c.claim_id: c.answer_id for c in claims}
    by_reviewer: dict[str, dict[str, str]] = {}
    for a in audits:  # oldest first: the latest label wins
        by_reviewer.setdefault(a["reviewer"], {})[a["claim_id"]] = a["label"]
    names = sorted(by_reviewer)
    out = []
    for i, first in enumerate(names):
        for second in names[i + 1 :]:
            shared = sorted(set(by_reviewer[first]) & set(by_reviewer[second]))
            if not shared:
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                agreement = label_agreement(
                    [by_reviewer[first][c] for c in shared],
                    [by_reviewer[second][c] for c in shared],
                    [answer_of.get(c, c) for c in shared],
                    n_boot=n_boot,
                    seed=seed,
                )
            out.append(
                {
                    "reviewers": [first, second],
                    "n_shared_claims": len(shared),
                    "agreement": agreement,
                }
            )
    return out
