"""Runs written straight to a ledger for the review application's tests (no model, no
index): claims with evidence passages (sources, superseded versions), judge votes with
raw output, and a hostile run whose every text field tries to inject markup."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from auditor.digest import content_digest, sha256_text
from auditor.types import Chunk, Component, DocumentVersion
from ledger import AnswerResult, ClaimRecord, Ledger, RetrievalRecord, VerdictRecord, VoteRecord

JUDGES = ("bm25_alignment", "numeric_consistency")


@dataclass(frozen=True)
class Passage:
    doc_id: str
    text: str
    source: str | None = None
    superseded: bool = False
    deciding: bool | None = None
    """``retrieval.deciding`` as the label step stores it (None: not stored, an old run)."""


@dataclass(frozen=True)
class Spec:
    answer_id: str
    text: str
    label: str
    p: float | None = 0.3
    reason: str = "synthetic"
    passages: Sequence[Passage] = ()
    votes: Sequence[tuple[str, float, str]] = ()
    error_spans: Sequence[tuple[int, int]] = ()
    """Offsets into the claim text (shifted to the answer when written)."""
    question: str = "What is it?"
    extra: dict[str, str] = field(default_factory=dict)


def claim_id(answer_id: str, text: str) -> str:
    return sha256_text(f"{answer_id}|{text}")


def write_run(
    ledger: Ledger,
    tag: str,
    specs: Sequence[Spec],
    *,
    threshold: float = 0.5,
    as_of: datetime | None = None,
) -> str:
    """Write a complete run of ``specs`` (claims grouped by answer, in order) audited as of
    ``as_of`` (default 2026-06-30); its id."""
    roles = {
        "extractor": Component("extractor", "rules", "1", content_digest(["e", tag]), {}),
        "panel": Component(
            "panel", f"panel-{tag}", "1", content_digest(["p", tag]), {"members": list(JUDGES)}
        ),
        "stacker": Component("stacker", "raim", "1", content_digest(["s", tag]), {}),
    }
    for j in JUDGES:
        roles[f"judge:{j}"] = Component("judge", j, "1", content_digest(["j", j]), {})
    run_id = content_digest(["web-run", tag, [s.text for s in specs]])
    answers: dict[str, list[Spec]] = {}
    for spec in specs:
        answers.setdefault(spec.answer_id, []).append(spec)
    ledger.begin_run(
        run_id,
        kind="audit",
        input_digest=sha256_text(tag),
        as_of=as_of or datetime(2026, 6, 30, tzinfo=UTC),
        config={"policy": {"threshold": threshold}},
        components=roles,
        n_answers=len(answers),
    )
    for seq, (answer_id, rows) in enumerate(answers.items()):
        text = " ".join(r.text for r in rows)
        claims, retrievals, votes, verdicts, versions, chunks = [], [], [], [], [], []
        offset = 0
        for r in rows:
            cid = claim_id(answer_id, r.text)
            claims.append(
                ClaimRecord(
                    cid, r.text, [(offset, offset + len(r.text))], r.label != "not_factual", "claim"
                )
            )
            for rank, p in enumerate(r.passages):
                digest = sha256_text(p.text)
                version = DocumentVersion(
                    doc_id=p.doc_id,
                    version=f"v{digest[:4]}",
                    text=p.text,
                    digest=digest,
                    source=p.source,
                    published_at=datetime(2024, 1, 1 + rank, tzinfo=UTC),
                )
                chunk = Chunk(
                    chunk_id=f"{digest[:16]}:0",
                    doc_id=p.doc_id,
                    version=version.version,
                    digest=digest,
                    start=0,
                    end=len(p.text),
                    text=p.text,
                )
                versions.append(version)
                chunks.append(chunk)
                retrievals.append(
                    RetrievalRecord(
                        cid,
                        rank,
                        chunk.chunk_id,
                        p.doc_id,
                        digest,
                        0.8 - 0.1 * rank,
                        p.superseded,
                        False,
                        r.text,
                        deciding=p.deciding,
                    )
                )
            votes += [
                VoteRecord(
                    cid, roles[f"judge:{j}"].digest, j, v, raw, {"support": 1 - v}, 0.01, None
                )
                for j, v, raw in r.votes
            ]
            verdicts.append(
                VerdictRecord(
                    cid,
                    r.label,
                    r.p,
                    r.reason,
                    [(offset + a, offset + b) for a, b in r.error_spans],
                )
            )
            offset += len(r.text) + 1
        ledger.record_answer(
            run_id,
            AnswerResult(
                answer_id=answer_id,
                question=rows[0].question,
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
    ledger.finish_run(run_id)
    return run_id


def bm25(sentence: str) -> str:
    return json.dumps({"ratio": 0.9, "sentence": sentence})


def review_specs(n_answers: int = 4) -> list[Spec]:
    """Per answer: one claim of each label, probabilities spread around the threshold."""
    out = []
    for i in range(n_answers):
        a = f"ans-{i}"
        fare = f"The fare is {i + 2} dollars."
        truth = f"A single fare costs {i + 3} dollars. Children ride free."
        out += [
            Spec(
                a,
                f"Line {i} opened in 1998.",
                "supported",
                0.2 + 0.01 * i,
                passages=[
                    Passage(
                        f"doc-lines-{i}",
                        f"Intro text. Line {i} opened in 1998. Trains run often.",
                        source=f"https://example.org/l{i}",
                    )
                ],
                votes=[("bm25_alignment", 0.0, bm25(f"Line {i} opened in 1998."))],
            ),
            Spec(
                a,
                fare,
                "contradicted",
                0.55 + 0.01 * i,
                reason="contradicted by current evidence (p=0.55; contradiction 1.00 from "
                "numeric_consistency)",
                passages=[Passage(f"doc-fares-{i}", truth, source="https://example.org/f")],
                votes=[
                    ("numeric_consistency", 1.0, json.dumps({"missing": [i + 2]})),
                    ("bm25_alignment", 0.5, bm25(f"A single fare costs {i + 3} dollars.")),
                ],
                error_spans=[(12, 13)],
            ),
            Spec(
                a,
                f"The depot {i} has 40 trains.",
                "not_supported",
                0.9,
                passages=[Passage(f"doc-depot-{i}", "The depot is large. It is old.")],
            ),
            Spec(
                a,
                f"Station {i} closed in 2001.",
                "stale",
                0.45,
                passages=[
                    Passage(f"doc-st-{i}", f"Station {i} reopened in 2020."),
                    Passage(f"doc-st-{i}", f"News. Station {i} closed in 2001.", superseded=True),
                ],
            ),
            Spec(a, f"The mascot {i} is blue.", "unknown", None, reason="no relevant evidence"),
            Spec(a, "Thanks for asking!", "not_factual", None, reason="not a factual claim"),
        ]
    return out


HOSTILE = "<script>window.__xss=1;alert(1)</script>"
HOSTILE_IMG = '<img src=x onerror="window.__xss=2;alert(2)">'


def hostile_specs() -> list[Spec]:
    """Claims, answers, questions, documents, sources, votes and reasons holding markup."""
    return [
        Spec(
            "a-<b>bold</b>",
            f"The price is 5 dollars {HOSTILE}.",
            "contradicted",
            0.6,
            reason=f"contradicted {HOSTILE_IMG}",
            question=f"Why? {HOSTILE_IMG}",
            passages=[
                Passage(
                    'doc"><svg onload=alert(3)>',
                    f"The price is 7 dollars. {HOSTILE_IMG} Also {HOSTILE}.",
                    source="javascript:alert(4)",
                ),
                Passage(
                    "doc-data",
                    "Plain text passage.",
                    source="data:text/html,<script>alert(5)</script>",
                ),
            ],
            votes=[("bm25_alignment", 1.0, json.dumps({"sentence": HOSTILE, "note": HOSTILE_IMG}))],
            error_spans=[(13, 14)],
        ),
        Spec("a-2", f"{HOSTILE_IMG} is a claim.", "unknown", None, reason=HOSTILE),
    ]
