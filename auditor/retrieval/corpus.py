"""The content of one index generation in memory: versions, chunk rows, chunk vectors
and the sentence rows stored with them (:mod:`auditor.retrieval.reader` reads it from
disk, :mod:`auditor.retrieval.generation` writes it)."""

from __future__ import annotations

import mmap
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from auditor import embedding
from auditor.retrieval.asof import VersionTimes, version_times
from auditor.retrieval.tables import VersionTable
from auditor.types import DocumentVersion


class _Rows:
    """Vector rows kept in several arrays (one per segment, memory-mapped; float32 or
    float16) and addressed as one: a search reads the rows it needs, not a concatenated
    copy of every segment's vectors."""

    def __init__(self, parts: Sequence[NDArray[np.floating[Any]]], dim: int) -> None:
        self.parts = list(parts)
        self.dim = dim
        self.offsets = np.cumsum([0, *(len(p) for p in self.parts)]).astype(np.int64)

    def __len__(self) -> int:
        return int(self.offsets[-1])

    def take(self, rows: NDArray[np.int64]) -> NDArray[np.float32]:
        """The rows at ``rows`` (global numbering), as one float32 array."""
        rows = np.asarray(rows, dtype=np.int64)
        if len(self.parts) == 1:
            return np.asarray(self.parts[0][rows], dtype=np.float32)
        out = np.empty((len(rows), self.dim), dtype=np.float32)
        part = np.searchsorted(self.offsets, rows, side="right") - 1
        for p in np.unique(part).tolist():
            mask = part == p
            out[mask] = self.parts[p][rows[mask] - self.offsets[p]]
        return out

    def array(self) -> NDArray[np.float32]:
        """Every row, concatenated (float32)."""
        if not self.parts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if len(self.parts) == 1:
            return np.asarray(self.parts[0], dtype=np.float32)
        return np.concatenate([np.asarray(p, np.float32) for p in self.parts])

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> NDArray[Any]:
        """:meth:`array` for numpy (``np.asarray(rows)``)."""
        return self.array() if dtype is None else self.array().astype(dtype)

    def advise_random(self) -> None:
        """Tell the kernel that the memory-mapped parts are read at random rows
        (``madvise(MADV_RANDOM)``: no read-ahead), so a search brings into the page cache
        the pages of the rows it reads, not the file around them (measured: 10 searches
        of a 41,000-chunk ivfpq index whose vector files were not cached brought 4.9 MB
        of them into the page cache with it, 89 MB, nearly all, without). Call it after
        any sequential pass (a flat index copies every row)."""
        advice = getattr(mmap, "MADV_RANDOM", None)
        for part in self.parts:
            base: Any = part
            while base is not None and not isinstance(base, mmap.mmap):
                base = getattr(base, "base", None)
            if base is not None and advice is not None:
                base.madvise(advice)


@dataclass
class _Sentences:
    """Sentence rows of chunks, with their embeddings (the encoder of the chunk vectors).

    Sentences are :func:`auditor.text.sentence_spans` of each chunk's text, the
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


@dataclass
class _Corpus:
    """The content of one generation, in memory, in storage order.

    Version rows are in storage order (the order segments added them); ``order``
    lists the storage rows in version order (each document's versions together, by
    date), which is the order :meth:`~auditor.retrieval.search.EvidenceIndex.versions`
    and the corpus digest use. ``versions`` and ``chunk_ids`` read from an index are
    :class:`VersionTable` and :class:`~auditor.retrieval.tables.ChunkIds`: a version
    record is read when it is first asked for.
    """

    versions: Sequence[DocumentVersion]
    chunk_ids: Sequence[str]
    chunk_version: NDArray[np.int64]
    chunk_start: NDArray[np.int64]
    chunk_end: NDArray[np.int64]
    vectors: _Rows
    """The chunk vectors (float32), by chunk row, in their segments' arrays."""
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
    half: _Rows | None = None
    """The chunk vectors as float16 (``vectors.f16.npy``), when every segment stores them."""

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


def _empty_corpus() -> _Corpus:
    empty = np.zeros(0, dtype=np.int64)
    return _Corpus([], [], empty, empty, empty, _Rows([], 0))
