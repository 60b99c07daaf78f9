"""DROP passages recast to binary NLI (Curriculum benchmark, ``drop.zip``).

Premise = a DROP passage (NFL game summaries, history articles), hypothesis = a statement
built from a question and a (right or wrong) answer, often ungrammatical ("3 points did the
buccaneers need to tie in the first"). ``entailed`` -> entailment, ``not-entailed`` ->
:data:`NOT_ENTAILMENT`. The zip's ``__MACOSX`` entries are ignored.

Split: Curriculum train + val pooled; 5% hash of the passage text (rows carry only a running
index, no passage id; one passage has many statements).

Counts (33,148 pairs read): 11,125 dropped because the passage is over 220 words (DROP marks
no evidence sentences); 22,023 kept.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from auditor.entailment.data import ENTAILMENT, NOT_ENTAILMENT, NLIPair, hash_split
from auditor.errors import InputError

SOURCE = "drop_nli"
LABEL_MAPPING: dict[str, str] = {
    "entailed": "entailment",
    "not-entailed": "not_entailment",
    "split": "Curriculum train + val pooled; hash of the passage (premise) text, 5% eval",
}
MAX_WORDS = 220
EVAL_SHARE = 0.05
_LABELS = {"entailed": ENTAILMENT, "not-entailed": NOT_ENTAILMENT}
_MEMBERS = ("drop/train.jsonl", "drop/val.jsonl")


def _clean(text: str) -> str:
    return " ".join(text.split())


def _label(value: object, where: str, line: int, field: str) -> int:
    try:
        return _LABELS[str(value).strip()]
    except KeyError:
        raise InputError(f"unknown label {value!r}", file=where, line=line, field=field) from None


def load(root: Path) -> list[NLIPair]:
    """DROP-NLI passages of at most 220 words with their statements."""
    path = Path(root) / SOURCE / "drop.zip"
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
