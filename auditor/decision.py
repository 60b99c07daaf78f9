"""The label decision of an audit: the one entry point the label step, re-audits and
re-judges call (:func:`decide`, :func:`needs_judging`).

A claim's :class:`~auditor.labels.ClaimSignals` are decided by the rules of
:mod:`auditor.labels`, or, when the label policy names a learned model
(``LabelPolicy.label_model``), by that model (:mod:`auditor.label_model`). The model in
use is a component of the run (:func:`label_model_component`), so its digest is part of
the run id.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path

from auditor.errors import ConfigError
from auditor.label_model import LabelModel, load_label_model
from auditor.labels import ClaimSignals, LabelPolicy, decide_label, has_relevant_evidence
from auditor.types import Component, Label

DEFAULT_LABEL_MODEL = "default"
"""``LabelPolicy.label_model`` value naming the shipped model
(``auditor/samples/label_model.json``)."""


def label_model_path(reference: str) -> Path:
    """The file a ``label_model`` reference names."""
    if reference == DEFAULT_LABEL_MODEL:
        return Path(str(resources.files("auditor.samples").joinpath("label_model.json")))
    path = Path(reference)
    if not path.is_file():
        raise ConfigError(f"label_model: {reference}: no such file")
    return path


@lru_cache(maxsize=8)
def _load(path: str, _mtime_ns: int) -> LabelModel:
    return load_label_model(path)


def label_model(policy: LabelPolicy) -> LabelModel | None:
    """The learned model the policy names (loaded once per file state), or None."""
    if policy.label_model is None:
        return None
    path = label_model_path(policy.label_model)
    return _load(str(path), path.stat().st_mtime_ns)


def decide(signals: ClaimSignals, policy: LabelPolicy) -> tuple[Label, str]:
    """The label of one claim and a one-line reason."""
    model = label_model(policy)
    if model is None:
        return decide_label(signals, policy)
    return model.decide(signals, policy)


def needs_judging(signals: ClaimSignals, policy: LabelPolicy) -> bool:
    """True when the panel has something to decide: a factual claim with relevant evidence
    (the rules), or with any evidence at all (a learned model reads the votes of every
    claim it labels)."""
    if not signals.factual:
        return False
    if policy.label_model is not None:
        return signals.relevance is not None or signals.stale_relevance is not None
    return has_relevant_evidence(signals, policy)


def label_model_component(policy: LabelPolicy) -> Component | None:
    """The learned model as a versioned run component (None for the rules alone)."""
    model = label_model(policy)
    if model is None:
        return None
    return Component(
        kind="label_model",
        name="multinomial-logistic",
        version=model.digest[:12],
        digest=model.digest,
        config={"reference": policy.label_model, "provenance": model.provenance},
    )
