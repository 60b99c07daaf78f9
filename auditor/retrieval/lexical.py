"""Lexical retrieval: BM25 over segments, scored for a batch of queries at once.

The index grows by :class:`LexicalSegment` s (``bm25s`` tokenisation, term counts per
chunk), stored per segment as memory-mapped postings (for each term, the chunk rows
holding it and their term counts). Opening reads nothing but the file headers: a search
looks its query terms up in each segment's sorted vocabulary (binary search), sums
their document frequencies over the segments, and scores their postings with
corpus-wide statistics, exactly as ``bm25s`` would over all texts at once (the numbers
and the order in which each chunk's terms are summed are those of the score-matrix
product ``M @ Q.T`` this replaces, so scores are equal to the last bit).

A segment's ``lexical/`` folder holds:

=====================  ==========================================================
``term_ptr.npy``       int64 ``(V + 1,)``: where each term's postings start, then the total
``rows.npy``           int32 ``(P,)``: the chunk row (in the segment) of each posting,
                       ascending within a term
``tf.npy``             float32 ``(P,)``: the term's count in that chunk
``lengths.npy``        int64 ``(C,)``: tokens per chunk (after stopword removal)
``vocab.npy``          the terms, a string column
(+ ``.offsets.npy``)   (:func:`auditor.retrieval.tables.write_strings`), in the order
                       tokenising met them (that order fixes the summation order)
``vocab_sorted.npy``   int32 ``(V,)``: the term columns in sorted term order
=====================  ==========================================================

A segment written before these files has ``counts.npz`` (chunk x term counts) and
``vocab.json``: it is read in full, as before, and scores identically.
"""

from __future__ import annotations

import bisect
import functools
import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from auditor.errors import AuditorError
from auditor.retrieval.tables import load_table, read_strings, write_strings

STOPWORDS = "en"
K1 = 1.5
"""BM25 term-frequency saturation."""
B = 0.75
"""BM25 length normalisation."""
TOKENIZE_BLOCK = 20_000
"""Texts tokenised at once when building a segment (bounds the memory of token lists)."""
OLD_COUNTS = "counts.npz"
"""Term counts as segments written before the postings files store them (read only)."""
OLD_VOCAB = "vocab.json"
TERM_POINTERS = "term_ptr.npy"
POSTING_ROWS = "rows.npy"
POSTING_TF = "tf.npy"
LENGTHS = "lengths.npy"
VOCAB = "vocab"
VOCAB_SORTED = "vocab_sorted.npy"
_BLOCK_CELLS = 16_000_000
"""Largest dense (queries x documents) score block computed at once."""


def available_stemmer() -> str | None:
    """``"snowball-english"`` when PyStemmer is installed, else ``None`` (no stemming)."""
    try:
        import Stemmer  # noqa: F401
    except ImportError:
        return None
    return "snowball-english"


@functools.cache
def _stemmer(name: str | None) -> Any:
    if name is None:
        return None
    if name != "snowball-english":
        raise AuditorError(f"unknown stemmer {name!r} in the index manifest")
    try:
        import Stemmer
    except ImportError:
        raise AuditorError(
            "this index was built with the snowball stemmer; install PyStemmer to search it"
        ) from None
    return Stemmer.Stemmer("english")


def tokenize(texts: Sequence[str], stemmer: str | None) -> list[list[str]]:
    """Lower-cased word tokens without English stopwords, stemmed when asked."""
    import bm25s

    if not texts:
        return []
    tokens = bm25s.tokenize(
        list(texts),
        stopwords=STOPWORDS,
        stemmer=_stemmer(stemmer),
        return_ids=False,
        show_progress=False,
    )
    return [list(t) for t in tokens]


