"""ANLI v1.0 (Nie et al., 2020), rounds R1-R3, official dev and test files (train is absent).

Three-way labels ``e`` / ``n`` / ``c``. The official dev/test files are all training data here;
the split is a 5% hash of the premise (``context``) text, since ANLI has no context id and one
context carries several hypotheses. Text is raw Wikipedia/news prose (not tokenised): only
whitespace is collapsed.

Counts (6,400 pairs read): 6,400 kept, 0 dropped for length (longest context 135 words).
"""

from __future__ import annotations

from pathlib import Path

from auditor.entailment.data import CONTRADICTION, ENTAILMENT, NEUTRAL, NLIPair
from auditor.entailment.more._common import clean, fits, jsonl_file, label_of, make_pair

SOURCE = "anli_v1.0_dev_test"
LABEL_MAPPING: dict[str, str] = {
    "e": "entailment",
    "n": "neutral",
    "c": "contradiction",
    "split": "R1-R3 dev + test pooled; hash of the context (premise) text, 5% eval",
}
_LABELS = {"e": ENTAILMENT, "n": NEUTRAL, "c": CONTRADICTION}
_FILES = [f"R{r}/{part}.jsonl" for r in (1, 2, 3) for part in ("dev", "test")]


def load(root: Path) -> list[NLIPair]:
    """ANLI R1-R3 dev and test pairs (context -> hypothesis), 5% of contexts held out."""
    pairs: list[NLIPair] = []
    for name in _FILES:
        path = Path(root) / SOURCE / name
        for i, record in jsonl_file(path):
            label = label_of(_LABELS, record.get("label"), path, i, "label")
            premise = clean(record.get("context"))
            hypothesis = clean(record.get("hypothesis"))
            if fits(premise, hypothesis):
                pairs.append(make_pair(premise, hypothesis, label, SOURCE, premise))
    return pairs
