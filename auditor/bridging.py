"""Judge bridging: re-judge a run's claims with another panel/stacker on the SAME stored
evidence, store the new votes and verdicts beside the old ones, report agreement.

Evidence is read back from the ledger (chunk texts, ranks, relevance, superseded
flags), so web pages that changed since the run do not matter. Votes are keyed
by the new judges' digests, verdicts by the new panel and stacker digests;
nothing is overwritten. Re-running the same bridge adds nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from auditor.errors import ConfigError
from auditor.evidence import Evidence
from auditor.judges.panel import Panel
from auditor.labels import LabelPolicy
from auditor.report.agreement import Agreement, label_agreement
from auditor.stacking.model import Stacker
from auditor.steps import judge_claims, label_claims, localize_claims, stack_votes
from auditor.types import Answer, Chunk, Claim, DocumentVersion, Hit
from ledger import Ledger, VerdictRecord, VoteRecord


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
        return {"run_id": self.run_id, "old": {"panel": self.old_panel,
                                               "stacker": self.old_stacker},
                "new": {"panel": self.new_panel, "stacker": self.new_stacker},
                "n_claims": self.n_claims, "votes_written": self.votes_written,
                "verdicts_written": self.verdicts_written, "reused": self.reused,
                "agreement": self.agreement.to_dict()}


@dataclass(frozen=True)
class StoredRun:
    """A run's claims, answers and evidence as stored in the ledger."""

    claims: list[Claim]
    answers: dict[str, Answer]
    evidence: list[Evidence]


def stored_evidence(ledger: Ledger, run_id: str) -> StoredRun:
    """Rebuild claims, answers and :class:`Evidence` (current and superseded hits with their
    stored relevance) of a run from the ledger."""
    answers = {a["answer_id"]: Answer(id=a["answer_id"], question=a["question"] or "",
                                      answer=a["answer"], as_of=a["as_of"])
               for a in ledger.run_answers(run_id)}
    rows = ledger.claim_evidence(run_id, with_document_text=True)
    claims, evidence = [], []
    for c in ledger.claim_results(run_id):
        claims.append(Claim(id=c.claim_id, answer_id=c.answer_id, text=c.text,
                            spans=tuple(c.spans), factual=c.factual, kind=c.kind))
        hits = [_hit(e) for e in rows.get(c.claim_id, [])]
        evidence.append(Evidence(
            current=tuple(h for h in hits if not h.superseded),
            superseded=tuple(h for h in hits if h.superseded),
            relevance={e["chunk_id"]: float(e["score"]) for e in rows.get(c.claim_id, [])}))
    return StoredRun(claims, answers, evidence)


def _hit(e: Mapping[str, Any]) -> Hit:
    document = DocumentVersion(doc_id=e["doc_id"], version=e["version"], text=e["doc_text"],
                               digest=e["version_digest"], source=e["source"],
                               published_at=e["published_at"], superseded=e["superseded"])
    chunk = Chunk(chunk_id=e["chunk_id"], doc_id=e["doc_id"], version=e["version"],
                  digest=e["version_digest"], start=int(e["start"]), end=int(e["end"]),
                  text=e["text"])
    return Hit(chunk=chunk, document=document, score=float(e["score"]), rank=int(e["rank"]),
               superseded=bool(e["superseded"]), inline=bool(e["inline"]))


def _policy(config: Mapping[str, Any]) -> LabelPolicy:
    policy = config.get("policy")
    if not isinstance(policy, Mapping):
        return LabelPolicy()
    try:
        return LabelPolicy(**dict(policy))
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"the run's recorded label policy is not usable: {exc}") from None


def rejudge(ledger: Ledger, run_id: str, panel: Panel, stacker: Stacker, *,
            n_boot: int = 2000, seed: int = 0) -> BridgeResult:
    """Re-judge every claim of ``run_id`` (a full id) with ``panel`` + ``stacker`` on the
    stored evidence; store votes and verdicts beside the old ones (idempotent); return the
    agreement of the new labels with the run's own labels."""
    if stacker.members != panel.member_names:
        raise ConfigError(
            f"the stacker was fitted on members {list(stacker.members)} but the panel has "
            f"{list(panel.member_names)}; fit a stacker for this panel (auditor calibrate)")
    info = ledger.get_run(run_id)
    old_panel = str(info.components.get("panel", {}).get("digest", ""))
    old_stacker = str(info.components.get("stacker", {}).get("digest", ""))
    old = ledger.claim_results(run_id)
    new_panel, new_stacker = panel.digest, stacker.digest
    existing = {c.claim_id for c in ledger.claim_results(
        run_id, panel_digest=new_panel, stacker_digest=new_stacker) if c.label is not None}
    n_votes = n_verdicts = 0
    reused = existing >= {c.claim_id for c in old}
    if not reused:
        run = stored_evidence(ledger, run_id)
        votes, stale_votes = judge_claims(run.claims, run.answers, run.evidence, panel)
        members = panel.member_names
        p_current = stack_votes(votes, stacker, members)
        p_superseded = stack_votes(stale_votes, stacker, members)
        verdicts = label_claims(run.claims, run.evidence, votes, p_current, p_superseded,
                                _policy(info.config))
        verdicts = localize_claims(run.claims, run.answers, run.evidence, verdicts)
        digests = {m.name: m.digest for m in panel.members}
        n_votes, n_verdicts = ledger.record_bridge(
            run_id, panel=panel.component(), stacker=stacker.component(),
            judges=[m.component() for m in panel.members],
            votes=[VoteRecord(claim.id, digests[v.judge], v.judge, v.value, v.raw,
                              dict(v.scores), v.latency_s, v.error)
                   for claim, row in zip(run.claims, votes, strict=True) for v in row],
            verdicts=[VerdictRecord(v.claim_id, v.label.value, v.p_hallucinated, v.reason,
                                    v.error_spans) for v in verdicts])
    new = {c.claim_id: c.label for c in ledger.claim_results(
        run_id, panel_digest=new_panel, stacker_digest=new_stacker)}
    agreement = label_agreement([c.label for c in old], [new.get(c.claim_id) for c in old],
                                [c.answer_id for c in old], n_boot=n_boot, seed=seed)
    return BridgeResult(run_id=run_id, old_panel=old_panel, old_stacker=old_stacker,
                        new_panel=new_panel, new_stacker=new_stacker, n_claims=len(old),
                        votes_written=n_votes, verdicts_written=n_verdicts, reused=reused,
                        agreement=agreement)


def bridged_labels(ledger: Ledger, run_id: str, panel_digest: str, stacker_digest: str
                   ) -> Sequence[str | None]:
    """The labels of a run's claims under one panel/stacker version (None where absent)."""
    return [c.label for c in ledger.claim_results(run_id, panel_digest=panel_digest,
                                                  stacker_digest=stacker_digest)]
