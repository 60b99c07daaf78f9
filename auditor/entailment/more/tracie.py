"""TRACIE train_iid (Zhou et al., 2021): a five-sentence story (premise) against a temporal
statement "X starts/ends before/after Y" (hypothesis), entailment / contradiction.

Hypothesis: the query with its ``event:`` prefix removed. Every query has a twin with the
opposite relation and label on the same story.

Split: no story ids, so the hash of the cleaned story text, 5% eval (both twins and all
queries on a story together).

Length: all 1,174 pairs kept (stories are five sentences).
"""

from __future__ import annotations

import re
from pathlib import Path

from auditor.entailment.data import CONTRADICTION, ENTAILMENT, NLIPair
from auditor.entailment.more._common import clean, fits, jsonl_file, make_pair, record_label

SOURCE = "tracie"
LABEL_MAPPING: dict[str, str] = {
    "entailment": "entailment",
    "contradiction": "contradiction",
    "split": "hash of the story text, 5% eval",
}

_LABELS = {"entailment": ENTAILMENT, "contradiction": CONTRADICTION}
_EVENT = re.compile(r"^\s*event:\s*", re.IGNORECASE)


def load(root: Path) -> list[NLIPair]:
    """TRACIE stories vs temporal-relation queries, entailment / contradiction; stories
    hash-split 5% eval."""
    path = root / SOURCE / "train_iid.jsonl"
    pairs = []
    for number, record in jsonl_file(path):
        label = record_label(_LABELS, record, "label", path, number)
        premise = clean(record["story"])
        hypothesis = clean(_EVENT.sub("", record["query"]))
        if fits(premise, hypothesis):
            pairs.append(make_pair(premise, hypothesis, label, SOURCE, premise))
    return pairs
