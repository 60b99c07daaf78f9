"""Running an audit: versions, run id, resumable batches through the graph, ledger writes.

The run id is a digest of the input answers, every component's digest and the
whole :class:`~auditor.config.AuditConfig` (retrieval mode, k, passage counts,
as-of date, label policy, extractor, second-opinion band): the same input with
the same versions finds the existing run and writes nothing; a run that was killed resumes where its
last committed answer left off.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any, Protocol

from auditor.decision import label_model_component
from auditor.digest import content_digest, sha256_text
from auditor.engine import AUDIT_BATCH_ANSWERS
from auditor.errors import ConfigError
from auditor.evidence import inline_evidence
from auditor.extract.base import Extraction
from auditor.gctune import collecting_less
from auditor.graph.flow import AuditComponents, AuditState, build_audit_graph
from auditor.judges.base import Judge
from auditor.judges.panel import Panel
from auditor.reader_scores import keep as keep_reader_scores
from auditor.reader_scores import stop as stop_reader_scores
from auditor.reader_scores import take as take_reader_scores
from auditor.stacking.calibrate import CalibrationItem, CalibrationResult
from auditor.stacking.model import Stacker
from auditor.steps import ClaimAudit, judged_text
from auditor.types import Answer, Chunk, Component, Context, DocumentVersion, Vote
from ledger import (
    AnswerResult,
    ClaimRecord,
    Ledger,
    ReaderScoreRecord,
    RetrievalRecord,
    VerdictRecord,
    VoteRecord,
)

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class RunSummary:
    """What an audit run did."""

    run_id: str
    reused: bool
    """True when the run already existed and was complete: nothing was written."""
    answers_written: int
    answers_total: int


def input_digest(answers: Sequence[Answer]) -> str:
    """Digest of the answers as audited (ids, texts, contexts, as-of dates)."""
    return content_digest([asdict(a) for a in answers])


def run_components(components: AuditComponents, index_component: Component) -> dict[str, Component]:
    """The versioned components of a run, by role."""
    roles: dict[str, Component] = {
        "extractor": components.extractor.component,
        "panel": components.panel.component(),
        "stacker": components.stacker.component(),
        "index": index_component,
    }
    for judge in components.panel.members:
        roles[f"judge:{judge.name}"] = judge.component()
    if components.second_opinion is not None:
        roles["second_opinion"] = components.second_opinion.component()
    if components.localizer is not None:
        roles["localizer"] = components.localizer.component()
    model = label_model_component(components.config.policy)
    if model is not None:
        roles["label_model"] = model
    return roles


def run_id_of(
    answers: Sequence[Answer], components: AuditComponents, index_component: Component
) -> str:
    """The content address of an audit: input answers, configuration and every component."""
    roles = run_components(components, index_component)
    return content_digest(
        {
            "input": input_digest(answers),
            "config": components.config.to_dict(),
            "components": {r: c.digest for r, c in sorted(roles.items())},
        }
    )


class BatchEngine(Protocol):
    """Runs an audit's batches somewhere else than this process (:mod:`auditor.ray_engine`).

    :meth:`run` yields every answer of ``batches`` once, in input order, as it
    finishes: its :class:`~ledger.AnswerResult` for the caller to write (the ledger
    allows one writer), or its id when a worker already wrote it to the ledger.
    """

    def run(
        self,
        run_id: str,
        batches: Sequence[Sequence[Answer]],
        seq_of: Mapping[str, int],
        judge_digests: Mapping[str, str],
    ) -> Iterator[AnswerResult | str]:
        """Audit ``batches`` (each through the audit graph, as the local engine would)."""
        ...


def judge_digests(components: AuditComponents, roles: Mapping[str, Component]) -> dict[str, str]:
    """Each judge's digest by name (the panel's members, then any second opinion)."""
    digests = {
        role.removeprefix("judge:"): c.digest
        for role, c in roles.items()
        if role.startswith("judge:")
    }
    if components.second_opinion is not None:
        digests[components.second_opinion.name] = components.second_opinion.digest
    return digests


def audit_judges(components: AuditComponents) -> list[Judge]:
    """The judges of an audit: the panel's members, then any second opinion."""
    so = components.second_opinion
    return [*components.panel.members, *([so] if so is not None else [])]


