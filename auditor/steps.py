"""The per-claim record of an audit and the plain functions behind each graph node.

A :class:`ClaimAudit` carries one claim through the flow: its evidence, the
panel's votes against current and superseded evidence, the stacked
probabilities, an optional second opinion, and the verdict. The functions here
take and return lists of them (no LangGraph, no SQL); the graph only routes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from auditor.clock import utc
from auditor.decision import decide, deciding_flags, subject_coverage
from auditor.decision import needs_judging as _needs_judging
from auditor.evidence import Evidence
from auditor.judges.base import Judge
from auditor.judges.panel import Panel
from auditor.labels import ClaimSignals, LabelPolicy
from auditor.stacking.model import Stacker
from auditor.text import stated_period, strip_period
from auditor.types import (
    ABSTAIN,
    UNSUPPORTED_LABELS,
    Answer,
    Claim,
    Hit,
    JudgePair,
    Label,
    Verdict,
    Vote,
)

if TYPE_CHECKING:
    from auditor.spans.reader import Localizer


@dataclass(frozen=True)
class ClaimAudit:
    """Everything the audit knows about one claim, filled in stage by stage."""

    claim: Claim
    evidence: Evidence = field(default_factory=Evidence)
    votes: tuple[Vote, ...] = ()
    """Panel votes against current evidence (member order); empty when not judged."""
    stale_votes: tuple[Vote, ...] = ()
    """Panel votes against superseded evidence; empty when there is none."""
    p_current: float | None = None
    """Stacked P(hallucinated) against current evidence (after any second opinion)."""
    p_superseded: float | None = None
    p_stacked: float | None = None
    """The stacker's own P(hallucinated) against current evidence, before a second opinion."""
    second_opinion: Vote | None = None
    verdict: Verdict | None = None
    deciding: tuple[bool, ...] | None = None
    """Per piece of evidence (current, then superseded), whether it is relevant by the
    label policy's rule 2 (:func:`auditor.decision.deciding_flags`), set by the label
    step with the verdict; stored as ``retrieval.deciding``. None when not labelled here
    (a carried verdict)."""

    def signals(self) -> ClaimSignals:
        """What the labelling rules read (:func:`auditor.labels.decide_label`)."""
        ev = self.evidence
        subject = subject_coverage(
            self.claim.text,
            self.claim.topic,
            [h.chunk.text for h in ev.current],
            [h.chunk.text for h in ev.superseded],
            any_inline=any(h.inline for h in ev.current),
        )
        return ClaimSignals(
            factual=self.claim.factual,
            relevance=ev.best_current,
            p_current=self.p_current,
            votes=self.votes,
            stale_relevance=ev.best_superseded,
            p_superseded=self.p_superseded,
            superseded_votes=self.stale_votes,
            superseded_valid_at_claim_time=valid_at_claim_time(self.claim.text, ev.superseded),
            states_time=stated_period(self.claim.text) is not None,
            superseded_margin=ev.superseded_margin,
            current_scores=ev.scores(ev.current),
            superseded_scores=ev.scores(ev.superseded),
            subject_covered=subject.subject_covered,
            role_stated=subject.role_stated,
            topic_unnamed=subject.topic_unnamed,
        )


def needs_judging(audit: ClaimAudit, policy: LabelPolicy) -> bool:
    """True when the panel has something to decide (:func:`auditor.decision.needs_judging`
    on the claim's signals; anything else is labelled without judging)."""
    return _needs_judging(audit.signals(), policy)


_CITATION = re.compile(
    r"\s*(?:\[(?:\d+|[a-z]{1,3}\d+)(?:\s*[,;-]\s*\d+)*\]"
    r"|\((?:source|see|ref)[^()]{0,80}\)|https?://\S+)",
    re.IGNORECASE,
)


def judged_text(claim_text: str) -> str:
    """The claim as the judges read it: citation markers (``[1]``, ``[2, 3]``,
    ``(source: ...)``) and URLs removed. They are the answer's references, not part of
    what it states, and left in they make correct claims look unsupported."""
    cleaned = _CITATION.sub("", claim_text).strip()
    return cleaned or claim_text


def _pairs(
    claims: Sequence[Claim], answers: Mapping[str, Answer], evidence: Sequence[Sequence[Hit]]
) -> list[JudgePair]:
    return [
        JudgePair(
            claim=judged_text(c.text),
            evidence=tuple(h.chunk.text for h in hits),
            question=answers[c.answer_id].question or None,
        )
        for c, hits in zip(claims, evidence, strict=True)
    ]


@dataclass(frozen=True)
class KnownVotes:
    """Votes already cast on claims (a re-judge of stored evidence), per claim id and judge
    digest, against the claims' current and their superseded evidence."""

    current: Mapping[str, Mapping[str, Vote]] = field(default_factory=dict)
    superseded: Mapping[str, Mapping[str, Vote]] = field(default_factory=dict)


def judge_audits(
    audits: Sequence[ClaimAudit],
    answers: Mapping[str, Answer],
    panel: Panel,
    known: KnownVotes | None = None,
) -> list[ClaimAudit]:
    """Panel votes for each audit against its current and its superseded evidence, in one
    batch. A claim about its own past period is judged against old versions without the
    period (the version's validity is checked against it when labelling).

    ``known`` votes are not cast again: a member judges only the pairs it has no known
    vote for."""
    todo = [a for a in audits if a.evidence.current]
    stale = [a for a in audits if a.evidence.superseded]
    unscoped = [replace(a.claim, text=strip_period(a.claim.text)) for a in stale]
    pairs = _pairs([a.claim for a in todo], answers, [a.evidence.current for a in todo]) + _pairs(
        unscoped, answers, [a.evidence.superseded for a in stale]
    )
    given = None
    if known is not None:
        given = [known.current.get(a.claim.id, {}) for a in todo] + [
            known.superseded.get(a.claim.id, {}) for a in stale
        ]
    rows = panel.judge_sync(pairs, given) if pairs else []
    current = {a.claim.id: tuple(r) for a, r in zip(todo, rows[: len(todo)], strict=True)}
    old = {a.claim.id: tuple(r) for a, r in zip(stale, rows[len(todo) :], strict=True)}
    return [
        replace(a, votes=current.get(a.claim.id, ()), stale_votes=old.get(a.claim.id, ()))
        for a in audits
    ]


