"""Synthetic runs written straight to a ledger (no model, no index): for report tests."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from auditor.digest import content_digest, sha256_text
from auditor.types import Chunk, Component, DocumentVersion
from ledger import AnswerResult, ClaimRecord, Ledger, RetrievalRecord, VerdictRecord, VoteRecord


@dataclass(frozen=True)
class Item:
    answer_id: str
    text: str
    label: str
    p: float | None = 0.2
    evidence: str = "Evidence text."
    votes: Sequence[tuple[str, float]] = (("j", 0.0),)
    superseded: bool = False


def claim_id(answer_id: str, text: str) -> str:
    return sha256_text(f"{answer_id}|{text}")


def components(tag: str, judges: Sequence[str] = ("j",)) -> dict[str, Component]:
    roles = {
        "extractor": Component("extractor", "rules", "1", content_digest(["e", tag]), {}),
        "panel": Component(
            "panel", f"panel-{tag}", "1", content_digest(["p", tag]), {"members": list(judges)}
        ),
        "stacker": Component("stacker", "raim", "1", content_digest(["s", tag]), {}),
    }
    for j in judges:
        roles[f"judge:{j}"] = Component("judge", j, "1", content_digest(["j", j]), {})
    return roles


def add_run(
    ledger: Ledger,
    tag: str,
    items: Sequence[Item],
    *,
    judges: Sequence[str] = ("j",),
    policy: dict[str, float] | None = None,
) -> str:
    """Write a complete run of ``items`` (claims grouped by answer); returns its id."""
    run_id, roles, results = build_run(tag, items, judges=judges)
    config = {"policy": policy} if policy is not None else {}
    ledger.begin_run(
        run_id,
        kind="audit",
        input_digest=sha256_text(tag),
        as_of=None,
        config=config,
        components=roles,
        n_answers=len(results),
    )
    for result in results:
        ledger.record_answer(run_id, result)
    ledger.finish_run(run_id)
    return run_id


def begin_audit(ledger: Ledger, run_id: str, roles: dict[str, Component]) -> None:
    """Open a one-answer audit run (its answers are written by the test)."""
    ledger.begin_run(
        run_id,
        kind="audit",
        input_digest="i" * 64,
        as_of=None,
        config={},
        components=roles,
        n_answers=1,
    )


def build_run(
    tag: str, items: Sequence[Item], *, judges: Sequence[str] = ("j",)
) -> tuple[str, dict[str, Component], list[AnswerResult]]:
    """The run id, components and answer results of a run of ``items`` (nothing written)."""
    roles = components(tag, judges)
    run_id = content_digest(["run", tag, [i.text for i in items]])
    answers: dict[str, list[Item]] = {}
    for item in items:
        answers.setdefault(item.answer_id, []).append(item)
    results: list[AnswerResult] = []
    for seq, (answer_id, rows) in enumerate(answers.items()):
        text = " ".join(r.text for r in rows)
        claims, retrievals, votes, verdicts = [], [], [], []
        versions, chunks = [], []
        offset = 0
        for r in rows:
            cid = claim_id(answer_id, r.text)
            claims.append(
                ClaimRecord(
                    cid, r.text, [(offset, offset + len(r.text))], r.label != "not_factual", "claim"
                )
            )
            offset += len(r.text) + 1
            if r.label != "not_factual":
                version = DocumentVersion(
                    doc_id=f"doc:{sha256_text(r.evidence)[:8]}",
                    version="v1",
                    text=r.evidence,
                    digest=sha256_text(r.evidence),
                )
                chunk = Chunk(
                    chunk_id=f"{version.digest[:16]}:0",
                    doc_id=version.doc_id,
                    version="v1",
                    digest=version.digest,
                    start=0,
                    end=len(r.evidence),
                    text=r.evidence,
                )
                versions.append(version)
                chunks.append(chunk)
                retrievals.append(
                    RetrievalRecord(
                        cid,
                        0,
                        chunk.chunk_id,
                        version.doc_id,
                        version.digest,
                        0.9,
                        r.superseded,
                        False,
                        r.text,
                    )
                )
                votes += [
                    VoteRecord(cid, roles[f"judge:{j}"].digest, j, v, "raw", {}, 0.01, None)
                    for j, v in r.votes
                ]
            verdicts.append(VerdictRecord(cid, r.label, r.p, "synthetic"))
        results.append(
            AnswerResult(
                answer_id=answer_id,
                question="q?",
                answer=text,
                answer_digest=sha256_text(text),
                as_of=None,
                seq=seq,
                claims=claims,
                retrievals=retrievals,
                votes=votes,
                verdicts=verdicts,
                evidence_versions=versions,
                evidence_chunks=chunks,
            ),
        )
    return run_id, roles, results