class LexicalSegment:
    """Term counts of one batch of chunks: the unit the lexical index grows by.

    A segment stores what tokenising its texts produced (per-term postings over the
    segment's own vocabulary, and document lengths), not BM25 scores: BM25's idf and
    average document length depend on the whole corpus, so scores are computed at
    search time from corpus-wide statistics (:class:`LexicalIndex`). Searching many
    segments therefore ranks exactly like one index built over all their texts.
    """

    def __init__(
        self,
        term_ptr: NDArray[np.int64],
        rows: NDArray[np.int32],
        tf: NDArray[np.float32],
        lengths: NDArray[np.int64],
        vocab: Sequence[str],
        by_term: NDArray[np.int32] | None = None,
    ) -> None:
        self.term_ptr = term_ptr
        """Where each term's postings start in :attr:`rows` / :attr:`tf`, then the total."""
        self.rows = rows
        """The chunk row of each posting (ascending within a term)."""
        self.tf = tf
        """The term's count in that chunk (float32)."""
        self.lengths = lengths
        """Tokens per document (after stopword removal)."""
        self.vocab = vocab
        """The segment's terms; postings of ``vocab[j]`` are at ``term_ptr[j]:term_ptr[j+1]``."""
        self._by_term = by_term

    def __len__(self) -> int:
        return len(self.lengths)

    @classmethod
    def build(cls, texts: Sequence[str], stemmer: str | None) -> LexicalSegment:
        """Tokenise ``texts`` (one document each) and count their terms."""
        vocab: dict[str, int] = {}
        indptr = [0]
        indices: list[int] = []
        data: list[float] = []
        lengths: list[int] = []
        for tokens in (
            t
            for lo in range(0, len(texts), TOKENIZE_BLOCK)
            for t in tokenize(texts[lo : lo + TOKENIZE_BLOCK], stemmer)
        ):
            counts: dict[int, int] = {}
            for t in tokens:
                col = vocab.setdefault(t, len(vocab))
                counts[col] = counts.get(col, 0) + 1
            indices.extend(counts)
            data.extend(counts.values())
            indptr.append(len(indices))
            lengths.append(len(tokens))
        matrix = sp.csr_matrix(
            (
                np.array(data, dtype=np.float32),
                np.array(indices, dtype=np.int32),
                np.array(indptr, dtype=np.int64),
            ),
            shape=(len(lengths), len(vocab)),
        )
        return cls._from_counts(matrix, np.array(lengths, dtype=np.int64), list(vocab))

    @classmethod
    def _from_counts(
        cls, counts: sp.spmatrix, lengths: NDArray[np.int64], vocab: list[str]
    ) -> LexicalSegment:
        """A segment from its documents x vocabulary count matrix."""
        csc = sp.csc_matrix(counts, dtype=np.float32)
        csc.sort_indices()
        return cls(
            np.asarray(csc.indptr, dtype=np.int64),
            np.asarray(csc.indices, dtype=np.int32),
            np.asarray(csc.data, dtype=np.float32),
            np.asarray(lengths, dtype=np.int64),
            vocab,
        )

    def counts(self) -> sp.csr_matrix:
        """The documents x vocabulary count matrix (float32)."""
        shape = (len(self), len(self.vocab))
        csc = sp.csc_matrix((self.tf, self.rows, self.term_ptr), shape=shape, copy=True)
        return csc.tocsr()

    @classmethod
    def merge(cls, segments: Sequence[LexicalSegment]) -> LexicalSegment:
        """One segment holding the documents of ``segments``, in order (no re-tokenising)."""
        vocab: dict[str, int] = {}
        remaps = [
            np.array([vocab.setdefault(t, len(vocab)) for t in seg.vocab], dtype=np.int32)
            for seg in segments
        ]
        rows = []
        for seg, cols in zip(segments, remaps, strict=True):
            c = seg.counts()
            rows.append(
                sp.csr_matrix((c.data, cols[c.indices], c.indptr), shape=(len(seg), len(vocab)))
            )
        if not rows:
            return cls._from_counts(
                sp.csr_matrix((0, 0), dtype=np.float32), np.zeros(0, np.int64), []
            )
        counts = sp.vstack(rows, format="csr").astype(np.float32)
        lengths = np.concatenate([s.lengths for s in segments]).astype(np.int64)
        return cls._from_counts(counts, lengths, list(vocab))

    def save(self, folder: Path) -> None:
        """Write the segment into ``folder`` (created): its postings, lengths and vocabulary."""
        folder.mkdir(parents=True, exist_ok=True)
        np.save(folder / TERM_POINTERS, np.asarray(self.term_ptr, dtype=np.int64))
        np.save(folder / POSTING_ROWS, np.asarray(self.rows, dtype=np.int32))
        np.save(folder / POSTING_TF, np.asarray(self.tf, dtype=np.float32))
        np.save(folder / LENGTHS, np.asarray(self.lengths, dtype=np.int64))
        write_strings(folder, VOCAB, self.vocab)
        np.save(folder / VOCAB_SORTED, self.by_term())

    @classmethod
    def load(cls, folder: Path) -> LexicalSegment:
        """Read a segment written by :meth:`save` (memory-mapped), or by the code before
        it (``counts.npz`` and ``vocab.json``, read in full)."""
        if (folder / OLD_VOCAB).is_file():
            return cls._load_old(folder)
        term_ptr = load_table(folder / TERM_POINTERS, None, np.int64)
        if term_ptr.ndim != 1 or len(term_ptr) < 1:
            raise AuditorError(f"{folder / TERM_POINTERS}: not a postings table (damaged index)")
        n_terms, n_postings = len(term_ptr) - 1, int(term_ptr[-1])
        vocab = read_strings(folder, VOCAB, n_terms)
        lengths = load_table(folder / LENGTHS, None, np.int64)
        if lengths.ndim != 1:
            raise AuditorError(f"{folder / LENGTHS}: not a lengths table (damaged index)")
        return cls(
            term_ptr,
            load_table(folder / POSTING_ROWS, (n_postings,), np.int32),
            load_table(folder / POSTING_TF, (n_postings,), np.float32),
            lengths,
            vocab,
            load_table(folder / VOCAB_SORTED, (n_terms,), np.int32),
        )

    @classmethod
    def _load_old(cls, folder: Path) -> LexicalSegment:
        try:
            with np.load(folder / OLD_COUNTS) as z:
                shape = tuple(int(x) for x in z["shape"])
                counts = sp.csr_matrix((z["data"], z["indices"], z["indptr"]), shape=shape)
                lengths = z["lengths"].astype(np.int64)
            vocab = json.loads((folder / OLD_VOCAB).read_text("utf-8"))
        except (OSError, ValueError, KeyError) as exc:
            raise AuditorError(f"{folder}: unreadable lexical segment ({exc})") from None
        if len(vocab) != shape[1] or len(lengths) != shape[0]:
            raise AuditorError(f"{folder}: lexical segment files disagree (damaged index)")
        return cls._from_counts(counts, lengths, vocab)

    def by_term(self) -> NDArray[np.int32]:
        """The term columns in sorted term order (for :meth:`column`)."""
        if self._by_term is None:
            terms = list(self.vocab)
            self._by_term = np.array(
                sorted(range(len(terms)), key=terms.__getitem__), dtype=np.int32
            )
        return self._by_term

    def column(self, term: str) -> int:
        """The column of ``term`` in this segment, ``-1`` when it does not occur."""
        order, vocab = self.by_term(), self.vocab
        i = bisect.bisect_left(order, term, key=lambda c: vocab[int(c)])
        if i < len(order) and vocab[int(order[i])] == term:
            return int(order[i])
        return -1


