"""Evidence per claim: retrieved chunks (as of a date) plus the answer's own contexts.

Relevance is the MiniLM cosine between the claim and each evidence chunk. It is
comparable across retrieval modes (a fused RRF score is not), so the labelling
step can say "nothing relevant was retrieved". A claim that names nothing itself
("Adults pay £9 to get in") is searched for together with the named subject the
answer was about (:attr:`Claim.topic`, :func:`search_query`), and its relevance is
the larger of the two cosines, the claim alone and the claim with its topic.

Time: each claim is audited as of its answer's ``as_of`` (else the run's default).
Nothing published after that date is used, neither retrieved versions (the index
cuts them off) nor the answer's own contexts (dropped here). A retrieved version
superseded at that date goes to ``superseded`` only when the date it was
superseded is known (it has a publication date and a ``valid_to`` at or before
as-of); a version replaced by an undated one goes to ``undated_superseded``,
which is never judged and never grounds for ``stale``. A version whose validity
ended with no newer version of its document (withdrawn) goes to ``withdrawn``: it
supports nothing any more, so a claim only it supported becomes ``unknown``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

import numpy as np

from auditor.clock import answer_as_of, utc
from auditor.digest import sha256_text
from auditor.embedding import encode
from auditor.text import content_words, sentences
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
    coverage: Mapping[str, float] = field(default_factory=dict)
    """Share of the claim's content words found in each chunk (per chunk id)."""
    sentence_relevance: Mapping[str, float] = field(default_factory=dict)
    """Best cosine of the claim to one sentence of the chunk, for chunks of several
    sentences."""
    as_of: datetime | None = None
    """The date the claim was audited as of (its answer's, else the run's)."""
    undated_superseded: tuple[Hit, ...] = ()
    """Versions superseded at as-of by an update whose time is undisclosed (not judged)."""
    dropped_inline: int = 0
    """The answer's own contexts left out because they were published after as-of."""
    withdrawn: tuple[Hit, ...] = ()
    """Versions whose validity ended by as-of with no newer version of the document
    (withdrawn): neither current nor superseded, never judged, never grounds for stale."""

    def cosine(self, hit: Hit) -> float:
        """How close the claim is to ``hit``: the larger of its cosine to the whole chunk
        and to the chunk's closest sentence (a claim restating one sentence of a long
        chunk is close to it)."""
        chunk_id = hit.chunk.chunk_id
        return max(self.relevance[chunk_id], self.sentence_relevance.get(chunk_id, -1.0))

    def best(self, hits: Sequence[Hit]) -> float | None:
        values = [self.cosine(h) for h in hits]
        return max(values) if values else None

    @property
    def best_current(self) -> float | None:
        return self.best(self.current)

    @property
    def best_superseded(self) -> float | None:
        return self.best(self.superseded)

    def scores(self, hits: Sequence[Hit]) -> list[tuple[float, float]]:
        """(:meth:`cosine`, coverage) per hit (coverage 1.0 where it was not computed)."""
        return [(self.cosine(h), self.coverage.get(h.chunk.chunk_id, 1.0)) for h in hits]

    @property
    def superseded_margin(self) -> float | None:
        """How much closer (cosine) the claim is to a superseded version than to the current
        version of the same document; None when no document has both among the evidence.

        Sentence cosines are compared where they were computed (a version whose other
        sentences changed is not closer), else chunk cosines."""
        rel = self.sentence_relevance or self.relevance
        current: dict[str, float] = {}
        for h in self.current:
            value = rel.get(h.chunk.chunk_id, self.relevance[h.chunk.chunk_id])
            current[h.document.doc_id] = max(value, current.get(h.document.doc_id, value))
        margins = [
            rel.get(h.chunk.chunk_id, self.relevance[h.chunk.chunk_id]) - current[h.document.doc_id]
            for h in self.superseded
            if h.document.doc_id in current
        ]
        return max(margins, default=None)


def inline_evidence(answer: Answer, as_of: datetime | None = None) -> list[Hit]:
    """The answer's own contexts as evidence hits (one chunk per context, marked inline).

    With ``as_of``, contexts published after that date are left out (undated ones stay).
    """
    hits = []
    for rank, ctx in enumerate(answer.contexts):
        if not _visible(ctx.published_at, as_of):
            continue
        digest = sha256_text(ctx.text)
        doc_id = f"inline:{answer.id}:{ctx.id}"
        version = DocumentVersion(
            doc_id=doc_id,
            version="inline",
            text=ctx.text,
            digest=digest,
            source=ctx.source,
            published_at=ctx.published_at,
        )
        chunk = Chunk(
            chunk_id=f"{digest[:24]}:0:{len(ctx.text)}",
            doc_id=doc_id,
            version="inline",
            digest=digest,
            start=0,
            end=len(ctx.text),
            text=ctx.text,
        )
        hits.append(Hit(chunk=chunk, document=version, score=1.0, rank=rank, inline=True))
    return hits


