"""Lexical retrieval: BM25 over segments, scored for a batch of queries at once.

The index grows by :class:`LexicalSegment` s (``bm25s`` tokenisation, term counts per
chunk); opening computes the BM25 score matrix (documents x vocabulary, CSC) from
corpus-wide statistics, exactly as ``bm25s`` would over all texts at once. Scoring a
batch is one sparse product ``M @ Q.T`` with ``Q`` the queries' token counts, which
is what ``bm25s.BM25.get_scores`` sums, query by query.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from auditor.errors import AuditorError

STOPWORDS = "en"
K1 = 1.5
"""BM25 term-frequency saturation."""
B = 0.75
"""BM25 length normalisation."""
TOKENIZE_BLOCK = 20_000
"""Texts tokenised at once when building a segment (bounds the memory of token lists)."""
SEGMENT_COUNTS = "counts.npz"
SEGMENT_VOCAB = "vocab.json"
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

    A segment stores what tokenising its texts produced (per-document term counts
    over the segment's own vocabulary, and document lengths), not BM25 scores:
    BM25's idf and average document length depend on the whole corpus, so scores
    are computed when the segments are opened together (:meth:`LexicalIndex.from_segments`),
    from corpus-wide statistics. Searching many segments therefore ranks exactly
    like one index built over all their texts.
    """

    def __init__(self, counts: sp.csr_matrix, lengths: NDArray[np.int64], vocab: list[str]) -> None:
        self.counts = counts
        """Term counts, documents x segment vocabulary (float32)."""
        self.lengths = lengths
        """Tokens per document (after stopword removal)."""
        self.vocab = vocab
        """The segment's terms; column ``j`` of :attr:`counts` is ``vocab[j]``."""

    def __len__(self) -> int:
        return int(self.counts.shape[0])

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
        return cls(matrix, np.array(lengths, dtype=np.int64), list(vocab))

    @classmethod
    def merge(cls, segments: Sequence[LexicalSegment]) -> LexicalSegment:
        """One segment holding the documents of ``segments``, in order (no re-tokenising)."""
        vocab: dict[str, int] = {}
        remaps = [
            np.array([vocab.setdefault(t, len(vocab)) for t in seg.vocab], dtype=np.int32)
            for seg in segments
        ]
        rows = [
            sp.csr_matrix(
                (seg.counts.data, cols[seg.counts.indices], seg.counts.indptr),
                shape=(len(seg), len(vocab)),
            )
            for seg, cols in zip(segments, remaps, strict=True)
        ]
        if not rows:
            return cls(sp.csr_matrix((0, 0), dtype=np.float32), np.zeros(0, np.int64), [])
        counts = sp.vstack(rows, format="csr").astype(np.float32)
        lengths = np.concatenate([s.lengths for s in segments]).astype(np.int64)
        return cls(counts, lengths, list(vocab))

    def save(self, folder: Path) -> None:
        """Write the segment into ``folder`` (created): ``counts.npz`` and ``vocab.json``."""
        folder.mkdir(parents=True, exist_ok=True)
        c = self.counts
        with open(folder / SEGMENT_COUNTS, "wb") as fh:
            np.savez(
                fh,
                data=c.data.astype(np.float32),
                indices=c.indices.astype(np.int32),
                indptr=c.indptr.astype(np.int64),
                lengths=self.lengths,
                shape=np.array(c.shape, dtype=np.int64),
            )
        (folder / SEGMENT_VOCAB).write_text(json.dumps(self.vocab, ensure_ascii=False), "utf-8")

    @classmethod
    def load(cls, folder: Path) -> LexicalSegment:
        """Read a segment written by :meth:`save`."""
        try:
            with np.load(folder / SEGMENT_COUNTS) as z:
                shape = tuple(int(x) for x in z["shape"])
                counts = sp.csr_matrix((z["data"], z["indices"], z["indptr"]), shape=shape)
                lengths = z["lengths"].astype(np.int64)
            vocab = json.loads((folder / SEGMENT_VOCAB).read_text("utf-8"))
        except (OSError, ValueError, KeyError) as exc:
            raise AuditorError(f"{folder}: unreadable lexical segment ({exc})") from None
        if len(vocab) != shape[1] or len(lengths) != shape[0]:
            raise AuditorError(f"{folder}: lexical segment files disagree (damaged index)")
        return cls(counts, lengths, vocab)


