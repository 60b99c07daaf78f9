"""Searching an evidence index: :class:`EvidenceIndex` opens the live generation and
searches it in ``dense``, ``lexical`` or ``hybrid`` (reciprocal rank fusion,
:func:`rrf_fuse`) mode, with an as-of cutoff."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

import auditor.retrieval.dense as dense
import auditor.retrieval.lexical as lexical
import auditor.retrieval.store as store
from auditor import embedding
from auditor.clock import utc
from auditor.errors import AuditorError
from auditor.retrieval._checks import _check_positive, _check_queries
from auditor.retrieval.asof import as_of_masks
from auditor.retrieval.corpus import _Corpus, _row_times
from auditor.retrieval.reader import _read_corpus, check_manifest
from auditor.retrieval.tables import VersionTable
from auditor.types import Chunk, DocumentVersion, Hit

MODES = ("dense", "lexical", "hybrid")
"""Retrieval modes of :meth:`EvidenceIndex.search`."""
DEFAULT_RRF_K = 60.0
"""The constant ``k`` of reciprocal rank fusion: score = sum 1 / (k + rank)."""
DEFAULT_CANDIDATE_DEPTH = 50
"""How many candidates each retriever contributes to hybrid fusion (at least ``k``)."""


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
        # ivfpq candidates are re-scored from the float16 vectors where the segments
        # store them (written since per-segment codes), else from the float32 ones
        self._rescore = corpus.half if corpus.half is not None else corpus.vectors
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
        dense_index = _open_dense(gen, manifest, corpus)
        for rows in (corpus.vectors, corpus.half):  # from now on read row by row
            if rows is not None:
                rows.advise_random()
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
        """The sentences of the chunk at ``row`` (:func:`auditor.text.sentences`
        of its text) and their embeddings stored at ingest, or ``None`` when its segment
        stores none. A one-sentence chunk's sentence is its text, with the chunk vector."""
        c = self._corpus
        if not c.sentences_known[row]:
            return None
        lo, hi = int(self._sent_lo[row]), int(self._sent_hi[row])
        if lo == hi:
            return [self.chunk(row).text], c.vectors.take(np.array([row], dtype=np.int64))
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
                d_scores, d_rows = dense.rerank(self._rescore, qvec, cand, depth)
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
                list(seen.values()), self._corpus.vectors.take(np.array(list(seen), dtype=np.int64))
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


def _open_dense(gen: Path, manifest: dict[str, Any], corpus: _Corpus) -> Any:
    """The FAISS index of generation ``gen``: flat is built from the segments' vectors
    (an exact copy, in row order), ivfpq stored per segment stacks the segments'
    memory-mapped lists under the trained index, anything else is ``dense.faiss``."""
    index_type = manifest["index_type"]
    if index_type == "flat":
        return dense.flat_index(corpus.vectors.parts, corpus.vectors.dim)
    trained_in = manifest.get("dense_trained")
    if trained_in is None:
        return dense.read_index(gen / store.DENSE)
    entries = manifest["segments"]
    return dense.open_lists(
        gen / trained_in / store.IVF_TRAINED,
        [gen / e["name"] / store.IVF_LISTS for e in entries],
        [int(e["chunks"]) for e in entries],
    )


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
