"""The ``hhem`` judge: Vectara's HHEM-2.1-open (``vectara/hallucination_evaluation_model``)
without its remote code.

The published checkpoint is a Flan-T5 encoder with a token-classification head
(``HHEMv2ForSequenceClassification`` wraps a ``T5ForTokenClassification`` as ``t5``; its
weights are stored under the ``t5.`` prefix). This judge builds the standard
``transformers`` ``T5ForTokenClassification`` from the checkpoint's ``config.json`` (the
T5 fields; ``trust_remote_code`` stays off), loads the weights with the prefix taken
off, and reproduces the head: the softmax of the **first** token's two logits, class 1
being "consistent" (the published ``predict``).

Input: the prompt of the checkpoint's config (``prompt``), else the published one
(:data:`HHEM_PROMPT`), with the evidence passage as ``{text1}`` and the claim as
``{text2}``, padded, never truncated (T5's relative positions; the published model has no
length limit). The tokenizer is that of the checkpoint folder when it has one, else the
config's ``foundation`` (``google/flan-t5-base``), or the ``tokenizer`` parameter; a hub
id there obeys the same download rules as the checkpoint. HHEM does not chunk: each
evidence passage is read whole and the claim's score is the **maximum over the
passages**; supported at ``threshold`` (0.5), otherwise not supported.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from auditor.digest import content_digest, sha256_bytes
from auditor.errors import ConfigError
from auditor.judges._checkpoint import WEIGHT_SUFFIXES, CheckpointJudge, resolve_checkpoint

DEFAULT_CHECKPOINT = "vectara/hallucination_evaluation_model"
HHEM_PROMPT = (
    "<pad> Determine if the hypothesis is true given the premise?\n\n"
    "Premise: {text1}\n\nHypothesis: {text2}"
)
WEIGHTS_PREFIX = "t5."
_SLOT = re.compile(r"\{(text1|text2)\}")
_TOKENIZER_FILES = ("tokenizer.json", "spiece.model", "tokenizer_config.json")


def hhem_input(premise: str, hypothesis: str, prompt: str = HHEM_PROMPT) -> str:
    """The text HHEM reads: ``prompt`` with ``{text1}`` and ``{text2}`` filled in one pass
    (braces in the texts stay as they are)."""
    values = {"text1": premise, "text2": hypothesis}
    return _SLOT.sub(lambda m: values[m.group(1)], prompt)


@lru_cache(maxsize=2)
def _load_hhem(folder: str, weights_sha256: str, tokenizer_folder: str) -> tuple[Any, Any]:
    """The T5 token classifier with HHEM's weights, and the tokenizer."""
    import json
    from pathlib import Path

    from transformers import AutoTokenizer, T5Config, T5ForTokenClassification

    root = Path(folder)
    fields = json.loads((root / "config.json").read_text(encoding="utf-8"))
    fields = {k: v for k, v in fields.items() if k not in ("auto_map", "architectures")}
    fields.pop("model_type", None)
    fields["num_labels"] = 2
    config = T5Config(**fields)
    model = T5ForTokenClassification(config)
    state = _read_weights(root)
    state = {k.removeprefix(WEIGHTS_PREFIX): v.float() for k, v in state.items()}
    result = model.load_state_dict(state, strict=False)
    missing = [k for k in result.missing_keys if not k.endswith("embed_tokens.weight")]
    if missing or result.unexpected_keys:
        raise ConfigError(
            f"hhem: weights in {root} do not fit a T5 token classifier: missing "
            f"{missing[:3]}, unexpected {result.unexpected_keys[:3]}"
        )
    model.tie_weights()
    model.eval()
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_folder, local_files_only=True)
    return model, tokenizer


def _read_weights(root: Any) -> dict[str, Any]:
    """The state dict of the checkpoint's weight files (safetensors, else torch's
    ``weights_only`` pickle)."""
    import torch
    from safetensors.torch import load_file

    state: dict[str, Any] = {}
    for path in sorted(root.iterdir()):
        if path.name.endswith(".safetensors"):
            state.update(load_file(str(path)))
    if not state:
        for path in sorted(root.iterdir()):
            if path.name.endswith(WEIGHT_SUFFIXES[1:3]):
                state.update(torch.load(path, map_location="cpu", weights_only=True))
    return state


class HHEMJudge(CheckpointJudge):
    """HHEM-2.1-open, as published, loaded without remote code (module docstring)."""

    name = "hhem"
    version = "1"
    volatile_params = CheckpointJudge.volatile_params | {"tokenizer"}  # its files' digest counts

    def __init__(
        self,
        checkpoint: str = DEFAULT_CHECKPOINT,
        threshold: float = 0.5,
        tokenizer: str | None = None,
        revision: str | None = None,
        allow_download: bool = False,
        batch_size: int = 8,
    ) -> None:
        if not 0.0 <= threshold <= 1.0:
            raise ConfigError(f"{self.name}: threshold must be in [0, 1], got {threshold}")
        self._resolve(checkpoint, revision, allow_download)
        source = tokenizer
        if source is None:
            has_own = any((self.folder / f).is_file() for f in _TOKENIZER_FILES)
            source = str(self.folder) if has_own else self._info.config.get("foundation")
        if not isinstance(source, str):
            raise ConfigError(
                f"{self.name}: {self.folder} has no tokenizer files and its config.json no "
                f"'foundation'; give one with the `tokenizer` parameter"
            )
        self._tokenizer_folder = resolve_checkpoint(
            source, judge=self.name, allow_download=allow_download
        )
        if self._tokenizer_folder.resolve() != self.folder.resolve():  # its files decide too
            self._identity["tokenizer_sha256"] = content_digest(
                {
                    p.name: sha256_bytes(p.read_bytes())
                    for p in sorted(self._tokenizer_folder.iterdir())
                    if p.is_file() and not p.name.endswith(WEIGHT_SUFFIXES)
                }
            )
        prompt = self._info.config.get("prompt", HHEM_PROMPT)
        if not isinstance(prompt, str) or "{text1}" not in prompt or "{text2}" not in prompt:
            raise ConfigError(
                f"{self.name}: {self.folder}/config.json: field 'prompt' must hold "
                "{text1} and {text2}"
            )
        self._prompt = prompt
        self.threshold, self.tokenizer, self.batch_size = threshold, tokenizer, batch_size

    @property
    def prompt(self) -> str:
        """The prompt template this judge fills."""
        return self._prompt

    def bands(self) -> tuple[float, float]:
        return self.threshold, self.threshold

    def chunks(self, text: str) -> list[str]:
        """The passage itself: HHEM reads it whole."""
        return [text.strip()] if text.strip() else []

    def role_probs(self, chunks: Sequence[str], claims: Sequence[str]) -> np.ndarray:
        import torch

        model, tokenizer = _load_hhem(
            str(self.folder), self._info.weights_sha256, str(self._tokenizer_folder)
        )
        texts = [hhem_input(c, h, self._prompt) for c, h in zip(chunks, claims, strict=True)]
        out = np.zeros((len(texts), 3))
        with torch.inference_mode():
            for start in range(0, len(texts), self.batch_size):
                part = texts[start : start + self.batch_size]
                batch = tokenizer(part, padding=True, return_tensors="pt")
                logits = model(
                    input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]
                ).logits[:, 0, :]
                probs = torch.softmax(logits.float(), dim=-1).numpy()
                out[start : start + len(part), 0] = probs[:, 1]
                out[start : start + len(part), 2] = probs[:, 0]
        return out