def bm25_matrix(
    segments: Sequence[LexicalSegment], k1: float = K1, b: float = B
) -> tuple[sp.csc_matrix, dict[str, int]]:
    """BM25 (Lucene variant) scores of every document of ``segments`` for every term.

    Returns the documents x vocabulary matrix (rows in segment order) and the
    vocabulary. idf uses the document frequency summed over all segments and the
    length normalisation uses the average length over all documents, so the
    scores are those of one index built over all the texts (as ``bm25s`` computes
    them: ``idf * tf / (tf + k1 * (1 - b + b * len / avg_len))``,
    ``idf = log(1 + (N - df + 0.5) / (df + 0.5))``).
    """
    merged = LexicalSegment.merge(segments) if len(segments) != 1 else segments[0]
    counts = merged.counts.tocsc()
    n_docs, n_vocab = counts.shape
    df = np.diff(counts.indptr).astype(np.float64)
    idf = np.log(1.0 + (n_docs - df + 0.5) / (df + 0.5)).astype(np.float32)
    avg = float(merged.lengths.sum()) / max(n_docs, 1)
    norm = k1 * ((1.0 - b) + b * merged.lengths.astype(np.float64) / (avg or 1.0))
    tf = counts.data.astype(np.float32)
    rows = counts.indices
    cols = np.repeat(np.arange(n_vocab), np.diff(counts.indptr))
    tfc = tf / (norm[rows] + tf)
    data = (idf[cols].astype(np.float64) * tfc).astype(np.float32)
    matrix = sp.csc_matrix((data, counts.indices, counts.indptr), shape=(n_docs, n_vocab))
    return matrix, {t: i for i, t in enumerate(merged.vocab)}


class LexicalIndex:
    """A BM25 index over chunk texts (row ``i`` = chunk ``i``), searched in batches."""

    def __init__(
        self,
        matrix: sp.csc_matrix | None,
        vocab: dict[str, int],
        n_docs: int,
        stemmer: str | None,
    ) -> None:
        self._matrix = matrix
        self._vocab = vocab
        self.n_docs = n_docs
        self.stemmer = stemmer

    @classmethod
    def from_segments(cls, segments: Sequence[LexicalSegment], stemmer: str | None) -> LexicalIndex:
        """The index over every document of ``segments`` (corpus-wide BM25 statistics)."""
        n_docs = sum(len(s) for s in segments)
        if n_docs == 0:
            return cls(None, {}, 0, stemmer)
        matrix, vocab = bm25_matrix(segments)
        return cls(matrix, vocab, n_docs, stemmer)

    @classmethod
    def build(cls, texts: Sequence[str], stemmer: str | None) -> LexicalIndex:
        """Index ``texts`` with BM25 (Lucene variant, k1=1.5, b=0.75)."""
        return cls.from_segments([LexicalSegment.build(texts, stemmer)], stemmer)

    @classmethod
    def load_bm25s(cls, folder: Path, n_docs: int, stemmer: str | None) -> LexicalIndex:
        """Read the ``bm25s`` index of a format-1 evidence index (one score matrix)."""
        import bm25s

        if n_docs == 0:
            return cls(None, {}, 0, stemmer)
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
        return cls(matrix, dict(retriever.vocab_dict), n_docs, stemmer)

    def query_matrix(self, queries: Sequence[str]) -> sp.csr_matrix:
        """Token counts of the queries over the index vocabulary (unknown tokens dropped)."""
        rows: list[int] = []
        cols: list[int] = []
        for row, tokens in enumerate(tokenize(queries, self.stemmer)):
            ids = [self._vocab[t] for t in tokens if t in self._vocab]
            rows.extend([row] * len(ids))
            cols.extend(ids)
        n_vocab = 0 if self._matrix is None else self._matrix.shape[1]
        data = np.ones(len(rows), dtype=np.float32)
        return sp.csr_matrix((data, (rows, cols)), shape=(len(queries), n_vocab))

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
        if nq == 0 or depth == 0 or self._matrix is None:
            return scores_out, ids_out
        q = self.query_matrix(queries)
        block = max(1, _BLOCK_CELLS // max(self.n_docs, 1))
        for lo in range(0, nq, block):
            dense = np.asarray((self._matrix @ q[lo : lo + block].T).T.toarray(), dtype=np.float32)
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