class _Scorer(Protocol):
    def scores(self, queries: Sequence[list[str]]) -> NDArray[np.float32]: ...


class _PostingsScorer:
    """BM25 from the segments' postings, read for the query terms only."""

    def __init__(self, segments: Sequence[LexicalSegment], k1: float, b: float) -> None:
        self.segments = list(segments)
        self.starts = np.cumsum([0, *(len(s) for s in self.segments)]).tolist()
        self.n_docs = self.starts[-1]
        self.k1, self.b = k1, b
        self._avg: float | None = None

    def _average_length(self) -> float:
        if self._avg is None:
            total = sum(int(np.sum(s.lengths, dtype=np.int64)) for s in self.segments)
            self._avg = float(total) / max(self.n_docs, 1)
        return self._avg

    def scores(self, queries: Sequence[list[str]]) -> NDArray[np.float32]:
        """Per query, the BM25 score of every document (0 where no term is shared).

        Each document's terms are summed in the order of the vocabulary one index over
        every segment would have (first segment holding the term, then its column
        there), which is the order of the score-matrix product.
        """
        out = np.zeros((len(queries), self.n_docs), dtype=np.float32)
        terms = sorted({t for q in queries for t in q})
        where = {t: [seg.column(t) for seg in self.segments] for t in terms}
        key = {
            t: next((s, c) for s, c in enumerate(cols) if c >= 0)
            for t, cols in where.items()
            if any(c >= 0 for c in cols)
        }
        known = sorted(key, key=key.__getitem__)
        if not known:
            return out
        df = np.array(
            [
                sum(
                    int(seg.term_ptr[c + 1] - seg.term_ptr[c])
                    for seg, c in zip(self.segments, where[t], strict=True)
                    if c >= 0
                )
                for t in known
            ],
            dtype=np.float64,
        )
        idf = np.log(1.0 + (self.n_docs - df + 0.5) / (df + 0.5)).astype(np.float32)
        avg = self._average_length() or 1.0
        postings = {t: self._postings(where[t], idf[i], avg) for i, t in enumerate(known)}
        for q, tokens in enumerate(queries):
            counts = Counter(t for t in tokens if t in key)
            for t in sorted(counts, key=key.__getitem__):
                rows, values = postings[t]
                out[q, rows] += np.float32(counts[t]) * values
        return out

    def _postings(
        self, cols: list[int], idf: np.float32, avg: float
    ) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
        """A term's chunk rows (global) and BM25 weights ``idf * tf / (tf + k1 * norm)``."""
        rows_parts, weights = [], []
        for seg, start, c in zip(self.segments, self.starts[:-1], cols, strict=True):
            if c < 0:
                continue
            lo, hi = int(seg.term_ptr[c]), int(seg.term_ptr[c + 1])
            local = np.asarray(seg.rows[lo:hi], dtype=np.int64)
            tf = np.asarray(seg.tf[lo:hi], dtype=np.float32)
            lengths = np.asarray(seg.lengths, dtype=np.int64)[local].astype(np.float64)
            norm = self.k1 * ((1.0 - self.b) + self.b * lengths / avg)
            weights.append((np.float64(idf) * (tf / (norm + tf))).astype(np.float32))
            rows_parts.append(local + start)
        return np.concatenate(rows_parts), np.concatenate(weights)


