"""FOLIO v0.0 (Han et al., 2022): expert-written natural-language premises (a short story of
rules and facts) against a conclusion, True / False / Unknown (train) or Uncertain
(validation).

Premise: the natural-language premises joined in order (the first-order-logic forms are
not used). Hypothesis: the conclusion.

Split: the validation file has no ``story_id``; in train the premise text and the
``story_id`` correspond one to one, so the hash of the cleaned premise text is the story
key for both files; 5% eval; train and validation pooled.

Length: all 1,208 pairs kept (longest premise 164 words).
"""

from __future__ import annotations

from pathlib import Path

from auditor.entailment.data import CONTRADICTION, ENTAILMENT, NEUTRAL, NLIPair
from auditor.entailment.more._common import clean, fits, jsonl_file, make_pair, record_label

SOURCE = "folio"
LABEL_MAPPING: dict[str, str] = {
    "True": "entailment",
    "False": "contradiction",
    "Unknown": "neutral",
    "Uncertain": "neutral",
    "split": "hash of the premise text (= story), 5% eval; train and validation pooled",
}

_LABELS = {"True": ENTAILMENT, "False": CONTRADICTION, "Unknown": NEUTRAL, "Uncertain": NEUTRAL}
_FILES = ("folio-train.jsonl", "folio-validation.jsonl")


def load(root: Path) -> list[NLIPair]:
    """FOLIO premises vs conclusion, three-way; stories hash-split 5% eval."""
    pairs = []
    for name in _FILES:
        path = root / SOURCE / name
        for number, record in jsonl_file(path):
            label = record_label(_LABELS, record, "label", path, number)
            premises = record["premises"]
            if isinstance(premises, str):
                premises = [premises]
            premise = clean(" ".join(p for p in premises if p))
            hypothesis = clean(record["conclusion"])
            if fits(premise, hypothesis):
                pairs.append(make_pair(premise, hypothesis, label, SOURCE, premise))
    return pairs
