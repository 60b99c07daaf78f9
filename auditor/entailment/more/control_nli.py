"""ConTRoL (Liu et al., 2021): passage-level contextual reasoning NLI from verbal-reasoning
exams, as repackaged in the Curriculum benchmark (``control.zip``).

Three-way labels. Curriculum ``train`` is the official train; ``val`` is official dev + test.
The zip's ``__MACOSX`` entries are ignored.

Split: train + val pooled; 5% hash of the passage text (``uid`` is per pair, there is no
passage id; one passage has several hypotheses).

Counts (8,323 pairs read): 4,376 dropped because the passage is over 220 words (ConTRoL marks
no evidence sentences); 3,947 kept.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from auditor.entailment.data import CONTRADICTION, ENTAILMENT, NEUTRAL, NLIPair, hash_split
from auditor.errors import InputError

SOURCE = "control_nli"
LABEL_MAPPING: dict[str, str] = {
    "entailment": "entailment",
    "neutral": "neutral",
    "contradiction": "contradiction",
    "split": "Curriculum train + val pooled; hash of the passage (premise) text, 5% eval",
}
MAX_WORDS = 220
EVAL_SHARE = 0.05
_LABELS = {"entailment": ENTAILMENT, "neutral": NEUTRAL, "contradiction": CONTRADICTION}
_MEMBERS = ("control/train.jsonl", "control/val.jsonl")


def _clean(text: str) -> str:
    return " ".join(text.split())


def _label(value: object, where: str, line: int, field: str) -> int:
    try:
        return _LABELS[str(value).strip()]
    except KeyError:
        raise InputError(f"unknown label {value!r}", file=where, line=line, field=field) from None


def load(root: Path) -> list[NLIPair]:
    """ConTRoL passages of at most 220 words with their hypotheses."""
    path = Path(root) / SOURCE / "control.zip"
    pairs: list[NLIPair] = []
    with zipfile.ZipFile(path) as archive:
        for member in _MEMBERS:
            where = f"{path}/{member}"
            text = archive.read(member).decode("utf-8")
            for i, raw in enumerate(text.split("\n"), 1):
                if not raw.strip():
                    continue
                try:
                    record = json.loads(raw)
                except json.JSONDecodeError as exc:
                    raise InputError(f"bad JSON: {exc.msg}", file=where, line=i) from None
                label = _label(record.get("gold_label"), where, i, "gold_label")
                premise = _clean(record.get("premise") or "")
                hypothesis = _clean(record.get("hypothesis") or "")
                if not premise or not hypothesis or len(premise.split()) > MAX_WORDS:
                    continue
                pairs.append(
                    NLIPair(premise, hypothesis, label, SOURCE, hash_split(premise, EVAL_SHARE))
                )
    return pairs
