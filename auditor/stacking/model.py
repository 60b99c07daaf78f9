"""A fitted stacker: logistic coefficients over panel votes (RAIM's vote stacker) or over
the judges' scores (a score stacker), saved with its digest.

A vote stacker reads one column per member (0 supported, 1 unsupported, 0.5 abstain). A
score stacker (``kind="scores"``) reads the features named in ``features``
(:func:`auditor.stacking.features.score_features`): per member its vote, an abstention
indicator and its named scores (probabilities, similarities, conflict scores), 0 where a
member abstained or did not report the score. The JSON records the kind and the feature
names; :meth:`Stacker.predict_votes` serves both kinds from the panel's votes.
"""

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
from auditor.types import Component, Vote

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
    kind: str = "votes"
    """``votes`` (one coefficient per member) or ``scores`` (one per named feature)."""
    features: tuple[str, ...] = ()
    """The feature names of a score stacker (``member:vote``, ``member:abstain``,
    ``member:<score>``), in coefficient order; empty for a vote stacker."""

    def __post_init__(self) -> None:
        if self.kind not in ("votes", "scores"):
            raise ValueError(f"kind: must be 'votes' or 'scores', got {self.kind!r}")
        if self.kind == "votes":
            if self.features:
                raise ValueError("features: a vote stacker has none")
            if len(self.members) != len(self.coef):
                raise ValueError("coef: needs one coefficient per member")
        else:
            if len(self.features) != len(self.coef):
                raise ValueError("coef: needs one coefficient per feature")
            unknown = sorted({f.split(":", 1)[0] for f in self.features} - set(self.members))
            if unknown:
                raise ValueError(f"features: name members the stacker lacks: {unknown}")

    @property
    def digest(self) -> str:
        """Content digest over the coefficients, members, threshold and training digest
        (and, for a score stacker, its kind and feature names)."""
        content: dict[str, Any] = {
            "members": list(self.members),
            "coef": list(self.coef),
            "intercept": self.intercept,
            "threshold": self.threshold,
            "fitted_on": self.fitted_on,
            "fallback_member": self.fallback_member,
        }
        if self.kind != "votes":
            content |= {"kind": self.kind, "features": list(self.features)}
        return content_digest(content)

    def component(self) -> Component:
        name = "raim" if self.kind == "votes" else "raim-scores"
        return Component(
            kind="stacker",
            name=name,
            version=self.digest[:12],
            digest=self.digest,
            config=self.to_dict(),
        )

    def _check_members(self, members: Sequence[str] | None) -> None:
        if members is not None and tuple(members) != self.members:
            raise ConfigError(
                f"stacker was fitted on members {list(self.members)}, "
                f"but the panel has {list(members)}"
            )

    def predict_proba(
        self, votes: ArrayLike, members: Sequence[str] | None = None
    ) -> NDArray[np.float64]:
        """Probability of ``hallucinated`` per row of a ``(n, n_members)`` vote matrix (a
        vote stacker), or of a ``(n, n_features)`` feature matrix (a score stacker).

        ``members`` names the panel's members; it must equal the stacker's members.
        """
        matrix = np.asarray(votes, dtype=np.float64)
        width = len(self.members) if self.kind == "votes" else len(self.features)
        what = "votes" if self.kind == "votes" else "features"
        if matrix.ndim != 2 or matrix.shape[1] != width:
            raise ValueError(f"{what}: expected shape (n, {width}), got {matrix.shape}")
        self._check_members(members)
        if self.fallback_member is not None:
            column = (
                self.members.index(self.fallback_member)
                if self.kind == "votes"
                else self.features.index(f"{self.fallback_member}:vote")
            )
            return matrix[:, column].copy()
        logits = self.intercept + matrix @ np.asarray(self.coef)
        return 1.0 / (1.0 + np.exp(-logits))

    def predict_votes(
        self, rows: Sequence[Sequence[Vote]], members: Sequence[str] | None = None
    ) -> NDArray[np.float64]:
        """Probability of ``hallucinated`` per claim from the panel's votes (member order),
        whatever the kind: a vote stacker reads the vote values, a score stacker the
        features it was fitted on (:func:`auditor.stacking.features.score_features`)."""
        self._check_members(members)
        if self.kind == "votes":
            matrix = np.array([[v.value for v in row] for row in rows], dtype=np.float64)
            return self.predict_proba(matrix.reshape(len(rows), len(self.members)))
        from auditor.stacking.features import score_features

        return self.predict_proba(score_features(rows, self.members, self.features))

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["members"] = list(self.members)
        data["coef"] = list(self.coef)
        data["info"] = dict(self.info)
        if self.kind == "votes":  # the vote stacker's JSON keeps its original shape
            del data["kind"], data["features"]
        else:
            data["features"] = list(self.features)
        data["digest"] = self.digest
        return data

    def save(self, path: str | Path) -> None:
        """Write the stacker as JSON (with its digest)."""
        Path(path).write_text(
            json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n", encoding="utf-8"
        )

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = "stacker") -> Stacker:
        try:
            stacker = cls(
                members=tuple(data["members"]),
                coef=tuple(map(float, data["coef"])),
                intercept=float(data["intercept"]),
                threshold=float(data.get("threshold", 0.5)),
                fitted_on=str(data.get("fitted_on", "")),
                fallback_member=data.get("fallback_member"),
                info=dict(data.get("info", {})),
                kind=str(data.get("kind", "votes")),
                features=tuple(map(str, data.get("features", ()))),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"{source}: not a valid stacker: {exc}") from None
        recorded = data.get("digest")
        if recorded is not None and recorded != stacker.digest:
            raise ConfigError(
                f"{source}: digest mismatch (file says {recorded[:12]}, "
                f"content is {stacker.digest[:12]}): the file was edited"
            )
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
