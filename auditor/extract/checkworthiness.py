"""The learned check-worthiness screen: which claims the grammar calls factual state
nothing checkable.

The rules of :mod:`auditor.extract.nonfactual` find opinions, hedges and advice by
their grammar; what they miss (a pleasantry in a new phrasing, an offer, a closing
remark) the screen finds from data. It is a logistic regression on the claim's
MiniLM embedding (:mod:`auditor.embedding`, the vector retrieval computes anyway),
fitted on labelled sentences the rules call factual (:func:`fit_screen`; the shipped
one on the authored corpus's train split, ``bench/fit_checkworthiness.py``), and
stored as JSON with its threshold, provenance and digest. A factual claim whose
probability of being not check-worthy reaches the threshold, and that names nothing a
document could confirm (no number and no name:
:func:`auditor.extract.nonfactual.anchored`, the rule the grammar's advice test uses),
becomes ``factual=False`` with kind ``uncheckable``; the screen never makes a claim
factual. The guard keeps a screen learned from pleasantries, offers and hedges away
from statements about named things, which its training data rarely shows.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from auditor.digest import content_digest
from auditor.errors import ConfigError
from auditor.extract.nonfactual import anchored
from auditor.types import Claim

if TYPE_CHECKING:
    from spacy.language import Language

KIND = "uncheckable"
"""The kind of a claim the screen turned non-factual."""

SHIPPED = "checkworthiness.json"
"""The shipped screen, a resource of :mod:`auditor.samples`."""


@dataclass(frozen=True)
class CheckWorthinessScreen:
    """Logistic regression on a text's embedding: P(not check-worthy)."""

    coef: NDArray[np.float64]
    intercept: float
    threshold: float
    encoder: str
    provenance: dict[str, Any]

    def __post_init__(self) -> None:
        from auditor.embedding import EMBEDDING_DIM, MODEL_NAME

        if self.encoder != MODEL_NAME or self.coef.shape != (EMBEDDING_DIM,):
            raise ConfigError(
                f"check-worthiness screen: fitted on {self.encoder} ({self.coef.shape[0]} "
                f"dimensions), this encoder is {MODEL_NAME} ({EMBEDDING_DIM}); refit it"
            )
        if not 0.0 < self.threshold < 1.0:
            raise ConfigError(f"check-worthiness screen: threshold {self.threshold} not in (0, 1)")

    @property
    def digest(self) -> str:
        """Content digest of the screen (part of the extractor's configuration)."""
        return content_digest(self.to_dict())

    def probabilities(self, texts: Sequence[str]) -> NDArray[np.float64]:
        """P(not check-worthy) of each text (the encoder's cache serves repeated texts)."""
        from auditor.embedding import encode

        if not texts:
            return np.zeros(0)
        z = encode(list(texts)).astype(np.float64) @ self.coef + self.intercept
        return np.asarray(1.0 / (1.0 + np.exp(-z)))

    def flags(self, texts: Sequence[str], nlp: Language) -> NDArray[np.bool_]:
        """Whether each text is screened out: at or above the threshold and naming no
        number or name (only the texts above the threshold are parsed, by ``nlp``)."""
        out = self.probabilities(texts) >= self.threshold
        above = np.flatnonzero(out).tolist()
        for i, doc in zip(above, nlp.pipe([texts[i] for i in above]), strict=True):
            out[i] = not anchored(doc)
        return out

    def screen(self, claims: Sequence[Claim], nlp: Language) -> list[Claim]:
        """``claims`` with each factual one the screen flags made non-factual (kind
        :data:`KIND`), in the same order."""
        chosen = [i for i, c in enumerate(claims) if c.factual]
        out = list(claims)
        flags = self.flags([claims[i].text for i in chosen], nlp)
        for i, flagged in zip(chosen, flags, strict=True):
            if flagged:
                out[i] = dataclasses.replace(claims[i], factual=False, kind=KIND)
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (floats rounded to 8 significant digits)."""
        return {
            "kind": "checkworthiness_screen",
            "encoder": self.encoder,
            "threshold": self.threshold,
            "intercept": float(f"{self.intercept:.8g}"),
            "coef": [float(f"{v:.8g}") for v in self.coef],
            "provenance": self.provenance,
        }

    def save(self, path: str | Path) -> None:
        """Write the screen as JSON."""
        Path(path).write_text(json.dumps(self.to_dict(), indent=1) + "\n", encoding="utf-8")


def load_screen(path: str | Path) -> CheckWorthinessScreen:
    """Read a screen written by :meth:`CheckWorthinessScreen.save`; a bad file is a
    :class:`ConfigError` naming it."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        return _from_dict(data)
    except (OSError, ValueError, KeyError, TypeError, ConfigError) as exc:
        raise ConfigError(f"{path}: not a check-worthiness screen ({exc})") from None


def _from_dict(data: dict[str, Any]) -> CheckWorthinessScreen:
    if data.get("kind") != "checkworthiness_screen":
        raise ValueError(f"kind {data.get('kind')!r}")
    return CheckWorthinessScreen(
        coef=np.asarray(data["coef"], dtype=np.float64),
        intercept=float(data["intercept"]),
        threshold=float(data["threshold"]),
        encoder=str(data["encoder"]),
        provenance=dict(data.get("provenance", {})),
    )


@cache
def shipped_screen() -> CheckWorthinessScreen:
    """The screen shipped with the package (``auditor/samples/checkworthiness.json``)."""
    text = resources.files("auditor.samples").joinpath(SHIPPED).read_text("utf-8")
    return _from_dict(json.loads(text))


def fit_screen(
    texts: Sequence[str],
    not_checkworthy: Sequence[bool] | NDArray[np.bool_],
    *,
    c: float = 3.0,
    threshold: float = 0.5,
    provenance: dict[str, Any] | None = None,
) -> CheckWorthinessScreen:
    """Fit the screen on ``texts`` the rules call factual and whether each is not
    check-worthy: L2 logistic regression on their embeddings, inverse strength ``c``."""
    from sklearn.linear_model import LogisticRegression

    from auditor.embedding import MODEL_NAME, encode

    y = np.asarray(not_checkworthy, dtype=bool)
    if len(texts) != len(y) or not 0 < y.sum() < len(y):
        raise ConfigError("check-worthiness screen: needs both classes, one label per text")
    model = LogisticRegression(C=c, max_iter=5000).fit(encode(list(texts)), y)
    return CheckWorthinessScreen(
        coef=np.asarray(model.coef_[0], dtype=np.float64),
        intercept=float(model.intercept_[0]),
        threshold=threshold,
        encoder=MODEL_NAME,
        provenance=dict(provenance or {}, c=c, n=len(y), positives=int(y.sum())),
    )
