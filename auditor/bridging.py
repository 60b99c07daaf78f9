"""Judge bridging: re-judge a run's claims with another panel/stacker on the SAME stored
evidence, store the new votes and verdicts beside the old ones, report agreement.

Evidence is read back from the ledger (chunk texts, ranks, relevance, superseded
flags), so web pages that changed since the run do not matter. Votes are keyed
by the new judges' digests, verdicts by the new panel and stacker digests;
nothing is overwritten. Re-running the same bridge adds nothing. A judge whose digest
already voted is not asked again, and the entailment reader's pair scores stored with
the run (:mod:`auditor.reader_scores`) are put into the reader's cache first, so a
changed entailment judge with the same weights reads no pair the run already read.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast

from auditor.clock import answer_as_of
from auditor.config import AuditConfig
from auditor.evidence import Evidence
from auditor.executor import Producer, ResultsOf, execute_run
from auditor.extract.base import Extraction, Extractor
from auditor.graph.flow import AuditComponents, AuditState, build_audit_graph, panel_weights
from auditor.judges.base import Judge
from auditor.judges.panel import Panel
from auditor.reader_scores import preload as preload_reader_scores
from auditor.records import stored_vote
from auditor.report.agreement import Agreement, label_agreement
from auditor.runner import check_members
from auditor.stacking.model import Stacker
from auditor.steps import ClaimAudit, KnownVotes
from auditor.types import Answer, Chunk, Claim, DocumentVersion, Hit, Vote
from ledger import AnswerResult, Ledger

if TYPE_CHECKING:
    from auditor.spans.reader import Localizer


@dataclass(frozen=True)
class BridgeResult:
    """What :func:`rejudge` did and how the new labels agree with the old ones."""

    run_id: str
    old_panel: str
    old_stacker: str
    new_panel: str
    new_stacker: str
    n_claims: int
    votes_written: int
    verdicts_written: int
    reused: bool
    """True when every claim already had a verdict of the new version: nothing judged."""
    agreement: Agreement
    """New labels (compared) against the run's own labels (reference)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "old": {"panel": self.old_panel, "stacker": self.old_stacker},
            "new": {"panel": self.new_panel, "stacker": self.new_stacker},
            "n_claims": self.n_claims,
            "votes_written": self.votes_written,
            "verdicts_written": self.verdicts_written,
            "reused": self.reused,
            "agreement": self.agreement.to_dict(),
        }


@dataclass(frozen=True)
class StoredRun:
    """A run's claims with their evidence, and its answers, as stored in the ledger."""

    audits: list[ClaimAudit]
    answers: dict[str, Answer]
    config: AuditConfig


def stored_run(ledger: Ledger, run_id: str) -> StoredRun:
    """Rebuild a run's claims and :class:`Evidence` (current and superseded hits with every
    stored signal: relevance, coverage, sentence relevance, version dates, as-of) and its
    configuration from the ledger: what the original run's labelling read."""
    info = ledger.get_run(run_id)
    config = AuditConfig.from_dict(info.config, source=f"run {run_id[:12]}")
    answers = {
        a["answer_id"]: Answer(
            id=a["answer_id"],
            question=a["question"] or "",
            answer=a["answer"],
            as_of=a["as_of"],
            origin=a["origin"],
        )
        for a in ledger.run_answers(run_id)
    }
    rows = ledger.claim_evidence(run_id, with_document_text=True)
    audits = []
    for c in ledger.claim_results(run_id):
        claim = Claim(
            id=c.claim_id,
            answer_id=c.answer_id,
            text=c.text,
            spans=tuple(c.spans),
            factual=c.factual,
            kind=c.kind,
            topic=c.topic,
        )
        stored = rows.get(c.claim_id, [])
        hits = [_hit(e) for e in stored]
        evidence = Evidence(
            current=tuple(h for h in hits if not h.superseded),
            superseded=tuple(h for h in hits if h.superseded),
            relevance={e["chunk_id"]: float(e["score"]) for e in stored},
            coverage={
                e["chunk_id"]: float(e["coverage"]) for e in stored if e["coverage"] is not None
            },
            sentence_relevance={
                e["chunk_id"]: float(e["sentence_relevance"])
                for e in stored
                if e["sentence_relevance"] is not None
            },
            as_of=answer_as_of(answers[c.answer_id].as_of, config.as_of),
        )
        audits.append(ClaimAudit(claim, evidence))
    return StoredRun(audits, answers, config)


