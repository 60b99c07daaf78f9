"""The ``entailment`` judge: the shipped three-way cross-encoder read over evidence windows.

Each evidence passage is cut into word windows (:func:`evidence_windows`); every
(window, claim) pair is scored once per batch. Over a claim's windows the judge keeps the
maximum entailment and the maximum contradiction; the reported three probabilities are
those of the decisive window (the most entailing one when its entailment is at least the
strongest contradiction, else the most contradicting one). ``scores["contradiction"]``
is the signal the labelling step uses to tell ``contradicted`` from ``not_supported``.

Vote: 0 (supported) when the maximum entailment reaches ``support_at``; 1 when it is
below ``reject_below`` (neutral or contradicted everywhere); abstain in between.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np

from auditor.entailment.model import (
    WINDOW_STRIDE,
    WINDOW_WORDS,
    evidence_windows,
    load_model,
    weights_digest,
)
from auditor.judges.base import LocalJudge, register_judge
from auditor.types import ABSTAIN, JudgePair

Result = tuple[float, dict[str, float], str]


@register_judge("entailment")
class EntailmentJudge(LocalJudge):
    """Offline NLI cross-encoder (MiniLM-L6 fine-tuned on public NLI and claim data)."""

    name = "entailment"
    version = "1"

    def __init__(self, support_at: float = 0.5, reject_below: float = 0.2,
                 quantize: bool = False, window_words: int = WINDOW_WORDS,
                 window_stride: int = WINDOW_STRIDE, batch_size: int = 32) -> None:
        super().__init__(support_at=support_at, reject_below=reject_below, quantize=quantize,
                         window_words=window_words, window_stride=window_stride,
                         weights_sha256=weights_digest())
        if not 0.0 <= reject_below <= support_at <= 1.0:
            from auditor.errors import ConfigError

            raise ConfigError("entailment: need 0 <= reject_below <= support_at <= 1")
        self.support_at, self.reject_below = support_at, reject_below
        self.quantize, self.batch_size = quantize, batch_size
        self.window_words, self.window_stride = window_words, window_stride

    def score_batch(self, pairs: Sequence[JudgePair]) -> list[Result]:
        windows = [[w for text in pair.evidence
                    for w in evidence_windows(text, words=self.window_words,
                                              stride=self.window_stride)] for pair in pairs]
        keys = [(w, pair.claim) for pair, group in zip(pairs, windows, strict=True)
                for w in group]
        unique = sorted(set(keys))
        position = {key: i for i, key in enumerate(unique)}
        probs = np.zeros((0, 3))
        if unique:
            model = load_model(quantize=self.quantize)
            probs = model.predict([k[0] for k in unique], [k[1] for k in unique],
                                  batch_size=self.batch_size)
        results: list[Result] = []
        for pair, group in zip(pairs, windows, strict=True):
            if not group:
                results.append((ABSTAIN, {}, json.dumps({"reason": "no evidence"})))
                continue
            rows = probs[[position[(w, pair.claim)] for w in group]]
            results.append(self._aggregate(rows, group))
        return results

    def _aggregate(self, rows: np.ndarray, windows: list[str]) -> Result:
        best_e, best_c = int(rows[:, 0].argmax()), int(rows[:, 2].argmax())
        max_e, max_c = float(rows[best_e, 0]), float(rows[best_c, 2])
        decisive = best_e if max_e >= max_c else best_c
        e, n, c = (float(x) for x in rows[decisive])
        if max_e >= self.support_at:
            vote = 0.0
        elif max_e < self.reject_below:
            vote = 1.0
        else:
            vote = ABSTAIN
        scores = {"entailment": e, "neutral": n, "contradiction": c,
                  "max_entailment": max_e, "max_contradiction": max_c}
        raw = json.dumps({"windows": len(windows), "decisive_window": decisive,
                          "window_text": windows[decisive][:300],
                          "probs": [round(e, 4), round(n, 4), round(c, 4)]})
        return vote, scores, raw
