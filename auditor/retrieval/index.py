"""The evidence index: versioned documents, dense + lexical retrieval, as-of cutoff.

:func:`ingest` adds document versions (new text for a known id is a new version;
the old one is kept and marked superseded) and publishes a new index generation
atomically; :class:`EvidenceIndex` opens the live generation and searches it in
``dense``, ``lexical`` or ``hybrid`` (reciprocal rank fusion) mode.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from auditor import embedding
from auditor.clock import parse_datetime, utc
from auditor.digest import content_digest
from auditor.errors import AuditorError, InputError
from auditor.judges._text import sentence_spans
from auditor.retrieval import dense, lexical, store
from auditor.retrieval.asof import (
    VersionTimes,
    as_of_masks,
    times_from_stamps,
    valid_to_stamp,
    version_stamps,
    version_times,
    visible_start,
)
from auditor.retrieval.chunking import DEFAULT_MAX_CHARS, chunk_document
from auditor.retrieval.segments import Catalog, write_versions
from auditor.retrieval.tables import (
    TABLES,
    ChunkIds,
    VersionTable,
    chunk_table_rows,
    ids_to_bytes,
    read_tables,
    write_tables,
)
from auditor.types import Chunk, DocumentVersion, Hit

MODES = ("dense", "lexical", "hybrid")
"""Retrieval modes of :meth:`EvidenceIndex.search`."""
DEFAULT_RRF_K = 60.0
"""The constant ``k`` of reciprocal rank fusion: score = sum 1 / (k + rank)."""
DEFAULT_CANDIDATE_DEPTH = 50
"""How many candidates each retriever contributes to hybrid fusion (at least ``k``)."""


@dataclass(frozen=True)
class IngestResult:
    """What an ingest changed, and the corpus after it."""

    added_versions: tuple[DocumentVersion, ...]
    """New versions, with their assigned labels."""
    superseded_versions: tuple[DocumentVersion, ...]
    """Versions this ingest made non-current, as now stored (``valid_to`` updated): the
    previously current version of a document that got a newer one, and new versions
    older than a version already stored or given in the same input."""
    unchanged: tuple[DocumentVersion, ...]
    """Stored versions that input documents repeated unchanged (nothing was added)."""
    chunks: tuple[Chunk, ...]
    """The chunks of the added versions."""
    versions: Sequence[DocumentVersion]
    """Every version in the index after the ingest, in version order (an ingest that
    grows the index reads them from the new generation on first use)."""
    manifest: dict[str, Any] = field(default_factory=dict)
    """The manifest of the index after the ingest."""
    index_dir: Path | None = None
    retimed_versions: tuple[DocumentVersion, ...] = ()
    """Already superseded versions whose derived ``valid_to`` moved because an older
    version was inserted after them (their successor changed)."""
    notes: tuple[str, ...] = ()
    """Things the caller should tell the user (e.g. an ``ivfpq`` index built ``flat``
    because the corpus is still too small to train it)."""

    @property
    def changed(self) -> bool:
        """True when the ingest added or superseded anything."""
        return bool(self.added_versions)


class _Rows:
    """Float32 rows kept in several arrays (one per segment, memory-mapped) and
    addressed as one: an index of many segments reads the rows a search needs, not a
    concatenated copy of every sentence vector."""

    def __init__(self, parts: Sequence[NDArray[np.float32]], dim: int) -> None:
        self.parts = list(parts)
        self.dim = dim
        self.offsets = np.cumsum([0, *(len(p) for p in self.parts)]).astype(np.int64)

    def __len__(self) -> int:
        return int(self.offsets[-1])

    def take(self, rows: NDArray[np.int64]) -> NDArray[np.float32]:
        """The rows at ``rows`` (global numbering), as one array."""
        out = np.empty((len(rows), self.dim), dtype=np.float32)
        part = np.searchsorted(self.offsets, rows, side="right") - 1
        for p in np.unique(part).tolist():
            mask = part == p
            out[mask] = self.parts[p][rows[mask] - self.offsets[p]]
        return out

    def array(self) -> NDArray[np.float32]:
        """Every row, concatenated."""
        if not self.parts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.concatenate([np.asarray(p, np.float32) for p in self.parts])


@dataclass
class _Sentences:
    """Sentence rows of chunks, with their embeddings (the encoder of the chunk vectors).

    Sentences are :func:`auditor.judges._text.sentence_spans` of each chunk's text, the
    split the embedding-similarity judge and the superseded-margin step compare a claim
    with. Only chunks of more than one sentence have rows: a one-sentence chunk's
    sentence is its own text, whose embedding is the chunk vector. Rows are ordered by
    chunk row.
    """

    chunk: NDArray[np.int64]
    """The chunk row of each sentence (ascending)."""
    start: NDArray[np.int64]
    """Start offset of each sentence in its document version's text."""
    end: NDArray[np.int64]
    vectors: NDArray[np.float32] | _Rows
    """One row per sentence (per segment when read from several segments)."""

    def __len__(self) -> int:
        return len(self.chunk)

    def rows(self, rows: NDArray[np.int64]) -> NDArray[np.float32]:
        """The vectors of the sentence rows ``rows``."""
        if isinstance(self.vectors, _Rows):
            return self.vectors.take(rows)
        return np.asarray(self.vectors[rows], dtype=np.float32)

    def array(self) -> NDArray[np.float32]:
        """Every sentence vector, as one array."""
        if isinstance(self.vectors, _Rows):
            return self.vectors.array()
        return np.asarray(self.vectors, dtype=np.float32)


def _no_sentences(dim: int = embedding.EMBEDDING_DIM) -> _Sentences:
    empty = np.zeros(0, dtype=np.int64)
    return _Sentences(empty, empty, empty, np.zeros((0, dim), dtype=np.float32))


def _merge_sentences(parts: Sequence[_Sentences], dim: int) -> _Sentences:
    """One table of ``parts`` (already in their final chunk rows), ordered by chunk row."""
    parts = [p for p in parts if len(p)]
    if not parts:
        return _no_sentences(dim)
    chunk = np.concatenate([p.chunk for p in parts])
    order = np.argsort(chunk, kind="stable")
    return _Sentences(
        chunk[order],
        np.concatenate([p.start for p in parts])[order],
        np.concatenate([p.end for p in parts])[order],
        np.concatenate([p.array().reshape(-1, dim) for p in parts])[order],
    )


@dataclass
class _Split:
    """Sentences of chunks to be embedded: chunk rows, document offsets, texts."""

    chunk: list[int] = field(default_factory=list)
    start: list[int] = field(default_factory=list)
    end: list[int] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)

    def add(self, row: int, text: str, offset: int) -> None:
        """Add the sentences of the chunk at ``row`` (``text`` starting at ``offset`` of
        its document), unless it is one sentence, the chunk text itself."""
        spans = sentence_spans(text)
        if len(spans) == 1 and spans[0] == (0, len(text)):
            return
        for s, e in spans:
            self.chunk.append(row)
            self.start.append(offset + s)
            self.end.append(offset + e)
            self.texts.append(text[s:e])

    def with_vectors(self, vectors: NDArray[np.float32], dim: int) -> _Sentences:
        """The table of these sentences with their ``vectors`` (one row per text)."""
        return _Sentences(
            np.array(self.chunk, dtype=np.int64),
            np.array(self.start, dtype=np.int64),
            np.array(self.end, dtype=np.int64),
            np.ascontiguousarray(vectors, dtype=np.float32).reshape(-1, dim),
        )


@dataclass
class _Corpus:
    """The content of one generation, in memory, in storage order.

    Version rows are in storage order (the order segments added them); ``order``
    lists the storage rows in version order (each document's versions together, by
    date), which is the order :meth:`EvidenceIndex.versions` and the corpus digest use.
    ``versions`` and ``chunk_ids`` read from an index are :class:`VersionTable` and
    :class:`ChunkIds`: a version record is read when it is first asked for.
    """

    versions: Sequence[DocumentVersion]
    chunk_ids: Sequence[str]
    chunk_version: NDArray[np.int64]
    chunk_start: NDArray[np.int64]
    chunk_end: NDArray[np.int64]
    vectors: NDArray[np.float32]
    order: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    segments: list[str] = field(default_factory=list)
    """Segment folders (format 2); empty for a format-1 generation."""
    times: VersionTimes | None = None
    """:func:`version_times` by storage row (``None``: computed from the versions)."""
    sentences: _Sentences = field(default_factory=_no_sentences)
    """The stored sentence rows (of the chunks in ``sentences_known``)."""
    sentences_known: NDArray[np.bool_] = field(default_factory=lambda: np.zeros(0, dtype=np.bool_))
    """Per chunk row: whether its segment stores sentence rows (segments written before
    sentence embeddings were stored do not; their sentences are encoded when needed)."""

    def ordered(self) -> list[DocumentVersion]:
        """The versions in version order."""
        if isinstance(self.versions, VersionTable):
            self.versions.load_all()
        return [self.versions[i] for i in self.order.tolist()]


