"""The plain functions behind each node of the audit graph (no LangGraph, no SQL)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime

import numpy as np

from auditor.evidence import Evidence
from auditor.judges.panel import Panel
from auditor.labels import (
    ClaimSignals,
    LabelPolicy,
    decide_label,
    stated_period,
    strip_period,
)
from auditor.stacking.model import Stacker
from auditor.types import UNSUPPORTED_LABELS, Answer, Claim, Hit, JudgePair, Verdict, Vote


def _pairs(claims: Sequence[Claim], answers: dict[str, Answer],
           evidence: Sequence[Sequence[Hit]]) -> list[JudgePair]:
    return [JudgePair(claim=c.text, evidence=tuple(h.chunk.text for h in hits),
                      question=answers[c.answer_id].question or None)
            for c, hits in zip(claims, evidence, strict=True)]


def judge_claims(
    claims: Sequence[Claim], answers: dict[str, Answer], evidence: Sequence[Evidence],
    panel: Panel,
) -> tuple[list[list[Vote]], list[list[Vote]]]:
    """Panel votes per claim against current evidence, and against superseded evidence.

    Claims with no evidence of a kind get an empty vote list for it (not judged).
    """
    todo = [i for i, (c, e) in enumerate(zip(claims, evidence, strict=True))
            if c.factual and e.current]
    stale = [i for i, (c, e) in enumerate(zip(claims, evidence, strict=True))
             if c.factual and e.superseded]
    # a claim about its own past period is judged against old versions without the
    # period (the version's validity is checked against it when labelling)
    unscoped = [replace(claims[i], text=strip_period(claims[i].text)) for i in stale]
    pairs = (_pairs([claims[i] for i in todo], answers, [evidence[i].current for i in todo])
             + _pairs(unscoped, answers, [evidence[i].superseded for i in stale]))
    votes = panel.judge_sync(pairs) if pairs else []
    current: list[list[Vote]] = [[] for _ in claims]
    superseded: list[list[Vote]] = [[] for _ in claims]
    for i, row in zip(todo, votes[: len(todo)], strict=True):
        current[i] = row
    for i, row in zip(stale, votes[len(todo):], strict=True):
        superseded[i] = row
    return current, superseded


def stack_votes(votes: Sequence[Sequence[Vote]], stacker: Stacker, members: Sequence[str]
                ) -> list[float | None]:
    """Stacked P(hallucinated) per claim; None where the claim was not judged."""
    judged = [i for i, row in enumerate(votes) if row]
    out: list[float | None] = [None] * len(votes)
    if not judged:
        return out
    matrix = np.array([[v.value for v in votes[i]] for i in judged], dtype=np.float64)
    probs = stacker.predict_proba(matrix, members=members)
    for i, p in zip(judged, probs, strict=True):
        out[i] = float(p)
    return out


def label_claims(
    claims: Sequence[Claim], evidence: Sequence[Evidence], votes: Sequence[Sequence[Vote]],
    p_current: Sequence[float | None], p_superseded: Sequence[float | None],
    policy: LabelPolicy,
) -> list[Verdict]:
    """One verdict per claim from its signals (see :mod:`auditor.labels`)."""
    verdicts = []
    for claim, ev, row, p_cur, p_old in zip(claims, evidence, votes, p_current, p_superseded,
                                            strict=True):
        signals = ClaimSignals(factual=claim.factual, relevance=ev.best_current,
                               p_current=p_cur, votes=tuple(row),
                               stale_relevance=ev.best_superseded, p_superseded=p_old,
                               superseded_valid_at_claim_time=valid_at_claim_time(
                                   claim.text, ev.superseded),
                               superseded_margin=ev.superseded_margin,
                               current_scores=ev.scores(ev.current),
                               superseded_scores=ev.scores(ev.superseded))
        label, reason = decide_label(signals, policy)
        verdicts.append(Verdict(claim_id=claim.id, label=label, p_hallucinated=p_cur,
                                reason=reason))
    return verdicts


def valid_at_claim_time(claim_text: str, hits: Sequence[Hit]) -> bool:
    """True when the claim states its own time (:func:`auditor.labels.stated_period`) and
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
        if _utc(begin) < end and (doc.valid_to is None or _utc(doc.valid_to) > start):
            return True
    return False


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def localize_claims(
    claims: Sequence[Claim], answers: dict[str, Answer], evidence: Sequence[Evidence],
    verdicts: Sequence[Verdict],
) -> list[Verdict]:
    """Add the error spans (answer offsets) to every unsupported verdict."""
    from auditor.spans.localize import localize_error

    out = []
    for claim, ev, verdict in zip(claims, evidence, verdicts, strict=True):
        if verdict.label in UNSUPPORTED_LABELS:
            texts = [h.chunk.text for h in ev.current]  # errors are relative to current evidence
            spans = localize_error(answers[claim.answer_id].answer, claim.spans, texts)
            verdict = replace(verdict, error_spans=tuple(spans))
        out.append(verdict)
    return out
