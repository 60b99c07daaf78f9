"""TRACIE train_iid (Zhou et al., 2021): a five-sentence story (premise) against a temporal
statement "X starts/ends before/after Y" (hypothesis), entailment / contradiction.

Hypothesis: the query with its ``event:`` prefix removed. Every query has a twin with the
opposite relation and label on the same story.

Split: no story ids, so the hash of the cleaned story text, 5% eval (both twins and all
queries on a story together).

Length: all 1,174 pairs kept (stories are five sentences).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from auditor.entailment.data import CONTRADICTION, ENTAILMENT, NLIPair, hash_split
from auditor.errors import InputError

SOURCE = "tracie"
LABEL_MAPPING: dict[str, str] = {
    "entailment": "entailment",
    "contradiction": "contradiction",
    "split": "hash of the story text, 5% eval",
}

MAX_WORDS = 220
_LABELS = {"entailment": ENTAILMENT, "contradiction": CONTRADICTION}
_EVENT = re.compile(r"^\s*event:\s*", re.IGNORECASE)


def _clean(text: str) -> str:
    return " ".join(text.split())


def load(root: Path) -> list[NLIPair]:
    """TRACIE stories vs temporal-relation queries, entailment / contradiction; stories
    hash-split 5% eval."""
    path = root / SOURCE / "train_iid.jsonl"
    pairs = []
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
            premise = _clean(record["story"])
            hypothesis = _clean(_EVENT.sub("", record["query"]))
            if not premise or not hypothesis or len(premise.split()) > MAX_WORDS:
                continue
            split = hash_split(premise, 0.05)
            pairs.append(NLIPair(premise, hypothesis, _LABELS[value], SOURCE, split))
    return pairs
