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
from auditor.digest import content_digest
from auditor.errors import AuditorError, InputError
from auditor.retrieval import dense, lexical, store
from auditor.retrieval.asof import as_of_masks, normalise_as_of, version_times, visible_start
from auditor.retrieval.chunking import DEFAULT_MAX_CHARS, chunk_document
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
    versions: tuple[DocumentVersion, ...]
    """Every version in the index after the ingest, in version order."""
    manifest: dict[str, Any] = field(default_factory=dict)
    """The manifest of the index after the ingest."""
    index_dir: Path | None = None
    retimed_versions: tuple[DocumentVersion, ...] = ()
    """Already superseded versions whose derived ``valid_to`` moved because an older
    version was inserted after them (their successor changed)."""

    @property
    def changed(self) -> bool:
        """True when the ingest added or superseded anything."""
        return bool(self.added_versions)


@dataclass
class _Corpus:
    """The full content of one generation, in memory."""

    versions: list[DocumentVersion]
    chunk_ids: list[str]
    chunk_version: NDArray[np.int64]
    chunk_start: NDArray[np.int64]
    chunk_end: NDArray[np.int64]
    vectors: NDArray[np.float32]


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
        self._times = version_times(corpus.versions)
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
        lex = lexical.LexicalIndex.load(
            gen / store.LEXICAL, len(corpus.chunk_ids), manifest["lexical"]["stemmer"]
        )
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
        return list(self._corpus.versions)

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
        return [self.chunk(i) for i in range(len(self))]

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
        as_of = normalise_as_of(as_of)
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
            d_scores, d_rows = dense.search(
                self._dense, self.manifest["index_type"], qvec, depth, mask
            )
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
        return out


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

    ``index_type`` (``flat``, ``hnsw``, ``ivf``): ``None`` keeps the existing
    index's type (``flat`` for a new index); another type rebuilds the dense index.
    ``on_commit`` is called with the result once the new generation is completely
    written, before it is made live; if it raises, the previous generation stays
    live and the error propagates. When nothing changed no generation is written
    and ``on_commit`` is still called (the ledger write is idempotent). A crash at
    any point leaves the previous generation usable.

    ``encoder`` replaces :func:`auditor.embedding.encode` (for precomputed MiniLM
    embeddings, e.g. in benchmarks); it must return L2-normalised vectors of the
    model the manifest names. Identical chunk texts are embedded once, longest first in
    blocks (the encoder pads a batch to its longest text, so similar lengths batch
    well); ``progress(done, total)`` is called with the chunk texts embedded so far.
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
        if old_gen is not None:
            old_manifest = store.read_json(old_gen / store.MANIFEST)
            check_manifest(old_manifest, old_gen)
            corpus = _read_corpus(old_gen, old_manifest)
        else:
            old_manifest = None
            corpus = _Corpus(
                [], [], *(np.zeros(0, dtype=np.int64),) * 3, np.zeros((0, 0), dtype=np.float32)
            )
        chunking = (
            old_manifest["chunking"]["max_chars"]
            if old_manifest
            else (max_chars or DEFAULT_MAX_CHARS)
        )
        versions, added, superseded, unchanged, retimed = _reconcile(
            corpus.versions, docs, undated_order
        )
        new_chunks = [c for doc in added for c in chunk_document(doc, chunking)]
        result = IngestResult(
            added_versions=tuple(added),
            superseded_versions=tuple(superseded),
            unchanged=tuple(unchanged),
            chunks=tuple(new_chunks),
            versions=tuple(versions),
            manifest=old_manifest or {},
            index_dir=index_dir,
            retimed_versions=tuple(retimed),
        )
        want_type = index_type or (old_manifest["index_type"] if old_manifest else "flat")
        rebuild = (
            old_manifest is None or want_type != old_manifest["index_type"] or bool(index_params)
        )
        if not added and not rebuild:
            if on_commit is not None:
                on_commit(result)
            return result
        temp = store.new_temp_dir(index_dir)
        try:
            vectors = _embed([c.text for c in new_chunks], batch_size, encoder, progress)
            manifest = _write_generation(
                temp,
                corpus,
                versions,
                new_chunks,
                vectors,
                old_gen,
                old_manifest,
                want_type,
                index_params or {},
                chunking,
                rebuild,
            )
            result = replace(result, manifest=manifest)
            if on_commit is not None:
                on_commit(result)
            new_gen = store.publish(index_dir, temp)
        except BaseException:
            shutil.rmtree(temp, ignore_errors=True)
            raise
        store.remove_leftovers(index_dir, {new_gen.name, *keep})
        return result


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
    return normalise_as_of(start).timestamp()  # type: ignore[union-attr]


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


