"""ConjNLI (Saha et al., 2020): NLI stress test for conjunctions.

* ``conj_dev.tsv``: the human-annotated dev set (623 pairs).
* ``adversarial_train_15k.tsv``: 15,000 automatically perturbed pairs (labels rule-derived,
  somewhat noisy); partly PTB-tokenised (`` ,``, spaced quotes), so both files go through
  :func:`detokenize`.

TSV (UTF-8 with BOM, header Premise / Hypothesis / Label, no quoting), three-way labels.

Split: dev + adversarial pooled; 5% hash of the (cleaned) premise text (no ids).

Counts (15,623 pairs read): 0 dropped for length (longest premise 42 words); 15,623 kept.
"""

from __future__ import annotations

from pathlib import Path

from auditor.entailment.data import (
    CONTRADICTION,
    ENTAILMENT,
    NEUTRAL,
    NLIPair,
    detokenize,
    hash_split,
)
from auditor.errors import InputError

SOURCE = "conjnli"
LABEL_MAPPING: dict[str, str] = {
    "entailment": "entailment",
    "neutral": "neutral",
    "contradiction": "contradiction",
    "split": "conj_dev + adversarial_train_15k pooled; hash of the premise text, 5% eval",
}
MAX_WORDS = 220
EVAL_SHARE = 0.05
_LABELS = {"entailment": ENTAILMENT, "neutral": NEUTRAL, "contradiction": CONTRADICTION}
_FILES = ("conj_dev.tsv", "adversarial_train_15k.tsv")
_HEADER = ["Premise", "Hypothesis", "Label"]


def _clean(text: str) -> str:
    return " ".join(detokenize(text).split())


def _label(value: str, path: Path, line: int, field: str) -> int:
    try:
        return _LABELS[value.strip()]
    except KeyError:
        raise InputError(
            f"unknown label {value!r}", file=str(path), line=line, field=field
        ) from None


def load(root: Path) -> list[NLIPair]:
    """ConjNLI dev and adversarial training pairs, detokenised."""
    pairs: list[NLIPair] = []
    for name in _FILES:
        path = Path(root) / SOURCE / name
        lines = path.read_text(encoding="utf-8-sig").split("\n")
        header = [h.strip() for h in lines[0].rstrip("\r").split("\t")]
        if header != _HEADER:
            raise InputError(f"expected header {_HEADER}, got {header}", file=str(path), line=1)
        for i, raw in enumerate(lines[1:], 2):
            raw = raw.rstrip("\r")
            if not raw.strip():
                continue
            fields = raw.split("\t")
            if len(fields) != 3:
                raise InputError(
                    f"expected 3 tab-separated fields, got {len(fields)}", file=str(path), line=i
                )
            label = _label(fields[2], path, i, "Label")
            premise, hypothesis = _clean(fields[0]), _clean(fields[1])
            if not premise or not hypothesis or len(premise.split()) > MAX_WORDS:
                continue
            pairs.append(
                NLIPair(premise, hypothesis, label, SOURCE, hash_split(premise, EVAL_SHARE))
            )
    return pairs