class _MatrixScorer:
    """BM25 from a stored score matrix (the ``bm25s`` index of a format-1 evidence index)."""

    def __init__(self, matrix: sp.csc_matrix, vocab: dict[str, int]) -> None:
        self.matrix = matrix
        self.vocab = vocab

    def scores(self, queries: Sequence[list[str]]) -> NDArray[np.float32]:
        """Per query, the score of every document: ``M @ Q.T`` with ``Q`` the token counts."""
        rows: list[int] = []
        cols: list[int] = []
        for row, tokens in enumerate(queries):
            ids = [self.vocab[t] for t in tokens if t in self.vocab]
            rows.extend([row] * len(ids))
            cols.extend(ids)
        data = np.ones(len(rows), dtype=np.float32)
        q = sp.csr_matrix((data, (rows, cols)), shape=(len(queries), self.matrix.shape[1]))
        return np.asarray((self.matrix @ q.T).T.toarray(), dtype=np.float32)


class LexicalIndex:
    """A BM25 index over chunk texts (row ``i`` = chunk ``i``), searched in batches."""

    def __init__(self, scorer: _Scorer | None, n_docs: int, stemmer: str | None) -> None:
        self._scorer = scorer
        self.n_docs = n_docs
        self.stemmer = stemmer

    @classmethod
    def from_segments(
        cls, segments: Sequence[LexicalSegment], stemmer: str | None, k1: float = K1, b: float = B
    ) -> LexicalIndex:
        """The index over every document of ``segments``: BM25 (Lucene variant) with
        corpus-wide statistics, ``idf * tf / (tf + k1 * (1 - b + b * len / avg_len))``,
        ``idf = log(1 + (N - df + 0.5) / (df + 0.5))``, df summed over the segments and
        the average length over all documents. Nothing is read until a search."""
        n_docs = sum(len(s) for s in segments)
        return cls(_PostingsScorer(segments, k1, b) if n_docs else None, n_docs, stemmer)

    @classmethod
    def build(cls, texts: Sequence[str], stemmer: str | None) -> LexicalIndex:
        """Index ``texts`` with BM25 (Lucene variant, k1=1.5, b=0.75)."""
        return cls.from_segments([LexicalSegment.build(texts, stemmer)], stemmer)

    @classmethod
    def load_bm25s(cls, folder: Path, n_docs: int, stemmer: str | None) -> LexicalIndex:
        """Read the ``bm25s`` index of a format-1 evidence index (one score matrix)."""
        import bm25s

        if n_docs == 0:
            return cls(None, 0, stemmer)
        retriever = bm25s.BM25.load(str(folder))
        s = retriever.scores
        if int(s["num_docs"]) != n_docs:
            raise AuditorError(
                f"lexical index in {folder} has {s['num_docs']} rows, expected {n_docs}"
            )
        matrix = sp.csc_matrix(
            (s["data"], s["indices"], s["indptr"]),
            shape=(int(s["num_docs"]), len(s["indptr"]) - 1),
        )
        return cls(_MatrixScorer(matrix, dict(retriever.vocab_dict)), n_docs, stemmer)

    def search(
        self,
        queries: Sequence[str],
        depth: int,
        mask: NDArray[np.bool_] | None = None,
    ) -> tuple[NDArray[np.float32], NDArray[np.int64]]:
        """Top ``depth`` BM25 scores and chunk rows per query, best first.

        Chunks outside ``mask`` and chunks sharing no term with the query are left
        out; missing places hold score ``-inf`` and row ``-1``.
        """
        nq = len(queries)
        depth = max(0, min(depth, self.n_docs))
        scores_out = np.full((nq, depth), -np.inf, dtype=np.float32)
        ids_out = np.full((nq, depth), -1, dtype=np.int64)
        if nq == 0 or depth == 0 or self._scorer is None:
            return scores_out, ids_out
        tokens = tokenize(queries, self.stemmer)
        block = max(1, _BLOCK_CELLS // max(self.n_docs, 1))
        for lo in range(0, nq, block):
            dense = self._scorer.scores(tokens[lo : lo + block])
            dense[dense <= 0] = -np.inf
            if mask is not None:
                dense[:, ~mask] = -np.inf
            top_scores, top_ids = top_k_rows(dense, depth)
            scores_out[lo : lo + block] = top_scores
            ids_out[lo : lo + block] = np.where(np.isfinite(top_scores), top_ids, -1)
        return scores_out, ids_out


def top_k_rows(
    scores: NDArray[np.float32], k: int
) -> tuple[NDArray[np.float32], NDArray[np.int64]]:
    """Per row, the ``k`` largest scores and their columns, best first (ties: lower column)."""
    n = scores.shape[1]
    k = min(k, n)
    if k == 0:
        return (
            np.zeros((scores.shape[0], 0), dtype=scores.dtype),
            np.zeros((scores.shape[0], 0), dtype=np.int64),
        )
    part = (
        np.argpartition(-scores, k - 1, axis=1)[:, :k]
        if k < n
        else np.tile(np.arange(n), (scores.shape[0], 1))
    )
    part_scores = np.take_along_axis(scores, part, axis=1)
    order = np.lexsort((part, -part_scores), axis=1)
    ids = np.take_along_axis(part, order, axis=1).astype(np.int64)
    return np.take_along_axis(scores, ids, axis=1), ids