def execute_audit(
    answers: Sequence[Answer],
    components: AuditComponents,
    ledger: Ledger,
    *,
    index_component: Component,
    batch_size: int = AUDIT_BATCH_ANSWERS,
    progress: Progress | None = None,
    on_answer: Callable[[str, str], None] | None = None,
    on_commit: Callable[[str, list[str]], None] | None = None,
    engine: BatchEngine | None = None,
) -> RunSummary:
    """Audit ``answers`` into ``ledger``; idempotent and resumable (see module doc).

    In this process each batch is written in one transaction (one multi-row INSERT per
    table, :meth:`ledger.Ledger.record_answers`); ``on_commit(run_id, answer_ids)`` is
    called once after each transaction commits, then ``on_answer(run_id, answer_id)``
    and ``progress`` for each of its answers, in input order.
    ``engine`` runs the batches elsewhere (Ray actors; an answer per transaction, as
    the workers deliver them); the run id, the batches and the rows written are the
    same as in this process.
    Use :class:`auditor.Auditor`, which builds the components; this is its engine.
    """
    roles = run_components(components, index_component)
    digest = input_digest(answers)
    run_id = run_id_of(answers, components, index_component)
    info = ledger.begin_run(
        run_id,
        kind="audit",
        input_digest=digest,
        as_of=components.config.as_of,
        config=components.config.to_dict(),
        components=roles,
        n_answers=len(answers),
    )
    if info.status == "complete":
        return RunSummary(run_id, True, 0, len(answers))
    done = ledger.done_answer_ids(run_id)
    todo = [(seq, a) for seq, a in enumerate(answers) if a.id not in done]
    seq_of = {a.id: seq for seq, a in todo}
    digests = judge_digests(components, roles)
    judges = audit_judges(components)
    take_reader_scores(judges)  # nothing left over from another run of these judges
    keep_reader_scores(judges)
    written = 0
    if progress:
        progress(len(done), len(answers))

    def committed(answer_ids: list[str]) -> list[str]:
        nonlocal written
        if on_commit and answer_ids:
            on_commit(run_id, answer_ids)
        for answer_id in answer_ids:
            written += 1
            if on_answer:
                on_answer(run_id, answer_id)
            if progress:
                progress(len(done) + written, len(answers))
        return answer_ids

    def write(state: AuditState) -> list[str]:
        results = answer_results(state, seq_of, digests, take_reader_scores(judges))
        ledger.record_answers(run_id, results)  # the whole batch: one transaction
        return committed([r.answer_id for r in results])

    batches = [
        [a for _, a in todo[start : start + batch_size]]
        for start in range(0, len(todo), batch_size)
    ]
    if engine is None:
        graph = build_audit_graph(components, write)
        per_window = max(1, EMBED_AHEAD_ANSWERS // batch_size)
        with collecting_less():  # around the models, spaCy and the index (auditor.gctune)
            for start in range(0, len(batches), per_window):
                window = batches[start : start + per_window]
                # extract a window of batches (each as the graph would), embed all their
                # claims in one encoder call, then run the batches: the encoder pads a
                # batch to its longest text, and a few large, length-sorted batches run
                # much faster than one small one per graph batch
                extracted = [components.extractor.extract_detailed(batch) for batch in window]
                embed_claims_ahead([e for batch in extracted for e in batch])
                for batch, extractions in zip(window, extracted, strict=True):
                    graph.invoke({"answers": batch, "extractions": extractions})
    else:
        for result in engine.run(run_id, batches, seq_of, digests):
            if isinstance(result, AnswerResult):
                ledger.record_answer(run_id, result)
                committed([result.answer_id])
            else:  # written to the ledger by a worker
                committed([result])
    stop_reader_scores(judges)  # (a batch that raised leaves its scores to the next run's drain)
    if written != len(todo):  # an engine that lost answers must not finish the run
        raise RuntimeError(f"run {run_id[:12]}: {written} of {len(todo)} answers were written")
    ledger.finish_run(run_id)
    return RunSummary(run_id, False, written, len(answers))


EMBED_AHEAD_ANSWERS = 256
"""Answers whose claims are extracted and embedded in one encoder call before their
batches run through the audit graph (at least one batch)."""


def embed_claims_ahead(extractions: Sequence[Extraction]) -> None:
    """Embed every factual claim of ``extractions`` (as retrieval queries it and as the
    judges read it) in one encoder call; retrieval, relevance and the
    embedding-similarity judge then find the vectors in the encoder's cache."""
    from auditor.embedding import encode

    texts: dict[str, None] = {}
    for extraction in extractions:
        for claim in extraction.claims:
            if claim.factual:
                texts[claim.text] = None
                texts[judged_text(claim.text)] = None
    if texts:
        encode(list(texts))


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


def index_component(manifest: Mapping[str, Any]) -> Component:
    """The evidence index (and its corpus snapshot) as a versioned component: the digest
    covers the corpus digest, embedding model and index settings, so rebuilding the same
    corpus the same way gives the same component."""
    content = {k: v for k, v in manifest.items() if k not in _VOLATILE_MANIFEST_KEYS}
    digest = content_digest(content)
    return Component(
        kind="index",
        name="evidence-index",
        version=digest[:12],
        digest=digest,
        config=dict(manifest),
    )


_VOLATILE_MANIFEST_KEYS = frozenset({"created_at", "generation"})
"""Manifest fields that change when the same corpus is rebuilt (not content)."""


def check_members(panel: Panel, stacker: Stacker) -> None:
    """A stacker must have been fitted on exactly the panel's members, in order."""
    if stacker.members != panel.member_names:
        raise ConfigError(
            f"the stacker was fitted on members {list(stacker.members)} but the panel has "
            f"{list(panel.member_names)}; fit a stacker for this panel (auditor calibrate)"
        )


GIVEN_CLAIMS = Component(
    kind="extractor",
    name="given-claims",
    version="1",
    digest=content_digest({"extractor": "given-claims", "version": "1"}),
    config={"note": "claims supplied with the data, not extracted"},
)


def record_calibration(
    ledger: Ledger, items: Sequence[CalibrationItem], result: CalibrationResult, panel: Panel
) -> RunSummary:
    """Write a calibration to the ledger: one run (kind ``calibration``), each item as an
    answer with one given claim, its evidence (inline), every member's vote, the
    out-of-fold stacked verdict, and the gold label as a human audit ``gold``.

    Idempotent: the same data, panel, seed and bootstrap size give the same run.
    """
    stacker = result.stacker
    roles: dict[str, Component] = {
        "extractor": GIVEN_CLAIMS,
        "panel": panel.component(),
        "stacker": stacker.component(),
    }
    for judge in panel.members:
        roles[f"judge:{judge.name}"] = judge.component()
    report = result.report
    config = {
        "seed": report["seed"],
        "n_boot": report["n_boot"],
        "n_folds": report.get("n_folds"),
        "data_digest": report["data_digest"],
        "admissibility": report["admissibility"],
        "decision": report.get("decision"),
        "ladder": [
            {k: r[k] for k in ("name", "kappa", "kappa_ci", "bacc", "bacc_ci")}
            for r in report["ladder"]
        ],
        "paired": report["paired"],
    }
    run_id = content_digest(
        {
            "kind": "calibration",
            "data": report["data_digest"],
            "seed": report["seed"],
            "n_boot": report["n_boot"],
            "components": {r: c.digest for r, c in sorted(roles.items())},
        }
    )
    info = ledger.begin_run(
        run_id,
        kind="calibration",
        input_digest=report["data_digest"],
        as_of=None,
        config=config,
        components=roles,
        n_answers=len(items),
    )
    if info.status == "complete":
        return RunSummary(run_id, True, 0, len(items))
    done = ledger.done_answer_ids(run_id)
    predictions = {p["id"]: p for p in report["predictions"]}
    judge_digests = {m.name: m.digest for m in panel.members}
    written = 0
    for seq, (item, votes) in enumerate(zip(items, result.votes, strict=True)):
        if item.id in done:
            continue
        claim_id = sha256_text(f"calibration:{item.id}")
        answer = Answer(
            id=item.id,
            question=item.question or "",
            answer=item.claim,
            contexts=tuple(Context(id=f"e{i}", text=text) for i, text in enumerate(item.evidence)),
        )
        hits = inline_evidence(answer)
        pred = predictions[item.id]
        label = "not_supported" if pred["stacked_label"] else "supported"
        ledger.record_answer(
            run_id,
            AnswerResult(
                answer_id=item.id,
                question=item.question,
                answer=item.claim,
                answer_digest=sha256_text(item.claim),
                as_of=None,
                seq=seq,
                claims=[ClaimRecord(claim_id, item.claim, [(0, len(item.claim))], True, "claim")],
                retrievals=[
                    RetrievalRecord(
                        claim_id,
                        rank,
                        h.chunk.chunk_id,
                        h.document.doc_id,
                        h.document.digest,
                        1.0,
                        False,
                        True,
                        item.claim,
                    )
                    for rank, h in enumerate(hits)
                ],
                votes=[
                    VoteRecord(
                        claim_id,
                        judge_digests[v.judge],
                        v.judge,
                        v.value,
                        v.raw,
                        dict(v.scores),
                        v.latency_s,
                        v.error,
                    )
                    for v in votes
                ],
                verdicts=[
                    VerdictRecord(
                        claim_id,
                        label,
                        pred["stacked_prob"],
                        f"out-of-fold stacked prediction (fold {pred['fold']})",
                    )
                ],
                evidence_versions=[h.document for h in hits],
                evidence_chunks=[h.chunk for h in hits],
                inline_doc_ids=frozenset(h.document.doc_id for h in hits),
                extraction={"dataset": item.dataset, "cluster": item.cluster},
            ),
        )
        ledger.record_human_audits(
            run_id,
            [(claim_id, "gold", "hallucinated" if item.label else "supported", item.dataset)],
        )
        written += 1
    ledger.finish_run(run_id)
    return RunSummary(run_id, False, written, len(items))


def attach_cache(panel: Panel, ledger: Ledger) -> None:
    """Give every LLM judge of the panel the ledger's response cache (a re-run is free)."""
    cache = ledger.response_cache()
    for judge in panel.members:
        set_cache = getattr(judge, "set_cache", None)
        if callable(set_cache):
            set_cache(cache)
