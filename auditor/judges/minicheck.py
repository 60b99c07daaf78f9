"""The ``minicheck`` judge: MiniCheck (Tang, Laban and Durrett, EMNLP 2024) in its own
input format, chunking and threshold (``minicheck/inference.py`` and
``minicheck/minicheck.py`` of github.com/Liyan06/MiniCheck).

The checkpoint's ``config.model_type`` picks the format:

- **RoBERTa / DeBERTa** (``lytang/MiniCheck-RoBERTa-Large``,
  ``lytang/MiniCheck-DeBERTa-v3-Large``): one text, ``chunk + eos_token + claim``
  (``</s>`` for RoBERTa, ``[SEP]`` for DeBERTa-v3), read by the sequence classifier
  (truncated to ``max_length``: 512 for RoBERTa, 2048 otherwise); the support is the
  softmax probability of class 1. Chunks hold at most ``chunk_size`` = 400 tokenizer
  tokens.
- **Flan-T5** (``lytang/MiniCheck-Flan-T5-Large``): ``"predict: " + chunk + eos_token +
  claim`` into the encoder, one decoder step from token id 0; the support is the softmax
  over the logits of token ids 3 (not supported) and 209 (supported), the ids the
  published code uses. Chunks hold at most 500 whitespace words; ``max_length`` 2048.

Chunks: the document's sentences, a newline kept between its lines, grouped greedily
up to the limit and joined by spaces (:func:`~auditor.judges._checkpoint.sentence_chunks`;
sentences by the project's splitter, not NLTK's punkt). The claim's support is the
**maximum over the chunks** of every evidence passage; supported when it reaches
``threshold`` (0.5: MiniCheck labels ``prob > 0.5`` supported; exactly 0.5 differs),
otherwise not supported. MiniCheck never abstains.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from auditor.errors import ConfigError
from auditor.judges._checkpoint import (
    CheckpointJudge,
    check_label_map,
    forward_probs,
    load_checkpoint,
    role_probabilities,
    sentence_chunks,
    sentence_units,
)

DEFAULT_CHECKPOINT = "lytang/MiniCheck-RoBERTa-Large"
T5_PREFIX = "predict: "
T5_LABEL_TOKENS = (3, 209)
"""Token ids read after one decoder step: (not supported, supported)."""
BINARY_HEAD = {"LABEL_0": "neither", "LABEL_1": "support"}
"""MiniCheck's published heads are unnamed: class 1 is supported."""


def minicheck_input(chunk: str, claim: str, eos_token: str, *, seq2seq: bool) -> str:
    """The text MiniCheck reads for one chunk and claim."""
    text = f"{chunk}{eos_token}{claim}"
    return T5_PREFIX + text if seq2seq else text


class MiniCheckJudge(CheckpointJudge):
    """MiniCheck RoBERTa, DeBERTa or Flan-T5, as published (module docstring)."""

    name = "minicheck"
    version = "1"

    def __init__(
        self,
        checkpoint: str = DEFAULT_CHECKPOINT,
        threshold: float = 0.5,
        chunk_size: int | None = None,
        max_length: int | None = None,
        label_map: dict[str, str] | None = None,
        revision: str | None = None,
        allow_download: bool = False,
        batch_size: int = 16,
    ) -> None:
        if not 0.0 <= threshold <= 1.0:
            raise ConfigError(f"{self.name}: threshold must be in [0, 1], got {threshold}")
        for field, value in (("chunk_size", chunk_size), ("max_length", max_length)):
            if value is not None and value <= 0:
                raise ConfigError(f"{self.name}: {field} must be > 0, got {value}")
        self._resolve(checkpoint, revision, allow_download)
        model_type = str(self._info.config.get("model_type", ""))
        self._seq2seq = model_type in ("t5", "mt5")
        if self._seq2seq:
            self.label_map = check_label_map(label_map, judge=self.name)
        else:
            self._read_labels(label_map, BINARY_HEAD)
        self.threshold, self.chunk_size, self.max_length = threshold, chunk_size, max_length
        self.batch_size = batch_size

    @property
    def seq2seq(self) -> bool:
        """Whether the checkpoint is the Flan-T5 one (else a sequence classifier)."""
        return self._seq2seq

    def _limits(self) -> tuple[int, int]:
        """``(chunk size, max length)``: the given ones, else MiniCheck's defaults."""
        model_type = str(self._info.config.get("model_type", ""))
        chunk = self.chunk_size or (500 if self._seq2seq else 400)
        length = self.max_length or (512 if model_type == "roberta" else 2048)
        return chunk, length

    def _load(self) -> tuple[Any, Any]:
        head = "seq2seq" if self._seq2seq else "sequence"
        return load_checkpoint(str(self.folder), self._info.weights_sha256, head)

    def bands(self) -> tuple[float, float]:
        return self.threshold, self.threshold

    def chunks(self, text: str) -> list[str]:
        """``text`` in MiniCheck's chunks (words for Flan-T5, tokens otherwise)."""
        _, tokenizer = self._load()
        limit, length = self._limits()

        def tokens(unit: str) -> int:
            ids = tokenizer(unit, add_special_tokens=False, truncation=True, max_length=length)
            return len(ids["input_ids"])

        count = (lambda unit: len(unit.split())) if self._seq2seq else tokens
        return sentence_chunks(sentence_units(text), limit, count, " ")

    def role_probs(self, chunks: Sequence[str], claims: Sequence[str]) -> np.ndarray:
        model, tokenizer = self._load()
        _, length = self._limits()
        texts = [
            minicheck_input(c, h, tokenizer.eos_token, seq2seq=self._seq2seq)
            for c, h in zip(chunks, claims, strict=True)
        ]
        if not self._seq2seq:
            encoded = [tokenizer(t, truncation=True, max_length=length) for t in texts]
            return role_probabilities(
                np.stack(forward_probs(model, tokenizer, encoded, self.batch_size)), self._roles
            )
        return seq2seq_label_probs(model, tokenizer, texts, length, self.batch_size)


def seq2seq_label_probs(
    model: Any, tokenizer: Any, texts: Sequence[str], max_length: int, batch_size: int
) -> np.ndarray:
    """``(n, 3)`` role probabilities of MiniCheck-Flan-T5: one decoder step from token id
    0, softmax over the logits of :data:`T5_LABEL_TOKENS` (supported, not supported)."""
    import torch

    out = np.zeros((len(texts), 3))
    with torch.inference_mode():
        for start in range(0, len(texts), batch_size):
            part = list(texts[start : start + batch_size])
            batch = tokenizer(
                part, max_length=max_length, truncation=True, padding=True, return_tensors="pt"
            )
            decoder = torch.zeros((len(part), 1), dtype=torch.long)
            logits = model(**batch, decoder_input_ids=decoder).logits[:, 0, :]
            probs = torch.softmax(logits[:, list(T5_LABEL_TOKENS)].float(), dim=-1).numpy()
            out[start : start + len(part), 0] = probs[:, 1]
            out[start : start + len(part), 2] = probs[:, 0]
    return out
