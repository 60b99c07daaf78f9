"""The learned label decision: a calibrated multinomial logistic model over typed signals.

The hand rules of :mod:`auditor.labels` read a handful of thresholds; this model reads
the same :class:`~auditor.labels.ClaimSignals` as a vector of named features
(:data:`FEATURES`: relevance and coverage of current and superseded evidence, whether
the subject, role or topic is covered, the stacked probabilities, the reader's
entailment / neutral / contradiction against current and superseded evidence, the
members' conflict, missing-detail and match flags, time scope, and the rules' own label
as a one-hot), and gives a probability to each of the five labels of a factual claim
(:data:`CLASSES`). It is fitted on labelled claims (:func:`fit_label_model`; the
authored corpus's train split, or a team's reviewed claims) and stored as JSON with its
feature names, standardisation, coefficients and digest.

Non-factual claims stay ``not_factual`` (the extractor decides that); the model decides
every factual claim, judged or not.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from auditor.digest import content_digest
from auditor.errors import ConfigError
from auditor.labels import (
    ClaimSignals,
    LabelPolicy,
    clear_conflicts,
    decide_label,
    missing_details,
)
from auditor.types import ABSTAIN, Label, Vote

CLASSES: tuple[Label, ...] = (
    Label.SUPPORTED,
    Label.CONTRADICTED,
    Label.NOT_SUPPORTED,
    Label.UNKNOWN,
    Label.STALE,
)
"""The labels the model chooses between (a factual claim's)."""

_RULE_LABELS = CLASSES
READER = "entailment"


def _default_members() -> tuple[str, ...]:
    import tomllib
    from importlib import resources

    panel = resources.files("auditor.samples").joinpath("panel.toml").read_text("utf-8")
    return tuple(str(judge["name"]) for judge in tomllib.loads(panel)["judges"])


PANEL_MEMBERS: tuple[str, ...] = _default_members()
"""The default panel's members (``auditor/samples/panel.toml``), whose votes against
current evidence are features of their own; a model fitted on another member list is
refused (its feature names differ)."""
"""The panel member whose three-way scores are features of their own."""

FEATURES: tuple[str, ...] = (
    *(f"rule_{label.value}" for label in _RULE_LABELS),
    "relevance",
    "has_current",
    "coverage_current",
    "stale_relevance",
    "has_superseded",
    "coverage_superseded",
    "superseded_margin",
    "subject_covered",
    "role_stated",
    "topic_unnamed",
    "judged",
    "p_current",
    "abstain_share",
    "hallucinated_share",
    "conflict",
    "missing_detail",
    "match",
    "reader_entailment",
    "reader_neutral",
    "reader_contradiction",
    "reader_abstained",
    "judged_superseded",
    "p_superseded",
    "superseded_conflict",
    "superseded_missing_detail",
    "superseded_match",
    "reader_old_entailment",
    "reader_old_contradiction",
    "states_time",
    "valid_at_claim_time",
    *(f"vote_{member}" for member in PANEL_MEMBERS),
)
"""Names of the feature columns, in order (:func:`features`)."""


def _member_summary(votes: Sequence[Vote], policy: LabelPolicy) -> list[float]:
    """Judged flag, abstention and 'hallucinated' shares, conflict / missing-detail / match
    flags and the reader's three scores (0 when it did not read)."""
    if not votes:
        return [0.0] * 10
    decided = [v for v in votes if v.value != ABSTAIN and v.error is None]
    reader = next((v for v in votes if v.judge == READER and v.error is None), None)
    scores = reader.scores if reader is not None else {}
    return [
        1.0,
        sum(v.value == ABSTAIN for v in votes) / len(votes),
        sum(v.value > 0.5 for v in decided) / len(votes),
        float(bool(clear_conflicts(votes, policy))),
        float(bool(missing_details(votes, policy))),
        float(any(float(v.scores.get("match", 0.0)) >= 1.0 for v in decided)),
        float(scores.get("max_entailment", scores.get("entailment", 0.0))),
        float(scores.get("neutral", 0.0)),
        float(scores.get("confirmed_contradiction", scores.get("contradiction", 0.0))),
        float(reader is None or reader.value == ABSTAIN),
    ]


def _member_votes(votes: Sequence[Vote]) -> list[float]:
    by_name = {v.judge: v.value for v in votes if v.error is None}
    return [float(by_name.get(member, ABSTAIN)) for member in PANEL_MEMBERS]


def features(
    signals: ClaimSignals, policy: LabelPolicy | None = None, rule: Label | None = None
) -> np.ndarray:
    """The feature vector of one claim's signals (:data:`FEATURES` order); ``rule`` is the
    rules' label when the caller has it already."""
    policy = policy or LabelPolicy()
    if rule is None:
        rule, _ = decide_label(signals, policy)
    current = _member_summary(signals.votes, policy)
    old = _member_summary(signals.superseded_votes, policy)
    row = [
        *(float(rule == label) for label in _RULE_LABELS),
        signals.relevance or 0.0,
        float(signals.relevance is not None),
        max((cov for _, cov in signals.current_scores), default=0.0),
        signals.stale_relevance or 0.0,
        float(signals.stale_relevance is not None),
        max((cov for _, cov in signals.superseded_scores), default=0.0),
        signals.superseded_margin or 0.0,
        float(signals.subject_covered),
        float(signals.role_stated),
        float(signals.topic_unnamed),
        current[0],
        signals.p_current if signals.p_current is not None else 0.5,
        *current[1:],
        old[0],
        signals.p_superseded if signals.p_superseded is not None else 0.5,
        old[3],
        old[4],
        old[5],
        old[6],
        old[8],
        float(signals.states_time),
        float(signals.superseded_valid_at_claim_time),
        *_member_votes(signals.votes),
    ]
    return np.asarray(row, dtype=np.float64)


@dataclass(frozen=True)
class LabelModel:
    """A fitted multinomial logistic label decision (standardised features)."""

    feature_names: tuple[str, ...]
    classes: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    """(classes, features)"""
    intercept: np.ndarray
    provenance: dict[str, Any]

    def __post_init__(self) -> None:
        if self.feature_names != FEATURES:
            raise ConfigError(
                "label model: its features are not this version's "
                f"({len(self.feature_names)} vs {len(FEATURES)}); refit it"
            )
        unknown = set(self.classes) - {c.value for c in CLASSES}
        if unknown or self.coef.shape != (len(self.classes), len(FEATURES)):
            raise ConfigError(f"label model: bad classes {sorted(unknown)} or shape")

    @property
    def digest(self) -> str:
        """Content digest of the model (part of a run's configuration)."""
        return content_digest(self.to_dict())

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        """(n, classes) probabilities for a (n, features) matrix."""
        z = ((np.atleast_2d(x) - self.mean) / self.scale) @ self.coef.T + self.intercept
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return np.asarray(e / e.sum(axis=1, keepdims=True))

    def decide(self, signals: ClaimSignals, policy: LabelPolicy) -> tuple[Label, str]:
        """The label of one claim and its reason (the rules' label and the model's odds)."""
        if not signals.factual:
            return Label.NOT_FACTUAL, "not a factual claim"
        rule, rule_reason = decide_label(signals, policy)
        voters = {v.judge for v in (*signals.votes, *signals.superseded_votes)}
        if voters and not set(PANEL_MEMBERS) <= voters:
            # fitted on the default panel's votes: another panel's are not its inputs
            return rule, f"{rule_reason} [rules: the label model reads the default panel]"
        if rule is Label.SUPPORTED and signals.superseded_valid_at_claim_time:
            # a claim about its own past period, backed by the version valid then: time
            # scope is semantics, not a matter of odds (few such claims to learn it from)
            return rule, rule_reason
        probs = self.probabilities(features(signals, policy, rule))[0]
        best = int(np.argmax(probs))
        label = Label(self.classes[best])
        ranked = sorted(zip(self.classes, probs, strict=True), key=lambda t: -t[1])[:3]
        odds = ", ".join(f"{c} {p:.2f}" for c, p in ranked)
        if label == rule:
            return label, f"{rule_reason} [label model: {odds}]"
        return label, f"label model: {odds} (rules said {rule.value}: {rule_reason})"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (floats rounded to 8 significant digits)."""

        def arr(a: np.ndarray) -> Any:
            return np.vectorize(lambda v: float(f"{v:.8g}"))(a).tolist()

        return {
            "kind": "multinomial_logistic_label_model",
            "features": list(self.feature_names),
            "classes": list(self.classes),
            "mean": arr(self.mean),
            "scale": arr(self.scale),
            "coef": arr(self.coef),
            "intercept": arr(self.intercept),
            "provenance": self.provenance,
        }

    def save(self, path: str | Path) -> None:
        """Write the model as JSON."""
        Path(path).write_text(json.dumps(self.to_dict(), indent=1) + "\n", encoding="utf-8")


def load_label_model(path: str | Path) -> LabelModel:
    """Read a model written by :meth:`LabelModel.save`; a bad file is a ConfigError naming it."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        return LabelModel(
            feature_names=tuple(data["features"]),
            classes=tuple(data["classes"]),
            mean=np.asarray(data["mean"], dtype=np.float64),
            scale=np.asarray(data["scale"], dtype=np.float64),
            coef=np.asarray(data["coef"], dtype=np.float64),
            intercept=np.asarray(data["intercept"], dtype=np.float64),
            provenance=dict(data.get("provenance", {})),
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{path}: not a label model ({type(exc).__name__}: {exc})") from None


def fit_label_model(
    x: np.ndarray,
    y: Sequence[str] | np.ndarray,
    *,
    c: float = 1.0,
    class_weight: str | None = "balanced",
    provenance: dict[str, Any] | None = None,
) -> LabelModel:
    """Fit the model on feature rows ``x`` (:func:`features`) and labels ``y`` (values of
    :data:`CLASSES`): L2 multinomial logistic regression, inverse strength ``c``."""
    from sklearn.linear_model import LogisticRegression

    labels = np.asarray(y)
    allowed = [cl.value for cl in CLASSES]
    bad = sorted(set(labels) - set(allowed))
    if bad:
        raise ConfigError(f"label model: labels {bad} are not among {allowed}")
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    model = LogisticRegression(C=c, class_weight=class_weight, max_iter=5000)
    model.fit((x - mean) / scale, labels)
    present = [str(k) for k in model.classes_]
    coef = np.asarray(model.coef_)
    intercept = np.asarray(model.intercept_)
    if len(present) == 2:  # sklearn keeps one row for two classes
        coef = np.vstack([-coef[0] / 2, coef[0] / 2])
        intercept = np.array([-intercept[0] / 2, intercept[0] / 2])
    return LabelModel(
        FEATURES,
        tuple(present),
        mean,
        scale,
        coef,
        intercept,
        dict(provenance or {}, c=c, class_weight=class_weight, n=len(labels)),
    )
