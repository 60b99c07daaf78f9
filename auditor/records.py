"""The ledger records of audited claims: a finished batch state grouped into one
:class:`~ledger.AnswerResult` per answer (claims, evidence rows, votes, verdicts), and a
stored vote read back."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from auditor.digest import sha256_text
from auditor.extract.base import Extraction
from auditor.graph.flow import AuditState
from auditor.steps import ClaimAudit
from auditor.types import Chunk, DocumentVersion, Vote
from ledger import (
    AnswerResult,
    ClaimRecord,
    ReaderScoreRecord,
    RetrievalRecord,
    VerdictRecord,
    VoteRecord,
)


def vote_records(audit: ClaimAudit, judge_digests: Mapping[str, str]) -> list[VoteRecord]:
    """The ledger rows of a claim's votes: the panel's, then any second opinion, then the
    panel's votes against the superseded evidence."""
    votes = [*audit.votes, *([audit.second_opinion] if audit.second_opinion else [])]
    return [
        VoteRecord(
            claim_id=audit.claim.id,
            judge_digest=judge_digests[v.judge],
            judge_name=v.judge,
            value=v.value,
            raw=v.raw,
            scores=dict(v.scores),
            latency_s=v.latency_s,
            error=v.error,
            superseded=superseded,
        )
        for group, superseded in ((votes, False), (audit.stale_votes, True))
        for v in group
    ]


def stored_vote(row: Mapping[str, Any]) -> Vote:
    """A vote as :meth:`ledger.Ledger.claim_votes` returns it, back as a :class:`Vote`."""
    return Vote(
        judge=row["judge_name"],
        value=float(row["value"]),
        raw=row["raw"] or "",
        latency_s=float(row["latency_s"] or 0.0),
        error=row["error"],
        scores=dict(row["scores"] or {}),
    )


def verdict_record(audit: ClaimAudit) -> VerdictRecord:
    """The ledger row of a claim's verdict."""
    verdict = audit.verdict
    assert verdict is not None, "the graph labels every claim"
    return VerdictRecord(
        audit.claim.id,
        verdict.label.value,
        verdict.p_hallucinated,
        verdict.reason,
        verdict.error_spans,
    )


def answer_results(
    state: AuditState,
    seq_of: Mapping[str, int],
    judge_digests: Mapping[str, str],
    reader_scores: Sequence[ReaderScoreRecord] = (),
) -> list[AnswerResult]:
    """Group a finished batch state into one ledger record per answer; the entailment
    reader scores the batch's judging asked for (:mod:`auditor.reader_scores`) ride
    with its first answer."""
    audits_of: dict[str, list[ClaimAudit]] = {a.id: [] for a in state["answers"]}
    for audit in state["audits"]:
        audits_of[audit.claim.answer_id].append(audit)
    extractions = {e.answer_id: e for e in state["extractions"]}
    results = []
    for answer in state["answers"]:
        claims, retrievals, votes, verdicts = [], [], [], []
        versions: dict[tuple[str, str], DocumentVersion] = {}
        chunks: dict[str, Chunk] = {}
        inline_ids: set[str] = set()
        for audit in audits_of[answer.id]:
            claim, ev = audit.claim, audit.evidence
            claims.append(
                ClaimRecord(
                    claim.id, claim.text, claim.spans, claim.factual, claim.kind, claim.topic
                )
            )
            for rank, hit in enumerate((*ev.current, *ev.superseded)):
                cid = hit.chunk.chunk_id
                retrievals.append(
                    RetrievalRecord(
                        claim_id=claim.id,
                        rank=rank,
                        chunk_id=cid,
                        doc_id=hit.document.doc_id,
                        version_digest=hit.document.digest,
                        score=ev.relevance.get(cid, hit.score),
                        superseded=hit.superseded,
                        inline=hit.inline,
                        query=claim.text,
                        coverage=ev.coverage.get(cid),
                        sentence_relevance=ev.sentence_relevance.get(cid),
                        deciding=audit.deciding[rank] if audit.deciding is not None else None,
                    )
                )
                versions[(hit.document.doc_id, hit.document.digest)] = hit.document
                chunks[cid] = hit.chunk
                if hit.inline:
                    inline_ids.add(hit.document.doc_id)
            votes.extend(vote_records(audit, judge_digests))
            verdicts.append(verdict_record(audit))
        results.append(
            AnswerResult(
                answer_id=answer.id,
                question=answer.question,
                answer=answer.answer,
                answer_digest=sha256_text(answer.answer),
                as_of=answer.as_of,
                seq=seq_of[answer.id],
                claims=claims,
                retrievals=retrievals,
                votes=votes,
                verdicts=verdicts,
                evidence_versions=list(versions.values()),
                evidence_chunks=list(chunks.values()),
                inline_doc_ids=frozenset(inline_ids),
                extractor=extractions[answer.id].extractor,
                extraction=_extraction_record(extractions[answer.id]),
                origin=answer.origin,
            )
        )
    if reader_scores and results:
        results[0] = replace(results[0], reader_scores=tuple(reader_scores))
    return results


def _extraction_record(extraction: Extraction) -> dict[str, Any]:
    return {
        "extractor": extraction.extractor.name,
        "digest": extraction.extractor.digest,
        "fallback": extraction.fallback,
        "notes": list(extraction.notes),
        "raw": extraction.raw,
        "usage": dict(extraction.usage),
    }
