"""Evidence per claim: retrieved chunks (as of a date) plus the answer's own contexts.

Relevance is the MiniLM cosine between the claim and each evidence chunk. It is
comparable across retrieval modes (a fused RRF score is not), so the labelling
step can say "nothing relevant was retrieved".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from auditor.digest import sha256_text
from auditor.embedding import encode
from auditor.types import Answer, Chunk, Claim, DocumentVersion, Hit

SearchFn = Callable[[Sequence[str], int, datetime | None], list[list[Hit]]]
"""``search(queries, k, as_of) -> hits per query``, best first."""


@dataclass(frozen=True)
class Evidence:
    """The evidence gathered for one claim."""

    current: tuple[Hit, ...] = ()
    superseded: tuple[Hit, ...] = ()
    relevance: Mapping[str, float] = field(default_factory=dict)
    """Cosine relevance per chunk id."""

    def best(self, hits: Sequence[Hit]) -> float | None:
        values = [self.relevance[h.chunk.chunk_id] for h in hits]
        return max(values) if values else None

    @property
    def best_current(self) -> float | None:
        return self.best(self.current)

    @property
    def best_superseded(self) -> float | None:
        return self.best(self.superseded)


def inline_evidence(answer: Answer) -> list[Hit]:
    """The answer's own contexts as evidence hits (one chunk per context, marked inline)."""
    hits = []
    for rank, ctx in enumerate(answer.contexts):
        digest = sha256_text(ctx.text)
        doc_id = f"inline:{answer.id}:{ctx.id}"
        version = DocumentVersion(doc_id=doc_id, version="inline", text=ctx.text, digest=digest,
                                  source=ctx.source, published_at=ctx.published_at)
        chunk = Chunk(chunk_id=f"{digest[:24]}:0:{len(ctx.text)}", doc_id=doc_id,
                      version="inline", digest=digest, start=0, end=len(ctx.text),
                      text=ctx.text)
        hits.append(Hit(chunk=chunk, document=version, score=1.0, rank=rank, inline=True))
    return hits


def gather_evidence(
    claims: Sequence[Claim],
    answers: Mapping[str, Answer],
    search: SearchFn,
    *,
    default_as_of: datetime | None,
    k: int = 8,
    n_current: int = 3,
    n_superseded: int = 2,
) -> list[Evidence]:
    """Evidence for every claim (an empty :class:`Evidence` for non-factual claims).

    Queries are batched per as-of date; relevance is computed in one matrix product.
    """
    evidence: list[Evidence] = [Evidence() for _ in claims]
    factual = [i for i, c in enumerate(claims) if c.factual]
    if not factual:
        return evidence
    by_date: dict[datetime | None, list[int]] = {}
    for i in factual:
        answer = answers[claims[i].answer_id]
        by_date.setdefault(answer.as_of or default_as_of, []).append(i)
    retrieved: dict[int, list[Hit]] = {}
    for as_of, indices in by_date.items():
        results = search([claims[i].text for i in indices], k, as_of)
        retrieved.update(zip(indices, results, strict=True))
    candidates = {i: inline_evidence(answers[claims[i].answer_id]) + retrieved[i]
                  for i in factual}
    texts = sorted({h.chunk.text for hits in candidates.values() for h in hits})
    position = {t: j for j, t in enumerate(texts)}
    claim_vecs = encode([claims[i].text for i in factual])
    text_vecs = encode(texts)
    sims = claim_vecs @ text_vecs.T if texts else np.zeros((len(factual), 0))
    for row, i in enumerate(factual):
        hits = candidates[i]
        relevance = {h.chunk.chunk_id: float(sims[row, position[h.chunk.text]]) for h in hits}
        ordered = sorted(hits, key=lambda h: (not h.inline, h.rank))  # retrieval order
        current = tuple(h for h in ordered if not h.superseded)[:n_current]
        old = tuple(h for h in ordered if h.superseded)[:n_superseded]
        evidence[i] = Evidence(current=current, superseded=old, relevance=relevance)
    return evidence
