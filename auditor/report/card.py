"""Report cards built from ledger rows (docs/report-card.md), never from memory.

With S supported, U unsupported (contradicted + not_supported + stale) and K
unknown among the A factual claims: support precision = S / (S + U) (None when
S + U = 0), decidable rate = (S + U) / A. Every figure carries a 95%
cluster-bootstrap percentile interval, clusters = answers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from auditor.report.resample import cluster_codes, draw_counts, ratio_interval
from auditor.text import stated_period
from auditor.types import UNSUPPORTED_LABELS, Label
from ledger import RunInfo


class ClaimRow(Protocol):
    """The fields of a ledger claim result the report card reads."""

    @property
    def answer_id(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def factual(self) -> bool: ...
    @property
    def label(self) -> str | None: ...
    @property
    def n_evidence(self) -> int: ...
    @property
    def n_inline_evidence(self) -> int: ...
    @property
    def n_dated_evidence(self) -> int: ...


@dataclass(frozen=True)
class Figure:
    """A ratio with its numerator, denominator and bootstrap interval."""

    name: str
    value: float | None
    ci: tuple[float, float] | None
    numerator: float
    denominator: float
    description: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "ci": list(self.ci) if self.ci else None,
            "numerator": self.numerator,
            "denominator": self.denominator,
            "description": self.description,
        }


@dataclass(frozen=True)
class ReportCard:
    """Label counts and figures of one run, with its configuration."""

    run_id: str
    n_answers: int
    n_claims: int
    labels: Mapping[str, int]
    figures: Sequence[Figure]
    config: Mapping[str, Any] = field(default_factory=dict)
    n_boot: int = 2000
    seed: int = 0
    warnings: Sequence[str] = ()

    def figure(self, name: str) -> Figure:
        return next(f for f in self.figures if f.name == name)

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "n_answers": self.n_answers,
            "n_claims": self.n_claims,
            "labels": dict(self.labels),
            "figures": {f.name: f.to_dict() for f in self.figures},
            "bootstrap": {
                "n_boot": self.n_boot,
                "seed": self.seed,
                "level": 0.95,
                "cluster": "answer",
            },
            "config": dict(self.config),
            "warnings": list(self.warnings),
        }


_FIGURES: tuple[tuple[str, str, str, str], ...] = (
    # name, numerator, denominator, description
    ("support_precision", "supported", "decidable", "S / (S + U)"),
    ("decidable_rate", "decidable", "factual", "(S + U) / A"),
    ("unknown_rate", "unknown", "factual", "K / A"),
    ("contradicted_rate", "contradicted", "factual", "contradicted / A"),
    ("stale_rate", "stale", "factual", "stale / A"),
    (
        "citation_coverage",
        "cited",
        "factual",
        "factual claims with evidence supplied by the answer itself / A",
    ),
    (
        "dated_evidence_share",
        "dated",
        "with_evidence",
        "claims with relevant evidence whose relevant evidence includes a dated version",
    ),
    (
        "undisclosed_update_share",
        "undated",
        "with_evidence",
        "claims with relevant evidence that rest only on undated documents (dated but "
        "irrelevant passages retrieved beside them do not count)",
    ),
    (
        "time_scoped_share",
        "time_scoped",
        "factual",
        "factual claims that state their own time (from ... to ..., as of ..., in <year>,)",
    ),
    ("not_factual_share", "not_factual", "all", "not_factual / all claims"),
)


DIRECTION: Mapping[str, int] = {
    "support_precision": 1,
    "decidable_rate": 1,
    "unknown_rate": -1,
    "contradicted_rate": -1,
    "stale_rate": -1,
    "citation_coverage": 1,
    "dated_evidence_share": 1,
    "undisclosed_update_share": -1,
    "time_scoped_share": 0,
    "not_factual_share": 0,
}
"""Which direction is better for each figure: +1 higher, -1 lower, 0 neither."""


def claim_indicators(claims: Sequence[ClaimRow]) -> dict[str, np.ndarray]:
    """Boolean indicator per claim for every numerator and denominator of the figures."""
    factual = np.array([c.factual for c in claims], dtype=bool)
    lab = np.array([c.label or "unlabelled" for c in claims], dtype=object)
    # relevant evidence when the ledger counted it (the rows the label step flagged
    # deciding: label policy rule 2, auditor.decision.evidence_relevant), else any evidence
    rel = [_relevant_counts(c) for c in claims]
    has_ev = np.array([n > 0 for n, _ in rel], dtype=bool) & factual
    indicators = {
        "all": np.ones(len(claims), dtype=bool),
        "factual": factual,
        "supported": lab == Label.SUPPORTED.value,
        "unknown": lab == Label.UNKNOWN.value,
        "contradicted": lab == Label.CONTRADICTED.value,
        "stale": lab == Label.STALE.value,
        "not_factual": ~factual,
        "cited": np.array([c.n_inline_evidence > 0 for c in claims], dtype=bool) & factual,
        "with_evidence": has_ev,
        "dated": np.array([d > 0 for _, d in rel], dtype=bool) & has_ev,
        "undated": np.array([d == 0 for _, d in rel], dtype=bool) & has_ev,
        "time_scoped": np.array([stated_period(c.text) is not None for c in claims], dtype=bool)
        & factual,
    }
    unsupported = np.isin(lab, [label.value for label in UNSUPPORTED_LABELS])
    indicators["decidable"] = indicators["supported"] | unsupported
    return indicators


def _relevant_counts(claim: ClaimRow) -> tuple[int, int]:
    """``(evidence, dated evidence)`` the claim rests on: the relevant ones when counted
    (:meth:`ledger.Ledger.claim_results` counts the rows flagged ``deciding``)."""
    n_rel = getattr(claim, "n_relevant_evidence", -1)
    n_dated_rel = getattr(claim, "n_dated_relevant_evidence", -1)
    if n_rel is None or n_rel < 0 or n_dated_rel is None or n_dated_rel < 0:
        return claim.n_evidence, claim.n_dated_evidence
    return n_rel, n_dated_rel


def figure_specs() -> tuple[tuple[str, str, str, str], ...]:
    """``(name, numerator, denominator, description)`` of every report-card figure."""
    return _FIGURES


def build_report_card(
    run_id: str,
    claims: Sequence[ClaimRow],
    *,
    config: Mapping[str, Any] | None = None,
    n_boot: int = 2000,
    seed: int = 0,
) -> ReportCard:
    """Compute the report card of a run from its claim rows.

    Intervals: 95% cluster bootstrap (clusters = answers); every figure is read off the
    same resamples (``np.random.default_rng(seed)``), computed on per-answer sums (one
    matrix product per figure).
    """
    if n_boot < 1:
        raise ValueError(f"n_boot: must be >= 1, got {n_boot}")
    labels = [c.label or "unlabelled" for c in claims]
    indicators = claim_indicators(claims)
    clusters = np.array([c.answer_id for c in claims], dtype=object)
    codes, n_clusters = cluster_codes(clusters)
    figures = []
    rng = np.random.default_rng(seed)
    draws = draw_counts(n_clusters, n_boot, rng)  # every figure on the same resamples
    for name, num, den, description in _FIGURES:
        value, ci = ratio_interval(
            indicators[num] & indicators[den],
            indicators[den],
            codes,
            n_clusters,
            n_boot=n_boot,
            rng=rng,
            counts=draws,
        )
        figures.append(
            Figure(
                name,
                value,
                ci,
                float(np.sum(indicators[num] & indicators[den])),
                float(np.sum(indicators[den])),
                description,
            )
        )
    counts = Counter(labels)
    ordered = {label.value: counts.get(label.value, 0) for label in Label}
    ordered.update({k: v for k, v in counts.items() if k not in ordered})
    return ReportCard(
        run_id=run_id,
        n_answers=n_clusters,
        n_claims=len(claims),
        labels=ordered,
        figures=figures,
        config=dict(config or {}),
        n_boot=n_boot,
        seed=seed,
        warnings=config_warnings(config or {}),
    )


def report_config(run: RunInfo) -> dict[str, Any]:
    """The configuration block of a report: as-of date, settings, versions and digests."""
    return {
        "run_id": run.run_id,
        "kind": run.kind,
        "as_of": run.as_of,
        "status": run.status,
        "input_digest": run.input_digest,
        "settings": dict(run.config),
        "components": {
            role: {
                "name": c["name"],
                "version": c["version"],
                "digest": c["digest"],
                **(
                    {"info": c["config"].get("info", {})}
                    if role == "stacker" and c.get("config")
                    else {}
                ),
            }
            for role, c in sorted(run.components.items())
        },
    }


def config_warnings(config: Mapping[str, Any]) -> list[str]:
    """Caveats a reader must see next to the figures."""
    notes = []
    stacker = config.get("components", {}).get("stacker", {})
    info = stacker.get("info", {}) if isinstance(stacker, Mapping) else {}
    if info.get("admissible") is False:
        notes.append(
            "the stacker's calibration data did not pass the admissibility test "
            "(docs/stacking.md): the stacked verdicts are not shown to beat the best "
            "single judge on kappa; treat the labels as screening, not as evidence"
        )
    if config.get("status") not in (None, "complete"):
        notes.append(f"the run is {config.get('status')}: figures cover the answers written so far")
    return notes
