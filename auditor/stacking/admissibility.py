"""The admissibility test of docs/stacking.md, read off the calibration set itself.

A task is admissible for stacking when at least a share ``c`` of the members reach
κ >= κ0 and the mean pairwise error correlation φ̄ <= φ0; defaults
(κ0, c, φ0) = (0.30, 1/2, 0.40). The error correlation of two members is the phi
coefficient between their error indicators (vote != label) on the items where both
voted; a pair with a constant indicator there has no phi and is left out of the
mean. When no pair has a phi, φ̄ is NaN (warned) and the set is not admissible.
"""

from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

KAPPA0 = 0.30
SHARE_C = 0.5
PHI0 = 0.40


@dataclass(frozen=True)
class Admissibility:
    """The test's outcome and the figures it was read from."""

    admissible: bool
    share_competent: float
    mean_error_corr: float
    thresholds: dict[str, float]
    reason: str

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        if not np.isfinite(self.mean_error_corr):
            data["mean_error_corr"] = None
        return data


def error_correlation(votes: NDArray[np.float64], labels: NDArray[np.int64]) -> NDArray[np.float64]:
    """(m, m) phi coefficients between members' error indicators (NaN where undefined)."""
    answered = (votes != 0.5).astype(np.float64)
    errors = ((votes != labels[:, None]) & (votes != 0.5)).astype(np.float64)
    both = answered.T @ answered  # items where i and j both voted
    e_i = errors.T @ answered  # errors of i where j voted
    e_ij = errors.T @ errors
    e_j = e_i.T
    with np.errstate(invalid="ignore", divide="ignore"):
        num = both * e_ij - e_i * e_j
        den = np.sqrt(e_i * (both - e_i) * e_j * (both - e_j))
        phi = np.where(den > 0, num / den, np.nan)
    np.fill_diagonal(phi, np.nan)
    return phi


def admissibility(
    member_kappa: NDArray[np.float64],
    votes: NDArray[np.float64],
    labels: NDArray[np.int64],
    *,
    kappa0: float = KAPPA0,
    c: float = SHARE_C,
    phi0: float = PHI0,
) -> Admissibility:
    """Run the test; NaN member κ counts as not competent."""
    if not 0.0 <= c <= 1.0:
        raise ValueError(f"c: must be in [0, 1], got {c}")
    kappa = np.asarray(member_kappa, dtype=np.float64)
    share = float(np.mean(np.nan_to_num(kappa, nan=-np.inf) >= kappa0)) if kappa.size else 0.0
    phi = error_correlation(votes, labels)
    upper = phi[np.triu_indices(phi.shape[0], k=1)]
    finite = upper[np.isfinite(upper)]
    if finite.size == 0:
        warnings.warn(
            "mean error correlation undefined (fewer than two members with varying errors): NaN",
            RuntimeWarning,
            stacklevel=2,
        )
        mean_phi = float("nan")
    else:
        mean_phi = float(finite.mean())
    competent = share >= c
    independent = bool(np.isfinite(mean_phi) and mean_phi <= phi0)
    reasons = []
    if not competent:
        reasons.append(f"only {share:.2f} of members reach kappa >= {kappa0} (need {c})")
    if not independent:
        reasons.append(
            "mean error correlation undefined"
            if not np.isfinite(mean_phi)
            else f"mean error correlation {mean_phi:.3f} > {phi0}"
        )
    return Admissibility(
        admissible=competent and independent,
        share_competent=share,
        mean_error_corr=mean_phi,
        thresholds={"kappa0": kappa0, "c": c, "phi0": phi0},
        reason="; ".join(reasons) or "admissible",
    )
