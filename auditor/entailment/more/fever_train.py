"""FEVER 1.0 train-split claims with their gold Wikipedia evidence (GGKorn/fever-nli "vanilla").

Hypothesis = claim; premise = the claim's gold evidence sentences (duplicates removed, order
kept), PTB-detokenised (``-LRB-``, `` ,``) and joined. The file flattens all annotated evidence
sets of a claim into one list, so the premise is exactly the marked evidence, never the page.
``SUPPORTS`` -> entailment, ``REFUTES`` -> contradiction. ``NOT ENOUGH INFO`` rows carry no
evidence (``[]``) and are skipped (an NEI row with evidence would become a neutral pair).
Note: sentences come without their page title, so some start with a pronoun ("The film ...").

Split: 5% hash of the premise text (several claims share one evidence set; claim ids are
unique per row).

Counts (28,998 rows read): 9,666 NEI rows without evidence skipped; 19,332 SUPPORTS/REFUTES
pairs, of which 520 dropped because the evidence is over 220 words (claims with many
one-sentence evidence sets); 18,812 kept.
"""

from __future__ import annotations

import ast
import csv
from pathlib import Path

from auditor.entailment.data import CONTRADICTION, ENTAILMENT, NEUTRAL, NLIPair, detokenize
from auditor.entailment.more._common import clean, fits, label_of, make_pair
from auditor.errors import InputError

SOURCE = "fever_train_subset_gold_evidence"
LABEL_MAPPING: dict[str, str] = {
    "1 (SUPPORTS)": "entailment",
    "2 (REFUTES)": "contradiction",
    "0 (NOT ENOUGH INFO; rows have no evidence and are skipped)": "neutral",
    "split": "eval + test files pooled; hash of the premise (gold evidence) text, 5% eval",
}
_LABELS = {"1": ENTAILMENT, "2": CONTRADICTION, "0": NEUTRAL}
_FILES = ("eval_data_vanilla.csv", "test_data_vanilla.csv")


def _evidence(value: str | None, path: Path, line: int) -> list[str]:
    try:
        parsed = ast.literal_eval((value or "").strip() or "[]")
    except (ValueError, SyntaxError):
        parsed = None
    if not isinstance(parsed, list) or not all(isinstance(s, str) for s in parsed):
        raise InputError(
            "evidence is not a list of sentences", file=str(path), line=line, field="evidence"
        )
    sentences = (clean(detokenize(s)) for s in parsed)
    return list(dict.fromkeys(s for s in sentences if s))


def load(root: Path) -> list[NLIPair]:
    """FEVER train claims vs their gold evidence sentences (NEI rows have none: skipped)."""
    pairs: list[NLIPair] = []
    for name in _FILES:
        path = Path(root) / SOURCE / name
        with path.open(encoding="utf-8", newline="") as handle:
            # line numbers count physical lines; these CSV rows never span lines
            for i, row in enumerate(csv.DictReader(handle), 2):
                label = label_of(_LABELS, row.get("label"), path, i, "label")
                premise = " ".join(_evidence(row.get("evidence"), path, i))
                hypothesis = clean(row.get("claim"))
                if fits(premise, hypothesis):
                    pairs.append(make_pair(premise, hypothesis, label, SOURCE, premise))
    return pairs
