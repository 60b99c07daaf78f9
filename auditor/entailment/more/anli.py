"""ANLI v1.0 (Nie et al., 2020), rounds R1-R3, official dev and test files (train is absent).

Three-way labels ``e`` / ``n`` / ``c``. The official dev/test files are all training data here;
the split is a 5% hash of the premise (``context``) text, since ANLI has no context id and one
context carries several hypotheses. Text is raw Wikipedia/news prose (not tokenised): only
whitespace is collapsed.

Counts (6,400 pairs read): 6,400 kept, 0 dropped for length (longest context 135 words).
"""

from __future__ import annotations

import json
from pathlib import Path

from auditor.entailment.data import CONTRADICTION, ENTAILMENT, NEUTRAL, NLIPair, hash_split
from auditor.errors import InputError

SOURCE = "anli_v1.0_dev_test"
LABEL_MAPPING: dict[str, str] = {
    "e": "entailment",
    "n": "neutral",
    "c": "contradiction",
    "split": "R1-R3 dev + test pooled; hash of the context (premise) text, 5% eval",
}
MAX_WORDS = 220
EVAL_SHARE = 0.05
_LABELS = {"e": ENTAILMENT, "n": NEUTRAL, "c": CONTRADICTION}
_FILES = [f"R{r}/{part}.jsonl" for r in (1, 2, 3) for part in ("dev", "test")]


def _clean(text: str) -> str:
    return " ".join(text.split())


def _label(value: object, path: Path, line: int, field: str) -> int:
    try:
        return _LABELS[str(value).strip()]
    except KeyError:
        raise InputError(
            f"unknown label {value!r}", file=str(path), line=line, field=field
        ) from None


def load(root: Path) -> list[NLIPair]:
    """ANLI R1-R3 dev and test pairs (context -> hypothesis), 5% of contexts held out."""
    pairs: list[NLIPair] = []
    for name in _FILES:
        path = Path(root) / SOURCE / name
        for i, raw in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
            if not raw.strip():
                continue
            try:
                record = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise InputError(f"bad JSON: {exc.msg}", file=str(path), line=i) from None
            label = _label(record.get("label"), path, i, "label")
            premise = _clean(record.get("context") or "")
            hypothesis = _clean(record.get("hypothesis") or "")
            if not premise or not hypothesis or len(premise.split()) > MAX_WORDS:
                continue
            pairs.append(
                NLIPair(premise, hypothesis, label, SOURCE, hash_split(premise, EVAL_SHARE))
            )
    return pairs
