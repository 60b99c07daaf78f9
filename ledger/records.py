"""Plain records the ledger accepts and returns (the ledger never imports ``auditor``).

Inputs that come from the domain (document versions, chunks, components) are
described by Protocols, so the auditor's dataclasses are accepted as they are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol


class DocumentVersionLike(Protocol):
    @property
    def doc_id(self) -> str: ...
    @property
    def version(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def digest(self) -> str: ...
    @property
    def source(self) -> str | None: ...
    @property
    def title(self) -> str | None: ...
    @property
    def published_at(self) -> datetime | None: ...
    @property
    def retrieved_at(self) -> datetime | None: ...
    @property
    def valid_from(self) -> datetime | None: ...
    @property
    def valid_to(self) -> datetime | None: ...


class ChunkLike(Protocol):
    @property
    def chunk_id(self) -> str: ...
    @property
    def doc_id(self) -> str: ...
    @property
    def version(self) -> str: ...
    @property
    def digest(self) -> str: ...
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...
    @property
    def text(self) -> str: ...


class ComponentLike(Protocol):
    @property
    def kind(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def version(self) -> str: ...
    @property
    def digest(self) -> str: ...
    @property
    def config(self) -> Mapping[str, object]: ...


@dataclass(frozen=True)
class ClaimRecord:
    claim_id: str
    text: str
    spans: Sequence[tuple[int, int]]
    factual: bool
    kind: str
    topic: str | None = None


@dataclass(frozen=True)
class RetrievalRecord:
    claim_id: str
    rank: int
    chunk_id: str
    doc_id: str
    version_digest: str
    score: float
    superseded: bool
    inline: bool
    query: str
    coverage: float | None = None
    """Share of the claim's content words in the chunk (None: not computed)."""
    sentence_relevance: float | None = None
    """Best cosine of the claim to one sentence of the chunk (None: not computed)."""
    deciding: bool | None = None
    """Whether the chunk is relevant to the claim by the run's label policy (rule 2,
    :func:`auditor.decision.evidence_relevant`), as the label step decided it; None:
    not recorded (the readers apply the rule to the stored values)."""


@dataclass(frozen=True)
class VoteRecord:
    claim_id: str
    judge_digest: str
    judge_name: str
    value: float
    raw: str
    scores: Mapping[str, float]
    latency_s: float
    error: str | None
    superseded: bool = False
    """Cast against the claim's superseded evidence (stored in ``superseded_vote``)."""


@dataclass(frozen=True)
class VerdictRecord:
    claim_id: str
    label: str
    p_hallucinated: float | None
    reason: str
    error_spans: Sequence[tuple[int, int]] = ()


@dataclass(frozen=True)
class ReaderScoreRecord:
    """The entailment reader's probabilities for one (premise chunk, claim sentence) pair:
    valid only for the weights (``weights_digest``, ``quantized``) and token limit
    (``max_length``) that read it. ``pair_digest``: 32 hex digits over the two texts."""

    weights_digest: str
    quantized: bool
    pair_digest: str
    max_length: int
    entailment: float
    neutral: float
    contradiction: float


@dataclass(frozen=True)
class AnswerResult:
    """Everything one audited answer produced; written in one transaction."""

    answer_id: str
    question: str | None
    answer: str
    answer_digest: str
    as_of: datetime | None
    seq: int
    claims: Sequence[ClaimRecord]
    retrievals: Sequence[RetrievalRecord]
    votes: Sequence[VoteRecord]
    verdicts: Sequence[VerdictRecord]
    evidence_versions: Sequence[DocumentVersionLike] = ()
    evidence_chunks: Sequence[ChunkLike] = ()
    inline_doc_ids: frozenset[str] = frozenset()
    extractor: ComponentLike | None = None
    """The extractor that actually produced the claims (a fallback's, when one happened)."""
    extraction: Mapping[str, Any] = field(default_factory=dict)
    """Fallback reason, notes, raw output and usage of the extraction."""
    reader_scores: Sequence[ReaderScoreRecord] = ()
    """Entailment reader scores the run's judging asked for, written with this answer (a
    batch's scores ride with one of its answers; the rows are keyed by pair, so a pair
    written twice is stored once)."""
    origin: Mapping[str, str] = field(default_factory=dict)
    """Where the answer came from (``Answer.origin``: an imported trace's ids)."""


@dataclass(frozen=True)
class RunInfo:
    run_id: str
    kind: str
    status: str
    input_digest: str
    as_of: datetime | None
    config: Mapping[str, Any]
    n_answers: int
    n_answers_done: int
    created_at: datetime | None
    finished_at: datetime | None
    components: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class ClaimResult:
    """A claim of a run with its current verdict, as read back for reports."""

    run_id: str
    answer_id: str
    claim_id: str
    text: str
    spans: list[tuple[int, int]]
    factual: bool
    kind: str
    label: str | None
    p_hallucinated: float | None
    reason: str | None
    error_spans: list[tuple[int, int]]
    n_evidence: int
    n_inline_evidence: int
    n_superseded_evidence: int
    n_dated_evidence: int
    n_relevant_evidence: int = -1
    """Evidence relevant to the claim (label policy rule 2: ``retrieval.deciding``);
    -1: not computed."""
    n_dated_relevant_evidence: int = -1
    """Relevant evidence with a publication date; -1: not computed."""
    topic: str | None = None
    """The named subject of the answer, for a claim that names nothing itself."""
