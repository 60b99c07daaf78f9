"""The label decision of an audit: the one entry point the label step, re-audits and
re-judges call (:func:`decide`, :func:`needs_judging`).

Relevance (label rule 2), the evidence a claim's label can rest on and the subject
coverage it reads are defined here and in :mod:`auditor.relevance` (the rule itself,
re-exported here): :func:`evidence_relevant` (one piece of evidence),
:func:`subject_coverage` (what the claim's evidence as a whole says about its subject),
:func:`deciding_flags` (a claim's pieces, stored by the label step per retrieval row as
``retrieval.deciding``), :func:`stored_deciding` (the same rule on stored rows of runs
written before that flag) and :func:`recorded_policy` (the one reader of a run's
recorded label policy).

A claim's :class:`~auditor.labels.ClaimSignals` are decided by the rules of
:mod:`auditor.labels`, or, when the label policy names a learned model
(``LabelPolicy.label_model``), by that model (:mod:`auditor.label_model`). The model in
use is a component of the run (:func:`label_model_component`), so its digest is part of
the run id.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import fields
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from auditor.errors import ConfigError
from auditor.label_model import LabelModel, load_label_model
from auditor.labels import (
    ClaimSignals,
    LabelPolicy,
    decide_label,
    has_relevant_evidence,
    role_in_evidence,
    subject_in_evidence,
)
from auditor.relevance import SubjectCoverage, evidence_relevant, stored_cosine
from auditor.types import Component, Label

__all__ = [
    "DEFAULT_LABEL_MODEL",
    "SubjectCoverage",
    "decide",
    "deciding_flags",
    "evidence_relevant",
    "label_model",
    "label_model_component",
    "label_model_path",
    "needs_judging",
    "recorded_policy",
    "signals_subject",
    "stored_cosine",
    "stored_deciding",
    "subject_coverage",
]

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


def subject_coverage(
    claim_text: str,
    topic: str | None,
    current: Sequence[str],
    superseded: Sequence[str] = (),
    *,
    any_inline: bool = False,
) -> SubjectCoverage:
    """The :class:`SubjectCoverage` of a claim (its text and topic) given the texts of its
    current and superseded evidence and whether any current piece is the answer's own
    context."""
    return SubjectCoverage(
        subject_covered=subject_in_evidence(claim_text, current)
        or (topic is not None and subject_in_evidence(topic, current)),
        role_stated=role_in_evidence(claim_text, current),
        topic_unnamed=topic is not None
        and not any_inline
        and not subject_in_evidence(topic, [*current, *superseded]),
    )


def signals_subject(signals: ClaimSignals) -> SubjectCoverage:
    """The :class:`SubjectCoverage` a claim's signals carry."""
    return SubjectCoverage(signals.subject_covered, signals.role_stated, signals.topic_unnamed)


def deciding_flags(signals: ClaimSignals, policy: LabelPolicy) -> tuple[bool, ...]:
    """Whether each piece of a claim's evidence is relevant, current pieces then
    superseded ones (the order of ``current_scores`` and ``superseded_scores``, the
    order the runner writes retrieval rows in): ``retrieval.deciding``."""
    subject = signals_subject(signals)
    return tuple(
        evidence_relevant(cos, cov, policy, superseded=superseded, subject=subject)
        for scores, superseded in (
            (signals.current_scores, False),
            (signals.superseded_scores, True),
        )
        for cos, cov in scores
    )


def stored_deciding(
    claim_text: str,
    topic: str | None,
    rows: Sequence[Mapping[str, Any]],
    policy: LabelPolicy,
) -> list[bool]:
    """The rule applied to one claim's stored retrieval rows (``score``,
    ``sentence_relevance``, ``coverage``, ``superseded``, ``inline``, ``text``: the
    chunk's), in the order given: the flag of rows stored without one (NULL: written
    before ``retrieval.deciding`` existed, or carried over unjudged by a re-audit). The
    subject clauses are read from the stored texts, as the label step read them from the
    same evidence."""
    current = [str(r["text"]) for r in rows if not r["superseded"]]
    superseded = [str(r["text"]) for r in rows if r["superseded"]]
    subject = subject_coverage(
        claim_text,
        topic,
        current,
        superseded,
        any_inline=any(bool(r["inline"]) for r in rows if not r["superseded"]),
    )
    return [
        evidence_relevant(
            stored_cosine(r["score"], r["sentence_relevance"]),
            r["coverage"],
            policy,
            superseded=bool(r["superseded"]),
            subject=subject,
        )
        for r in rows
    ]


def recorded_policy(config: Mapping[str, Any] | None) -> LabelPolicy:
    """The label policy a run recorded in its configuration (``RunInfo.config``, the
    ``AuditConfig.to_dict()`` it was run with): every field it recorded with a value of
    the right kind and range, the :class:`LabelPolicy` default for any other (a run
    recorded without a ``label_model`` was labelled by the rules). The one reader of a
    stored policy for its thresholds."""
    recorded = config.get("policy") if isinstance(config, Mapping) else None
    if not isinstance(recorded, Mapping):
        return LabelPolicy()
    kept: dict[str, Any] = {"label_model": None}
    for f in fields(LabelPolicy):
        if f.name not in recorded:
            continue
        value = recorded[f.name]
        if f.name == "label_model":
            if not (value is None or isinstance(value, str)):
                continue
        elif not isinstance(value, int | float) or isinstance(value, bool):
            continue
        elif f.type in ("int", int):
            if not float(value).is_integer():
                continue
            value = int(value)
        else:
            value = float(value)
        try:
            LabelPolicy(**{f.name: value})
        except (TypeError, ValueError):
            continue
        kept[f.name] = value
    return LabelPolicy(**kept)