def _row_times(corpus: _Corpus) -> VersionTimes:
    """:func:`version_times` of the corpus, indexed by storage row."""
    if corpus.times is not None:
        return corpus.times
    t = version_times(corpus.ordered())
    order = corpus.order

    def by_row(a: NDArray[Any]) -> NDArray[Any]:
        out = np.empty_like(a)
        out[order] = a
        return out

    return VersionTimes(
        by_row(t.visible_from),
        by_row(t.valid_to),
        by_row(t.newer_visible_from),
        by_row(t.has_newer),
    )


class EvidenceIndex:
    """A read-only view of the live generation of an evidence index."""

    def __init__(
        self,
        index_dir: Path,
        generation: Path,
        manifest: dict[str, Any],
        corpus: _Corpus,
        dense_index: Any,
        lexical_index: lexical.LexicalIndex,
        *,
        candidate_depth: int = DEFAULT_CANDIDATE_DEPTH,
        rrf_k: float = DEFAULT_RRF_K,
    ) -> None:
        self.index_dir = index_dir
        self.generation = generation
        self.manifest = manifest
        self._corpus = corpus
        self._dense = dense_index
        self._lexical = lexical_index
        self._times = _row_times(corpus)
        rows = np.arange(len(corpus.chunk_ids), dtype=np.int64)
        self._sent_lo = np.searchsorted(corpus.sentences.chunk, rows, side="left")
        self._sent_hi = np.searchsorted(corpus.sentences.chunk, rows, side="right")
        self.candidate_depth = candidate_depth
        self.rrf_k = rrf_k

    # ------------------------------------------------------------------ opening
    @classmethod
    def open(
        cls,
        index_dir: Path | str,
        *,
        ef_search: int | None = None,
        nprobe: int | None = None,
        candidate_depth: int = DEFAULT_CANDIDATE_DEPTH,
        rrf_k: float = DEFAULT_RRF_K,
    ) -> EvidenceIndex:
        """Open the live generation of ``index_dir``.

        Raises :class:`AuditorError` when the folder is not an index, or when it was
        built with another embedding model (name or weights digest) than
        :mod:`auditor.embedding` provides. ``ef_search`` (HNSW) and ``nprobe`` (IVF)
        override the search parameters stored in the manifest.
        """
        index_dir = Path(index_dir)
        _check_positive("candidate_depth", candidate_depth)
        if not isinstance(rrf_k, (int, float)) or isinstance(rrf_k, bool) or rrf_k < 0:
            raise AuditorError(f"rrf_k: expected a number >= 0, got {rrf_k!r}")
        gen = store.require_generation(index_dir)
        manifest = store.read_json(gen / store.MANIFEST)
        check_manifest(manifest, gen)
        corpus = _read_corpus(gen, manifest)
        index_type = manifest["index_type"]
        if index_type == "flat":
            dense_index, _ = dense.build_index(corpus.vectors, "flat", {})
        else:
            dense_index = dense.read_index(gen / store.DENSE)
        overrides: dict[str, int] = {}
        if ef_search is not None:
            overrides["ef_search"] = _check_positive("ef_search", ef_search)
        if nprobe is not None:
            overrides["nprobe"] = _check_positive("nprobe", nprobe)
        dense.set_search_params(dense_index, index_type, overrides)
        stemmer = manifest["lexical"]["stemmer"]
        if corpus.segments:
            lex = lexical.LexicalIndex.from_segments(
                [lexical.LexicalSegment.load(gen / s / store.LEXICAL) for s in corpus.segments],
                stemmer,
            )
        else:
            lex = lexical.LexicalIndex.load_bm25s(
                gen / store.LEXICAL, len(corpus.chunk_ids), stemmer
            )
        if lex.n_docs != len(corpus.chunk_ids):
            raise AuditorError(f"{gen}: lexical index and chunks disagree (damaged index)")
        return cls(
            index_dir,
            gen,
            manifest,
            corpus,
            dense_index,
            lex,
            candidate_depth=candidate_depth,
            rrf_k=float(rrf_k),
        )

    # ------------------------------------------------------------------ content
    def versions(self) -> list[DocumentVersion]:
        """Every document version, in version order."""
        return self._corpus.ordered()

    def __len__(self) -> int:
        return len(self._corpus.chunk_ids)

    def chunk(self, row: int) -> Chunk:
        """The chunk stored at ``row``."""
        c = self._corpus
        doc = c.versions[int(c.chunk_version[row])]
        start, end = int(c.chunk_start[row]), int(c.chunk_end[row])
        return Chunk(
            chunk_id=c.chunk_ids[row],
            doc_id=doc.doc_id,
            version=doc.version,
            digest=doc.digest,
            start=start,
            end=end,
            text=doc.text[start:end],
        )

    def chunks(self) -> list[Chunk]:
        """Every chunk, in storage order."""
        if isinstance(self._corpus.versions, VersionTable):
            self._corpus.versions.load_all()
        return [self.chunk(i) for i in range(len(self))]

    @property
    def stores_sentences(self) -> bool:
        """True when every chunk's sentence embeddings were stored at ingest (an index
        written before they were, or grown from one, encodes them when they are needed;
        ``auditor compact`` adds them)."""
        return bool(self._corpus.sentences_known.all())

    def sentences(self, row: int) -> tuple[list[str], NDArray[np.float32]] | None:
        """The sentences of the chunk at ``row`` (:func:`auditor.judges._text.sentences`
        of its text) and their embeddings stored at ingest, or ``None`` when its segment
        stores none. A one-sentence chunk's sentence is its text, with the chunk vector."""
        c = self._corpus
        if not c.sentences_known[row]:
            return None
        lo, hi = int(self._sent_lo[row]), int(self._sent_hi[row])
        if lo == hi:
            return [self.chunk(row).text], np.asarray(c.vectors[row : row + 1], np.float32)
        text = c.versions[int(c.chunk_version[row])].text
        spans = zip(c.sentences.start[lo:hi].tolist(), c.sentences.end[lo:hi].tolist(), strict=True)
        return [text[s:e] for s, e in spans], c.sentences.rows(np.arange(lo, hi, dtype=np.int64))

    # ------------------------------------------------------------------ search
    def search(
        self,
        queries: Sequence[str],
        k: int = 5,
        *,
        mode: str = "hybrid",
        as_of: datetime | None = None,
    ) -> list[list[Hit]]:
        """The best ``k`` chunks for each query (one list per query, best first).

        ``mode``: ``dense`` (cosine of MiniLM embeddings), ``lexical`` (BM25) or
        ``hybrid`` (reciprocal rank fusion of both; the score is the fused score).
        With ``as_of``, versions not yet visible at that date are never returned and
        hits whose version is superseded at that date have ``superseded=True``.
        All queries are embedded in one batch.
        """
        queries = _check_queries(queries)
        _check_positive("k", k)
        if mode not in MODES:
            raise AuditorError(f"mode: expected one of {', '.join(MODES)}, got {mode!r}")
        as_of = utc(as_of)
        visible_v, superseded_v = as_of_masks(self._times, as_of)
        chunk_mask: NDArray[np.bool_] | None = None
        if not visible_v.all():
            chunk_mask = visible_v[self._corpus.chunk_version]
        if not queries:
            return []
        scores, rows = self._rank(queries, k, mode, chunk_mask)
        return self._hits(scores, rows, superseded_v)

    def _rank(
        self, queries: list[str], k: int, mode: str, mask: NDArray[np.bool_] | None
    ) -> tuple[NDArray[np.float32], NDArray[np.int64]]:
        depth = k if mode != "hybrid" else max(k, self.candidate_depth)
        lists: list[NDArray[np.int64]] = []
        if mode in ("dense", "hybrid"):
            qvec = embedding.encode(queries)
            index_type = self.manifest["index_type"]
            if index_type == "ivfpq":  # PQ scores are approximate: re-score candidates
                _, cand = dense.search(
                    self._dense, index_type, qvec, depth * dense.RERANK_FACTOR, mask
                )
                d_scores, d_rows = dense.rerank(self._corpus.vectors, qvec, cand, depth)
            else:
                d_scores, d_rows = dense.search(self._dense, index_type, qvec, depth, mask)
            if mode == "dense":
                return d_scores, d_rows
            lists.append(d_rows)
        l_scores, l_rows = self._lexical.search(queries, depth, mask)
        if mode == "lexical":
            return l_scores, l_rows
        lists.append(l_rows)
        return rrf_fuse(lists, k, self.rrf_k, len(self))

    def _hits(
        self, scores: NDArray[np.float32], rows: NDArray[np.int64], superseded_v: NDArray[np.bool_]
    ) -> list[list[Hit]]:
        versions = self._corpus.versions
        out: list[list[Hit]] = []
        for q in range(rows.shape[0]):
            hits: list[Hit] = []
            for rank in range(rows.shape[1]):
                row = int(rows[q, rank])
                if row < 0:
                    break
                v = int(self._corpus.chunk_version[row])
                hits.append(
                    Hit(
                        chunk=self.chunk(row),
                        document=versions[v],
                        score=float(scores[q, rank]),
                        rank=rank,
                        superseded=bool(superseded_v[v]),
                    )
                )
            out.append(hits)
        # the chunk vectors stored at ingest: later steps asking for these texts'
        # embeddings (relevance, the embedding-similarity judge) look them up
        seen = {
            int(r): h.chunk.text
            for r, h in zip(
                rows[rows >= 0].tolist(), (h for hits in out for h in hits), strict=True
            )
        }
        if seen:
            embedding.remember(
                list(seen.values()), self._corpus.vectors[np.array(list(seen), dtype=np.int64)]
            )
            self._remember_sentences(list(seen))
        return out

    def _remember_sentences(self, rows: list[int]) -> None:
        """Hand the stored sentence embeddings of the chunks at ``rows`` to the encoder's
        cache (the embedding-similarity judge and the superseded-margin step compare a
        claim with each sentence of a chunk: they look these up, nothing is re-encoded)."""
        c = self._corpus
        texts: list[str] = []
        picked: list[NDArray[np.int64]] = []
        for row in rows:
            lo, hi = int(self._sent_lo[row]), int(self._sent_hi[row])
            if lo < hi:
                text = c.versions[int(c.chunk_version[row])].text
                texts.extend(
                    text[s:e]
                    for s, e in zip(
                        c.sentences.start[lo:hi].tolist(),
                        c.sentences.end[lo:hi].tolist(),
                        strict=True,
                    )
                )
                picked.append(np.arange(lo, hi, dtype=np.int64))
        if texts:
            embedding.remember(texts, c.sentences.rows(np.concatenate(picked)))


