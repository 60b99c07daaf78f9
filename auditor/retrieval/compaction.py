"""Compaction: merge the segments of an evidence index into one new generation; and
conversion: rewrite the segments an older version stored as JSON in the binary form."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np

import auditor.retrieval.dense as dense
import auditor.retrieval.store as store
from auditor.errors import AuditorError
from auditor.retrieval.asof import version_stamps
from auditor.retrieval.generation import _Growth, _requested_type, _write_generation
from auditor.retrieval.ingestion import _embed_with_sentences, _split_new
from auditor.retrieval.lexical import OLD_COUNTS, OLD_VOCAB, LexicalSegment
from auditor.retrieval.reader import (
    _parse_chunks,
    _parse_versions,
    _read_corpus,
    check_manifest,
    in_json_form,
)
from auditor.retrieval.segments import STRING_COLUMNS, write_catalog
from auditor.retrieval.tables import TABLES, ids_to_bytes, record_offsets, write_tables


def compact(
    index_dir: Path | str,
    *,
    index_type: str | None = None,
    index_params: dict[str, int] | None = None,
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """Merge the segments of the index in ``index_dir`` into one; return ``(manifest, notes)``.

    The content (versions, chunks, their order, the corpus digest) and the search
    results are unchanged; a trained FAISS index (hnsw, ivf, ivfpq) is rebuilt over
    every vector (IVF re-trained on the whole corpus), and ``index_type`` /
    ``index_params`` change it as at ingest. Sentence rows stored at ingest are carried
    over with their chunks; chunks of segments written before they were stored get
    theirs (encoded now). Publishes a new generation atomically, under the ingest lock,
    like :func:`~auditor.retrieval.ingestion.ingest`.
    """
    index_dir = Path(index_dir)
    if index_type is not None:
        index_type = dense.check_index_type(index_type)
    store.require_generation(index_dir)
    with store.ingest_lock(index_dir):
        old_gen = store.require_generation(index_dir)
        store.remove_leftovers(index_dir, {old_gen.name})
        old_manifest = store.read_json(old_gen / store.MANIFEST)
        check_manifest(old_manifest, old_gen)
        corpus = _read_corpus(old_gen, old_manifest)
        want_type = index_type or _requested_type(old_manifest) or old_manifest["index_type"]
        temp = store.new_temp_dir(index_dir)
        try:
            # segments written before sentence embeddings were stored get them now
            _, sentences = _embed_with_sentences([], _split_new(corpus, []), 64, None)
            manifest, notes = _write_generation(
                temp,
                _Growth(corpus, corpus.ordered(), [], [], np.zeros((0, 0), np.float32), sentences),
                old_gen,
                old_manifest,
                want_type,
                index_params or {},
                old_manifest["chunking"]["max_chars"],
            )
            new_gen = store.publish(index_dir, temp)
        except BaseException:
            shutil.rmtree(temp, ignore_errors=True)
            raise
        store.remove_leftovers(index_dir, {new_gen.name})
        return manifest, notes


def convert(index_dir: Path | str) -> tuple[dict[str, Any], int]:
    """Rewrite the segments of the index in ``index_dir`` that an older version stored as
    JSON (:func:`~auditor.retrieval.reader.in_json_form`) in the binary, memory-mapped
    form; return ``(manifest, segments converted)``.

    Nothing else changes: the segments stay as they are (no merge, no re-embedding, no
    dense index rebuilt), the manifest is the same (so is the index's identity in the
    ledger), and searches return the same hits and scores. A generation written before
    ``has_newer.npy`` gets it. The new generation is published atomically under the
    ingest lock; nothing is written when nothing needs converting. A format-1 index
    (one set of files, no segments) is rewritten by :func:`compact` instead.
    """
    index_dir = Path(index_dir)
    store.require_generation(index_dir)
    with store.ingest_lock(index_dir):
        old_gen = store.require_generation(index_dir)
        store.remove_leftovers(index_dir, {old_gen.name})
        manifest = store.read_json(old_gen / store.MANIFEST)
        check_manifest(manifest, old_gen)
        if int(manifest["format_version"]) == 1:
            raise AuditorError(
                f"{index_dir}: a format-1 index has no segments to convert; "
                f"`auditor compact --index {index_dir}` rewrites it in the binary form"
            )
        todo = [e["name"] for e in manifest["segments"] if in_json_form(old_gen / e["name"])]
        has_newer = (old_gen / store.HAS_NEWER).is_file()
        if not todo and has_newer:
            return manifest, 0
        temp = store.new_temp_dir(index_dir)
        try:
            store.link_tree(old_gen, temp)  # then replace files, never edit a linked one
            for name in todo:
                _convert_segment(temp / name)
            if not has_newer:
                corpus = _read_corpus(temp, manifest, chunks=False, vectors=False)
                assert corpus.times is not None
                np.save(temp / store.HAS_NEWER, np.asarray(corpus.times.has_newer, np.bool_))
            new_gen = store.publish(index_dir, temp)
        except BaseException:
            shutil.rmtree(temp, ignore_errors=True)
            raise
        store.remove_leftovers(index_dir, {new_gen.name})
        return manifest, len(todo)


def _convert_segment(folder: Path) -> None:
    """Write the binary tables of a segment in place of its JSON ones (its files are
    hard links: each is replaced, never modified)."""
    if not (folder / TABLES).is_file():
        ids, (vrows, starts, ends) = _parse_chunks(folder / store.CHUNKS)
        id_bytes = ids_to_bytes(ids)
        if id_bytes is not None:  # ids not made by chunk_id keep chunks.jsonl
            visible, valid_to = version_stamps(_parse_versions(folder / store.VERSIONS))
            offsets = record_offsets(folder)
            write_tables(folder, id_bytes, vrows, starts, ends, offsets, visible, valid_to)
            (folder / store.CHUNKS).unlink()
    if (folder / store.CATALOG_JSON).is_file():
        old = store.read_json(folder / store.CATALOG_JSON)
        write_catalog(folder, *(old[c] for c in STRING_COLUMNS))
        (folder / store.CATALOG_JSON).unlink()
    lex = folder / store.LEXICAL
    if (lex / OLD_VOCAB).is_file():
        segment = LexicalSegment.load(lex)
        (lex / OLD_VOCAB).unlink()
        (lex / OLD_COUNTS).unlink()
        segment.save(lex)
