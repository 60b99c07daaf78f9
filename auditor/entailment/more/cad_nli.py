"""Counterfactually-Augmented NLI (Kaushik, Hovy & Lipton, 2020), ``NLI/all_combined``.

Each original SNLI pair comes with four minimal edits: two revise the premise (same
hypothesis), two revise the hypothesis (same premise). TSV with header sentence1 / sentence2 /
gold_label, three-way labels, no quoting.

Split: official train/dev/test pooled; 5% hash of the pair's family. There are no ids, so a
family is a connected group of pairs linked by a shared premise or a shared hypothesis text
(union-find; mostly the original pair + its 4 edits, at most 20 pairs); its key is the
smallest of its texts. So a minimal pair never straddles the split, and neither does a premise.

Overlap: 619 pairs are SNLI dev/test pairs also in ``../nli/esnli_snli`` (deduplicate on
premise + hypothesis when mixing).

Counts (11,330 pairs read): 0 dropped for length (SNLI captions); 11,330 kept.
"""

from __future__ import annotations

from pathlib import Path

from auditor.entailment.data import NLIPair
from auditor.entailment.more._common import (
    THREE_WAY,
    clean,
    find,
    fits,
    label_of,
    make_pair,
    tsv_rows,
    union,
)

SOURCE = "cad_nli"
LABEL_MAPPING: dict[str, str] = {
    "entailment": "entailment",
    "neutral": "neutral",
    "contradiction": "contradiction",
    "split": (
        "train + dev + test pooled; hash of the pair family (pairs linked by a shared premise "
        "or hypothesis), 5% eval"
    ),
}
_LABELS = THREE_WAY
_FILES = ("train.tsv", "dev.tsv", "test.tsv")
_HEADER = ["sentence1", "sentence2", "gold_label"]


def load(root: Path) -> list[NLIPair]:
    """CAD-NLI original and revised pairs; a pair's family decides its split."""
    rows: list[tuple[str, str, int]] = []
    for name in _FILES:
        path = Path(root) / SOURCE / "NLI" / "all_combined" / name
        for i, fields in tsv_rows(path, 3, header=_HEADER):
            label = label_of(_LABELS, fields[2], path, i, "gold_label")
            premise, hypothesis = clean(fields[0]), clean(fields[1])
            if fits(premise, hypothesis):
                rows.append((premise, hypothesis, label))
    parent: dict[str, str] = {}
    for premise, hypothesis, _ in rows:
        union(parent, "P\t" + premise, "H\t" + hypothesis)  # the root is the smallest member
    return [
        make_pair(premise, hypothesis, label, SOURCE, find(parent, "P\t" + premise))
        for premise, hypothesis, label in rows
    ]