def rrf_fuse(
    ranked: Sequence[NDArray[np.int64]],
    k: int,
    rrf_k: float,
    n: int,
    weights: Sequence[float] | None = None,
) -> tuple[NDArray[np.float32], NDArray[np.int64]]:
    """Reciprocal rank fusion of ranked row lists (each ``(n_queries, depth)``, ``-1`` = none).

    The fused score of a row is ``sum_i w_i / (rrf_k + rank_i)`` with 1-based ranks;
    returns the top ``k`` per query, best first (ties: lower row first).
    """
    nq = ranked[0].shape[0]
    weights = [1.0] * len(ranked) if weights is None else list(weights)
    ids = np.concatenate([r.astype(np.int64) for r in ranked], axis=1)
    contrib = np.concatenate(
        [
            np.broadcast_to(w / (rrf_k + np.arange(1, r.shape[1] + 1, dtype=np.float64)), r.shape)
            for r, w in zip(ranked, weights, strict=True)
        ],
        axis=1,
    )
    rows_q = np.broadcast_to(np.arange(nq, dtype=np.int64)[:, None], ids.shape)
    valid = ids >= 0
    keys = rows_q[valid] * max(n, 1) + ids[valid]
    uniq, inverse = np.unique(keys, return_inverse=True)
    fused = np.bincount(inverse, weights=contrib[valid], minlength=len(uniq))
    q_of, row_of = uniq // max(n, 1), uniq % max(n, 1)
    order = np.lexsort((row_of, -fused, q_of))
    q_of, row_of, fused = q_of[order], row_of[order], fused[order]
    first = np.searchsorted(q_of, np.arange(nq))
    place = np.arange(len(q_of)) - first[q_of]
    keep = place < k
    out_rows = np.full((nq, k), -1, dtype=np.int64)
    out_scores = np.full((nq, k), -np.inf, dtype=np.float32)
    out_rows[q_of[keep], place[keep]] = row_of[keep]
    out_scores[q_of[keep], place[keep]] = fused[keep]
    return out_scores, out_rows


# ---------------------------------------------------------------------- ingest
def ingest(
    docs: Sequence[DocumentVersion],
    index_dir: Path | str,
    *,
    index_type: str | None = None,
    on_commit: Callable[[IngestResult], None] | None = None,
    max_chars: int | None = None,
    index_params: dict[str, int] | None = None,
    batch_size: int = 64,
    encoder: Callable[[list[str]], NDArray[np.float32]] | None = None,
    undated_order: str = "error",
    progress: Callable[[int, int], None] | None = None,
) -> IngestResult:
    """Add ``docs`` to the index in ``index_dir`` (created if missing) as one unit.

    Unchanged documents (same text as any stored version of the id, whatever their
    ``version`` label) add nothing; new text for a known id adds a version labelled by
    its ``version`` or ``v1``, ``v2``, ... (a label the id already uses with other text
    is refused). A document's versions are ordered by their dates, never by ingest
    order: the start of a version is its ``valid_from``, else ``published_at``. A new
    version is inserted where its date puts it, in one input or across ingests; the
    version before it gets ``valid_to`` = its start, and it gets ``valid_to`` = the
    start of the version after it (a ``valid_to`` given with the input is kept). Two
    versions of one id with the same date and different text are refused. An undated
    version of a dated document (or a dated version of an undated one) is refused
    unless ``undated_order`` is ``newest`` or ``oldest`` (where undated versions go;
    among themselves they keep ingest order).

    ``index_type`` (``flat``, ``hnsw``, ``ivf``, ``ivfpq``): ``None`` keeps the existing
    index's type (``flat`` for a new index); another type rebuilds the index once
    (all segments merged, as :func:`compact`). ``ivfpq`` needs
    :data:`~auditor.retrieval.dense.IVFPQ_MIN_TRAIN` chunks to train: below that the
    index is built ``flat``, the manifest records ``ivfpq`` as requested, a note says
    so, and the first ingest or compact that reaches the size trains it.

    The index grows by segments: a new version's chunks form a new segment (its
    vectors, chunk spans, versions and BM25 term counts), the segments of the live
    generation are hard-linked into the new one unchanged, and a trained FAISS index
    (hnsw, ivf, ivfpq) gets the new vectors added. The cost is that of the new chunks
    plus reading the version list and copying the FAISS file, not re-indexing the
    corpus. BM25 statistics (idf, average length) are corpus-wide at search time, so
    ranking is identical to one index over everything.
    ``on_commit`` is called with the result once the new generation is completely
    written, before it is made live; if it raises, the previous generation stays
    live and the error propagates. When nothing changed no generation is written
    and ``on_commit`` is still called (the ledger write is idempotent). A crash at
    any point leaves the previous generation usable.

    ``encoder`` replaces :func:`auditor.embedding.encode` (for precomputed MiniLM
    embeddings, e.g. in benchmarks); it must return L2-normalised vectors of the
    model the manifest names. Identical chunk texts are embedded once, longest first in
    blocks (the encoder pads a batch to its longest text, so similar lengths batch
    well); ``progress(done, total)`` is called with the texts embedded so far.

    The sentences of each multi-sentence chunk (the judges' split,
    :func:`auditor.judges._text.sentence_spans`) are embedded in the same pass and
    stored in the segment (``sentences.npy``), so audits look them up instead of
    encoding evidence; a rebuild also embeds those of old segments that lack them.
    """
    index_dir = Path(index_dir)
    docs = _check_docs(docs)
    if index_type is not None:
        index_type = dense.check_index_type(index_type)
    if max_chars is not None:
        _check_positive("max_chars", max_chars)
    _check_positive("batch_size", batch_size)
    if undated_order not in UNDATED_ORDERS:
        raise AuditorError(
            f"undated_order: expected one of {', '.join(UNDATED_ORDERS)}, got {undated_order!r}"
        )
    store.check_writable_dir(index_dir)
    with store.ingest_lock(index_dir):
        old_gen = store.current_generation(index_dir)
        keep = {old_gen.name} if old_gen is not None else set()
        store.remove_leftovers(index_dir, keep)
        old_manifest: dict[str, Any] | None = None
        catalog: Catalog | None = None
        if old_gen is not None:
            old_manifest = store.read_json(old_gen / store.MANIFEST)
            check_manifest(old_manifest, old_gen)
            catalog = Catalog.read(old_gen, old_manifest)
        chunking = (
            old_manifest["chunking"]["max_chars"]
            if old_manifest
            else (max_chars or DEFAULT_MAX_CHARS)
        )
        old_type = old_manifest["index_type"] if old_manifest else None
        want_type = index_type or _requested_type(old_manifest) or "flat"
        plan: _Plan | None = None
        if (
            catalog is not None
            and old_manifest is not None
            and not index_params
            and index_type in (None, old_type)
        ):
            plan = _plan_growth(catalog, docs, undated_order, chunking)
            total = int(old_manifest["chunks"]) + len(plan.new_chunks)
            if want_type != old_type and total >= dense.IVFPQ_MIN_TRAIN:
                plan = None  # a pending ivfpq can now be trained: rebuild once
        if plan is not None:
            added, superseded, unchanged, retimed = (
                plan.added,
                plan.superseded,
                plan.unchanged,
                plan.retimed,
            )
            new_chunks = plan.new_chunks
            all_versions: Sequence[DocumentVersion] = _LazyVersions()
            corpus = _empty_corpus()
        else:
            corpus = (
                _read_corpus(old_gen, old_manifest)
                if old_gen is not None and old_manifest is not None
                else _empty_corpus()
            )
            versions, added, superseded, unchanged, retimed = _reconcile(
                corpus.ordered(), docs, undated_order
            )
            new_chunks = [c for doc in added for c in chunk_document(doc, chunking)]
            all_versions = tuple(versions)
        result = IngestResult(
            added_versions=tuple(added),
            superseded_versions=tuple(superseded),
            unchanged=tuple(unchanged),
            chunks=tuple(new_chunks),
            versions=all_versions,
            manifest=old_manifest or {},
            index_dir=index_dir,
            retimed_versions=tuple(retimed),
        )
        if not added and plan is not None:
            if isinstance(all_versions, _LazyVersions):
                all_versions.at(old_gen, old_manifest)
            if on_commit is not None:
                on_commit(result)
            return result
        temp = store.new_temp_dir(index_dir)
        try:
            split = _split_new(corpus if plan is None else None, new_chunks)
            vectors, sentences = _embed_with_sentences(
                [c.text for c in new_chunks], split, batch_size, encoder, progress
            )
            if plan is not None:
                assert catalog is not None and old_gen is not None and old_manifest is not None
                manifest, notes = _write_growth(
                    temp, catalog, plan, vectors, sentences, old_gen, old_manifest, want_type
                )
            else:
                manifest, notes = _write_generation(
                    temp,
                    _Growth(corpus, list(all_versions), added, new_chunks, vectors, sentences),
                    old_gen,
                    old_manifest,
                    want_type,
                    index_params or {},
                    chunking,
                )
            if isinstance(all_versions, _LazyVersions):
                all_versions.at(temp, manifest)
            result = replace(result, manifest=manifest, notes=notes)
            if on_commit is not None:
                on_commit(result)
            new_gen = store.publish(index_dir, temp)
            if isinstance(all_versions, _LazyVersions):
                all_versions.at(new_gen, manifest)
        except BaseException:
            shutil.rmtree(temp, ignore_errors=True)
            raise
        store.remove_leftovers(index_dir, {new_gen.name, *keep})
        return result


