"""SciTail dev + test (Khot et al., 2018): a web sentence (premise) against a science
question-and-answer rewritten as a statement (hypothesis), E (entails) / N (neutral).

N is SciTail's "neutral": the hypotheses are built from correct answers, so an N premise
fails to support a true statement rather than contradicting it; it maps to neutral.

Split: SciTail has no document ids and each hypothesis recurs with many premises, so pairs
sharing a premise or a hypothesis form one group (union-find); the key is the group's
first hypothesis; 5% of groups are ``eval``.

Length: all 3,430 pairs kept (longest premise 52 words; none over 220).
"""

from __future__ import annotations

from pathlib import Path

from auditor.entailment.data import ENTAILMENT, NEUTRAL, NLIPair
from auditor.entailment.more._common import (
    clean,
    find,
    fits,
    jsonl_file,
    make_pair,
    record_label,
)

SOURCE = "scitail_dev_test"
LABEL_MAPPING: dict[str, str] = {
    "E": "entailment",
    "N": "neutral",
    "split": (
        "hash of the group of pairs sharing a premise or hypothesis (key = its first "
        "hypothesis), 5% eval; dev and test both pooled"
    ),
}

_LABELS = {"E": ENTAILMENT, "N": NEUTRAL}


def load(root: Path) -> list[NLIPair]:
    """SciTail dev and test pairs, E/N; groups joined by premise or hypothesis, 5% eval."""
    rows: list[tuple[str, str, int]] = []
    for part in ("dev", "test"):
        path = root / SOURCE / part / "answers.jsonl"
        for number, record in jsonl_file(path):
            label = record_label(_LABELS, record, "gold_label", path, number)
            premise, hypothesis = clean(record["sentence1"]), clean(record["sentence2"])
            if fits(premise, hypothesis):
                rows.append((premise, hypothesis, label))

    # union-find over premise and hypothesis nodes; the root is the first hypothesis seen
    parent: dict[str, str] = {}
    for premise, hypothesis, _ in rows:
        root_h, root_p = find(parent, "h:" + hypothesis), find(parent, "p:" + premise)
        if root_h != root_p:
            if root_p.startswith("h:"):
                parent[root_h] = root_p
            else:
                parent[root_p] = root_h
    return [
        make_pair(premise, hypothesis, label, SOURCE, find(parent, "h:" + hypothesis))
        for premise, hypothesis, label in rows
    ]
