"""Dense retrieval: FAISS inner product over L2-normalised MiniLM embeddings.

``flat`` (exact, the default), ``hnsw`` (graph, approximate), ``ivf``
(inverted lists, approximate, trained on the corpus) or ``ivfpq`` (inverted lists
of product-quantised codes: about 50 bytes a chunk instead of 1,536, approximate,
trained; for corpora of millions of chunks). An as-of cutoff is applied
inside the search with a FAISS id selector, so the ``k`` results are ``k``
visible chunks, not ``k`` chunks of which some are then thrown away.

``ivfpq`` is stored per segment (:data:`PER_SEGMENT_TYPES`): the trained, empty index
once (:func:`train_index`), and each segment's inverted lists, its chunks' PQ codes
with their chunk rows as ids (:func:`write_lists`). An ingest encodes its new chunks
only; opening memory-maps every segment's lists and stacks them list by list under
the trained index (:func:`open_lists`), so one FAISS search scans each probed list of
every segment. Candidates are re-scored (:func:`rerank`) from the segments' float16
vectors, memory-mapped.
"""

from __future__ import annotations

import contextlib
import importlib
import math
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from auditor.errors import AuditorError
from auditor.retrieval.corpus import _Rows

INDEX_TYPES = ("flat", "hnsw", "ivf", "ivfpq")
"""The selectable FAISS index types."""
PER_SEGMENT_TYPES = ("ivfpq",)
"""The types stored as one trained index plus inverted lists per segment (the others
keep one ``dense.faiss`` per generation)."""
DEFAULT_PARAMS: dict[str, dict[str, int]] = {
    "flat": {},
    "hnsw": {"M": 32, "ef_construction": 200, "ef_search": 128},
    "ivf": {"nlist": 0, "nprobe": 16},
    "ivfpq": {"nlist": 0, "nprobe": 32, "m": 48, "nbits": 8},
}
"""Default build/search parameters per type (``nlist`` 0 = chosen from corpus size;
``m`` sub-quantisers of ``nbits`` bits: 48 x 8 bits = 48 bytes per 384-d vector)."""
IVFPQ_MIN_TRAIN = 10_000
"""Fewest vectors an ``ivfpq`` index is trained on: each of the ``m`` sub-quantisers
learns 2**nbits = 256 centroids, and k-means wants about 39 points per centroid
(FAISS warns below 9,984). A smaller first ingest builds ``flat`` instead."""
TRAIN_SAMPLE_PER_LIST = 64
"""IVF training uses at most this many vectors per list (a seeded random sample)."""
SINGLE_THREAD_BELOW = 20
"""Batches smaller than this are searched on one OpenMP thread: FAISS does not use BLAS
for them, and spinning OpenMP workers on busy shared cores cost more than they give
(measured: flat single-query p50 40 ms on 2 threads vs 7 ms on 1, 41k vectors)."""


def check_index_type(index_type: str) -> str:
    """Return ``index_type`` lower-cased, or raise naming the allowed types."""
    if not isinstance(index_type, str) or index_type.lower() not in INDEX_TYPES:
        raise AuditorError(
            f"index_type: expected one of {', '.join(INDEX_TYPES)}, got {index_type!r}"
        )
    return index_type.lower()


