"""The ``entailment`` judge: the shipped three-way cross-encoder read over evidence windows.

Each evidence passage is cut into word windows (:func:`evidence_windows`); a claim of
several sentences is split into its sentences (a summary is supported only when every
sentence is). Every distinct (window, sentence) pair is scored once per batch. Per
sentence the judge keeps the maximum entailment and the maximum contradiction over
windows; the claim's entailment is that of its least supported sentence and its
contradiction that of its most contradicted one (SummaC-style). The reported three
probabilities are those of the decisive (sentence, window): the most contradicting one
when its contradiction exceeds the claim's entailment, else the best window of the
least supported sentence. A contradiction must hold at sentence level: when the decisive
cell is a contradicting window of several sentences, the claim sentence is scored
against that window's sentences and the cell takes the finer result (up to
``refine_rounds`` times). Multi-sentence premises push this small model towards
"contradiction" (an unrelated negated sentence beside a supporting one is enough), so
the refinement removes false contradictions without paying for sentence-level scoring
of all evidence. ``scores["contradiction"]`` is the signal the labelling step uses to
tell ``contradicted`` from ``not_supported``.

Vote: 0 (supported) when the claim's entailment reaches ``support_at``; 1 when it is
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
from auditor.errors import ConfigError
from auditor.judges._text import sentences
from auditor.judges.base import LocalJudge, register_judge
from auditor.types import ABSTAIN, JudgePair

Result = tuple[float, dict[str, float], str]


@register_judge("entailment")
class EntailmentJudge(LocalJudge):
    """Offline NLI cross-encoder (MiniLM-L6 fine-tuned on public NLI and claim data)."""

    name = "entailment"
    version = "3"

    def __init__(self, support_at: float = 0.5, reject_below: float = 0.2,
                 quantize: bool = False, window_words: int = WINDOW_WORDS,
                 window_stride: int = WINDOW_STRIDE, refine_rounds: int = 3,
                 batch_size: int = 32) -> None:
        super().__init__(support_at=support_at, reject_below=reject_below, quantize=quantize,
                         window_words=window_words, window_stride=window_stride,
                         refine_rounds=refine_rounds, weights_sha256=weights_digest())
        if not 0.0 <= reject_below <= support_at <= 1.0:
            raise ConfigError("entailment: need 0 <= reject_below <= support_at <= 1")
        self.support_at, self.reject_below = support_at, reject_below
        self.quantize, self.batch_size = quantize, batch_size
        self.window_words, self.window_stride = window_words, window_stride
        self.refine_rounds = refine_rounds

    def score_batch(self, pairs: Sequence[JudgePair]) -> list[Result]:
        windows = [[w for text in pair.evidence
                    for w in evidence_windows(text, words=self.window_words,
                                              stride=self.window_stride)] for pair in pairs]
        claims = [sentences(pair.claim) or [pair.claim] for pair in pairs]
        scored = self._predict({(w, c) for group, parts in zip(windows, claims, strict=True)
                                for w in group for c in parts})
        cells = [np.array([[scored[(w, c)] for w in group] for c in parts]) if group else None
                 for group, parts in zip(windows, claims, strict=True)]
        refined: list[set[tuple[int, int]]] = [set() for _ in pairs]
        for _ in range(self.refine_rounds):
            requests = {}
            for i, rows in enumerate(cells):
                if rows is None:
                    continue
                decisive, contradicted = _decisive(rows)
                parts_of_window = sentences(windows[i][decisive[1]])
                if contradicted and decisive not in refined[i] and len(parts_of_window) > 1:
                    requests[i] = (decisive, parts_of_window)
            if not requests:
                break
            scored = self._predict({(sent, claims[i][cell[0]])
                                    for i, (cell, parts) in requests.items() for sent in parts})
            for i, (cell, parts) in requests.items():
                rows = cells[i]
                assert rows is not None
                finer = np.array([scored[(sent, claims[i][cell[0]])] for sent in parts])
                best_e, best_c = finer[:, 0].argmax(), finer[:, 2].argmax()
                rows[cell] = finer[best_c] if finer[best_c, 2] > finer[best_e, 0] \
                    else finer[best_e]
                refined[i].add(cell)
        results: list[Result] = []
        for i, rows in enumerate(cells):
            if rows is None:
                results.append((ABSTAIN, {}, json.dumps({"reason": "no evidence"})))
            else:
                results.append(self._result(rows, windows[i], claims[i], len(refined[i])))
        return results

    def _predict(self, keys: set[tuple[str, str]]) -> dict[tuple[str, str], np.ndarray]:
        unique = sorted(keys)
        if not unique:
            return {}
        model = load_model(quantize=self.quantize)
        probs = model.predict([k[0] for k in unique], [k[1] for k in unique],
                              batch_size=self.batch_size)
        return dict(zip(unique, probs, strict=True))

    def _result(self, rows: np.ndarray, windows: list[str], parts: list[str],
                refined: int) -> Result:
        """``rows``: (claim sentences, windows, 3) probabilities."""
        decisive, _ = _decisive(rows)
        claim_e = float(rows[:, :, 0].max(axis=1).min())
        claim_c = float(rows[:, :, 2].max())
        e, n, c = (float(x) for x in rows[decisive])
        if claim_e >= self.support_at:
            vote = 0.0
        elif claim_e < self.reject_below:
            vote = 1.0
        else:
            vote = ABSTAIN
        scores = {"entailment": e, "neutral": n, "contradiction": c,
                  "max_entailment": claim_e, "max_contradiction": claim_c}
        raw = json.dumps({"windows": len(windows), "claim_sentences": len(parts),
                          "refined_to_sentences": refined,
                          "decisive_sentence": decisive[0], "decisive_window": decisive[1],
                          "window_text": windows[decisive[1]][:300],
                          "probs": [round(e, 4), round(n, 4), round(c, 4)]})
        return vote, scores, raw


def _decisive(rows: np.ndarray) -> tuple[tuple[int, int], bool]:
    """The decisive (claim sentence, window) cell and whether it is a contradiction: the most
    contradicting cell when its contradiction exceeds the claim's entailment (the entailment
    of its least supported sentence), else the best window of the least supported sentence."""
    sentence_e = rows[:, :, 0].max(axis=1)
    weakest = int(sentence_e.argmin())
    c_sentence, c_window = np.unravel_index(int(rows[:, :, 2].argmax()), rows.shape[:2])
    if rows[c_sentence, c_window, 2] > sentence_e[weakest]:
        return (int(c_sentence), int(c_window)), True
    return (weakest, int(rows[weakest, :, 0].argmax())), False
