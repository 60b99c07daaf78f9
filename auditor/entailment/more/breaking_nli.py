"""Breaking NLI (Glockner, Shwartz & Goldberg, 2018): SNLI training premises with one word or
phrase substituted in the hypothesis (87% contradiction).

``breaking_nli_dataset.zip`` -> ``data/dataset.jsonl``: sentence1, sentence2, gold_label,
annotator_labels, category, pairID. Three-way labels.

Split: 5% hash of the premise text (``pairID`` is per pair; about 1,800 premises carry the
8,193 substitutions, so each premise keeps all its substitutions on one side).

Counts (8,193 pairs read): 0 dropped for length (SNLI captions); 8,193 kept.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from auditor.entailment.data import CONTRADICTION, ENTAILMENT, NEUTRAL, NLIPair, hash_split
from auditor.errors import InputError

SOURCE = "breaking_nli"
LABEL_MAPPING: dict[str, str] = {
    "entailment": "entailment",
    "neutral": "neutral",
    "contradiction": "contradiction",
    "split": "single test file; hash of the premise text, 5% eval",
}
MAX_WORDS = 220
EVAL_SHARE = 0.05
_LABELS = {"entailment": ENTAILMENT, "neutral": NEUTRAL, "contradiction": CONTRADICTION}
_MEMBER = "data/dataset.jsonl"


def _clean(text: str) -> str:
    return " ".join(text.split())


def _label(value: object, where: str, line: int, field: str) -> int:
    try:
        return _LABELS[str(value).strip()]
    except KeyError:
        raise InputError(f"unknown label {value!r}", file=where, line=line, field=field) from None


def load(root: Path) -> list[NLIPair]:
    """Breaking NLI substitution pairs."""
    path = Path(root) / SOURCE / "breaking_nli_dataset.zip"
    where = f"{path}/{_MEMBER}"
    with zipfile.ZipFile(path) as archive:
        text = archive.read(_MEMBER).decode("utf-8")
    pairs: list[NLIPair] = []
    for i, raw in enumerate(text.split("\n"), 1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise InputError(f"bad JSON: {exc.msg}", file=where, line=i) from None
        label = _label(record.get("gold_label"), where, i, "gold_label")
        premise = _clean(record.get("sentence1") or "")
        hypothesis = _clean(record.get("sentence2") or "")
        if not premise or not hypothesis or len(premise.split()) > MAX_WORDS:
            continue
        pairs.append(NLIPair(premise, hypothesis, label, SOURCE, hash_split(premise, EVAL_SHARE)))
    return pairs
