"""Check-COVID (Wang et al., 2023): COVID-19 news claims (hypothesis) against sentences of
a CORD-19 abstract (premise), SUPPORT / REFUTE / NOTENOUGHINFO.

Premise: the claim's evidence sentences (PRIMARY and SUPPLEMENTARY) of its abstract, in
abstract order; for NOTENOUGHINFO this is the pointed-to sentence of the same abstract,
which does not settle the claim. Files: train, dev and both test files (composed and
journalist-extracted claims).

Split: abstracts sharing a sentence of at least five words (CORD-19 holds some papers
twice, under two ids) form one group (337 groups of 347 abstracts), keyed by its smallest
``cord_id``; 5% eval (all claims on one abstract together).

Length: all 1,504 claims kept (no evidence premise over 220 words).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from auditor.entailment.data import CONTRADICTION, ENTAILMENT, NEUTRAL, NLIPair, hash_split
from auditor.errors import InputError

SOURCE = "check_covid"
LABEL_MAPPING: dict[str, str] = {
    "SUPPORT": "entailment",
    "REFUTE": "contradiction",
    "NOTENOUGHINFO": "neutral",
    "split": (
        "hash of the abstract group (cord_ids sharing a sentence; key = smallest cord_id), "
        "5% eval; train, dev and test files all pooled"
    ),
}

MAX_WORDS = 220
_LABELS = {"SUPPORT": ENTAILMENT, "REFUTE": CONTRADICTION, "NOTENOUGHINFO": NEUTRAL}
_FILES = (
    "covidCheck_train_composed+extracted.json",
    "covidCheck_dev_composed+extracted.json",
    "covidCheck_test_composed.json",
    "covidCheck_test_extracted.json",
)
_LINK_MIN_WORDS = 5
_ABSTRACT_PREFIX = re.compile(r"^Abstract\s+")  # CORD-19 first sentences: "Abstract Rapid, ..."


def _clean(text: str) -> str:
    return " ".join(text.split())


def _abstract_groups(corpus: dict[str, list[str]]) -> dict[str, str]:
    """cord_id -> smallest cord_id of the abstracts it shares a sentence with (transitively):
    CORD-19 holds some papers twice under two ids."""
    parent = {cord_id: cord_id for cord_id in corpus}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    first: dict[str, str] = {}
    for cord_id in sorted(corpus):
        for sentence in corpus[cord_id]:
            if len(sentence.split()) < _LINK_MIN_WORDS:
                continue
            a, b = find(cord_id), find(first.setdefault(sentence, cord_id))
            if a != b:
                parent[max(a, b)] = min(a, b)
    return {cord_id: find(cord_id) for cord_id in corpus}


def load(root: Path) -> list[NLIPair]:
    """Check-COVID claims vs their evidence sentences, three-way; abstracts hash-split 5% eval."""
    folder = root / SOURCE
    corpus: dict[str, list[str]] = {}
    with (folder / "corpus.json").open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                record = json.loads(line)
                corpus[record["cord_id"]] = [
                    _ABSTRACT_PREFIX.sub("", _clean(s)) for s in record["abstract"]
                ]
    groups = _abstract_groups(corpus)
    pairs = []
    for name in _FILES:
        path = folder / name
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
                sentences = corpus.get(record["cord_id"])
                if sentences is None:
                    raise InputError(
                        f"cord_id {record['cord_id']!r} not in corpus.json",
                        file=str(path),
                        line=number,
                        field="cord_id",
                    )
                indices = sorted({int(e["sent_index"]) for e in record["evidence_set"]})
                premise = _clean(" ".join(sentences[i] for i in indices if i < len(sentences)))
                hypothesis = _clean(record["claim"])
                if not premise or not hypothesis or len(premise.split()) > MAX_WORDS:
                    continue
                split = hash_split(groups[record["cord_id"]], 0.05)
                pairs.append(NLIPair(premise, hypothesis, _LABELS[value], SOURCE, split))
    return pairs
