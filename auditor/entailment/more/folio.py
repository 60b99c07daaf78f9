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

import json
from pathlib import Path

from auditor.entailment.data import CONTRADICTION, ENTAILMENT, NEUTRAL, NLIPair, hash_split
from auditor.errors import InputError

SOURCE = "folio"
LABEL_MAPPING: dict[str, str] = {
    "True": "entailment",
    "False": "contradiction",
    "Unknown": "neutral",
    "Uncertain": "neutral",
    "split": "hash of the premise text (= story), 5% eval; train and validation pooled",
}

MAX_WORDS = 220
_LABELS = {"True": ENTAILMENT, "False": CONTRADICTION, "Unknown": NEUTRAL, "Uncertain": NEUTRAL}
_FILES = ("folio-train.jsonl", "folio-validation.jsonl")


def _clean(text: str) -> str:
    return " ".join(text.split())


def load(root: Path) -> list[NLIPair]:
    """FOLIO premises vs conclusion, three-way; stories hash-split 5% eval."""
    pairs = []
    for name in _FILES:
        path = root / SOURCE / name
        with path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                record = json.loads(line)
                value = str(record.get("label", "")).strip()
                if value not in _LABELS:
                    raise InputError(
                        f"unknown label {value!r}", file=str(path), line=number, field="label"
                    )
                premises = record["premises"]
                if isinstance(premises, str):
                    premises = [premises]
                premise = _clean(" ".join(p for p in premises if p))
                hypothesis = _clean(record["conclusion"])
                if not premise or not hypothesis or len(premise.split()) > MAX_WORDS:
                    continue
                split = hash_split(premise, 0.05)
                pairs.append(NLIPair(premise, hypothesis, _LABELS[value], SOURCE, split))
    return pairs
