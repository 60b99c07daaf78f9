"""Running an audit: versions, run id, resumable batches through the graph, ledger writes.

The run id is a digest of the input answers, every component's digest and the
whole :class:`~auditor.config.AuditConfig` (retrieval mode, k, passage counts,
as-of date, label policy, extractor, second-opinion band): the same input with
the same versions finds the existing run and writes nothing; a run that was killed resumes where its
last committed answer left off.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict
from typing import Any, Protocol

from auditor.decision import label_model_component
from auditor.digest import content_digest, sha256_text
from auditor.engine import AUDIT_BATCH_ANSWERS
from auditor.errors import ConfigError
from auditor.evidence import inline_evidence
from auditor.executor import (
    NewRun,
    Producer,
    Recorded,
    ResultsOf,
    RunSummary,
    execute_run,
)
from auditor.extract.base import Extraction
from auditor.gctune import collecting_less
from auditor.graph.flow import AuditComponents, AuditState, build_audit_graph
from auditor.judges.base import Judge
from auditor.judges.panel import Panel
from auditor.stacking.calibrate import CalibrationItem, CalibrationResult
from auditor.stacking.model import Stacker
from auditor.steps import judged_text
from auditor.types import Answer, Component, Context, Vote
from ledger import (
    AnswerResult,
    ClaimRecord,
    Ledger,
    RetrievalRecord,
    VerdictRecord,
    VoteRecord,
)


def input_digest(answers: Sequence[Answer]) -> str:
    """Digest of the answers as audited (ids, texts, contexts, as-of dates, and the origin
    of an answer that has one: without it, the digest of the answers before ``origin``
    existed, so their runs keep their ids)."""
    return content_digest([_digested(a) for a in answers])


def _digested(answer: Answer) -> dict[str, Any]:
    fields = asdict(answer)
    if not answer.origin:
        del fields["origin"]
    return fields


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
    progress: Callable[[int, int], None] | None = None,
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
    same as in this process. Both run through :func:`auditor.executor.execute_run`.
    Use :class:`auditor.Auditor`, which builds the components; this is its engine.
    """
    roles = run_components(components, index_component)
    run_id = run_id_of(answers, components, index_component)
    sink = NewRun(
        ledger,
        run_id,
        kind="audit",
        input_digest=input_digest(answers),
        as_of=components.config.as_of,
        config=components.config.to_dict(),
        components=roles,
        n_answers=len(answers),
    )
    digests = judge_digests(components, roles)
    produce = (
        local_batches(components, batch_size)
        if engine is None
        else _engine_batches(engine, run_id, digests)
    )
    return execute_run(
        answers,
        sink,
        produce,
        judges=audit_judges(components),
        judge_digests=digests,
        batch_size=batch_size,
        progress=progress,
        on_answer=on_answer,
        on_commit=on_commit,
    )


def local_batches(components: AuditComponents, batch_size: int) -> Producer:
    """The batches through the audit graph in this process."""

    def produce(
        batches: Sequence[Sequence[Answer]], seq_of: Mapping[str, int], results_of: ResultsOf
    ) -> Iterator[Sequence[AnswerResult]]:
        finished: list[list[AnswerResult]] = []

        def write(state: AuditState) -> list[str]:
            finished.append(results_of(state))
            return [r.answer_id for r in finished[-1]]

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
                    graph.invoke({"answers": list(batch), "extractions": extractions})
                    yield finished.pop()

    return produce


def _engine_batches(engine: BatchEngine, run_id: str, digests: Mapping[str, str]) -> Producer:
    """The batches on an engine's workers: each answer's records as a worker delivers them
    (written here, one transaction each), or its id when the worker wrote it."""

    def produce(
        batches: Sequence[Sequence[Answer]], seq_of: Mapping[str, int], results_of: ResultsOf
    ) -> Iterator[Sequence[AnswerResult] | Recorded]:
        for result in engine.run(run_id, batches, seq_of, digests):
            yield [result] if isinstance(result, AnswerResult) else Recorded((result,))

    return produce


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
    predictions = {p["id"]: p for p in report["predictions"]}
    judge_digests = {m.name: m.digest for m in panel.members}
    votes_of = {item.id: votes for item, votes in zip(items, result.votes, strict=True)}
    by_id = {item.id: item for item in items}
    answers = [Answer(id=i.id, question=i.question or "", answer=i.claim) for i in items]

    def produce(
        batches: Sequence[Sequence[Answer]], seq_of: Mapping[str, int], results_of: ResultsOf
    ) -> Iterator[Sequence[AnswerResult]]:
        for batch in batches:
            for answer in batch:
                item, seq = by_id[answer.id], seq_of[answer.id]
                votes, pred = votes_of[item.id], predictions[item.id]
                yield [_calibration_result(item, votes, pred, seq, judge_digests)]

    def gold(results: Sequence[AnswerResult]) -> None:
        for r in results:
            item = by_id[r.answer_id]
            ledger.record_human_audits(
                run_id,
                [
                    (
                        r.claims[0].claim_id,
                        "gold",
                        "hallucinated" if item.label else "supported",
                        item.dataset,
                    )
                ],
            )

    sink = NewRun(
        ledger,
        run_id,
        kind="calibration",
        input_digest=report["data_digest"],
        as_of=None,
        config=config,
        components=roles,
        n_answers=len(items),
        after_record=gold,
    )
    return execute_run(answers, sink, produce, batch_size=max(1, len(items)))


def _calibration_result(
    item: CalibrationItem,
    votes: Sequence[Vote],
    pred: Mapping[str, Any],
    seq: int,
    judge_digests: Mapping[str, str],
) -> AnswerResult:
    """One calibration item as an answer with one given claim, its inline evidence, the
    members' votes and the out-of-fold stacked verdict."""
    claim_id = sha256_text(f"calibration:{item.id}")
    answer = Answer(
        id=item.id,
        question=item.question or "",
        answer=item.claim,
        contexts=tuple(Context(id=f"e{i}", text=text) for i, text in enumerate(item.evidence)),
    )
    hits = inline_evidence(answer)
    label = "not_supported" if pred["stacked_label"] else "supported"
    return AnswerResult(
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
    )


def attach_cache(panel: Panel, ledger: Ledger) -> None:
    """Give every LLM judge of the panel the ledger's response cache (a re-run is free)."""
    cache = ledger.response_cache()
    for judge in panel.members:
        set_cache = getattr(judge, "set_cache", None)
        if callable(set_cache):
            set_cache(cache)
