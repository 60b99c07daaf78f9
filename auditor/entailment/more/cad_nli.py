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

from auditor.entailment.data import CONTRADICTION, ENTAILMENT, NEUTRAL, NLIPair, hash_split
from auditor.errors import InputError

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
MAX_WORDS = 220
EVAL_SHARE = 0.05
_LABELS = {"entailment": ENTAILMENT, "neutral": NEUTRAL, "contradiction": CONTRADICTION}
_FILES = ("train.tsv", "dev.tsv", "test.tsv")
_HEADER = ["sentence1", "sentence2", "gold_label"]


def _clean(text: str) -> str:
    return " ".join(text.split())


def _label(value: str, path: Path, line: int, field: str) -> int:
    try:
        return _LABELS[value.strip()]
    except KeyError:
        raise InputError(
            f"unknown label {value!r}", file=str(path), line=line, field=field
        ) from None


def _find(parent: dict[str, str], node: str) -> str:
    parent.setdefault(node, node)
    while parent[node] != node:
        parent[node] = parent[parent[node]]
        node = parent[node]
    return node


def load(root: Path) -> list[NLIPair]:
    """CAD-NLI original and revised pairs; a pair's family decides its split."""
    rows: list[tuple[str, str, int]] = []
    for name in _FILES:
        path = Path(root) / SOURCE / "NLI" / "all_combined" / name
        lines = path.read_text(encoding="utf-8-sig").split("\n")
        header = [h.strip() for h in lines[0].rstrip("\r").split("\t")]
        if header != _HEADER:
            raise InputError(f"expected header {_HEADER}, got {header}", file=str(path), line=1)
        for i, raw in enumerate(lines[1:], 2):
            raw = raw.rstrip("\r")
            if not raw.strip():
                continue
            fields = raw.split("\t")
            if len(fields) != 3:
                raise InputError(
                    f"expected 3 tab-separated fields, got {len(fields)}", file=str(path), line=i
                )
            label = _label(fields[2], path, i, "gold_label")
            premise, hypothesis = _clean(fields[0]), _clean(fields[1])
            if not premise or not hypothesis or len(premise.split()) > MAX_WORDS:
                continue
            rows.append((premise, hypothesis, label))
    parent: dict[str, str] = {}
    for premise, hypothesis, _ in rows:
        a, b = _find(parent, "P\t" + premise), _find(parent, "H\t" + hypothesis)
        if a != b:
            parent[max(a, b)] = min(a, b)  # the root is always the smallest member
    return [
        NLIPair(
            premise,
            hypothesis,
            label,
            SOURCE,
            hash_split(_find(parent, "P\t" + premise), EVAL_SHARE),
        )
        for premise, hypothesis, label in rows
    ]
