"""Lexical retrieval: BM25 (``bm25s`` index) scored for a batch of queries at once.

``bm25s`` builds and persists the BM25 score matrix (documents x vocabulary, CSC).
Scoring a batch is one sparse product ``M @ Q.T`` with ``Q`` the queries' token
counts, which is exactly what ``bm25s.BM25.get_scores`` sums, query by query.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from auditor.errors import AuditorError

STOPWORDS = "en"
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


class LexicalIndex:
    """A BM25 index over chunk texts (row ``i`` = chunk ``i``)."""

    def __init__(self, retriever: Any | None, n_docs: int, stemmer: str | None) -> None:
        self._retriever = retriever
        self.n_docs = n_docs
        self.stemmer = stemmer
        self._matrix: sp.csc_matrix | None = None
        if retriever is not None:
            s = retriever.scores
            self._matrix = sp.csc_matrix(
                (s["data"], s["indices"], s["indptr"]),
                shape=(int(s["num_docs"]), len(s["indptr"]) - 1),
            )
            self._vocab: dict[str, int] = dict(retriever.vocab_dict)

    @classmethod
    def build(cls, texts: Sequence[str], stemmer: str | None) -> LexicalIndex:
        """Index ``texts`` with BM25 (Lucene variant, k1=1.5, b=0.75)."""
        import bm25s

        if not texts:
            return cls(None, 0, stemmer)
        retriever = bm25s.BM25(method="lucene")
        retriever.index(tokenize(texts, stemmer), show_progress=False)
        return cls(retriever, len(texts), stemmer)

    def save(self, folder: Path) -> None:
        """Write the index under ``folder`` (nothing for an empty index)."""
        if self._retriever is not None:
            self._retriever.save(str(folder))

    @classmethod
    def load(cls, folder: Path, n_docs: int, stemmer: str | None) -> LexicalIndex:
        """Read an index written by :meth:`save`."""
        import bm25s

        if n_docs == 0:
            return cls(None, 0, stemmer)
        retriever = bm25s.BM25.load(str(folder))
        if int(retriever.scores["num_docs"]) != n_docs:
            raise AuditorError(
                f"lexical index in {folder} has "
                f"{retriever.scores['num_docs']} rows, expected {n_docs}"
            )
        return cls(retriever, n_docs, stemmer)

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