def _hit(e: Mapping[str, Any]) -> Hit:
    document = DocumentVersion(
        doc_id=e["doc_id"],
        version=e["version"],
        text=e["doc_text"],
        digest=e["version_digest"],
        source=e["source"],
        published_at=e["published_at"],
        valid_from=e["valid_from"],
        valid_to=e["valid_to"],
        superseded=e["superseded"],
    )
    chunk = Chunk(
        chunk_id=e["chunk_id"],
        doc_id=e["doc_id"],
        version=e["version"],
        digest=e["version_digest"],
        start=int(e["start"]),
        end=int(e["end"]),
        text=e["text"],
    )
    return Hit(
        chunk=chunk,
        document=document,
        score=float(e["score"]),
        rank=int(e["rank"]),
        superseded=bool(e["superseded"]),
        inline=bool(e["inline"]),
    )


def rejudge(
    ledger: Ledger,
    run_id: str,
    panel: Panel,
    stacker: Stacker,
    *,
    second_opinion: Judge | None = None,
    n_boot: int = 2000,
    seed: int = 0,
) -> BridgeResult:
    """Re-judge every claim of ``run_id`` (a full id) with ``panel`` + ``stacker`` on the
    stored evidence, through the same graph nodes as an audit (entering at ``judge``,
    with the run's recorded configuration) and the one run executor
    (:func:`auditor.executor.execute_run`); store votes and verdicts beside the old ones
    (idempotent); return the agreement of the new labels with the run's own labels.

    Use :meth:`auditor.Auditor.rejudge`, which resolves the run and loads the panel."""
    check_members(panel, stacker)
    info = ledger.get_run(run_id)
    old_panel = str(info.components.get("panel", {}).get("digest", ""))
    old_stacker = str(info.components.get("stacker", {}).get("digest", ""))
    old = ledger.claim_results(run_id)
    new_panel, new_stacker = panel.digest, stacker.digest
    existing = {
        c.claim_id
        for c in ledger.claim_results(run_id, panel_digest=new_panel, stacker_digest=new_stacker)
        if c.label is not None
    }
    judges = [*panel.members, *([second_opinion] if second_opinion else [])]
    sink = _Bridge(
        ledger,
        run_id,
        panel,
        stacker,
        judges,
        reused=existing >= {c.claim_id for c in old},
    )
    if not sink.reused:
        stored = preload_reader_scores(ledger, run_id, judges)
        run, components = _replay_components(ledger, run_id, panel, stacker, second_opinion, True)
        answers = list(run.answers.values())
        execute_run(
            answers,
            sink,
            _replayed(run, components),
            judges=judges,
            judge_digests={j.name: j.digest for j in judges},
            batch_size=max(1, len(answers)),
            stored_scores=stored,
        )
    new = {
        c.claim_id: c.label
        for c in ledger.claim_results(run_id, panel_digest=new_panel, stacker_digest=new_stacker)
    }
    agreement = label_agreement(
        [c.label for c in old],
        [new.get(c.claim_id) for c in old],
        [c.answer_id for c in old],
        n_boot=n_boot,
        seed=seed,
    )
    return BridgeResult(
        run_id=run_id,
        old_panel=old_panel,
        old_stacker=old_stacker,
        new_panel=new_panel,
        new_stacker=new_stacker,
        n_claims=len(old),
        votes_written=sink.n_votes,
        verdicts_written=sink.n_verdicts,
        reused=sink.reused,
        agreement=agreement,
    )


@dataclass
class _Bridge:
    """The sink of a re-judge: the new votes and verdicts beside the run's own
    (:meth:`ledger.Ledger.record_bridge`), in the run that was judged."""

    ledger: Ledger
    run_id: str
    panel: Panel
    stacker: Stacker
    judges: Sequence[Judge]
    reused: bool
    n_votes: int = 0
    n_verdicts: int = 0

    def begin(self) -> frozenset[str] | None:
        return None if self.reused else frozenset()

    def record(self, results: Sequence[AnswerResult]) -> None:
        n_votes, n_verdicts = self.ledger.record_bridge(
            self.run_id,
            panel=self.panel.component(),
            stacker=self.stacker.component(),
            judges=[j.component() for j in self.judges],
            votes=[v for r in results for v in r.votes],
            verdicts=[v for r in results for v in r.verdicts],
            reader_scores=[s for r in results for s in r.reader_scores],
        )
        self.n_votes += n_votes
        self.n_verdicts += n_verdicts

    def finish(self) -> None:
        """A re-judge adds to a finished run; there is nothing to finish."""


