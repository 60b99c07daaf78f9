"""EntailmentBank entailment-tree steps as binary NLI (Curriculum benchmark): two to five
premise facts against a conclusion, entailed / not-entailed.

Premise: the facts (the ``sentN:`` markers removed), each made a capitalised sentence and
detokenised (``earth 's`` -> ``earth's``). Hypothesis: the conclusion, likewise. A
not-entailed hypothesis is the conclusion of another tree; it is stored as not_entailment
(the set itself only says "not entailed").

Split: no ids, so the hash of the cleaned premise, 5% eval (an entailed pair and its
not-entailed twin share the premise and stay together); train and val pooled.

Length: all 1,654 pairs kept (longest premise 129 words).
"""

from __future__ import annotations

import re
from pathlib import Path

from auditor.entailment.data import ENTAILMENT, NOT_ENTAILMENT, NLIPair, detokenize
from auditor.entailment.more._common import (
    clean,
    fits,
    jsonl_records,
    make_pair,
    record_label,
    zip_texts,
)

SOURCE = "entailment_tree_nli"
LABEL_MAPPING: dict[str, str] = {
    "entailed": "entailment",
    "not-entailed": "not_entailment",
    "split": "hash of the premise text, 5% eval; train and val pooled",
}

_LABELS = {"entailed": ENTAILMENT, "not-entailed": NOT_ENTAILMENT}
_ZIP = "entailment_tree.zip"
_MEMBERS = ("entailment_tree/train.jsonl", "entailment_tree/val.jsonl")
_SENT_MARK = re.compile(r"\s*\bsent\d+:\s*")


def _sentence(text: str) -> str:
    text = detokenize(clean(text)).rstrip(" .")
    if not text:
        return ""
    return text[0].upper() + text[1:] + "."


def load(root: Path) -> list[NLIPair]:
    """EntailmentBank premise facts vs conclusion, entailed / not; premises hash-split 5% eval."""
    path = root / SOURCE / _ZIP
    pairs = []
    for member, text in zip_texts(path, _MEMBERS):
        where = f"{path}:{member}"
        for number, record in jsonl_records(text, where):
            label = record_label(_LABELS, record, "gold_label", where, number)
            facts = [_sentence(f) for f in _SENT_MARK.split(record["premise"])]
            premise = " ".join(f for f in facts if f)
            hypothesis = _sentence(record["hypothesis"])
            if fits(premise, hypothesis):
                pairs.append(make_pair(premise, hypothesis, label, SOURCE, premise))
    return pairs
