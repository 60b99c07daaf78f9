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

import re
from pathlib import Path

from auditor.entailment.data import CONTRADICTION, ENTAILMENT, NEUTRAL, NLIPair
from auditor.entailment.more._common import (
    clean,
    find,
    fits,
    jsonl_file,
    make_pair,
    record_label,
    union,
)
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

_LABELS = {"SUPPORT": ENTAILMENT, "REFUTE": CONTRADICTION, "NOTENOUGHINFO": NEUTRAL}
_FILES = (
    "covidCheck_train_composed+extracted.json",
    "covidCheck_dev_composed+extracted.json",
    "covidCheck_test_composed.json",
    "covidCheck_test_extracted.json",
)
_LINK_MIN_WORDS = 5
_ABSTRACT_PREFIX = re.compile(r"^Abstract\s+")  # CORD-19 first sentences: "Abstract Rapid, ..."


def _abstract_groups(corpus: dict[str, list[str]]) -> dict[str, str]:
    """cord_id -> smallest cord_id of the abstracts it shares a sentence with (transitively):
    CORD-19 holds some papers twice under two ids."""
    parent = {cord_id: cord_id for cord_id in corpus}
    first: dict[str, str] = {}
    for cord_id in sorted(corpus):
        for sentence in corpus[cord_id]:
            if len(sentence.split()) < _LINK_MIN_WORDS:
                continue
            union(parent, cord_id, first.setdefault(sentence, cord_id))
    return {cord_id: find(parent, cord_id) for cord_id in corpus}


def load(root: Path) -> list[NLIPair]:
    """Check-COVID claims vs their evidence sentences, three-way; abstracts hash-split 5% eval."""
    folder = root / SOURCE
    corpus: dict[str, list[str]] = {}
    for _, record in jsonl_file(folder / "corpus.json"):
        corpus[record["cord_id"]] = [_ABSTRACT_PREFIX.sub("", clean(s)) for s in record["abstract"]]
    groups = _abstract_groups(corpus)
    pairs = []
    for name in _FILES:
        path = folder / name
        for number, record in jsonl_file(path):
            label = record_label(_LABELS, record, "label", path, number)
            sentences = corpus.get(record["cord_id"])
            if sentences is None:
                raise InputError(
                    f"cord_id {record['cord_id']!r} not in corpus.json",
                    file=str(path),
                    line=number,
                    field="cord_id",
                )
            indices = sorted({int(e["sent_index"]) for e in record["evidence_set"]})
            premise = clean(" ".join(sentences[i] for i in indices if i < len(sentences)))
            hypothesis = clean(record["claim"])
            if fits(premise, hypothesis):
                key = groups[record["cord_id"]]
                pairs.append(make_pair(premise, hypothesis, label, SOURCE, key))
    return pairs
