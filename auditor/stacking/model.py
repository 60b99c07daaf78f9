"""A fitted RAIM stacker: logistic coefficients over panel votes, saved with its digest."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from auditor.digest import content_digest
from auditor.errors import ConfigError
from auditor.types import Component

DEFAULT_STACKER = "stacker.json"


@dataclass(frozen=True)
class Stacker:
    """P(hallucinated | votes) = sigmoid(intercept + coef . votes); abstain = 0.5."""

    members: tuple[str, ...]
    coef: tuple[float, ...]
    intercept: float
    threshold: float = 0.5
    fitted_on: str = ""
    """Digest of the data the stacker was fitted on."""
    fallback_member: str | None = None
    """Set when the calibration set was not admissible: use this member's vote instead."""
    info: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if len(self.members) != len(self.coef):
            raise ValueError("coef: needs one coefficient per member")

    @property
    def digest(self) -> str:
        """Content digest over the coefficients, members, threshold and training digest."""
        return content_digest({"members": list(self.members), "coef": list(self.coef),
                               "intercept": self.intercept, "threshold": self.threshold,
                               "fitted_on": self.fitted_on,
                               "fallback_member": self.fallback_member})

    def component(self) -> Component:
        return Component(kind="stacker", name="raim", version=self.digest[:12],
                         digest=self.digest, config=self.to_dict())

    def predict_proba(self, votes: ArrayLike, members: Sequence[str] | None = None
                      ) -> NDArray[np.float64]:
        """Probability of ``hallucinated`` per row of a ``(n, n_members)`` vote matrix.

        ``members`` names the matrix columns; it must equal the stacker's members.
        """
        matrix = np.asarray(votes, dtype=np.float64)
        if matrix.ndim != 2 or matrix.shape[1] != len(self.members):
            raise ValueError(f"votes: expected shape (n, {len(self.members)}), got {matrix.shape}")
        if members is not None and tuple(members) != self.members:
            raise ConfigError(f"stacker was fitted on members {list(self.members)}, "
                              f"but the panel has {list(members)}")
        if self.fallback_member is not None:
            return matrix[:, self.members.index(self.fallback_member)].copy()
        logits = self.intercept + matrix @ np.asarray(self.coef)
        return 1.0 / (1.0 + np.exp(-logits))

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["members"] = list(self.members)
        data["coef"] = list(self.coef)
        data["info"] = dict(self.info)
        data["digest"] = self.digest
        return data

    def save(self, path: str | Path) -> None:
        """Write the stacker as JSON (with its digest)."""
        Path(path).write_text(json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n",
                              encoding="utf-8")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = "stacker") -> Stacker:
        try:
            stacker = cls(members=tuple(data["members"]), coef=tuple(map(float, data["coef"])),
                          intercept=float(data["intercept"]),
                          threshold=float(data.get("threshold", 0.5)),
                          fitted_on=str(data.get("fitted_on", "")),
                          fallback_member=data.get("fallback_member"),
                          info=dict(data.get("info", {})))
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"{source}: not a valid stacker: {exc}") from None
        recorded = data.get("digest")
        if recorded is not None and recorded != stacker.digest:
            raise ConfigError(f"{source}: digest mismatch (file says {recorded[:12]}, "
                              f"content is {stacker.digest[:12]}): the file was edited")
        return stacker


def load_stacker(path: str | Path | None = None) -> Stacker:
    """Load a stacker JSON file; ``None`` loads the default stacker of the default panel."""
    if path is None:
        text = resources.files("auditor.samples").joinpath(DEFAULT_STACKER).read_text("utf-8")
        source = f"auditor/samples/{DEFAULT_STACKER}"
    else:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read stacker: {exc.strerror}") from None
        source = str(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{source}: not valid JSON: {exc}") from None
    return Stacker.from_dict(data, source)
