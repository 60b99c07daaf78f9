"""MPE, Multiple Premise Entailment (Lai, Bisk & Hockenmaier, 2017): four Flickr30k captions
of one image as premise, a short hypothesis.

TSV with header ID, premise1..premise4 (``<image>.jpg#k/<caption>``), hypothesis, three vote
counts, gold_label. The premise is the four captions (prefix up to the first ``/`` removed,
each ended with a full stop if it has no final punctuation) joined in order. One dev row
(ID 467) has a space instead of a tab before its label (``3   contradiction``); it is repaired.

Split: train/dev/test pooled; 5% hash of the image file name (the captions' document): all
items about one image land on one side.

Counts (10,000 items read): 0 dropped for length (longest premise 132 words); 10,000 kept.
"""

from __future__ import annotations

import re
from pathlib import Path

from auditor.entailment.data import CONTRADICTION, ENTAILMENT, NEUTRAL, NLIPair, hash_split
from auditor.errors import InputError

SOURCE = "mpe"
LABEL_MAPPING: dict[str, str] = {
    "entailment": "entailment",
    "neutral": "neutral",
    "contradiction": "contradiction",
    "split": "train + dev + test pooled; hash of the image file name, 5% eval",
}
MAX_WORDS = 220
EVAL_SHARE = 0.05
_LABELS = {"entailment": ENTAILMENT, "neutral": NEUTRAL, "contradiction": CONTRADICTION}
_FILES = ("mpe_train.txt", "mpe_dev.txt", "mpe_test.txt")
_FIELDS = 10
_MERGED_TAIL = re.compile(r"^\s*(\d+)\s+([A-Za-z]+)\s*$")  # "3   contradiction"


def _clean(text: str) -> str:
    return " ".join(text.split())


def _label(value: str, path: Path, line: int, field: str) -> int:
    try:
        return _LABELS[value.strip()]
    except KeyError:
        raise InputError(
            f"unknown label {value!r}", file=str(path), line=line, field=field
        ) from None


def _caption(value: str, path: Path, line: int, field: str) -> tuple[str, str]:
    """(image file name, caption text) of one ``<image>.jpg#k/<caption>`` field."""
    ref, sep, text = value.partition("/")
    if not sep or "#" not in ref:
        raise InputError(
            "expected '<image>.jpg#k/<caption>'", file=str(path), line=line, field=field
        )
    text = _clean(text)
    if text and text[-1] not in ".!?\"'":
        text += "."
    return ref.split("#", 1)[0].strip(), text


def load(root: Path) -> list[NLIPair]:
    """MPE items: four captions of an image -> hypothesis."""
    pairs: list[NLIPair] = []
    for name in _FILES:
        path = Path(root) / SOURCE / name
        lines = path.read_text(encoding="utf-8-sig").split("\n")
        for i, raw in enumerate(lines[1:], 2):
            raw = raw.rstrip("\r")
            if not raw.strip():
                continue
            fields = raw.split("\t")
            if len(fields) == _FIELDS - 1 and (merged := _MERGED_TAIL.match(fields[-1])):
                fields = [*fields[:-1], merged.group(1), merged.group(2)]
            if len(fields) != _FIELDS:
                raise InputError(
                    f"expected {_FIELDS} tab-separated fields, got {len(fields)}",
                    file=str(path),
                    line=i,
                )
            label = _label(fields[9], path, i, "gold_label")
            captions = [_caption(fields[k], path, i, f"premise{k}") for k in range(1, 5)]
            premise = " ".join(text for _, text in captions if text)
            hypothesis = _clean(fields[5])
            if not premise or not hypothesis or len(premise.split()) > MAX_WORDS:
                continue
            image = captions[0][0]
            pairs.append(NLIPair(premise, hypothesis, label, SOURCE, hash_split(image, EVAL_SHARE)))
    return pairs
