"""Reading an index generation from disk: the manifest check, and the versions, chunks,
vectors and sentence rows of its segments (format 1: one set of files)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

import auditor.retrieval.store as store
from auditor import embedding
from auditor.clock import parse_datetime
from auditor.errors import AuditorError
from auditor.retrieval.asof import times_from_stamps, valid_to_stamp, version_stamps
from auditor.retrieval.corpus import _Corpus, _no_sentences, _row_times, _Rows, _Sentences
from auditor.retrieval.lexical import OLD_VOCAB
from auditor.retrieval.tables import (
    TABLES,
    ChunkIds,
    VersionTable,
    chunk_table_rows,
    read_tables,
)
from auditor.types import DocumentVersion


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
    halves: list[NDArray[np.float16]] = []
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
            if (folder / store.VECTORS_F16).is_file():
                halves.append(np.load(folder / store.VECTORS_F16, mmap_mode="r"))
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
        _Rows([], dim),
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
        # each segment's vectors stay in its memory-mapped file (no concatenated copy)
        corpus.vectors = _Rows([np.asarray(a, np.float32).reshape(-1, dim) for a in parts], dim)
        if len(corpus.vectors) != manifest["chunks"]:
            raise AuditorError(f"{gen}: index files disagree with the manifest (damaged index)")
        if halves and len(halves) == len(parts):
            if any(
                h.dtype != np.float16 or h.shape != p.shape
                for h, p in zip(halves, corpus.vectors.parts, strict=True)
            ):
                raise AuditorError(
                    f"{gen}: {store.VECTORS_F16} and {store.VECTORS} disagree (damaged index)"
                )
            corpus.half = _Rows(halves, dim)
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


def segments_without_sentences(manifest: dict[str, Any]) -> int:
    """How many segments of the generation ``manifest`` describes store no sentence
    embeddings (written before they were stored at ingest; a format-1 index counts as
    one): their evidence sentences are encoded at audit time until a compact."""
    if int(manifest.get("format_version", 1)) == 1:
        return 1
    return sum("sentences" not in entry for entry in manifest.get("segments", []))


def segments_without_tables(index_dir: Path, manifest: dict[str, Any]) -> int:
    """How many segments of the current generation of ``index_dir`` are stored (in part)
    in the older JSON form (:func:`in_json_form`; a format-1 index counts as one): opening
    or growing the index parses their JSON in full until ``auditor compact --convert``."""
    if int(manifest.get("format_version", 1)) == 1:
        return 1
    gen = store.current_generation(index_dir)
    if gen is None:
        return 0
    return sum(in_json_form(gen / e["name"]) for e in manifest.get("segments", []))


def in_json_form(folder: Path) -> bool:
    """Whether the segment ``folder`` keeps a table in the JSON form written before the
    binary ones: no chunk and version tables (``chunks.jsonl``), the version catalogue as
    ``catalog.json``, or BM25 counts as ``counts.npz`` and ``vocab.json``."""
    return (
        not (folder / TABLES).is_file()
        or (folder / store.CATALOG_JSON).is_file()
        or (folder / store.LEXICAL / OLD_VOCAB).is_file()
    )