def ivf_nlist(n: int) -> int:
    """Number of IVF lists for ``n`` vectors: about 4 sqrt(n), at least 39 points per list."""
    return max(1, min(int(4 * math.sqrt(max(n, 1))), n // 39))


def build_index(
    vectors: NDArray[np.float32], index_type: str, params: dict[str, int]
) -> tuple[Any, dict[str, int]]:
    """A FAISS index holding ``vectors`` (row i = chunk i) and the parameters used."""
    index, params = train_index(vectors, index_type, params)
    if len(vectors):
        index.add(np.ascontiguousarray(vectors, dtype=np.float32))
    return index, params


def train_index(
    vectors: NDArray[np.float32], index_type: str, params: dict[str, int]
) -> tuple[Any, dict[str, int]]:
    """An empty FAISS index of ``index_type`` (for ``ivf`` and ``ivfpq`` trained on
    ``vectors``) and the parameters used."""
    faiss = _faiss()
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    dim = vectors.shape[1]
    params = {**DEFAULT_PARAMS[index_type], **params}
    if index_type == "flat":
        index: Any = faiss.IndexFlatIP(dim)
    elif index_type == "hnsw":
        index = faiss.IndexHNSWFlat(dim, int(params["M"]), faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = int(params["ef_construction"])
        index.hnsw.efSearch = int(params["ef_search"])
    elif index_type == "ivf":
        nlist = int(params["nlist"]) or ivf_nlist(len(vectors))
        params["nlist"] = nlist
        quantizer = faiss.IndexFlatIP(dim)
        index = faiss.IndexIVFFlat(quantizer, dim, nlist, faiss.METRIC_INNER_PRODUCT)
        if len(vectors) < nlist:
            raise AuditorError(
                f"ivf index needs at least nlist={nlist} chunks to train, "
                f"got {len(vectors)}; use flat for small corpora"
            )
        index.train(vectors)
        index.nprobe = min(int(params["nprobe"]), nlist)
    elif index_type == "ivfpq":
        index = _build_ivfpq(vectors, params)
    else:
        raise AuditorError(f"index_type: unknown {index_type!r}")
    return index, params


def flat_index(parts: Sequence[NDArray[np.float32]], dim: int) -> Any:
    """An exact (flat) index of the rows of ``parts`` in order, added part by part: the
    same index as one built from their concatenation, without making it."""
    index = _faiss().IndexFlatIP(dim)
    for part in parts:
        if len(part):
            index.add(np.ascontiguousarray(part, dtype=np.float32))
    return index


def write_lists(trained: Any, vectors: NDArray[np.float32], first_row: int, path: Path) -> None:
    """Encode ``vectors`` (the chunks at rows ``first_row``, ``first_row + 1``, ...) with
    the ``trained`` IVF index and write their inverted lists (codes, and the rows as ids)
    to ``path``; ``trained`` is left empty."""
    faiss = _faiss()
    index = faiss.clone_index(trained)
    if len(vectors):
        rows = np.arange(first_row, first_row + len(vectors), dtype=np.int64)
        index.add_with_ids(np.ascontiguousarray(vectors, dtype=np.float32), rows)
    writer = faiss.FileIOWriter(str(path))
    try:
        faiss.write_InvertedLists(index.invlists, writer)
    finally:
        del writer  # closes the file


def open_lists(trained_path: Path, list_paths: Sequence[Path], counts: Sequence[int]) -> Any:
    """The IVF index of a generation stored per segment: the trained index of
    ``trained_path`` searching the inverted lists of ``list_paths`` (one per segment,
    holding ``counts`` entries), memory-mapped (nothing is copied) and stacked list by
    list, so list ``i`` is every segment's list ``i`` in segment order. A damaged file is
    an :class:`AuditorError` naming it."""
    faiss = _faiss()
    index = read_index(trained_path)
    if not isinstance(index, faiss.IndexIVF) or index.ntotal:
        raise AuditorError(f"{trained_path}: not a trained, empty IVF index (damaged index)")
    keep: list[Any] = []
    lists: list[Any] = []
    for path, count in zip(list_paths, counts, strict=True):
        try:
            data = np.memmap(path, dtype=np.uint8, mode="r")
            reader = faiss.ZeroCopyIOReader(faiss.swig_ptr(data), data.size)
            got = faiss.read_InvertedLists(reader, faiss.IO_FLAG_MMAP_IFC)
        except (OSError, ValueError, RuntimeError) as exc:
            why = str(exc).splitlines()[0][-160:]
            raise AuditorError(f"{path}: cannot read IVF lists ({why}; damaged index)") from None
        if (
            got.nlist != index.nlist
            or got.code_size != index.code_size
            or got.compute_ntotal() != count
        ):
            raise AuditorError(
                f"{path}: IVF lists disagree with {trained_path} or the manifest (damaged index)"
            )
        keep += [data, reader, got]
        lists.append(got)
    if len(lists) == 1:
        stacked = lists[0]
    else:
        pointers = faiss.InvertedListsPtrVector()
        for got in lists:
            pointers.push_back(got)
        stacked = faiss.HStackInvertedLists(pointers.size(), pointers.data())
        keep += [pointers, stacked]
    index.replace_invlists(stacked, False)
    index.ntotal = int(sum(counts))
    for obj in keep:  # the lists, their readers and mapped files live as long as the index
        faiss.add_to_referenced_objects(index, obj)
    return index


def _build_ivfpq(vectors: NDArray[np.float32], params: dict[str, int]) -> Any:
    """An empty, trained IVF-PQ index (raises below :data:`IVFPQ_MIN_TRAIN` vectors)."""
    faiss = _faiss()
    n, dim = vectors.shape
    if n < IVFPQ_MIN_TRAIN:
        raise AuditorError(f"ivfpq index needs at least {IVFPQ_MIN_TRAIN} chunks to train, got {n}")
    m, nbits = int(params["m"]), int(params["nbits"])
    if m < 1 or dim % m:
        raise AuditorError(f"ivfpq: m={m} must divide the dimension {dim}")
    nlist = int(params["nlist"]) or ivf_nlist(n)
    params["nlist"] = nlist
    quantizer = faiss.IndexFlatIP(dim)
    index = faiss.IndexIVFPQ(quantizer, dim, nlist, m, nbits, faiss.METRIC_INNER_PRODUCT)
    index.train(train_sample(vectors, max(TRAIN_SAMPLE_PER_LIST * nlist, IVFPQ_MIN_TRAIN)))
    index.nprobe = min(int(params["nprobe"]), nlist)
    return index


RERANK_FACTOR = 10
"""An ``ivfpq`` search fetches this many times the asked depth of candidates and
re-scores them with the stored vectors (PQ codes only approximate the inner product:
measured recall@10 0.57 without, 0.97 with 100 candidates re-scored)."""


def rerank(
    vectors: _Rows,
    queries: NDArray[np.float32],
    rows: NDArray[np.int64],
    depth: int,
) -> tuple[NDArray[np.float32], NDArray[np.int64]]:
    """The best ``depth`` of the candidate ``rows`` per query by inner product with their
    ``vectors`` (read row by row from the segments' arrays; float16 rows are widened to
    float32 and the products computed in float32).

    ``rows`` is ``(n_queries, n_candidates)`` with ``-1`` for none; returns scores and
    rows best first (ties: lower row first), ``-inf`` / ``-1`` where there are fewer.
    """
    nq = len(queries)
    depth = min(depth, rows.shape[1])
    safe = np.where(rows >= 0, rows, 0)
    picked = vectors.take(safe.reshape(-1)).reshape(*safe.shape, vectors.dim)
    exact = np.einsum("qd,qkd->qk", np.asarray(queries, np.float32), picked)
    exact = np.where(rows >= 0, exact, -np.inf).astype(np.float32)
    order = np.lexsort((rows, -exact), axis=1)[:, :depth]
    out_rows = np.take_along_axis(rows, order, axis=1)
    out_scores = np.take_along_axis(exact, order, axis=1)
    out_rows = np.where(np.isfinite(out_scores), out_rows, -1)
    return out_scores.reshape(nq, depth), out_rows.reshape(nq, depth).astype(np.int64)


def train_sample(vectors: NDArray[np.float32], size: int) -> NDArray[np.float32]:
    """At most ``size`` rows of ``vectors``: all of them, or a seeded random sample."""
    if len(vectors) <= size:
        return vectors
    rows = np.sort(np.random.default_rng(0).choice(len(vectors), size, replace=False))
    return np.ascontiguousarray(vectors[rows])


def extend_index(index: Any, vectors: NDArray[np.float32]) -> Any:
    """Add ``vectors`` to an existing index (rows continue the numbering)."""
    if len(vectors):
        index.add(np.ascontiguousarray(vectors, dtype=np.float32))
    return index


def write_index(index: Any, path: Path) -> None:
    """Persist a FAISS index to ``path``."""
    faiss = _faiss()
    faiss.write_index(index, str(path))


def read_index(path: Path) -> Any:
    """Read a FAISS index written by :func:`write_index` (an :class:`AuditorError`
    naming the file when it cannot be read)."""
    faiss = _faiss()
    try:
        return faiss.read_index(str(path))
    except RuntimeError as exc:
        why = str(exc).splitlines()[0][-160:]
        raise AuditorError(f"{path}: cannot read FAISS index ({why}; damaged index)") from None


def set_search_params(index: Any, index_type: str, params: dict[str, int]) -> None:
    """Apply search-time parameters (``ef_search`` for HNSW, ``nprobe`` for IVF)."""
    if index_type == "hnsw" and "ef_search" in params:
        index.hnsw.efSearch = int(params["ef_search"])
    elif index_type in ("ivf", "ivfpq") and "nprobe" in params:
        index.nprobe = int(params["nprobe"])


def search(
    index: Any,
    index_type: str,
    queries: NDArray[np.float32],
    depth: int,
    mask: NDArray[np.bool_] | None = None,
) -> tuple[NDArray[np.float32], NDArray[np.int64]]:
    """Top ``depth`` inner products and chunk rows per query, best first.

    Rows outside ``mask`` are never returned; missing places hold ``-inf`` / ``-1``.
    """
    faiss = _faiss()
    nq, n = len(queries), int(index.ntotal)
    depth = max(0, min(depth, n))
    if nq == 0 or depth == 0 or (mask is not None and not mask.any()):
        return (
            np.full((nq, depth), -np.inf, dtype=np.float32),
            np.full((nq, depth), -1, dtype=np.int64),
        )
    queries = np.ascontiguousarray(queries, dtype=np.float32)
    with _omp_threads(1 if nq < SINGLE_THREAD_BELOW else 0):
        scores, ids = _search(faiss, index, index_type, queries, depth, mask)
    ids = ids.astype(np.int64)
    scores = np.where(ids >= 0, scores, -np.inf).astype(np.float32)
    return scores, ids


def _search(
    faiss: Any,
    index: Any,
    index_type: str,
    queries: NDArray[np.float32],
    depth: int,
    mask: NDArray[np.bool_] | None,
) -> tuple[Any, Any]:
    n = int(index.ntotal)
    if mask is None or mask.all():
        scores, ids = index.search(queries, depth)
    else:
        bits = np.packbits(mask.astype(np.uint8), bitorder="little")
        selector = faiss.IDSelectorBitmap(n, faiss.swig_ptr(bits))
        if index_type == "hnsw":
            sp: Any = faiss.SearchParametersHNSW(sel=selector, efSearch=index.hnsw.efSearch)
        elif index_type in ("ivf", "ivfpq"):
            sp = faiss.SearchParametersIVF(sel=selector, nprobe=index.nprobe)
        else:
            sp = faiss.SearchParameters(sel=selector)
        scores, ids = index.search(queries, depth, params=sp)
        del bits
    return scores, ids


@contextlib.contextmanager
def _omp_threads(n: int) -> Iterator[None]:
    """Run the block on ``n`` OpenMP threads (0 = leave as is), then restore."""
    if n <= 0:
        yield
        return
    faiss = _faiss()
    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(n)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(before)


def _faiss() -> Any:
    """The ``faiss`` module, imported lazily and typed loosely (its stubs are partial)."""
    return importlib.import_module("faiss")