def _stack(
    rows: Sequence[Sequence[Vote]], stacker: Stacker, members: Sequence[str]
) -> list[float | None]:
    judged = [i for i, row in enumerate(rows) if row]
    out: list[float | None] = [None] * len(rows)
    if judged:  # a vote stacker reads the votes, a score stacker the judges' scores too
        proba = stacker.predict_votes([rows[i] for i in judged], members=members)
        for i, p in zip(judged, proba, strict=True):
            out[i] = float(p)
    return out


def stack_audits(
    audits: Sequence[ClaimAudit], stacker: Stacker, members: Sequence[str]
) -> list[ClaimAudit]:
    """Stacked P(hallucinated) against current and superseded evidence (None: not judged)."""
    p_cur = _stack([a.votes for a in audits], stacker, members)
    p_old = _stack([a.stale_votes for a in audits], stacker, members)
    return [
        replace(a, p_current=c, p_stacked=c, p_superseded=o)
        for a, c, o in zip(audits, p_cur, p_old, strict=True)
    ]


def is_uncertain(audit: ClaimAudit, policy: LabelPolicy, band: float) -> bool:
    """True when the stacked probability lies within ``band`` of the threshold."""
    return (
        band > 0 and audit.p_current is not None and abs(audit.p_current - policy.threshold) <= band
    )


def second_opinions(
    audits: Sequence[ClaimAudit], answers: Mapping[str, Answer], judge: Judge
) -> list[ClaimAudit]:
    """Ask ``judge`` about each audit (against current evidence). The rule: a vote that is
    not an abstention moves the probability halfway towards it, ``p = (p + vote) / 2``, so
    it decides the side of a claim left within the band; an abstention changes nothing."""
    if not audits:
        return []
    votes = judge.judge_sync(
        _pairs([a.claim for a in audits], answers, [a.evidence.current for a in audits])
    )
    out = []
    for audit, vote in zip(audits, votes, strict=True):
        p = audit.p_current
        if p is not None and vote.value != ABSTAIN and vote.error is None:
            p = (p + vote.value) / 2
        out.append(replace(audit, second_opinion=vote, p_current=p))
    return out


def label_audits(audits: Sequence[ClaimAudit], policy: LabelPolicy) -> list[ClaimAudit]:
    """One verdict per claim from its signals (see :mod:`auditor.labels`)."""
    out = []
    for audit in audits:
        signals = audit.signals()
        label, reason = decide(signals, policy)
        if audit.second_opinion is not None and audit.p_stacked is not None:
            reason += (
                f"; second opinion {audit.second_opinion.judge} voted "
                f"{audit.second_opinion.value:g} (stacked p={audit.p_stacked:.2f})"
            )
        out.append(
            replace(
                audit,
                verdict=Verdict(
                    claim_id=audit.claim.id,
                    label=label,
                    p_hallucinated=audit.p_current,
                    reason=reason,
                ),
                deciding=deciding_flags(signals, policy),
            )
        )
    return out


READER_LABELS = frozenset({Label.CONTRADICTED, Label.NOT_SUPPORTED})
"""Labels whose error spans the reader localiser derives (``stale`` stays lexical: what
an update changed is what no current text contains)."""


def localize_audits(
    audits: Sequence[ClaimAudit],
    answers: Mapping[str, Answer],
    localizer: Localizer | None = None,
) -> list[ClaimAudit]:
    """Add the error spans (answer offsets) to every unsupported verdict, against the
    claim's current evidence: from ``localizer`` (the reader, a bounded number of calls per
    claim) for ``contradicted`` and ``not_supported`` claims when one is given, else from
    the lexical localiser (:func:`auditor.spans.localize.localize_error`)."""
    from auditor.spans.localize import localize_error

    out = []
    for audit in audits:
        verdict = audit.verdict
        if verdict is not None and verdict.label in UNSUPPORTED_LABELS:
            texts = [h.chunk.text for h in audit.evidence.current]  # errors vs current evidence
            answer = answers[audit.claim.answer_id].answer
            if localizer is not None and verdict.label in READER_LABELS:
                spans = localizer.localize(answer, audit.claim.spans, texts)
            else:
                spans = localize_error(answer, audit.claim.spans, texts)
            audit = replace(audit, verdict=replace(verdict, error_spans=tuple(spans)))
        out.append(audit)
    return out


def valid_at_claim_time(claim_text: str, hits: Sequence[Hit]) -> bool:
    """True when the claim states its own time (:func:`auditor.text.stated_period`) and
    one of ``hits`` (superseded versions) was valid during it."""
    period = stated_period(claim_text)
    if period is None:
        return False
    start, end = period
    for hit in hits:
        doc = hit.document
        begin = doc.published_at if doc.published_at is not None else doc.valid_from
        if begin is None:
            continue
        if utc(begin) < end and (doc.valid_to is None or utc(doc.valid_to) > start):
            return True
    return False
