"""Rank fusion and batched BM25 scoring against straightforward reference computations."""

from __future__ import annotations

import bm25s
import numpy as np

from auditor.retrieval import rrf_fuse
from auditor.retrieval.lexical import LexicalIndex, tokenize, top_k_rows


def _reference_rrf(lists: list[np.ndarray], k: int, c: float) -> list[list[tuple[int, float]]]:
    out = []
    for q in range(lists[0].shape[0]):
        scores: dict[int, float] = {}
        for ranked in lists:
            for rank, row in enumerate(ranked[q].tolist(), start=1):
                if row >= 0:
                    scores[row] = scores.get(row, 0.0) + 1.0 / (c + rank)
        best = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:k]
        out.append(best)
    return out


def test_rrf_matches_reference() -> None:
    rng = np.random.default_rng(1)
    n, nq, depth = 40, 7, 12
    lists = []
    for _ in range(2):
        rows = np.stack([rng.permutation(n)[:depth] for _ in range(nq)])
        rows[rng.random(rows.shape) < 0.15] = -1  # gaps (filtered / missing candidates)
        lists.append(rows)
    scores, rows = rrf_fuse(lists, 5, 60.0, n)
    ref = _reference_rrf(lists, 5, 60.0)
    for q in range(nq):
        got = [(int(r), float(s)) for r, s in zip(rows[q], scores[q], strict=True) if r >= 0]
        assert [r for r, _ in got] == [r for r, _ in ref[q]]
        np.testing.assert_allclose([s for _, s in got], [s for _, s in ref[q]], rtol=1e-6)


def test_rrf_rewards_agreement() -> None:
    dense = np.array([[0, 1, 2]])
    lexical = np.array([[2, 3, 4]])
    _, rows = rrf_fuse([dense, lexical], 3, 60.0, 5)
    assert rows[0, 0] == 2  # ranked by both retrievers


def test_top_k_rows_orders_and_breaks_ties_by_column() -> None:
    scores = np.array([[0.1, 0.9, 0.5, 0.9], [3.0, -np.inf, 2.0, 1.0]], dtype=np.float32)
    top, ids = top_k_rows(scores, 3)
    assert ids.tolist() == [[1, 3, 2], [0, 2, 3]]
    np.testing.assert_allclose(top, [[0.9, 0.9, 0.5], [3.0, 2.0, 1.0]])


def test_batched_bm25_equals_bm25s_per_query_scores() -> None:
    texts = [
        "The cat sat on the mat.",
        "Dogs chase cats in the park.",
        "A parliament passed the budget law.",
        "The budget of the city park grew.",
        "Nothing relevant here at all.",
    ]
    queries = ["cat park", "budget law parliament", "zebra", "cats dogs dogs"]
    index = LexicalIndex.build(texts, stemmer=None)
    retriever = bm25s.BM25(method="lucene")
    retriever.index(tokenize(texts, None), show_progress=False)
    scores, rows = index.search(queries, depth=5)
    for q, tokens in enumerate(tokenize(queries, None)):
        ref = retriever.get_scores(tokens)
        expected = [i for i in np.argsort(-ref, kind="stable") if ref[i] > 0]
        assert rows[q][rows[q] >= 0].tolist() == expected
        np.testing.assert_allclose(scores[q][: len(expected)], ref[expected], rtol=1e-5)
    assert (rows[2] == -1).all()  # no shared term: no hits


def test_bm25_mask_excludes_rows() -> None:
    texts = ["budget law", "budget plan", "budget"]
    index = LexicalIndex.build(texts, stemmer=None)
    mask = np.array([False, True, True])
    _, rows = index.search(["budget law"], depth=3, mask=mask)
    assert set(rows[0][rows[0] >= 0].tolist()) == {1, 2}
    _, unmasked = index.search(["budget law"], depth=3)
    assert unmasked[0, 0] == 0  # the masked row would otherwise rank first
