"""Ledger schema v1: SQLModel tables (the only module that declares SQL tables).

Conventions: content-addressed ids are sha256 hex strings; timestamps are stored
timezone-aware (UTC); JSON columns hold small structured values (spans, scores,
configs). Rows are appended, never updated, except a run's status/finish time.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, DateTime, Index, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

SCHEMA_VERSION = 1


def _ts(nullable: bool = True) -> Any:
    return Field(default=None, sa_column=Column(DateTime(timezone=True), nullable=nullable))


def _json() -> Any:
    return Field(default=None, sa_column=Column(JSON, nullable=True))


def _text(nullable: bool = True) -> Any:
    return Field(default=None, sa_column=Column(Text, nullable=nullable))


class ComponentRow(SQLModel, table=True):
    """A versioned component: extractor, prompt, judge, panel, stacker, index, corpus."""

    __tablename__ = "component"
    digest: str = Field(primary_key=True, max_length=64)
    kind: str = Field(index=True, max_length=32)
    name: str = Field(max_length=200)
    version: str = Field(max_length=100)
    config: Any = _json()
    created_at: datetime | None = _ts()


class DocumentRow(SQLModel, table=True):
    """A document id; its text lives in its versions."""

    __tablename__ = "document"
    doc_id: str = Field(primary_key=True, max_length=500)
    source: str | None = _text()
    title: str | None = _text()
    inline: bool = Field(default=False)
    created_at: datetime | None = _ts()


class DocumentVersionRow(SQLModel, table=True):
    """One snapshot of a document: text, sha256 digest and timestamps."""

    __tablename__ = "document_version"
    __table_args__ = (
        UniqueConstraint("doc_id", "version", name="uq_version_label"),
        # freshness (auditor impact): versions ingested, published or
        # withdrawn within a time window, without a scan
        Index("ix_document_version_created_at", "created_at"),
        Index("ix_document_version_published_at", "published_at"),
        Index("ix_document_version_valid_from", "valid_from"),
        Index("ix_document_version_valid_to", "valid_to"),
    )
    digest: str = Field(primary_key=True, max_length=64)
    doc_id: str = Field(primary_key=True, max_length=500, foreign_key="document.doc_id")
    version: str = Field(max_length=100)
    text: str = _text(nullable=False)
    source: str | None = _text()
    title: str | None = _text()
    published_at: datetime | None = _ts()
    retrieved_at: datetime | None = _ts()
    valid_from: datetime | None = _ts()
    valid_to: datetime | None = _ts()
    created_at: datetime | None = _ts()


class ChunkRow(SQLModel, table=True):
    """A passage of a document version, with character offsets into its text."""

    __tablename__ = "chunk"
    chunk_id: str = Field(primary_key=True, max_length=200)
    doc_id: str = Field(index=True, max_length=500)
    version: str = Field(max_length=100)
    digest: str = Field(index=True, max_length=64)
    start: int
    end: int
    text: str = _text(nullable=False)


class RunRow(SQLModel, table=True):
    """An audit run. Its id is a digest of its input and component versions (idempotent)."""

    __tablename__ = "run"
    run_id: str = Field(primary_key=True, max_length=64)
    kind: str = Field(default="audit", max_length=32)
    status: str = Field(default="running", max_length=16)
    input_digest: str = Field(max_length=64)
    as_of: datetime | None = _ts()
    config: Any = _json()
    n_answers: int = 0
    created_at: datetime | None = _ts()
    finished_at: datetime | None = _ts()


class RunComponentRow(SQLModel, table=True):
    """Which component versions a run used."""

    __tablename__ = "run_component"
    run_id: str = Field(primary_key=True, max_length=64, foreign_key="run.run_id")
    digest: str = Field(primary_key=True, max_length=64, foreign_key="component.digest")
    role: str = Field(max_length=32)


class AnswerRow(SQLModel, table=True):
    """An audited answer within a run."""

    __tablename__ = "answer"
    run_id: str = Field(primary_key=True, max_length=64, foreign_key="run.run_id")
    answer_id: str = Field(primary_key=True, max_length=500)
    question: str | None = _text()
    answer: str = _text(nullable=False)
    answer_digest: str = Field(max_length=64)
    as_of: datetime | None = _ts()
    seq: int = 0
    extraction: Any = _json()
    """Which extractor produced the claims, any fallback and its reason, raw output, usage."""
    created_at: datetime | None = _ts()
    origin: Any = _json()
    """Where the answer came from (an imported trace's trace and span ids); NULL when the
    answer gave none."""


class ClaimRow(SQLModel, table=True):
    """An extracted claim with its answer span(s)."""

    __tablename__ = "claim"
    __table_args__ = (Index("ix_claim_claim_id", "claim_id"),)
    run_id: str = Field(primary_key=True, max_length=64, foreign_key="run.run_id")
    claim_id: str = Field(primary_key=True, max_length=64)
    answer_id: str = Field(max_length=500)
    text: str = _text(nullable=False)
    spans: Any = _json()
    factual: bool
    kind: str = Field(max_length=32)
    extractor_digest: str = Field(max_length=64, foreign_key="component.digest")
    seq: int = 0
    topic: str | None = _text()
    """The named subject of the answer, for a claim that names nothing itself."""


class RetrievalRow(SQLModel, table=True):
    """One evidence chunk retrieved (or supplied inline) for a claim."""

    __tablename__ = "retrieval"
    __table_args__ = (
        # freshness (auditor impact): the claims that cited a document (version)
        Index("ix_retrieval_doc_id_version_digest", "doc_id", "version_digest"),
    )
    run_id: str = Field(primary_key=True, max_length=64)
    claim_id: str = Field(primary_key=True, max_length=64)
    rank: int = Field(primary_key=True)
    chunk_id: str = Field(max_length=200, foreign_key="chunk.chunk_id")
    doc_id: str = Field(max_length=500)
    version_digest: str = Field(max_length=64)
    score: float
    superseded: bool = False
    inline: bool = False
    query: str | None = _text()
    coverage: float | None = None
    sentence_relevance: float | None = None
    deciding: bool | None = None
    """Relevant to the claim by the run's label policy (rule 2), as the label step
    decided it: the evidence the claim's label can rest on. NULL for rows written before
    revision 0009 (readers apply :func:`auditor.decision.stored_deciding` to them)."""


class JudgeVoteRow(SQLModel, table=True):
    """One judge's vote on one claim, with its raw output; bridged versions sit side by side."""

    __tablename__ = "judge_vote"
    run_id: str = Field(primary_key=True, max_length=64)
    claim_id: str = Field(primary_key=True, max_length=64)
    judge_digest: str = Field(primary_key=True, max_length=64, foreign_key="component.digest")
    judge_name: str = Field(max_length=200)
    value: float
    raw: str | None = _text()
    scores: Any = _json()
    latency_s: float = 0.0
    error: str | None = _text()
    created_at: datetime | None = _ts()


class SupersededVoteRow(SQLModel, table=True):
    """One judge's vote on one claim against the claim's *superseded* evidence (older
    versions of the documents it cited), which decides ``stale``; keyed like
    :class:`JudgeVoteRow`."""

    __tablename__ = "superseded_vote"
    run_id: str = Field(primary_key=True, max_length=64)
    claim_id: str = Field(primary_key=True, max_length=64)
    judge_digest: str = Field(primary_key=True, max_length=64, foreign_key="component.digest")
    judge_name: str = Field(max_length=200)
    value: float
    raw: str | None = _text()
    scores: Any = _json()
    latency_s: float = 0.0
    error: str | None = _text()
    created_at: datetime | None = _ts()


class ReaderScoreRow(SQLModel, table=True):
    """The entailment reader's class probabilities for one (evidence window or sentence,
    claim sentence) pair that a run's judging read, keyed by the weights that read it
    (their sha256 and whether they ran dynamically quantised), the pair's digest and the
    token limit it was read at: a re-judge of the run with the same weights finds them
    here instead of running the network again."""

    __tablename__ = "reader_score"
    run_id: str = Field(primary_key=True, max_length=64, foreign_key="run.run_id")
    weights_digest: str = Field(primary_key=True, max_length=64)
    quantized: bool = Field(primary_key=True)
    pair_digest: str = Field(primary_key=True, max_length=32)
    max_length: int = Field(primary_key=True)
    entailment: float
    neutral: float
    contradiction: float


class VerdictRow(SQLModel, table=True):
    """The stacked probability and label of a claim under one panel + stacker version."""

    __tablename__ = "verdict"
    run_id: str = Field(primary_key=True, max_length=64)
    claim_id: str = Field(primary_key=True, max_length=64)
    panel_digest: str = Field(primary_key=True, max_length=64)
    stacker_digest: str = Field(primary_key=True, max_length=64)
    label: str = Field(index=True, max_length=32)
    p_hallucinated: float | None = None
    reason: str | None = _text()
    error_spans: Any = _json()
    created_at: datetime | None = _ts()


class HumanAuditRow(SQLModel, table=True):
    """A reviewer's verdict on a claim: appended, never edited."""

    __tablename__ = "human_audit"
    id: int | None = Field(default=None, primary_key=True)
    run_id: str = Field(index=True, max_length=64)
    claim_id: str = Field(index=True, max_length=64)
    reviewer: str = Field(max_length=200)
    label: str = Field(max_length=32)
    note: str | None = _text()
    created_at: datetime | None = _ts()


class LlmCacheRow(SQLModel, table=True):
    """A cached LLM response keyed on model, prompt digest, parameters and input digest."""

    __tablename__ = "llm_cache"
    key: str = Field(primary_key=True, max_length=64)
    model: str = Field(max_length=200)
    response: str = _text(nullable=False)
    meta: Any = _json()
    created_at: datetime | None = _ts()


class RunLinkRow(SQLModel, table=True):
    """A run derived from another one (``relation``: ``reaudit``), e.g. the same answers
    re-audited as of a later date; ``details`` says what was re-judged and carried."""

    __tablename__ = "run_link"
    run_id: str = Field(primary_key=True, max_length=64, foreign_key="run.run_id")
    parent_run_id: str = Field(
        primary_key=True, max_length=64, foreign_key="run.run_id", index=True
    )
    relation: str = Field(max_length=32)
    details: Any = _json()
    created_at: datetime | None = _ts()


class CarriedVerdictRow(SQLModel, table=True):
    """A claim of a run whose votes and verdict were carried over from another run without
    re-judging (its deciding evidence was unchanged), with the reason."""

    __tablename__ = "carried_verdict"
    run_id: str = Field(primary_key=True, max_length=64, foreign_key="run.run_id")
    claim_id: str = Field(primary_key=True, max_length=64)
    from_run_id: str = Field(max_length=64, foreign_key="run.run_id")
    reason: str = _text(nullable=False)
    created_at: datetime | None = _ts()