class _LazyVersions(Sequence[DocumentVersion]):
    """Every version of a generation, read from it on first use (growing ingests do
    not hold the whole version list in memory)."""

    def __init__(self) -> None:
        self._where: tuple[Path, dict[str, Any]] | None = None
        self._items: list[DocumentVersion] | None = None

    def at(self, gen: Path | None, manifest: dict[str, Any] | None) -> None:
        """Read from ``gen`` (the generation folder, wherever it is now)."""
        if gen is not None and manifest is not None:
            self._where = (gen, manifest)

    def _load(self) -> list[DocumentVersion]:
        if self._items is None:
            if self._where is None:
                raise AuditorError("the version list is not available yet")
            self._items = read_versions(*self._where)
        return self._items

    def __len__(self) -> int:
        return len(self._load())

    def __getitem__(self, i: Any) -> Any:
        return self._load()[i]

    def __eq__(self, other: object) -> bool:
        return list(self) == list(other) if isinstance(other, Sequence) else NotImplemented

    __hash__ = None  # type: ignore[assignment]


@dataclass
class _Plan:
    """What a growing ingest changes, computed from the documents it touches only."""

    rows: list[int]
    """Catalogue rows loaded (the touched documents' versions), in version order."""
    stored: dict[int, DocumentVersion]
    """Those versions as their segment files hold them."""
    versions: list[DocumentVersion]
    """The touched documents' versions after the ingest, in version order."""
    added: list[DocumentVersion]
    superseded: list[DocumentVersion]
    unchanged: list[DocumentVersion]
    retimed: list[DocumentVersion]
    new_chunks: list[Chunk]


def _plan_growth(
    catalog: Catalog, docs: list[DocumentVersion], undated_order: str, chunking: int
) -> _Plan:
    """Reconcile ``docs`` against the stored versions of the documents they name."""
    sources = {s for s in (_file_source(d) for d in docs) if s is not None}
    rows = catalog.rows_of({d.doc_id for d in docs}, sources)
    position = np.empty(len(catalog), dtype=np.int64)
    position[catalog.order] = np.arange(len(catalog), dtype=np.int64)
    rows.sort(key=lambda r: int(position[r]))
    stored = catalog.records(rows)
    current = [
        replace(stored[r], valid_to=parse_datetime(catalog.valid_to[str(r)]))
        if str(r) in catalog.valid_to
        else stored[r]
        for r in rows
    ]
    has_newer = version_times(current).has_newer.tolist()
    current = [replace(v, superseded=bool(h)) for v, h in zip(current, has_newer, strict=True)]
    versions, added, superseded, unchanged, retimed = _reconcile(current, docs, undated_order)
    new_chunks = [c for doc in added for c in chunk_document(doc, chunking)]
    return _Plan(rows, stored, versions, added, superseded, unchanged, retimed, new_chunks)