def search_query(claim: Claim) -> str:
    """What retrieval searches for: the claim, and the named subject of the answer when
    the claim names nothing itself (:attr:`Claim.topic`)."""
    return claim.text if not claim.topic else f"{claim.text} ({claim.topic})"


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
    when = {i: answer_as_of(answers[claims[i].answer_id].as_of, default_as_of) for i in factual}
    by_date: dict[datetime | None, list[int]] = {}
    for i in factual:
        by_date.setdefault(when[i], []).append(i)
    retrieved: dict[int, list[Hit]] = {}
    for as_of, indices in by_date.items():
        results = search([search_query(claims[i]) for i in indices], k, as_of)
        retrieved.update(zip(indices, results, strict=True))
    inline = {i: inline_evidence(answers[claims[i].answer_id], when[i]) for i in factual}
    candidates = {i: inline[i] + retrieved[i] for i in factual}
    texts = sorted({h.chunk.text for hits in candidates.values() for h in hits})
    position = {t: j for j, t in enumerate(texts)}
    claim_vecs = encode([claims[i].text for i in factual])
    topical = [row for row, i in enumerate(factual) if claims[i].topic]
    query_vecs = claim_vecs.copy()
    if topical:
        query_vecs[topical] = encode([search_query(claims[factual[row]]) for row in topical])
    text_vecs = encode(texts)
    sims = (
        np.maximum(claim_vecs @ text_vecs.T, query_vecs @ text_vecs.T)
        if texts
        else np.zeros((len(factual), 0))
    )
    for row, i in enumerate(factual):
        hits = candidates[i]
        relevance = {h.chunk.chunk_id: float(sims[row, position[h.chunk.text]]) for h in hits}
        words = content_words(claims[i].text)
        coverage = {
            h.chunk.chunk_id: (
                len(words & content_words(h.chunk.text)) / len(words) if words else 0.0
            )
            for h in hits
        }
        ordered = sorted(hits, key=lambda h: (not h.inline, h.rank))  # retrieval order
        current = tuple(h for h in ordered if not h.superseded)[:n_current]
        withdrawn = tuple(h for h in ordered if h.superseded and not h.document.superseded)
        replaced = [h for h in ordered if h.superseded and h.document.superseded]
        # the old versions of the documents the current evidence comes from first: they
        # are what an update changed ("£30 for non-members" before "£34")
        cited = {h.document.doc_id for h in current}
        old = tuple(
            sorted(
                (h for h in replaced if dated_supersession(h, when[i])),
                key=lambda h: h.document.doc_id not in cited,
            )
        )
        undated = tuple(h for h in replaced if not dated_supersession(h, when[i]))
        n_contexts = len(answers[claims[i].answer_id].contexts)
        evidence[i] = Evidence(
            current=current,
            superseded=old[:n_superseded],
            relevance=relevance,
            coverage=coverage,
            as_of=when[i],
            undated_superseded=undated[:n_superseded],
            dropped_inline=n_contexts - len(inline[i]),
            withdrawn=withdrawn[:n_superseded],
        )
    return _with_sentence_relevance(evidence, factual, claim_vecs, query_vecs)


def _with_sentence_relevance(
    evidence: list[Evidence], factual: Sequence[int], claim_vecs: np.ndarray, query_vecs: np.ndarray
) -> list[Evidence]:
    """Best sentence cosine per chunk of several sentences: what relevance
    (:meth:`Evidence.cosine`) and :attr:`Evidence.superseded_margin` use, so that a claim
    restating one sentence of a long chunk is close to it, and a version whose other
    sentences changed does not look closer or farther because of them. One encoding pass
    for all (the sentences of indexed chunks were encoded at ingest)."""
    owners: list[tuple[int, str]] = []  # (row of the claim in claim_vecs, chunk id)
    texts: list[str] = []
    group: list[int] = []
    for row, i in enumerate(factual):
        ev = evidence[i]
        for h in (*ev.current, *ev.superseded):
            parts = sentences(h.chunk.text)
            if len(parts) > 1:
                group.extend([len(owners)] * len(parts))
                texts.extend(parts)
                owners.append((row, h.chunk.chunk_id))
    if not owners:
        return evidence
    unique, inverse = np.unique(np.array(texts, dtype=object), return_inverse=True)
    sent_vecs = encode(list(unique))[inverse]
    rows = np.array([owners[g][0] for g in group], dtype=np.int64)
    sims = np.maximum(
        np.einsum("ij,ij->i", sent_vecs, claim_vecs[rows]),
        np.einsum("ij,ij->i", sent_vecs, query_vecs[rows]),
    )
    best = np.full(len(owners), -1.0)
    np.maximum.at(best, np.array(group, dtype=np.int64), sims)
    per_claim: dict[int, dict[str, float]] = {}
    for (row, chunk_id), value in zip(owners, best.tolist(), strict=True):
        per_claim.setdefault(row, {})[chunk_id] = value
    out = list(evidence)
    for row, values in per_claim.items():
        i = factual[row]
        out[i] = replace(out[i], sentence_relevance=values)
    return out


def dated_supersession(hit: Hit, as_of: datetime | None) -> bool:
    """True when ``hit``'s version has a publication date and a known end of validity at
    or before ``as_of`` (so "superseded before as-of" is a dated fact, grounds for stale).

    Without an as-of date any known end of validity counts.
    """
    doc = hit.document
    start = doc.published_at if doc.published_at is not None else doc.valid_from
    if start is None or doc.valid_to is None:
        return False
    return as_of is None or utc(doc.valid_to) <= utc(as_of)


def _visible(published_at: datetime | None, as_of: datetime | None) -> bool:
    return published_at is None or as_of is None or utc(published_at) <= utc(as_of)
