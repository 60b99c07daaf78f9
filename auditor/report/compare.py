"""Comparing two runs on their shared items: paired differences with paired intervals.

Claims are matched by claim id; only claims present in both runs whose answer is
in both runs count (the shared items). Clusters are the shared answers. Each
figure (docs/report-card.md) is computed for both runs on the **same** cluster-bootstrap
resample and the per-resample difference (run B - run A) gives a 95% percentile
interval. Verdict per figure, using the direction that is better for it:
``improved`` (the interval lies on the better side of 0), ``worse`` (on the worse
side), ``unresolved`` (it spans 0), ``no direction`` (a figure that is neither
better higher nor lower: it is reported, not judged), ``undefined`` (one side has
an empty denominator).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from auditor.report.card import DIRECTION, ClaimRow, claim_indicators, figure_specs
from auditor.report.resample import (
    boot_ratio,
    cluster_codes,
    draw_counts,
    per_cluster,
    quiet_interval,
)


class ComparedClaim(ClaimRow, Protocol):
    """The fields of a ledger claim result a comparison reads."""

    @property
    def claim_id(self) -> str: ...


@dataclass(frozen=True)
class FigureDelta:
    """One figure in both runs, their paired difference (B - A) and the verdict."""

    name: str
    value_a: float | None
    value_b: float | None
    delta: float | None
    ci: tuple[float, float] | None
    better: str
    """"higher", "lower" or "neither"."""
    verdict: str
    denominator_a: float
    denominator_b: float
    description: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "value_a": self.value_a,
            "value_b": self.value_b,
            "delta": self.delta,
            "ci": list(self.ci) if self.ci else None,
            "better": self.better,
            "verdict": self.verdict,
            "denominator_a": self.denominator_a,
            "denominator_b": self.denominator_b,
            "description": self.description,
        }


@dataclass(frozen=True)
class Comparison:
    """Run B against run A on the shared claims."""

    run_a: str
    run_b: str
    n_shared_claims: int
    n_shared_answers: int
    n_only_a: int
    n_only_b: int
    figures: Sequence[FigureDelta]
    transitions: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    """Label in A -> label in B -> shared claims."""
    n_boot: int = 2000
    seed: int = 0

    def figure(self, name: str) -> FigureDelta:
        return next(f for f in self.figures if f.name == name)

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_a": self.run_a,
            "run_b": self.run_b,
            "shared": {
                "claims": self.n_shared_claims,
                "answers": self.n_shared_answers,
                "only_in_a": self.n_only_a,
                "only_in_b": self.n_only_b,
            },
            "figures": {f.name: f.to_dict() for f in self.figures},
            "transitions": {a: dict(b) for a, b in self.transitions.items()},
            "bootstrap": {
                "n_boot": self.n_boot,
                "seed": self.seed,
                "level": 0.95,
                "cluster": "shared answer",
                "paired": True,
                "difference": "run_b - run_a",
            },
        }


_BETTER = {1: "higher", -1: "lower", 0: "neither"}


def _verdict(delta: float | None, ci: tuple[float, float] | None, direction: int) -> str:
    if delta is None or ci is None:
        return "undefined"
    if direction == 0:
        return "no direction"
    lo, hi = ci
    if lo > 0:
        return "improved" if direction > 0 else "worse"
    if hi < 0:
        return "worse" if direction > 0 else "improved"
    return "unresolved"


def _shared(
    a: Sequence[ComparedClaim], b: Sequence[ComparedClaim]
) -> tuple[list[ComparedClaim], list[ComparedClaim]]:
    by_id_b = {c.claim_id: c for c in b}
    answers_b = {c.answer_id for c in b}
    left, right = [], []
    for c in a:
        other = by_id_b.get(c.claim_id)
        if other is not None and c.answer_id in answers_b:
            left.append(c)
            right.append(other)
    return left, right


def compare_runs(
    run_a: str,
    claims_a: Sequence[ComparedClaim],
    run_b: str,
    claims_b: Sequence[ComparedClaim],
    *,
    n_boot: int = 2000,
    seed: int = 0,
) -> Comparison:
    """Paired comparison of run B against run A on their shared claims (module doc).

    Vectorised: one ``(B, n_answers)`` draw-count matrix (shared by both runs and every
    figure) times the per-answer sums of each run.
    """
    if n_boot < 1:
        raise ValueError(f"n_boot: must be >= 1, got {n_boot}")
    left, right = _shared(claims_a, claims_b)
    ids_a, ids_b = {c.claim_id for c in claims_a}, {c.claim_id for c in claims_b}
    codes, n_clusters = cluster_codes(np.array([c.answer_id for c in left], dtype=object))
    ind_a, ind_b = claim_indicators(left), claim_indicators(right)
    figures = []
    counts = draw_counts(n_clusters, n_boot, np.random.default_rng([seed, 1]))
    for name, num, den, description in figure_specs():
        sides = []
        for ind in (ind_a, ind_b):
            n_arr = (ind[num] & ind[den]).astype(np.float64)
            d_arr = ind[den].astype(np.float64)
            total = float(d_arr.sum())
            sides.append(
                (
                    None if total == 0 else float(n_arr.sum() / total),
                    total,
                    per_cluster(n_arr, codes, n_clusters),
                    per_cluster(d_arr, codes, n_clusters),
                )
            )
        (va, da, na_c, da_c), (vb, db, nb_c, db_c) = sides
        delta: float | None = None
        ci = None
        if va is not None and vb is not None:
            delta = vb - va
            diff = boot_ratio(nb_c, db_c, counts) - boot_ratio(na_c, da_c, counts)
            ci = quiet_interval(diff)
        direction = DIRECTION.get(name, 0)
        figures.append(
            FigureDelta(
                name,
                va,
                vb,
                delta,
                ci,
                _BETTER[direction],
                _verdict(delta, ci, direction),
                da,
                db,
                description,
            )
        )
    transitions: dict[str, dict[str, int]] = {}
    for (la, lb), n in sorted(
        Counter(
            (x.label or "unlabelled", y.label or "unlabelled")
            for x, y in zip(left, right, strict=True)
        ).items()
    ):
        transitions.setdefault(la, {})[lb] = n
    return Comparison(
        run_a=run_a,
        run_b=run_b,
        n_shared_claims=len(left),
        n_shared_answers=n_clusters,
        n_only_a=len(ids_a - ids_b),
        n_only_b=len(ids_b - ids_a),
        figures=figures,
        transitions=transitions,
        n_boot=n_boot,
        seed=seed,
    )