def compact(
    index_dir: Path | str,
    *,
    index_type: str | None = None,
    index_params: dict[str, int] | None = None,
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """Merge the segments of the index in ``index_dir`` into one; return ``(manifest, notes)``.

    The content (versions, chunks, their order, the corpus digest) and the search
    results are unchanged; a trained FAISS index (hnsw, ivf, ivfpq) is rebuilt over
    every vector (IVF re-trained on the whole corpus), and ``index_type`` /
    ``index_params`` change it as at ingest. Sentence rows stored at ingest are carried
    over with their chunks; chunks of segments written before they were stored get
    theirs (encoded now). Publishes a new generation atomically, under the ingest lock,
    like :func:`ingest`.
    """
    index_dir = Path(index_dir)
    if index_type is not None:
        index_type = dense.check_index_type(index_type)
    store.require_generation(index_dir)
    with store.ingest_lock(index_dir):
        old_gen = store.require_generation(index_dir)
        store.remove_leftovers(index_dir, {old_gen.name})
        old_manifest = store.read_json(old_gen / store.MANIFEST)
        check_manifest(old_manifest, old_gen)
        corpus = _read_corpus(old_gen, old_manifest)
        want_type = index_type or _requested_type(old_manifest) or old_manifest["index_type"]
        temp = store.new_temp_dir(index_dir)
        try:
            # segments written before sentence embeddings were stored get them now
            _, sentences = _embed_with_sentences([], _split_new(corpus, []), 64, None)
            manifest, notes = _write_generation(
                temp,
                _Growth(corpus, corpus.ordered(), [], [], np.zeros((0, 0), np.float32), sentences),
                old_gen,
                old_manifest,
                want_type,
                index_params or {},
                old_manifest["chunking"]["max_chars"],
            )
            new_gen = store.publish(index_dir, temp)
        except BaseException:
            shutil.rmtree(temp, ignore_errors=True)
            raise
        store.remove_leftovers(index_dir, {new_gen.name})
        return manifest, notes


def _requested_type(manifest: dict[str, Any] | None) -> str | None:
    """The index type asked for but not yet built (``ivfpq`` on a too small corpus)."""
    if manifest is None:
        return None
    requested = manifest.get("index_type_requested")
    return requested if isinstance(requested, str) else manifest.get("index_type")


def _split_new(corpus: _Corpus | None, new_chunks: Sequence[Chunk]) -> _Split:
    """The sentences to embed for a new generation: those of the new chunks (rows after
    ``corpus``'s) and, when the generation is rewritten from ``corpus``, those of its
    chunks whose segment stores none (an index written before sentences were stored)."""
    split = _Split()
    n_old = 0
    if corpus is not None:
        n_old = len(corpus.chunk_ids)
        for row in np.flatnonzero(~corpus.sentences_known[:n_old]).tolist():
            start, end = int(corpus.chunk_start[row]), int(corpus.chunk_end[row])
            text = corpus.versions[int(corpus.chunk_version[row])].text[start:end]
            split.add(row, text, start)
    for i, chunk in enumerate(new_chunks):
        split.add(n_old + i, chunk.text, chunk.start)
    return split


def _embed_with_sentences(
    chunk_texts: list[str],
    split: _Split,
    batch_size: int,
    encoder: Callable[[list[str]], NDArray[np.float32]] | None,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[NDArray[np.float32], _Sentences]:
    """Embed the chunk texts and the sentences of ``split`` in one pass (a text that is
    both, or repeated, is embedded once); return the chunk vectors and the sentences."""
    vectors = _embed(chunk_texts + split.texts, batch_size, encoder, progress)
    dim = int(vectors.shape[1]) if vectors.ndim == 2 else embedding.EMBEDDING_DIM
    return vectors[: len(chunk_texts)], split.with_vectors(vectors[len(chunk_texts) :], dim)


EMBED_BLOCK = 2048
"""Texts per encoder call during ingest (progress is reported after each block)."""


def _embed(
    texts: list[str],
    batch_size: int,
    encoder: Callable[[list[str]], NDArray[np.float32]] | None,
    progress: Callable[[int, int], None] | None = None,
) -> NDArray[np.float32]:
    """Embed ``texts``, each distinct text once, longest first, in blocks."""
    first: dict[str, int] = {}
    inverse = np.array([first.setdefault(t, len(first)) for t in texts], dtype=np.int64)
    unique = list(first)
    order = sorted(range(len(unique)), key=lambda i: -len(unique[i]))
    parts: list[NDArray[np.float32]] = []
    if progress is not None:
        progress(0, len(unique))
    # an encoder may take bigger blocks (the Ray Data encoder takes all texts at once)
    step = max(1, min(int(getattr(encoder, "block_size", EMBED_BLOCK)), len(order) or 1))
    for lo in range(0, len(order), step):
        block = [unique[i] for i in order[lo : lo + step]]
        if encoder is not None:
            out = np.asarray(encoder(block), dtype=np.float32)
        else:
            out = embedding.encode(block, batch_size=batch_size, cache=False)
        if (
            out.ndim != 2
            or out.shape[0] != len(block)
            or (parts and out.shape[1] != parts[0].shape[1])
        ):
            raise AuditorError(f"encoder returned shape {out.shape} for {len(block)} texts")
        parts.append(out)
        if progress is not None:
            progress(lo + len(block), len(unique))
    if not parts:
        return np.zeros((0, embedding.EMBEDDING_DIM), dtype=np.float32)
    vectors = np.empty((len(unique), parts[0].shape[1]), dtype=np.float32)
    vectors[np.array(order, dtype=np.int64)] = np.concatenate(parts)
    return vectors[inverse]


UNDATED_ORDERS = ("error", "newest", "oldest")
"""How an undated version is placed among dated versions of the same document:
``error`` (refuse), ``newest`` (after every dated version) or ``oldest`` (before them)."""


def _start(doc: DocumentVersion) -> datetime | None:
    """When a version took effect: ``valid_from``, else ``published_at`` (``None``: undated)."""
    return doc.valid_from if doc.valid_from is not None else doc.published_at


def _order_key(doc: DocumentVersion, undated_order: str) -> float:
    start = _start(doc)
    if start is None:
        return float("-inf") if undated_order == "oldest" else float("inf")
    return utc(start).timestamp()


def _position(chain: list[DocumentVersion], new: DocumentVersion, undated_order: str) -> int:
    """Where ``new`` goes in its document's date-ordered ``chain`` (never by ingest order).

    Dated versions are ordered by their start (``valid_from``, else ``published_at``);
    two dated versions with the same start and different text cannot be ordered and
    are refused. An undated version among dated ones is refused unless
    ``undated_order`` says where undated versions go; undated versions keep their
    ingest order among themselves (there is nothing else to order them by).
    """
    new_start = _start(new)
    dated = [v for v in chain if _start(v) is not None]
    undated = [v for v in chain if _start(v) is None]
    if undated_order == "error" and (
        (new_start is None and dated) or (new_start is not None and undated)
    ):
        other = dated[0] if new_start is None else undated[0]
        which = (
            "this version is undated but version "
            f"{other.version!r} is dated ({_start(other).isoformat()})"  # type: ignore[union-attr]
            if new_start is None
            else f"this version is dated but version {other.version!r} is undated"
        )
        raise InputError(
            f"document {new.doc_id!r}: {which}, so their order is unknown; give every "
            "version a published_at or valid_from, or say where undated versions go "
            "(--undated-order newest|oldest)",
            field="published_at",
        )
    if new_start is not None:
        for v in dated:
            if _start(v) == new_start:
                raise InputError(
                    f"document {new.doc_id!r}: version {v.version!r} has the same date "
                    f"({new_start.isoformat()}) and different text, so which one is current "
                    "is unknown; give them distinct published_at or valid_from dates",
                    field="published_at",
                )
    key = _order_key(new, undated_order)
    if new_start is None and undated_order == "oldest":
        # after the undated versions already at the start, before the first dated one
        return next((i for i, v in enumerate(chain) if _start(v) is not None), len(chain))
    return next((i for i, v in enumerate(chain) if _order_key(v, undated_order) > key), len(chain))


def _reconcile(
    existing: list[DocumentVersion], docs: list[DocumentVersion], undated_order: str = "error"
) -> tuple[
    list[DocumentVersion],
    list[DocumentVersion],
    list[DocumentVersion],
    list[DocumentVersion],
    list[DocumentVersion],
]:
    """Merge input docs into the version list by date.

    Returns ``(all, added, superseded, unchanged, retimed)``: every version with each
    document's versions contiguous and in date order; the new versions; the versions
    this ingest made non-current (existing or new); versions repeated unchanged; and
    existing, already superseded versions whose ``valid_to`` followed a version
    inserted after them.
    """
    _check_file_identity(existing, docs)
    chains: dict[str, list[DocumentVersion]] = {}
    for v in existing:
        chains.setdefault(v.doc_id, []).append(v)
    latest_before = {doc_id: chain[-1] for doc_id, chain in chains.items()}
    original = {(v.doc_id, v.version): v for v in existing}
    added_keys: list[tuple[str, str]] = []
    unchanged: list[DocumentVersion] = []
    for doc in docs:
        chain = chains.setdefault(doc.doc_id, [])
        same = next((v for v in chain if v.digest == doc.digest), None)
        if same is not None:  # any known version with this text: re-ingesting changes nothing
            if (same.doc_id, same.version) in original:
                unchanged.append(same)
            continue
        labels = {v.version for v in chain}
        label = doc.version
        if label and label in labels:
            raise InputError(
                f"document {doc.doc_id!r}: version {label!r} already exists with different text",
                field="version",
            )
        if not label:
            n = len(chain) + 1
            while f"v{n}" in labels:
                n += 1
            label = f"v{n}"
        new = replace(doc, version=label, superseded=False)
        pos = _position(chain, new, undated_order)
        chain.insert(pos, new)
        _retime(chain, pos)
        added_keys.append((new.doc_id, new.version))
    versions = [v for chain in chains.values() for v in chain]
    by_key = {(v.doc_id, v.version): v for v in versions}
    added = [by_key[k] for k in added_keys]
    superseded: list[DocumentVersion] = []
    retimed: list[DocumentVersion] = []
    for chain in chains.values():
        for v in chain[:-1]:
            key = (v.doc_id, v.version)
            old = original.get(key)
            if old is None or latest_before.get(v.doc_id) is old:
                superseded.append(v)  # new and not the latest, or was the latest before
            elif old != v:
                retimed.append(v)
    return versions, added, superseded, unchanged, retimed


def _file_source(doc: DocumentVersion) -> str | None:
    """The ``file://`` identity of a version loaded from a text file, else ``None``.

    Indexes written before file sources were URIs stored the path as given; such a
    path that names an existing file counts as that file.
    """
    src = doc.source
    if not src:
        return None
    if src.startswith("file://"):
        return src
    if "://" not in src:
        path = Path(src)
        if path.suffix.lower() in (".txt", ".md", ".markdown") and path.is_file():
            return "file://" + path.resolve().as_posix()
    return None


def _check_file_identity(existing: list[DocumentVersion], docs: list[DocumentVersion]) -> None:
    """Refuse a text file that would silently replace another file's document, or be
    stored a second time under another id.

    A file's id comes from its path below a root; two different files can get the
    same id (``teamA/notes.md`` and ``teamB/notes.md`` both ingested from their own
    folder are ``notes.md``), and one file reached through two roots gets two ids.
    Both would corrupt the version history, so both are errors.
    """
    id_sources: dict[str, str] = {}
    source_ids: dict[str, str] = {}
    for v in existing:
        src = _file_source(v)
        if src is not None:
            id_sources.setdefault(v.doc_id, src)
            source_ids.setdefault(src, v.doc_id)
    for doc in docs:
        src = _file_source(doc)
        if src is None or not src.startswith("file://"):
            continue
        known = id_sources.get(doc.doc_id)
        if known is not None and known != src:
            raise InputError(
                f"document id {doc.doc_id!r} already belongs to another file ({known}); "
                f"{src} would silently become a new version of it. Ingest with --root "
                "set to a common folder (ids are paths relative to it) or --id-prefix",
                field="id",
            )
        other = source_ids.get(src)
        if other is not None and other != doc.doc_id:
            raise InputError(
                f"{src} is already stored as document {other!r}; ingesting it as "
                f"{doc.doc_id!r} would store it twice. Use the same root (or --id-prefix) "
                "as when it was first ingested",
                field="id",
            )


def _retime(chain: list[DocumentVersion], pos: int) -> None:
    """Set ``valid_to`` around the version just inserted at ``pos``, and mark supersession.

    A ``valid_to`` given with the input is kept. A derived one (open, or equal to the
    start of the version that followed) follows the new neighbour: the previous
    version now ends where the inserted one starts, and the inserted one ends where
    its successor starts.
    """
    new = chain[pos]
    nxt = chain[pos + 1] if pos + 1 < len(chain) else None
    if nxt is not None:
        chain[pos] = new = _supersede(new, nxt, follows=None)
    if pos > 0:
        chain[pos - 1] = _supersede(
            chain[pos - 1], new, follows=None if nxt is None else _start(nxt)
        )


def _supersede(
    old: DocumentVersion, new: DocumentVersion, *, follows: datetime | None
) -> DocumentVersion:
    """``old`` superseded by ``new``: an open ``valid_to`` (or one equal to ``follows``,
    the start of the version that used to follow ``old``) becomes ``new``'s start."""
    new_start = _start(new)
    old_start = visible_start(old)
    valid_to = old.valid_to
    derived = valid_to is None or (follows is not None and valid_to == follows)
    if derived and new_start is not None and (old_start is None or new_start >= old_start):
        valid_to = new_start
    return replace(old, valid_to=valid_to, superseded=True)


@dataclass
class _Growth:
    """What a new generation is made of: the old corpus and what the ingest adds."""

    corpus: _Corpus
    versions: list[DocumentVersion]
    """Every version after the ingest, in version order."""
    added: list[DocumentVersion]
    new_chunks: list[Chunk]
    new_vectors: NDArray[np.float32]
    sentences: _Sentences = field(default_factory=_no_sentences)
    """Sentence rows embedded for this generation, in its chunk rows: the new chunks'
    and those of old chunks whose segment stored none."""


def _write_generation(
    temp: Path,
    growth: _Growth,
    old_gen: Path | None,
    old_manifest: dict[str, Any] | None,
    index_type: str,
    index_params: dict[str, int],
    max_chars: int,
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """Write a complete one-segment generation into ``temp``; return its manifest and notes.

    For a new index, a rebuild (another index type or parameters, a format-1 index, a
    pending ivfpq that can now train) and :func:`compact`: versions are stored in
    version order, old chunks keep their rows and new ones follow, BM25 term counts
    are merged (format 1: tokenised once), and the dense index is built from scratch.
    """
    corpus, versions, new_chunks = growth.corpus, growth.versions, growth.new_chunks
    generation = int(old_manifest["generation"]) + 1 if old_manifest else 1
    seg_name = f"{store.SEG_PREFIX}{generation:06d}"
    stemmer = old_manifest["lexical"]["stemmer"] if old_manifest else lexical.available_stemmer()
    dim = _dimension(corpus, growth.new_vectors, old_manifest)
    new_vectors = growth.new_vectors.reshape(-1, dim)
    keys = [(v.doc_id, v.version) for v in versions]
    has_newer = version_times(versions).has_newer.tolist()
    notes: list[str] = []
    row_of = {k: i for i, k in enumerate(keys)}
    remap = np.array([row_of[(v.doc_id, v.version)] for v in corpus.versions], dtype=np.int64)
    chunk_ids = [*corpus.chunk_ids, *(c.chunk_id for c in new_chunks)]
    chunk_version = np.concatenate(
        [
            remap[corpus.chunk_version] if len(remap) else corpus.chunk_version,
            np.array([row_of[(c.doc_id, c.version)] for c in new_chunks], dtype=np.int64),
        ]
    )
    starts = np.concatenate(
        [corpus.chunk_start, np.array([c.start for c in new_chunks], dtype=np.int64)]
    )
    ends = np.concatenate([corpus.chunk_end, np.array([c.end for c in new_chunks], dtype=np.int64)])
    old_vectors = corpus.vectors if len(corpus.vectors) else np.zeros((0, dim), np.float32)
    vectors = np.concatenate([old_vectors.reshape(-1, dim), new_vectors]).astype(np.float32)
    new_lex = lexical.LexicalSegment.build([c.text for c in new_chunks], stemmer)
    if corpus.segments and old_gen is not None:
        old_lex = [
            lexical.LexicalSegment.load(old_gen / s / store.LEXICAL) for s in corpus.segments
        ]
    else:  # a format-1 index (or none): tokenise the old texts once
        old_lex = [
            lexical.LexicalSegment.build(
                [
                    corpus.versions[v].text[s:e]
                    for v, s, e in zip(
                        corpus.chunk_version.tolist(),
                        corpus.chunk_start.tolist(),
                        corpus.chunk_end.tolist(),
                        strict=True,
                    )
                ],
                stemmer,
            )
        ]
    lex = lexical.LexicalSegment.merge([*old_lex, new_lex])
    built_type, params = index_type, dict(index_params)
    if index_type == "ivfpq" and len(vectors) < dense.IVFPQ_MIN_TRAIN:
        built_type, params = "flat", {}
        notes.append(
            f"ivfpq needs at least {dense.IVFPQ_MIN_TRAIN} chunks to train and the index "
            f"holds {len(vectors)}: it is flat for now, and the first ingest or "
            "`auditor compact` that brings it to that size trains ivfpq"
        )
    if built_type != "flat":
        dense_index, params = dense.build_index(vectors, built_type, params)
        dense.write_index(dense_index, temp / store.DENSE)
    seg_versions = [
        replace(v, superseded=bool(h)) for v, h in zip(versions, has_newer, strict=True)
    ]
    # old chunks keep their rows, so their stored sentence rows do too
    sentences = _merge_sentences([corpus.sentences, growth.sentences], dim)
    _write_segment(
        temp / seg_name,
        seg_versions,
        chunk_ids,
        chunk_version,
        starts,
        ends,
        vectors,
        lex,
        sentences,
    )
    np.save(temp / store.ORDER, np.arange(len(versions), dtype=np.int64))
    np.save(temp / store.HAS_NEWER, np.array(has_newer, dtype=np.bool_).reshape(len(versions)))
    store.write_json(temp / store.VALID_TO, {})
    manifest = _manifest(
        generation=generation,
        dim=dim,
        built_type=built_type,
        want_type=index_type,
        params=params,
        documents=len({v.doc_id for v in versions}),
        n_versions=len(versions),
        n_chunks=len(chunk_ids),
        segments=[
            {
                "name": seg_name,
                "versions": len(versions),
                "chunks": len(chunk_ids),
                "sentences": len(sentences),
            }
        ],
        max_chars=max_chars,
        stemmer=stemmer,
        corpus_digest=content_digest([[v.doc_id, v.version, v.digest] for v in versions]),
    )
    store.write_json(temp / store.MANIFEST, manifest)
    return manifest, tuple(notes)


def _write_growth(
    temp: Path,
    catalog: Catalog,
    plan: _Plan,
    new_vectors: NDArray[np.float32],
    new_sentences: _Sentences,
    old_gen: Path,
    old_manifest: dict[str, Any],
    want_type: str,
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """Write a generation that links the old segments and adds one; return manifest, notes.

    Work is proportional to the new chunks and the touched documents' versions, plus
    list operations over the catalogue columns (the version order, the corpus
    digest) and the copy of a trained FAISS index.
    """
    generation = int(old_manifest["generation"]) + 1
    seg_name = f"{store.SEG_PREFIX}{generation:06d}"
    stemmer = old_manifest["lexical"]["stemmer"]
    dim = int(old_manifest["dimension"])
    n_old = len(catalog)
    row_of = {(catalog.doc_id[r], catalog.version[r]): r for r in plan.rows}
    for i, v in enumerate(plan.added):
        row_of[(v.doc_id, v.version)] = n_old + i
    # the version order: each touched document's block of rows becomes its new chain
    # (same place); documents new to the index follow, in input order
    chains: dict[str, list[int]] = {}
    for v in plan.versions:
        chains.setdefault(v.doc_id, []).append(row_of[(v.doc_id, v.version)])
    position = np.empty(n_old, dtype=np.int64)
    position[catalog.order] = np.arange(n_old, dtype=np.int64)
    blocks: dict[str, list[int]] = {}
    for r in plan.rows:
        blocks.setdefault(catalog.doc_id[r], []).append(int(position[r]))
    pieces: list[NDArray[np.int64]] = []
    done = 0
    for doc_id, pos in sorted(blocks.items(), key=lambda kv: kv[1][0]):
        lo, hi = pos[0], pos[-1] + 1
        if hi - lo != len(pos):
            raise AuditorError(f"{old_gen}: versions of {doc_id!r} are not contiguous (damaged)")
        pieces += [catalog.order[done:lo], np.array(chains[doc_id], dtype=np.int64)]
        done = hi
    pieces.append(catalog.order[done:])
    pieces += [np.array(rows, dtype=np.int64) for d, rows in chains.items() if d not in blocks]
    order = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int64)
    if len(order) != n_old + len(plan.added):
        raise AuditorError(f"{old_gen}: version order does not add up (damaged index)")
    touched = set(plan.rows)
    valid_to = {k: v for k, v in catalog.valid_to.items() if int(k) not in touched}
    for v in plan.versions:
        r = row_of[(v.doc_id, v.version)]
        if r < n_old and v.valid_to != plan.stored[r].valid_to:
            valid_to[str(r)] = _iso(v.valid_to)
    has_newer = dict(
        zip(
            [(v.doc_id, v.version) for v in plan.versions],
            version_times(plan.versions).has_newer.tolist(),
            strict=True,
        )
    )
    seg_versions = [replace(v, superseded=has_newer[(v.doc_id, v.version)]) for v in plan.added]
    new_chunks = plan.new_chunks
    vectors = np.ascontiguousarray(new_vectors.reshape(-1, dim), dtype=np.float32)
    for name in catalog.segments:
        store.link_tree(old_gen / name, temp / name)
    _write_segment(
        temp / seg_name,
        seg_versions,
        [c.chunk_id for c in new_chunks],
        np.array([row_of[(c.doc_id, c.version)] for c in new_chunks], dtype=np.int64),
        np.array([c.start for c in new_chunks], dtype=np.int64),
        np.array([c.end for c in new_chunks], dtype=np.int64),
        vectors,
        lexical.LexicalSegment.build([c.text for c in new_chunks], stemmer),
        new_sentences,
    )
    np.save(temp / store.ORDER, order)
    store.write_json(temp / store.VALID_TO, valid_to)
    built_type, params = old_manifest["index_type"], dict(old_manifest["index_params"])
    n_chunks = int(old_manifest["chunks"]) + len(new_chunks)
    notes: list[str] = []
    if built_type != want_type:
        notes.append(
            f"{want_type} was requested; the index stays {built_type} until it holds "
            f"{dense.IVFPQ_MIN_TRAIN} chunks to train on (now {n_chunks})"
        )
    if built_type != "flat":
        dense_index = dense.extend_index(dense.read_index(old_gen / store.DENSE), vectors)
        dense.write_index(dense_index, temp / store.DENSE)
    known = {catalog.doc_id[r] for r in plan.rows}
    catalog.extend(seg_versions, [_file_source(v) for v in seg_versions])
    np.save(temp / store.HAS_NEWER, _has_newer(catalog.doc_id, order))
    manifest = _manifest(
        generation=generation,
        dim=dim,
        built_type=built_type,
        want_type=want_type,
        params=params,
        documents=int(old_manifest["documents"]) + len({v.doc_id for v in plan.added} - known),
        n_versions=len(order),
        n_chunks=n_chunks,
        segments=[
            *old_manifest["segments"],
            {
                "name": seg_name,
                "versions": len(seg_versions),
                "chunks": len(new_chunks),
                "sentences": len(new_sentences),
            },
        ],
        max_chars=int(old_manifest["chunking"]["max_chars"]),
        stemmer=stemmer,
        corpus_digest=catalog.corpus_digest(order),
    )
    store.write_json(temp / store.MANIFEST, manifest)
    return manifest, tuple(notes)


def _has_newer(doc_ids: Sequence[str], order: NDArray[np.int64]) -> NDArray[np.bool_]:
    """Per storage row: whether a version of the same document comes later in ``order``
    (:func:`version_times`'s ``has_newer``, from the document ids alone)."""
    out = np.zeros(len(doc_ids), dtype=np.bool_)
    seen: set[str] = set()
    for r in order[::-1].tolist():
        d = doc_ids[r]
        if d in seen:
            out[r] = True
        else:
            seen.add(d)
    return out


def _write_segment(
    folder: Path,
    versions: list[DocumentVersion],
    chunk_ids: Sequence[str],
    chunk_version: NDArray[np.int64],
    starts: NDArray[np.int64],
    ends: NDArray[np.int64],
    vectors: NDArray[np.float32],
    lex: lexical.LexicalSegment,
    sentences: _Sentences,
) -> None:
    """Write one immutable segment: versions (+ catalogue), the binary chunk and version
    tables (:mod:`auditor.retrieval.tables`), vectors, BM25 counts, and the sentence rows
    of its multi-sentence chunks (chunk row in the segment, start and end in the version
    text) with their vectors. Chunk ids that are not 32 hex characters (none that
    :func:`~auditor.retrieval.chunking.chunk_id` makes) keep the ``chunks.jsonl`` form."""
    folder.mkdir()
    offsets = write_versions(folder, versions, [_file_source(v) for v in versions])
    id_bytes = ids_to_bytes(chunk_ids)
    if id_bytes is not None:
        visible, valid_to = version_stamps(versions)
        write_tables(folder, id_bytes, chunk_version, starts, ends, offsets, visible, valid_to)
    else:
        with open(folder / store.CHUNKS, "w", encoding="utf-8") as fh:
            for cid, vrow, s, e in zip(
                chunk_ids, chunk_version.tolist(), starts.tolist(), ends.tolist(), strict=True
            ):
                fh.write(json.dumps({"chunk_id": cid, "v": vrow, "start": s, "end": e}) + "\n")
    np.save(folder / store.VECTORS, np.ascontiguousarray(vectors, dtype=np.float32))
    np.save(
        folder / store.SENTENCE_SPANS,
        np.stack([sentences.chunk, sentences.start, sentences.end], axis=1).astype(np.int64),
    )
    np.save(folder / store.SENTENCES, np.ascontiguousarray(sentences.array(), dtype=np.float32))
    lex.save(folder / store.LEXICAL)


def _manifest(
    *,
    generation: int,
    dim: int,
    built_type: str,
    want_type: str,
    params: dict[str, int],
    documents: int,
    n_versions: int,
    n_chunks: int,
    segments: list[dict[str, Any]],
    max_chars: int,
    stemmer: str | None,
    corpus_digest: str,
) -> dict[str, Any]:
    manifest: dict[str, Any] = {
        "format": store.FORMAT,
        "format_version": store.FORMAT_VERSION,
        "embedding_model": embedding.MODEL_NAME,
        "embedding_digest": embedding.model_digest(),
        "dimension": dim,
        "index_type": built_type,
        "index_params": params,
        "documents": documents,
        "versions": n_versions,
        "chunks": n_chunks,
        "segments": segments,
        "chunking": {"max_chars": max_chars, "method": "sentences"},
        "lexical": {
            "method": "bm25-lucene",
            "k1": lexical.K1,
            "b": lexical.B,
            "statistics": "corpus-wide, from per-segment term counts",
            "stopwords": lexical.STOPWORDS,
            "stemmer": stemmer,
        },
        "generation": generation,
        "created_at": datetime.now(UTC).isoformat(),
        "corpus_digest": corpus_digest,
    }
    if built_type != want_type:
        manifest["index_type_requested"] = want_type
    return manifest


def _dimension(
    corpus: _Corpus, new_vectors: NDArray[np.float32], manifest: dict[str, Any] | None
) -> int:
    if new_vectors.ndim == 2 and len(new_vectors):
        return int(new_vectors.shape[1])
    if manifest is not None:
        return int(manifest["dimension"])
    if corpus.vectors.ndim == 2 and corpus.vectors.shape[1]:
        return int(corpus.vectors.shape[1])
    return embedding.EMBEDDING_DIM


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def segments_without_sentences(manifest: dict[str, Any]) -> int:
    """How many segments of the generation ``manifest`` describes store no sentence
    embeddings (written before they were stored at ingest; a format-1 index counts as
    one): their evidence sentences are encoded at audit time until a compact."""
    if int(manifest.get("format_version", 1)) == 1:
        return 1
    return sum("sentences" not in entry for entry in manifest.get("segments", []))


def segments_without_tables(index_dir: Path, manifest: dict[str, Any]) -> int:
    """How many segments of the current generation of ``index_dir`` have no binary chunk
    and version tables (written before they existed; a format-1 index counts as one):
    opening the index parses their JSON lines in full until a compact."""
    if int(manifest.get("format_version", 1)) == 1:
        return 1
    gen = store.current_generation(index_dir)
    if gen is None:
        return 0
    return sum(not (gen / e["name"] / TABLES).is_file() for e in manifest.get("segments", []))


def check_manifest(manifest: Any, where: Path) -> None:
    """Raise :class:`AuditorError` unless ``manifest`` is ours and matches the model."""
    if not isinstance(manifest, dict) or manifest.get("format") != store.FORMAT:
        raise AuditorError(f"{where}: not an evidence index manifest")
    if manifest.get("format_version") not in store.READABLE_FORMATS:
        raise AuditorError(
            f"{where}: index format version {manifest.get('format_version')!r}"
            f" is not supported (expected one of {store.READABLE_FORMATS})"
        )
    if manifest.get("embedding_model") != embedding.MODEL_NAME:
        raise AuditorError(
            f"{where}: index was built with embedding model "
            f"{manifest.get('embedding_model')!r}, but this installation uses "
            f"{embedding.MODEL_NAME!r}; re-ingest the documents into a new index"
        )
    if manifest.get("embedding_digest") != embedding.model_digest():
        raise AuditorError(
            f"{where}: index was built with different weights of {embedding.MODEL_NAME} "
            f"(digest {str(manifest.get('embedding_digest'))[:12]}..., installed "
            f"{embedding.model_digest()[:12]}...); re-ingest the documents into a new index"
        )


def _empty_corpus() -> _Corpus:
    empty = np.zeros(0, dtype=np.int64)
    return _Corpus([], [], empty, empty, empty, np.zeros((0, 0), dtype=np.float32))


def read_versions(gen: Path, manifest: dict[str, Any]) -> list[DocumentVersion]:
    """Every document version of generation ``gen``, in version order."""
    return _read_corpus(gen, manifest, chunks=False, vectors=False).ordered()


def _read_corpus(
    gen: Path, manifest: dict[str, Any], *, chunks: bool = True, vectors: bool = True
) -> _Corpus:
    """Read a generation (format 1: one set of files; format 2: segments).

    Without ``chunks`` / ``vectors`` only the versions are read (what an ingest that
    adds a segment needs). Segments with binary tables are memory-mapped and their
    version records left on disk until asked for; segments without are parsed.
    """
    fmt1 = int(manifest["format_version"]) == 1
    seg_dirs = [gen] if fmt1 else [gen / s["name"] for s in manifest.get("segments", [])]
    entries: list[dict[str, Any]] = [{}] if fmt1 else list(manifest.get("segments", []))
    dim = int(manifest.get("dimension") or embedding.EMBEDDING_DIM)
    table = VersionTable()
    ids = ChunkIds()
    columns: list[tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]] = []
    visible_parts: list[NDArray[np.float64]] = []
    valid_to_parts: list[NDArray[np.float64]] = []
    parts: list[NDArray[np.float32]] = []
    sentence_parts: list[_Sentences] = []
    known: list[NDArray[np.bool_]] = []
    for folder, entry in zip(seg_dirs, entries, strict=True):
        tables = None if fmt1 else read_tables(folder)
        if tables is not None:
            table.add_records(folder, tables.version_offsets)
            times = np.asarray(tables.version_times, dtype=np.float64)
            visible_parts.append(times[:, 0])
            valid_to_parts.append(times[:, 1])
        else:
            loaded = _parse_versions(folder / store.VERSIONS)
            table.add_loaded(folder, loaded)
            visible, valid_to = version_stamps(loaded)
            visible_parts.append(visible)
            valid_to_parts.append(valid_to)
        first_chunk = len(ids)
        if chunks:
            if tables is not None:
                ids.add(tables.chunk_ids)
                columns.append(chunk_table_rows(tables))
            else:
                seg_ids, seg_columns = _parse_chunks(folder / store.CHUNKS)
                ids.add(seg_ids)
                columns.append(seg_columns)
        if vectors:
            parts.append(np.load(folder / store.VECTORS, mmap_mode="r"))
        if chunks and vectors:
            n_seg = len(ids) - first_chunk
            seg_sentences = _read_sentences(folder, entry, first_chunk, n_seg, dim)
            known.append(np.full(n_seg, seg_sentences is not None, dtype=np.bool_))
            if seg_sentences is not None:
                sentence_parts.append(seg_sentences)
    n = len(table)
    if fmt1:
        order = np.arange(n, dtype=np.int64)
    else:
        order = np.load(gen / store.ORDER).astype(np.int64)
        for row, iso in dict(store.read_json(gen / store.VALID_TO)).items():
            r = int(row)
            if not 0 <= r < n:
                raise AuditorError(f"{gen / store.VALID_TO}: row {row} out of range")
            table.valid_to[r] = parse_datetime(iso)
    if n != manifest["versions"] or not np.array_equal(np.sort(order), np.arange(n)):
        raise AuditorError(f"{gen}: index files disagree with the manifest (damaged index)")
    vrows, starts, ends = (
        np.concatenate([c[k] for c in columns]) if columns else np.zeros(0, dtype=np.int64)
        for k in range(3)
    )
    corpus = _Corpus(
        table,
        ids,
        vrows,
        starts,
        ends,
        np.zeros((0, 0), dtype=np.float32),
        order=order,
        segments=[] if fmt1 else [p.name for p in seg_dirs],
    )
    has_newer = _read_has_newer(gen, n)
    if has_newer is not None:
        visible = np.concatenate(visible_parts) if visible_parts else np.zeros(0)
        valid_to = np.concatenate(valid_to_parts) if valid_to_parts else np.zeros(0)
        for r, when in table.valid_to.items():
            valid_to[r] = valid_to_stamp(when)
        corpus.times = times_from_stamps(visible, valid_to, has_newer, order)
    else:  # written before has_newer.npy: from the versions, as before
        corpus.times = _row_times(corpus)
    table.set_superseded(corpus.times.has_newer)
    if chunks and len(ids) != manifest["chunks"]:
        raise AuditorError(f"{gen}: index files disagree with the manifest (damaged index)")
    if vectors:
        arrays = [np.asarray(a, dtype=np.float32).reshape(-1, dim) for a in parts]
        corpus.vectors = (
            arrays[0]
            if len(arrays) == 1
            else np.concatenate(arrays)
            if arrays
            else np.zeros((0, dim), np.float32)
        )
        if corpus.vectors.shape[0] != manifest["chunks"]:
            raise AuditorError(f"{gen}: index files disagree with the manifest (damaged index)")
    if chunks and vectors:
        corpus.sentences = _join_sentences(sentence_parts, dim)
        corpus.sentences_known = (
            np.concatenate(known) if known else np.zeros(len(ids), dtype=np.bool_)
        )
    return corpus


def _read_has_newer(gen: Path, n: int) -> NDArray[np.bool_] | None:
    """``has_newer.npy`` of a generation (``None`` when it was written before it)."""
    path = gen / store.HAS_NEWER
    if not path.is_file():
        return None
    try:
        arr = np.load(path)
    except (OSError, ValueError) as exc:
        raise AuditorError(f"{path}: cannot read index table ({exc}; damaged index)") from None
    if arr.shape != (n,) or arr.dtype != np.bool_:
        raise AuditorError(
            f"{path}: expected bool ({n},), found {arr.dtype.name} {arr.shape} (damaged index)"
        )
    return np.asarray(arr, dtype=np.bool_)


def _parse_versions(path: Path) -> list[DocumentVersion]:
    """Every record of a ``versions.jsonl``."""
    with open(path, encoding="utf-8") as fh:
        return [store.record_to_version(json.loads(line)) for line in fh]


def _parse_chunks(
    path: Path,
) -> tuple[list[str], tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]]:
    """The ids and (version row, start, end) columns of a ``chunks.jsonl``."""
    ids: list[str] = []
    vrows: list[int] = []
    starts: list[int] = []
    ends: list[int] = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            ids.append(rec["chunk_id"])
            vrows.append(rec["v"])
            starts.append(rec["start"])
            ends.append(rec["end"])
    return ids, (
        np.array(vrows, dtype=np.int64),
        np.array(starts, dtype=np.int64),
        np.array(ends, dtype=np.int64),
    )


def _join_sentences(parts: list[_Sentences], dim: int) -> _Sentences:
    """The sentence rows of consecutive segments (already in global chunk rows, so in
    order) as one table whose vectors stay in their segments' memory-mapped files."""
    if not parts:
        return _no_sentences(dim)
    if len(parts) == 1:
        return parts[0]
    return _Sentences(
        np.concatenate([p.chunk for p in parts]),
        np.concatenate([p.start for p in parts]),
        np.concatenate([p.end for p in parts]),
        _Rows([p.array() if isinstance(p.vectors, _Rows) else p.vectors for p in parts], dim),
    )


def _read_sentences(
    folder: Path, entry: dict[str, Any], first_chunk: int, n_chunks: int, dim: int
) -> _Sentences | None:
    """The sentence rows a segment stores (chunk rows made global by ``first_chunk``), or
    ``None`` for a segment written before sentence embeddings were stored."""
    if "sentences" not in entry:
        return None
    n = entry["sentences"]
    where = folder / store.SENTENCE_SPANS
    try:
        spans = np.load(where, mmap_mode="r")
        where = folder / store.SENTENCES
        vectors = np.load(where, mmap_mode="r")
    except (OSError, ValueError) as exc:
        raise AuditorError(f"{where}: cannot read sentence rows ({exc}; damaged index)") from exc
    damaged = AuditorError(
        f"{folder}: sentence rows disagree with the manifest and chunks (damaged index)"
    )
    if not isinstance(n, int) or spans.shape != (n, 3) or vectors.shape != (n, dim):
        raise damaged
    chunk = np.asarray(spans[:, 0], dtype=np.int64)
    if n and (chunk[0] < 0 or chunk[-1] >= n_chunks or np.any(np.diff(chunk) < 0)):
        raise damaged
    return _Sentences(
        chunk + first_chunk,
        np.asarray(spans[:, 1], dtype=np.int64),
        np.asarray(spans[:, 2], dtype=np.int64),
        vectors,
    )


def _check_docs(docs: Sequence[DocumentVersion]) -> list[DocumentVersion]:
    if isinstance(docs, DocumentVersion) or not isinstance(docs, Sequence):
        raise AuditorError("docs: expected a sequence of DocumentVersion")
    for i, doc in enumerate(docs):
        if not isinstance(doc, DocumentVersion):
            raise AuditorError(f"docs[{i}]: expected a DocumentVersion, got {type(doc).__name__}")
        if not doc.text.strip():
            raise InputError(f"document {doc.doc_id!r} has empty text", field="text")
    return list(docs)


def _check_queries(queries: Sequence[str]) -> list[str]:
    if isinstance(queries, str) or not isinstance(queries, Sequence):
        raise AuditorError(
            f"queries: expected a sequence of strings (a list), not {type(queries).__name__}"
        )
    for i, q in enumerate(queries):
        if not isinstance(q, str):
            raise AuditorError(f"queries[{i}]: expected a string, got {type(q).__name__}")
    return list(queries)


def _check_positive(name: str, value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise AuditorError(f"{name}: expected a positive integer, got {value!r}")
    return value
