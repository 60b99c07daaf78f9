"""Ingest: add document versions to an evidence index as one unit.

:func:`ingest` reconciles the new versions with the stored ones (new text for a known
id is a new version; the old one is kept and marked superseded), embeds the new chunks
and their sentences, and publishes a new index generation atomically; a growing ingest
plans from the version catalogue and touches only the documents it names.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

import auditor.retrieval.dense as dense
import auditor.retrieval.store as store
from auditor import embedding
from auditor.clock import parse_datetime
from auditor.errors import AuditorError
from auditor.retrieval._checks import _check_docs, _check_positive
from auditor.retrieval.asof import version_times
from auditor.retrieval.chunking import DEFAULT_MAX_CHARS, chunk_document
from auditor.retrieval.corpus import _Corpus, _empty_corpus, _Sentences
from auditor.retrieval.generation import (
    _Growth,
    _Plan,
    _requested_type,
    _write_generation,
    _write_growth,
)
from auditor.retrieval.reader import _read_corpus, check_manifest, read_versions
from auditor.retrieval.segments import Catalog
from auditor.retrieval.versions import UNDATED_ORDERS, _file_source, _reconcile
from auditor.text import sentence_spans
from auditor.types import Chunk, DocumentVersion


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
    (all segments merged, as :func:`~auditor.retrieval.compaction.compact`). ``ivfpq`` needs
    :data:`~auditor.retrieval.dense.IVFPQ_MIN_TRAIN` chunks to train: below that the
    index is built ``flat``, the manifest records ``ivfpq`` as requested, a note says
    so, and the first ingest or compact that reaches the size trains it.

    The index grows by segments: a new version's chunks form a new segment (its
    vectors, chunk spans, versions and BM25 term counts; for ivfpq also its chunks' PQ
    codes and float16 vectors), the segments of the live generation are hard-linked
    into the new one unchanged, and an hnsw or ivf index (kept in one FAISS file) gets
    the new vectors added. The cost is that of the new chunks plus reading the version
    list (and copying an hnsw or ivf FAISS file), not re-indexing the corpus. BM25
    statistics (idf, average length) are corpus-wide at search time, so ranking is
    identical to one index over everything.
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
    :func:`auditor.text.sentence_spans`) are embedded in the same pass and
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
