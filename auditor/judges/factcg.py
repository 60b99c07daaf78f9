"""The ``factcg`` judge: FactCG (Lei et al., NAACL 2025; github.com/derenlei/FactCG) in
its own input format, chunking and threshold (``factcg/inference.py``,
``factcg/utils.py``).

The published checkpoint (``yaxili96/FactCG-DeBERTa-v3-Large``) is a binary sequence
classifier reading **one text**, the instruction template
(:data:`FACTCG_TEMPLATE`) with the chunk as ``text_a`` and the claim as ``text_b``,
truncated to ``max_length`` = 2048 tokens; the support is the softmax probability of
class 1. Chunks: the document's sentences grouped greedily up to ``chunk_size`` = 550
word tokens (words and punctuation marks, as NLTK's ``word_tokenize`` counts them; the
sentences by the project's splitter), joined by newlines. The claim's support is the
**maximum over the chunks** of every evidence passage; supported at ``threshold`` (0.5,
the published fixed threshold), otherwise not supported.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from auditor.errors import ConfigError
from auditor.judges._checkpoint import (
    CheckpointJudge,
    forward_probs,
    load_checkpoint,
    role_probabilities,
    sentence_chunks,
)
from auditor.judges.minicheck import BINARY_HEAD
from auditor.text.sentences import sentences

DEFAULT_CHECKPOINT = "yaxili96/FactCG-DeBERTa-v3-Large"
FACTCG_TEMPLATE = (
    "{text_a}\n\nChoose your answer: based on the paragraph above can we conclude that "
    '"{text_b}"?\n\nOPTIONS:\n- Yes\n- No\nI think the answer is '
)
_WORD_TOKEN = re.compile(r"\w+|[^\w\s]")


def factcg_input(chunk: str, claim: str) -> str:
    """The text FactCG reads for one chunk and claim."""
    return FACTCG_TEMPLATE.format(text_a=chunk, text_b=claim)


class FactCGJudge(CheckpointJudge):
    """FactCG-DeBERTa, as published (module docstring)."""

    name = "factcg"
    version = "1"

    def __init__(
        self,
        checkpoint: str = DEFAULT_CHECKPOINT,
        threshold: float = 0.5,
        chunk_size: int = 550,
        max_length: int = 2048,
        label_map: dict[str, str] | None = None,
        revision: str | None = None,
        allow_download: bool = False,
        batch_size: int = 8,
    ) -> None:
        if not 0.0 <= threshold <= 1.0:
            raise ConfigError(f"{self.name}: threshold must be in [0, 1], got {threshold}")
        if chunk_size <= 0 or max_length <= 0:
            raise ConfigError(f"{self.name}: chunk_size and max_length must be > 0")
        self._resolve(checkpoint, revision, allow_download)
        self._read_labels(label_map, BINARY_HEAD)
        self.threshold, self.chunk_size, self.max_length = threshold, chunk_size, max_length
        self.batch_size = batch_size

    def bands(self) -> tuple[float, float]:
        return self.threshold, self.threshold

    def chunks(self, text: str) -> list[str]:
        """``text`` in FactCG's chunks (module docstring)."""
        return sentence_chunks(
            sentences(text), self.chunk_size, lambda s: len(_WORD_TOKEN.findall(s)), "\n"
        )

    def role_probs(self, chunks: Sequence[str], claims: Sequence[str]) -> np.ndarray:
        model, tokenizer = self._load()
        encoded = [
            tokenizer(factcg_input(c, h), truncation=True, max_length=self.max_length)
            for c, h in zip(chunks, claims, strict=True)
        ]
        probs = np.stack(forward_probs(model, tokenizer, encoded, self.batch_size))
        return role_probabilities(probs, self._roles)

    def _load(self) -> tuple[Any, Any]:
        return load_checkpoint(str(self.folder), self._info.weights_sha256, "sequence")
