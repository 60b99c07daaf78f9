"""Compaction: merge the segments of an evidence index into one new generation."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np

import auditor.retrieval.dense as dense
import auditor.retrieval.store as store
from auditor.retrieval.generation import _Growth, _requested_type, _write_generation
from auditor.retrieval.ingestion import _embed_with_sentences, _split_new
from auditor.retrieval.reader import _read_corpus, check_manifest


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
