"""Writing an index generation: a complete one-segment generation (a new index, a
rebuild, :func:`~auditor.retrieval.compaction.compact`) or one that links the live
generation's segments and adds one (a growing ingest), with the segment files, the
version order, the ``has_newer`` table and the manifest."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

import auditor.retrieval.dense as dense
import auditor.retrieval.lexical as lexical
import auditor.retrieval.store as store
from auditor import embedding
from auditor.errors import AuditorError
from auditor.retrieval.asof import version_stamps, version_times
from auditor.retrieval.corpus import _Corpus, _no_sentences, _Sentences
from auditor.retrieval.segments import (
    CORPUS_DIGEST_VERSION,
    Catalog,
    corpus_digest_from,
    read_segment_hash,
    write_versions,
)
from auditor.retrieval.tables import ids_to_bytes, write_tables
from auditor.retrieval.versions import _file_source
from auditor.types import Chunk, DocumentVersion


@dataclass
class _Plan:
    """What a growing ingest changes, computed from the documents it touches only."""

    rows: list[int]
    """Catalogue rows loaded (the touched documents' versions), in version order."""
    stored: dict[int, DocumentVersion]
    """Those versions as their segment files hold them."""
    versions: list[DocumentVersion]
    """The touched documents' versions after the ingest, in version order."""
    added: list[DocumentVersion]
    superseded: list[DocumentVersion]
    unchanged: list[DocumentVersion]
    retimed: list[DocumentVersion]
    new_chunks: list[Chunk]


@dataclass
class _Growth:
    """What a new generation is made of: the old corpus and what the ingest adds."""

    corpus: _Corpus
    versions: list[DocumentVersion]
    """Every version after the ingest, in version order."""
    added: list[DocumentVersion]
    new_chunks: list[Chunk]
    new_vectors: NDArray[np.float32]
    sentences: _Sentences = field(default_factory=_no_sentences)
    """Sentence rows embedded for this generation, in its chunk rows: the new chunks'
    and those of old chunks whose segment stored none."""


def _requested_type(manifest: dict[str, Any] | None) -> str | None:
    """The index type asked for but not yet built (``ivfpq`` on a too small corpus)."""
    if manifest is None:
        return None
    requested = manifest.get("index_type_requested")
    return requested if isinstance(requested, str) else manifest.get("index_type")


def _write_generation(
    temp: Path,
    growth: _Growth,
    old_gen: Path | None,
    old_manifest: dict[str, Any] | None,
    index_type: str,
    index_params: dict[str, int],
    max_chars: int,
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """Write a complete one-segment generation into ``temp``; return its manifest and notes.

    For a new index, a rebuild (another index type or parameters, a format-1 index, a
    pending ivfpq that can now train) and :func:`~auditor.retrieval.compaction.compact`:
    versions are stored in version order, old chunks keep their rows and new ones
    follow, BM25 term counts are merged (format 1: tokenised once), and the dense index
    is built from scratch.
    """
    corpus, versions, new_chunks = growth.corpus, growth.versions, growth.new_chunks
    generation = int(old_manifest["generation"]) + 1 if old_manifest else 1
    seg_name = f"{store.SEG_PREFIX}{generation:06d}"
    stemmer = old_manifest["lexical"]["stemmer"] if old_manifest else lexical.available_stemmer()
    dim = _dimension(corpus, growth.new_vectors, old_manifest)
    new_vectors = growth.new_vectors.reshape(-1, dim)
    keys = [(v.doc_id, v.version) for v in versions]
    has_newer = version_times(versions).has_newer.tolist()
    notes: list[str] = []
    row_of = {k: i for i, k in enumerate(keys)}
    remap = np.array([row_of[(v.doc_id, v.version)] for v in corpus.versions], dtype=np.int64)
    chunk_ids = [*corpus.chunk_ids, *(c.chunk_id for c in new_chunks)]
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
    vectors = np.concatenate([corpus.vectors.array().reshape(-1, dim), new_vectors]).astype(
        np.float32
    )
    new_lex = lexical.LexicalSegment.build([c.text for c in new_chunks], stemmer)
    if corpus.segments and old_gen is not None:
        old_lex = [
            lexical.LexicalSegment.load(old_gen / s / store.LEXICAL) for s in corpus.segments
        ]
    else:  # a format-1 index (or none): tokenise the old texts once
        old_lex = [
            lexical.LexicalSegment.build(
                [
                    corpus.versions[v].text[s:e]
                    for v, s, e in zip(
                        corpus.chunk_version.tolist(),
                        corpus.chunk_start.tolist(),
                        corpus.chunk_end.tolist(),
                        strict=True,
                    )
                ],
                stemmer,
            )
        ]
    lex = lexical.LexicalSegment.merge([*old_lex, new_lex])
    built_type, params = index_type, dict(index_params)
    if index_type == "ivfpq" and len(vectors) < dense.IVFPQ_MIN_TRAIN:
        built_type, params = "flat", {}
        notes.append(
            f"ivfpq needs at least {dense.IVFPQ_MIN_TRAIN} chunks to train and the index "
            f"holds {len(vectors)}: it is flat for now, and the first ingest or "
            "`auditor compact` that brings it to that size trains ivfpq"
        )
    per_segment = built_type in dense.PER_SEGMENT_TYPES
    trained: Any = None
    if per_segment:
        trained, params = dense.train_index(vectors, built_type, params)
    elif built_type != "flat":
        dense_index, params = dense.build_index(vectors, built_type, params)
        dense.write_index(dense_index, temp / store.DENSE)
    seg_versions = [
        replace(v, superseded=bool(h)) for v, h in zip(versions, has_newer, strict=True)
    ]
    # old chunks keep their rows, so their stored sentence rows do too
    sentences = _merge_sentences([corpus.sentences, growth.sentences], dim)
    _write_segment(
        temp / seg_name,
        seg_versions,
        chunk_ids,
        chunk_version,
        starts,
        ends,
        vectors,
        lex,
        sentences,
        half=per_segment,
    )
    if per_segment:  # the trained index once, in the segment that trained it
        dense.write_index(trained, temp / seg_name / store.IVF_TRAINED)
        dense.write_lists(trained, vectors, 0, temp / seg_name / store.IVF_LISTS)
    np.save(temp / store.ORDER, np.arange(len(versions), dtype=np.int64))
    np.save(temp / store.HAS_NEWER, np.array(has_newer, dtype=np.bool_).reshape(len(versions)))
    store.write_json(temp / store.VALID_TO, {})
    manifest = _manifest(
        generation=generation,
        dim=dim,
        built_type=built_type,
        want_type=index_type,
        params=params,
        documents=len({v.doc_id for v in versions}),
        n_versions=len(versions),
        n_chunks=len(chunk_ids),
        segments=[
            {
                "name": seg_name,
                "versions": len(versions),
                "chunks": len(chunk_ids),
                "sentences": len(sentences),
            }
        ],
        max_chars=max_chars,
        stemmer=stemmer,
        corpus_digest=corpus_digest_from([read_segment_hash(temp / seg_name)]),
        dense_trained=seg_name if per_segment else None,
    )
    store.write_json(temp / store.MANIFEST, manifest)
    return manifest, tuple(notes)


def _merge_sentences(parts: Sequence[_Sentences], dim: int) -> _Sentences:
    """One table of ``parts`` (already in their final chunk rows), ordered by chunk row."""
    parts = [p for p in parts if len(p)]
    if not parts:
        return _no_sentences(dim)
    chunk = np.concatenate([p.chunk for p in parts])
    order = np.argsort(chunk, kind="stable")
    return _Sentences(
        chunk[order],
        np.concatenate([p.start for p in parts])[order],
        np.concatenate([p.end for p in parts])[order],
        np.concatenate([p.array().reshape(-1, dim) for p in parts])[order],
    )


def _write_growth(
    temp: Path,
    catalog: Catalog,
    plan: _Plan,
    new_vectors: NDArray[np.float32],
    new_sentences: _Sentences,
    old_gen: Path,
    old_manifest: dict[str, Any],
    want_type: str,
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """Write a generation that links the old segments and adds one; return manifest, notes.

    Work is proportional to the new chunks and the touched documents' versions, plus
    list operations over the catalogue columns (the version order, the corpus
    digest); an ``ivfpq`` index's new codes go to the new segment, while an index
    kept in one ``dense.faiss`` (hnsw, ivf, an older ivfpq) is copied with them added.
    """
    generation = int(old_manifest["generation"]) + 1
    seg_name = f"{store.SEG_PREFIX}{generation:06d}"
    stemmer = old_manifest["lexical"]["stemmer"]
    dim = int(old_manifest["dimension"])
    n_old = len(catalog)
    row_of = {(catalog.doc_id[r], catalog.version[r]): r for r in plan.rows}
    for i, v in enumerate(plan.added):
        row_of[(v.doc_id, v.version)] = n_old + i
    # the version order: each touched document's block of rows becomes its new chain
    # (same place); documents new to the index follow, in input order
    chains: dict[str, list[int]] = {}
    for v in plan.versions:
        chains.setdefault(v.doc_id, []).append(row_of[(v.doc_id, v.version)])
    position = np.empty(n_old, dtype=np.int64)
    position[catalog.order] = np.arange(n_old, dtype=np.int64)
    blocks: dict[str, list[int]] = {}
    for r in plan.rows:
        blocks.setdefault(catalog.doc_id[r], []).append(int(position[r]))
    pieces: list[NDArray[np.int64]] = []
    done = 0
    for doc_id, pos in sorted(blocks.items(), key=lambda kv: kv[1][0]):
        lo, hi = pos[0], pos[-1] + 1
        if hi - lo != len(pos):
            raise AuditorError(f"{old_gen}: versions of {doc_id!r} are not contiguous (damaged)")
        pieces += [catalog.order[done:lo], np.array(chains[doc_id], dtype=np.int64)]
        done = hi
    pieces.append(catalog.order[done:])
    pieces += [np.array(rows, dtype=np.int64) for d, rows in chains.items() if d not in blocks]
    order = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int64)
    if len(order) != n_old + len(plan.added):
        raise AuditorError(f"{old_gen}: version order does not add up (damaged index)")
    # every stored override is kept (``plan.stored`` holds the versions with them
    # applied): an override is replaced only where this ingest moved the value again
    valid_to = dict(catalog.valid_to)
    for v in plan.versions:
        r = row_of[(v.doc_id, v.version)]
        if r < n_old and v.valid_to != plan.stored[r].valid_to:
            valid_to[str(r)] = _iso(v.valid_to)
    has_newer = dict(
        zip(
            [(v.doc_id, v.version) for v in plan.versions],
            version_times(plan.versions).has_newer.tolist(),
            strict=True,
        )
    )
    seg_versions = [replace(v, superseded=has_newer[(v.doc_id, v.version)]) for v in plan.added]
    new_chunks = plan.new_chunks
    vectors = np.ascontiguousarray(new_vectors.reshape(-1, dim), dtype=np.float32)
    built_type, params = old_manifest["index_type"], dict(old_manifest["index_params"])
    trained_in = old_manifest.get("dense_trained")
    n_chunks = int(old_manifest["chunks"]) + len(new_chunks)
    for name in catalog.segments:
        store.link_tree(old_gen / name, temp / name)
    _write_segment(
        temp / seg_name,
        seg_versions,
        [c.chunk_id for c in new_chunks],
        np.array([row_of[(c.doc_id, c.version)] for c in new_chunks], dtype=np.int64),
        np.array([c.start for c in new_chunks], dtype=np.int64),
        np.array([c.end for c in new_chunks], dtype=np.int64),
        vectors,
        lexical.LexicalSegment.build([c.text for c in new_chunks], stemmer),
        new_sentences,
        half=trained_in is not None,
    )
    np.save(temp / store.ORDER, order)
    store.write_json(temp / store.VALID_TO, valid_to)
    notes: list[str] = []
    if built_type != want_type:
        notes.append(
            f"{want_type} was requested; the index stays {built_type} until it holds "
            f"{dense.IVFPQ_MIN_TRAIN} chunks to train on (now {n_chunks})"
        )
    if trained_in is not None:  # encode the new chunks only; older segments keep theirs
        trained = dense.read_index(temp / trained_in / store.IVF_TRAINED)
        dense.write_lists(
            trained, vectors, int(old_manifest["chunks"]), temp / seg_name / store.IVF_LISTS
        )
    elif built_type != "flat":
        dense_index = dense.extend_index(dense.read_index(old_gen / store.DENSE), vectors)
        dense.write_index(dense_index, temp / store.DENSE)
        if built_type in dense.PER_SEGMENT_TYPES:
            notes.append(
                f"this {built_type} index keeps one {store.DENSE} (written before per-segment "
                "codes), copied by every ingest; `auditor compact` stores it per segment"
            )
    known = {catalog.doc_id[r] for r in plan.rows}
    catalog.extend(seg_versions, [_file_source(v) for v in seg_versions])
    np.save(temp / store.HAS_NEWER, _has_newer(catalog.doc_id, order))
    manifest = _manifest(
        generation=generation,
        dim=dim,
        built_type=built_type,
        want_type=want_type,
        params=params,
        documents=int(old_manifest["documents"]) + len({v.doc_id for v in plan.added} - known),
        n_versions=len(order),
        n_chunks=n_chunks,
        segments=[
            *old_manifest["segments"],
            {
                "name": seg_name,
                "versions": len(seg_versions),
                "chunks": len(new_chunks),
                "sentences": len(new_sentences),
            },
        ],
        max_chars=int(old_manifest["chunking"]["max_chars"]),
        stemmer=stemmer,
        corpus_digest=corpus_digest_from(
            [
                *(catalog.segment_hash(i) for i in range(len(catalog.segments))),
                read_segment_hash(temp / seg_name),
            ]
        ),
        dense_trained=trained_in,
    )
    store.write_json(temp / store.MANIFEST, manifest)
    return manifest, tuple(notes)


def _has_newer(doc_ids: Sequence[str], order: NDArray[np.int64]) -> NDArray[np.bool_]:
    """Per storage row: whether a version of the same document comes later in ``order``
    (:func:`version_times`'s ``has_newer``, from the document ids alone)."""
    out = np.zeros(len(doc_ids), dtype=np.bool_)
    seen: set[str] = set()
    for r in order[::-1].tolist():
        d = doc_ids[r]
        if d in seen:
            out[r] = True
        else:
            seen.add(d)
    return out


def _write_segment(
    folder: Path,
    versions: list[DocumentVersion],
    chunk_ids: Sequence[str],
    chunk_version: NDArray[np.int64],
    starts: NDArray[np.int64],
    ends: NDArray[np.int64],
    vectors: NDArray[np.float32],
    lex: lexical.LexicalSegment,
    sentences: _Sentences,
    *,
    half: bool,
) -> None:
    """Write one immutable segment: versions (+ catalogue), the binary chunk and version
    tables (:mod:`auditor.retrieval.tables`), vectors (with ``half``, also as float16),
    BM25 counts, and the sentence rows of its multi-sentence chunks (chunk row in the
    segment, start and end in the version text) with their vectors. Chunk ids that are
    not 32 hex characters (none that :func:`~auditor.retrieval.chunking.chunk_id` makes)
    keep the ``chunks.jsonl`` form."""
    folder.mkdir()
    offsets = write_versions(folder, versions, [_file_source(v) for v in versions])
    id_bytes = ids_to_bytes(chunk_ids)
    if id_bytes is not None:
        visible, valid_to = version_stamps(versions)
        write_tables(folder, id_bytes, chunk_version, starts, ends, offsets, visible, valid_to)
    else:
        with open(folder / store.CHUNKS, "w", encoding="utf-8") as fh:
            for cid, vrow, s, e in zip(
                chunk_ids, chunk_version.tolist(), starts.tolist(), ends.tolist(), strict=True
            ):
                fh.write(json.dumps({"chunk_id": cid, "v": vrow, "start": s, "end": e}) + "\n")
    np.save(folder / store.VECTORS, np.ascontiguousarray(vectors, dtype=np.float32))
    if half:
        np.save(folder / store.VECTORS_F16, np.ascontiguousarray(vectors, dtype=np.float16))
    np.save(
        folder / store.SENTENCE_SPANS,
        np.stack([sentences.chunk, sentences.start, sentences.end], axis=1).astype(np.int64),
    )
    np.save(folder / store.SENTENCES, np.ascontiguousarray(sentences.array(), dtype=np.float32))
    lex.save(folder / store.LEXICAL)


def _manifest(
    *,
    generation: int,
    dim: int,
    built_type: str,
    want_type: str,
    params: dict[str, int],
    documents: int,
    n_versions: int,
    n_chunks: int,
    segments: list[dict[str, Any]],
    max_chars: int,
    stemmer: str | None,
    corpus_digest: str,
    dense_trained: str | None,
) -> dict[str, Any]:
    manifest: dict[str, Any] = {
        "format": store.FORMAT,
        "format_version": store.FORMAT_VERSION,
        "embedding_model": embedding.MODEL_NAME,
        "embedding_digest": embedding.model_digest(),
        "dimension": dim,
        "index_type": built_type,
        "index_params": params,
        "documents": documents,
        "versions": n_versions,
        "chunks": n_chunks,
        "segments": segments,
        "chunking": {"max_chars": max_chars, "method": "sentences"},
        "lexical": {
            "method": "bm25-lucene",
            "k1": lexical.K1,
            "b": lexical.B,
            "statistics": "corpus-wide, from per-segment term counts",
            "stopwords": lexical.STOPWORDS,
            "stemmer": stemmer,
        },
        "generation": generation,
        "created_at": datetime.now(UTC).isoformat(),
        "corpus_digest": corpus_digest,
        "corpus_digest_version": CORPUS_DIGEST_VERSION,
    }
    if built_type != want_type:
        manifest["index_type_requested"] = want_type
    if dense_trained is not None:  # the segment holding the trained per-segment index
        manifest["dense_trained"] = dense_trained
    return manifest


def _dimension(
    corpus: _Corpus, new_vectors: NDArray[np.float32], manifest: dict[str, Any] | None
) -> int:
    if new_vectors.ndim == 2 and len(new_vectors):
        return int(new_vectors.shape[1])
    if manifest is not None:
        return int(manifest["dimension"])
    if corpus.vectors.dim:
        return corpus.vectors.dim
    return embedding.EMBEDDING_DIM


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()
