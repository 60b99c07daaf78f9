"""Typed records shared by every stage of the audit flow (no I/O, no SQL, no LangGraph)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

Span = tuple[int, int]
"""A half-open character interval ``[start, end)``."""


class Label(StrEnum):
    """The six claim labels of docs/labels.md."""

    SUPPORTED = "supported"
    CONTRADICTED = "contradicted"
    NOT_SUPPORTED = "not_supported"
    UNKNOWN = "unknown"
    STALE = "stale"
    NOT_FACTUAL = "not_factual"


UNSUPPORTED_LABELS: frozenset[Label] = frozenset(
    {Label.CONTRADICTED, Label.NOT_SUPPORTED, Label.STALE}
)
FACTUAL_LABELS: frozenset[Label] = frozenset(Label) - {Label.NOT_FACTUAL}

ABSTAIN = 0.5
"""The vote value of an abstention (docs/stacking.md)."""

# The keys of Vote.scores the label rules read (each judge that finds one reports it).
CONTRADICTION = "contradiction"
"""A reader's probability that the evidence contradicts the claim."""
CONFLICT = "conflict"
"""A number, date, name or role in the claim's slot that the evidence states otherwise."""
MISSING_DETAIL = "missing_detail"
"""A detail of the claim that the evidence about it never states."""
MATCH = "match"
"""Every number of the claim matched in its slot (1.0)."""


@dataclass(frozen=True)
class Context:
    """Evidence the RAG system itself supplied with an answer (inline, cited)."""

    id: str
    text: str
    source: str | None = None
    published_at: datetime | None = None


@dataclass(frozen=True)
class Answer:
    """One RAG answer to audit."""

    id: str
    question: str
    answer: str
    contexts: tuple[Context, ...] = ()
    as_of: datetime | None = None
    origin: Mapping[str, str] = field(default_factory=dict, hash=False)
    """Where the answer came from, kept in the ledger with it: the trace and span ids of
    an imported trace, the format and row of an evaluation data set
    (:mod:`auditor.importers`); empty for answers written by hand."""


@dataclass(frozen=True)
class Claim:
    """An atomic claim with its character span(s) in the answer."""

    id: str
    answer_id: str
    text: str
    spans: tuple[Span, ...]
    factual: bool
    kind: str = "claim"
    """``claim`` for factual claims; else question, opinion, greeting, refusal, ..."""
    topic: str | None = None
    """The named subject the answer was about when it made this claim, for a claim that
    names nothing itself ("Adults pay £9 to get in" in an answer about Kessock Botanic
    Garden); retrieval searches for the claim together with it."""
    cited_sources: tuple[str, ...] = ()
    """The sources the answer cited for this claim: citation markers ("[2]" -> ``"2"``)
    and attributions ("According to the API docs," -> ``"the API docs"``), stripped from
    :attr:`text` (the spans still point at the answer's own words)."""
    subject_unresolved: bool = False
    """The claim's subject is a pronoun whose antecedent is not unambiguous, or missing
    ("Has 40 rooms."): the claim keeps its words, and says what it is about nowhere."""


@dataclass(frozen=True)
class Component:
    """A versioned component (extractor, judge, panel, stacker, index, prompt)."""

    kind: str
    name: str
    version: str
    digest: str
    config: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class DocumentVersion:
    """One version of a document: its text snapshot, digest and timestamps."""

    doc_id: str
    version: str
    text: str
    digest: str
    source: str | None = None
    title: str | None = None
    published_at: datetime | None = None
    retrieved_at: datetime | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    superseded: bool = False
    """True when a newer version of the same document exists in the corpus."""


@dataclass(frozen=True)
class Chunk:
    """A passage of a document version with character offsets into its text."""

    chunk_id: str
    doc_id: str
    version: str
    digest: str
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Hit:
    """A retrieved chunk with its document version, score and rank (0 = best)."""

    chunk: Chunk
    document: DocumentVersion
    score: float
    rank: int
    superseded: bool = False
    """True when the version is superseded at the retrieval's as-of date."""
    inline: bool = False
    """True for evidence supplied with the answer (``contexts``) rather than retrieved."""


@dataclass(frozen=True)
class JudgePair:
    """The input of a judge: one claim and the evidence texts to judge it against."""

    claim: str
    evidence: tuple[str, ...]
    question: str | None = None


@dataclass(frozen=True)
class Vote:
    """A judge's vote: 0 supported, 1 hallucinated/unsupported, 0.5 abstain."""

    judge: str
    value: float
    raw: str = ""
    latency_s: float = 0.0
    error: str | None = None
    scores: Mapping[str, float] = field(default_factory=dict)

    @property
    def abstained(self) -> bool:
        return self.value == ABSTAIN


@dataclass(frozen=True)
class Verdict:
    """The final label of a claim with the figures it was derived from."""

    claim_id: str
    label: Label
    p_hallucinated: float | None
    reason: str
    error_spans: tuple[Span, ...] = ()