def _replayed(run: StoredRun, components: AuditComponents) -> Producer:
    """The stored claims of each batch through the audit graph, entered at ``judge``."""
    graph = build_audit_graph(components, entry="judge")
    stored = Extraction("", (), _NoExtractor().component)
    audits_of: dict[str, list[ClaimAudit]] = {}
    for audit in run.audits:
        audits_of.setdefault(audit.claim.answer_id, []).append(audit)

    def produce(
        batches: Sequence[Sequence[Answer]], seq_of: Mapping[str, int], results_of: ResultsOf
    ) -> Iterator[Sequence[AnswerResult]]:
        for batch in batches:
            state = cast(
                AuditState,
                graph.invoke(
                    {
                        "answers": list(batch),
                        "audits": [x for a in batch for x in audits_of.get(a.id, [])],
                    }
                ),
            )
            state["extractions"] = [
                replace(
                    stored,
                    answer_id=a.id,
                    claims=tuple(x.claim for x in audits_of.get(a.id, [])),
                )
                for a in batch
            ]
            yield results_of(state)

    return produce


def replay(
    ledger: Ledger,
    run_id: str,
    panel: Panel,
    stacker: Stacker,
    *,
    second_opinion: Judge | None = None,
    reuse_votes: bool = True,
) -> list[ClaimAudit]:
    """Judge, stack, label and localise a run's stored claims again (writing nothing):
    the audit graph entered at ``judge`` with the run's stored evidence and configuration.
    With the run's own panel and stacker it reproduces the run's verdicts.

    A judge whose digest already voted on a claim (against its current or its superseded
    evidence) in this run is not asked again: its stored vote is used (failed votes are
    cast again); ``reuse_votes=False`` casts every vote again. The entailment reader's
    pair scores stored with the run are offered to the panel's reader judges (those of
    the same weights go into the reader's cache before it reads)."""
    preload_reader_scores(
        ledger, run_id, [*panel.members, *([second_opinion] if second_opinion else [])]
    )
    run, components = _replay_components(
        ledger, run_id, panel, stacker, second_opinion, reuse_votes
    )
    state = build_audit_graph(components, entry="judge").invoke(
        {"answers": list(run.answers.values()), "audits": run.audits}
    )
    audits: list[ClaimAudit] = state["audits"]
    return audits


def _replay_components(
    ledger: Ledger,
    run_id: str,
    panel: Panel,
    stacker: Stacker,
    second_opinion: Judge | None,
    reuse_votes: bool,
) -> tuple[StoredRun, AuditComponents]:
    """A run's stored claims, and the components that judge them again: the run's
    configuration, stored evidence and (with ``reuse_votes``) stored votes."""
    check_members(panel, stacker)
    run = stored_run(ledger, run_id)
    components = AuditComponents(
        extractor=_NoExtractor(),
        search=_no_search,
        panel=panel,
        stacker=stacker,
        config=run.config,
        second_opinion=second_opinion,
        localizer=recorded_localizer(ledger, run_id, run.config, panel),
        known_votes=stored_votes(ledger, run_id) if reuse_votes else None,
    )
    return run, components


def stored_votes(ledger: Ledger, run_id: str) -> KnownVotes:
    """The successful votes cast on a run's claims, against their current and their
    superseded evidence, per claim id and judge digest."""

    def known(superseded: bool) -> dict[str, dict[str, Vote]]:
        return {
            claim_id: {r["judge_digest"]: stored_vote(r) for r in rows if r["error"] is None}
            for claim_id, rows in ledger.claim_votes(run_id, superseded=superseded).items()
        }

    return KnownVotes(current=known(False), superseded=known(True))


def recorded_localizer(
    ledger: Ledger, run_id: str, config: AuditConfig, panel: Panel
) -> Localizer | None:
    """The reader localiser as the run recorded it (call budget and rule from its
    ``localizer`` component), reading with ``panel``'s entailment weights; None for a run
    localised lexically, or one that recorded no localizer (the default is built)."""
    if config.localizer != "reader":
        return None
    recorded = ledger.get_run(run_id).components.get("localizer")
    if not recorded or not recorded.get("config"):
        return None
    from auditor.spans.reader import ReaderLocalizer

    return ReaderLocalizer.from_component(recorded["config"], weights_dir=panel_weights(panel))


def _no_search(queries: Sequence[str], k: int, as_of: datetime | None) -> list[list[Hit]]:
    raise RuntimeError("a re-judge uses the stored evidence; it never searches")


class _NoExtractor(Extractor):
    """Stands in for the extractor of a re-judge, which starts from stored claims."""

    name = "stored-claims"

    def extract_detailed(self, answers: Sequence[Answer]) -> list[Extraction]:
        raise RuntimeError("a re-judge uses the stored claims; it never extracts")


def bridged_labels(
    ledger: Ledger, run_id: str, panel_digest: str, stacker_digest: str
) -> Sequence[str | None]:
    """The labels of a run's claims under one panel/stacker version (None where absent)."""
    return [
        c.label
        for c in ledger.claim_results(
            run_id, panel_digest=panel_digest, stacker_digest=stacker_digest
        )
    ]