def _write_generation(
    temp: Path,
    corpus: _Corpus,
    versions: list[DocumentVersion],
    new_chunks: list[Chunk],
    new_vectors: NDArray[np.float32],
    old_gen: Path | None,
    old_manifest: dict[str, Any] | None,
    index_type: str,
    index_params: dict[str, int],
    max_chars: int,
    rebuild: bool,
) -> dict[str, Any]:
    """Write a complete generation into ``temp``; return its manifest."""
    row_of = {(v.doc_id, v.version): i for i, v in enumerate(versions)}
    chunk_ids = corpus.chunk_ids + [c.chunk_id for c in new_chunks]
    # versions are regrouped by document and date: old chunks follow their version's row
    remap = np.array([row_of[(v.doc_id, v.version)] for v in corpus.versions], dtype=np.int64)
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
    dim = (
        int(new_vectors.shape[1])
        if len(new_vectors) or not len(corpus.vectors)
        else int(corpus.vectors.shape[1])
    )
    old_vectors = corpus.vectors if len(corpus.vectors) else np.zeros((0, dim), np.float32)
    vectors = np.concatenate([old_vectors, new_vectors.reshape(-1, dim)]).astype(np.float32)
    times = version_times(versions)
    versions = [
        replace(v, superseded=bool(s)) for v, s in zip(versions, times.has_newer, strict=True)
    ]
    with open(temp / store.VERSIONS, "w", encoding="utf-8") as fh:
        for v in versions:
            fh.write(json.dumps(store.version_to_record(v), ensure_ascii=False) + "\n")
    with open(temp / store.CHUNKS, "w", encoding="utf-8") as fh:
        for cid, vrow, s, e in zip(
            chunk_ids, chunk_version.tolist(), starts.tolist(), ends.tolist(), strict=True
        ):
            fh.write(json.dumps({"chunk_id": cid, "v": vrow, "start": s, "end": e}) + "\n")
    np.save(temp / store.VECTORS, vectors)
    if index_type == "flat":
        params: dict[str, int] = {}
    elif rebuild or old_gen is None or old_manifest is None:
        dense_index, params = dense.build_index(vectors, index_type, index_params)
        dense.write_index(dense_index, temp / store.DENSE)
    else:
        dense_index = dense.extend_index(dense.read_index(old_gen / store.DENSE), new_vectors)
        params = dict(old_manifest["index_params"])
        dense.write_index(dense_index, temp / store.DENSE)
    stemmer = old_manifest["lexical"]["stemmer"] if old_manifest else lexical.available_stemmer()
    texts = [
        versions[v].text[s:e]
        for v, s, e in zip(chunk_version.tolist(), starts.tolist(), ends.tolist(), strict=True)
    ]
    lex_dir = temp / store.LEXICAL
    lex_dir.mkdir()
    lexical.LexicalIndex.build(texts, stemmer).save(lex_dir)
    generation = int(old_manifest["generation"]) + 1 if old_manifest else 1
    manifest = {
        "format": store.FORMAT,
        "format_version": store.FORMAT_VERSION,
        "embedding_model": embedding.MODEL_NAME,
        "embedding_digest": embedding.model_digest(),
        "dimension": dim,
        "index_type": index_type,
        "index_params": params,
        "documents": len({v.doc_id for v in versions}),
        "versions": len(versions),
        "chunks": len(chunk_ids),
        "chunking": {"max_chars": max_chars, "method": "sentences"},
        "lexical": {
            "method": "bm25-lucene",
            "k1": 1.5,
            "b": 0.75,
            "stopwords": lexical.STOPWORDS,
            "stemmer": stemmer,
        },
        "generation": generation,
        "created_at": datetime.now(UTC).isoformat(),
        "corpus_digest": content_digest([[v.doc_id, v.version, v.digest] for v in versions]),
    }
    store.write_json(temp / store.MANIFEST, manifest)
    return manifest


def check_manifest(manifest: Any, where: Path) -> None:
    """Raise :class:`AuditorError` unless ``manifest`` is ours and matches the model."""
    if not isinstance(manifest, dict) or manifest.get("format") != store.FORMAT:
        raise AuditorError(f"{where}: not an evidence index manifest")
    if manifest.get("format_version") != store.FORMAT_VERSION:
        raise AuditorError(
            f"{where}: index format version {manifest.get('format_version')!r}"
            f" is not supported (expected {store.FORMAT_VERSION})"
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


def _read_corpus(gen: Path, manifest: dict[str, Any]) -> _Corpus:
    versions = []
    with open(gen / store.VERSIONS, encoding="utf-8") as fh:
        for line in fh:
            versions.append(store.record_to_version(json.loads(line)))
    ids: list[str] = []
    vrows: list[int] = []
    starts: list[int] = []
    ends: list[int] = []
    with open(gen / store.CHUNKS, encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            ids.append(rec["chunk_id"])
            vrows.append(rec["v"])
            starts.append(rec["start"])
            ends.append(rec["end"])
    vectors = np.load(gen / store.VECTORS, mmap_mode="r")
    if (
        len(versions) != manifest["versions"]
        or len(ids) != manifest["chunks"]
        or vectors.shape[0] != len(ids)
    ):
        raise AuditorError(f"{gen}: index files disagree with the manifest (damaged index)")
    return _Corpus(
        versions,
        ids,
        np.array(vrows, dtype=np.int64),
        np.array(starts, dtype=np.int64),
        np.array(ends, dtype=np.int64),
        np.asarray(vectors, dtype=np.float32),
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
