"""Issue 18: "update time undisclosed" counts claims resting only on undated documents,
even when dated but irrelevant passages were retrieved beside them."""

from __future__ import annotations

from datetime import UTC, datetime

from _ledger_runs import claim_id, components

from auditor.decision import recorded_policy
from auditor.digest import sha256_text
from auditor.report.card import build_report_card
from auditor.types import Chunk, DocumentVersion
from ledger import AnswerResult, ClaimRecord, RetrievalRecord, VerdictRecord, open_ledger


def _version(doc_id: str, text: str, published: datetime | None) -> tuple[DocumentVersion, Chunk]:
    digest = sha256_text(text)
    return (
        DocumentVersion(
            doc_id=doc_id, version="v1", text=text, digest=digest, published_at=published
        ),
        Chunk(
            chunk_id=f"{digest[:16]}:0",
            doc_id=doc_id,
            version="v1",
            digest=digest,
            start=0,
            end=len(text),
            text=text,
        ),
    )


def test_dated_but_irrelevant_evidence_does_not_hide_undisclosed_update_time(
    sqlite_url: str,
) -> None:
    text = "The museum opens at nine."
    cid = claim_id("a1", text)
    undated, undated_chunk = _version("wiki", "The museum opens at nine every day.", None)
    dated, dated_chunk = _version(
        "news", "A football match ended two all.", datetime(2024, 1, 1, tzinfo=UTC)
    )
    with open_ledger(sqlite_url) as ledger:
        run_id = "r" * 64
        ledger.begin_run(
            run_id,
            kind="audit",
            input_digest="i",
            as_of=None,
            config={},
            components=components("u"),
            n_answers=1,
        )
        ledger.record_answer(
            run_id,
            AnswerResult(
                answer_id="a1",
                question="q?",
                answer=text,
                answer_digest=sha256_text(text),
                as_of=None,
                seq=0,
                claims=[ClaimRecord(cid, text, [(0, len(text))], True, "claim")],
                retrievals=[
                    RetrievalRecord(
                        cid,
                        0,
                        undated_chunk.chunk_id,
                        "wiki",
                        undated.digest,
                        0.82,
                        False,
                        False,
                        text,
                        coverage=1.0,
                    ),
                    RetrievalRecord(
                        cid,
                        1,
                        dated_chunk.chunk_id,
                        "news",
                        dated.digest,
                        0.12,
                        False,
                        False,
                        text,
                        coverage=0.0,
                    ),
                ],
                votes=[],
                verdicts=[VerdictRecord(cid, "supported", 0.1, "synthetic")],
                evidence_versions=[undated, dated],
                evidence_chunks=[undated_chunk, dated_chunk],
            ),
        )
        ledger.finish_run(run_id)
        claims = ledger.claim_results(run_id)  # rows without a flag: the rule decides
    (claim,) = claims
    assert (claim.n_evidence, claim.n_dated_evidence) == (2, 1)
    assert (claim.n_relevant_evidence, claim.n_dated_relevant_evidence) == (1, 0)
    figures = {f.name: f for f in build_report_card(run_id, claims, n_boot=50).figures}
    undisclosed = figures["undisclosed_update_share"]
    assert (undisclosed.numerator, undisclosed.denominator, undisclosed.value) == (1, 1, 1.0)
    assert figures["dated_evidence_share"].value == 0.0


def test_recorded_policy_reads_the_policy_a_run_recorded() -> None:
    policy = recorded_policy(
        {"policy": {"min_relevance": 0.5, "strong_relevance": 0.7, "min_coverage": 0.4}}
    )
    assert (policy.min_relevance, policy.strong_relevance, policy.min_coverage) == (0.5, 0.7, 0.4)
    assert policy.label_model is None  # recorded without one: the rules labelled the run
    default = recorded_policy(None)
    assert (default.min_relevance, default.strong_relevance, default.min_coverage) == (
        0.35,
        0.6,
        0.5,
    )
    # a field of the wrong kind, out of range or unknown takes the policy's default
    odd = recorded_policy(
        {"policy": {"threshold": "x", "min_coverage": 7, "unanimous_members": 2.5, "new": 1}}
    )
    assert (odd.threshold, odd.min_coverage, odd.unanimous_members) == (0.5, 0.5, 3)
