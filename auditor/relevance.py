"""Relevance: which retrieved evidence a claim's label can rest on (label rule 2).

The one definition of the rule, owned by :mod:`auditor.decision` (which re-exports it
and builds on it: the flags the label step stores with every retrieval row,
``retrieval.deciding``; the subject coverage the rule reads; the same rule on rows
stored before that flag; the one reader of a run's recorded policy). The label step
(:func:`auditor.labels.decide_label` through :func:`any_relevant`), freshness impact,
re-audits and every report read it through there; no other module restates its
thresholds. This module imports nothing of the project, so anything may import it.

A piece of evidence is relevant to a claim (:func:`evidence_relevant`) when its cosine
reaches ``min_relevance`` and it is anchored in the claim: cosine at least
``strong_relevance``, or at least ``min_coverage`` of the claim's content words in it,
or (current evidence only) the evidence as a whole names the claim's subject and the
cosine reaches ``subject_relevance``, or it says who holds a role the claim names a
holder for. A claim that names nothing itself and whose topic no evidence names has no
relevant evidence (:class:`SubjectCoverage`). docs/labels.md#relevance describes it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol


class RelevancePolicy(Protocol):
    """The thresholds of the rule (fields of :class:`auditor.labels.LabelPolicy`)."""

    @property
    def min_relevance(self) -> float: ...
    @property
    def strong_relevance(self) -> float: ...
    @property
    def min_coverage(self) -> float: ...
    @property
    def subject_relevance(self) -> float: ...


@dataclass(frozen=True)
class SubjectCoverage:
    """What a claim's evidence as a whole says about the claim's subject: the claim-level
    facts the relevance rule reads besides each piece's own cosine and coverage."""

    subject_covered: bool = False
    """The current evidence names the claim's subject (or its topic)."""
    role_stated: bool = False
    """The current evidence says who holds a role the claim names a holder for."""
    topic_unnamed: bool = False
    """The claim names nothing itself, no evidence names its topic and none is the
    answer's own context: nothing retrieved is about what the claim is about."""


NO_SUBJECT = SubjectCoverage()
"""No claim-level fact holds: relevance is each piece's cosine and coverage alone."""


def evidence_relevant(
    cosine: float,
    coverage: float | None,
    policy: RelevancePolicy,
    *,
    superseded: bool = False,
    subject: SubjectCoverage = NO_SUBJECT,
) -> bool:
    """Whether one piece of evidence is relevant to (can decide) its claim under
    ``policy``: ``cosine`` is the claim's cosine to it (the larger of the chunk's and its
    closest sentence's, :meth:`auditor.evidence.Evidence.cosine`), ``coverage`` the share
    of the claim's content words it holds (None: not measured, taken as complete). The
    subject and role clauses of ``subject`` apply to current evidence only."""
    if subject.topic_unnamed or cosine < policy.min_relevance:
        return False
    if cosine >= policy.strong_relevance or (1.0 if coverage is None else coverage) >= (
        policy.min_coverage
    ):
        return True
    if superseded:
        return False
    return subject.role_stated or (subject.subject_covered and cosine >= policy.subject_relevance)


def any_relevant(
    best: float | None,
    scores: Sequence[tuple[float, float]],
    policy: RelevancePolicy,
    subject: SubjectCoverage = NO_SUBJECT,
    *,
    superseded: bool = False,
) -> bool:
    """Whether any of ``scores`` (``(cosine, coverage)`` per piece) is relevant; without
    per-piece scores, ``best`` (the best cosine) with coverage taken as complete."""
    pieces: Iterable[tuple[float, float | None]] = (
        scores if scores else ([(best, None)] if best is not None else [])
    )
    return any(
        evidence_relevant(cos, cov, policy, superseded=superseded, subject=subject)
        for cos, cov in pieces
    )


def stored_cosine(score: float, sentence_relevance: float | None) -> float:
    """The cosine a stored retrieval row's relevance is read at (chunk cosine ``score``,
    or its closest sentence's when larger), as :meth:`Evidence.cosine` computed it."""
    return max(float(score), -1.0 if sentence_relevance is None else float(sentence_relevance))
