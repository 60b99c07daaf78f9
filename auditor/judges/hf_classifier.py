"""The ``hf_classifier`` judge: any sequence-classification checkpoint as a panel member.

The checkpoint (a local folder, or a model-hub id with ``allow_download``: see
:mod:`auditor.judges._checkpoint`) reads (evidence, claim) as a premise-hypothesis pair.
Its classes come from its own ``config.id2label``: three-way NLI (entailment / neutral /
contradiction) or binary (supported / not supported) heads are mapped by name,
other names through ``label_map``.

**Long evidence.** Each evidence passage is tokenised once; when it has more than
``window_tokens`` tokens it is cut into windows of ``window_tokens`` tokens, neighbours
sharing ``overlap_tokens`` (each window is the exact passage text from its first token
to its last). Every window is read against the claim (``max_length`` tokens at most,
the window truncated first), and the claim's support is the **maximum over all windows
of all passages**; the window with the most support decides the scores.

**Vote.** 0 (supported) when that support reaches ``support_at``; 1 when it is below
``reject_below``, or (between the two) when the decisive window's contradiction reaches
``reject_below`` and exceeds its support; abstain otherwise. Scores: ``support``,
``neither`` and ``contradiction`` of the decisive window (each the summed probability of
the classes of that role; ``contradiction`` is 0 for a binary head).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from auditor.errors import ConfigError
from auditor.judges._checkpoint import (
    CheckpointJudge,
    forward_probs,
    load_checkpoint,
    role_probabilities,
    token_windows,
)


class HFClassifierJudge(CheckpointJudge):
    """A sequence-classification checkpoint reading (evidence window, claim) pairs."""

    name = "hf_classifier"
    version = "1"

    def __init__(
        self,
        checkpoint: str,
        label_map: Mapping[str, str] | None = None,
        support_at: float = 0.5,
        reject_below: float = 0.5,
        window_tokens: int = 400,
        overlap_tokens: int = 50,
        max_length: int = 512,
        revision: str | None = None,
        allow_download: bool = False,
        batch_size: int = 16,
    ) -> None:
        if not 0.0 <= reject_below <= support_at <= 1.0:
            raise ConfigError(f"{self.name}: need 0 <= reject_below <= support_at <= 1")
        if window_tokens <= 0 or not 0 <= overlap_tokens < window_tokens or max_length <= 0:
            raise ConfigError(
                f"{self.name}: need window_tokens > 0, 0 <= overlap_tokens < window_tokens "
                f"and max_length > 0"
            )
        self._resolve(checkpoint, revision, allow_download)
        self._read_labels(label_map)
        self.support_at, self.reject_below = support_at, reject_below
        self.window_tokens, self.overlap_tokens = window_tokens, overlap_tokens
        self.max_length, self.batch_size = max_length, batch_size

    @property
    def roles(self) -> tuple[str, ...]:
        """The role of each of the checkpoint's classes, in output order."""
        return self._roles

    def bands(self) -> tuple[float, float]:
        return self.support_at, self.reject_below

    def _load(self) -> tuple[Any, Any]:
        return load_checkpoint(str(self.folder), self._info.weights_sha256, "sequence")

    def chunks(self, text: str) -> list[str]:
        """``text`` cut into the token windows this judge reads (module docstring)."""
        _, tokenizer = self._load()
        encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        return token_windows(
            text, encoded["offset_mapping"], self.window_tokens, self.overlap_tokens
        )

    def role_probs(self, chunks: Sequence[str], claims: Sequence[str]) -> np.ndarray:
        model, tokenizer = self._load()
        encoded = [
            tokenizer(c, h, truncation="only_first", max_length=self.max_length)
            for c, h in zip(chunks, claims, strict=True)
        ]
        probs = np.stack(forward_probs(model, tokenizer, encoded, self.batch_size))
        if probs.shape[1] != len(self._roles):
            raise ConfigError(
                f"{self.name}: {self.folder}: the model has {probs.shape[1]} classes, "
                f"config.id2label names {len(self._roles)}"
            )
        return role_probabilities(probs, self._roles)
