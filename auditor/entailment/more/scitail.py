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

import json
from pathlib import Path

from auditor.entailment.data import ENTAILMENT, NEUTRAL, NLIPair, hash_split
from auditor.errors import InputError

SOURCE = "scitail_dev_test"
LABEL_MAPPING: dict[str, str] = {
    "E": "entailment",
    "N": "neutral",
    "split": (
        "hash of the group of pairs sharing a premise or hypothesis (key = its first "
        "hypothesis), 5% eval; dev and test both pooled"
    ),
}

MAX_WORDS = 220
_LABELS = {"E": ENTAILMENT, "N": NEUTRAL}


def _clean(text: str) -> str:
    return " ".join(text.split())


def load(root: Path) -> list[NLIPair]:
    """SciTail dev and test pairs, E/N; groups joined by premise or hypothesis, 5% eval."""
    rows: list[tuple[str, str, int]] = []
    for part in ("dev", "test"):
        path = root / SOURCE / part / "answers.jsonl"
        with path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                record = json.loads(line)
                value = str(record.get("gold_label", "")).strip()
                if value not in _LABELS:
                    raise InputError(
                        f"unknown label {value!r}", file=str(path), line=number, field="gold_label"
                    )
                premise, hypothesis = _clean(record["sentence1"]), _clean(record["sentence2"])
                if premise and hypothesis and len(premise.split()) <= MAX_WORDS:
                    rows.append((premise, hypothesis, _LABELS[value]))

    # union-find over premise and hypothesis nodes; the root is the first hypothesis seen
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for premise, hypothesis, _ in rows:
        root_h, root_p = find("h:" + hypothesis), find("p:" + premise)
        if root_h != root_p:
            if root_p.startswith("h:"):
                parent[root_h] = root_p
            else:
                parent[root_p] = root_h
    return [
        NLIPair(premise, hypothesis, label, SOURCE, hash_split(find("h:" + hypothesis), 0.05))
        for premise, hypothesis, label in rows
    ]
