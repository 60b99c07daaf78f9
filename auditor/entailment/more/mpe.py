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

from auditor.entailment.data import NLIPair
from auditor.entailment.more._common import THREE_WAY, clean, fits, label_of, make_pair, tsv_rows
from auditor.errors import InputError

SOURCE = "mpe"
LABEL_MAPPING: dict[str, str] = {
    "entailment": "entailment",
    "neutral": "neutral",
    "contradiction": "contradiction",
    "split": "train + dev + test pooled; hash of the image file name, 5% eval",
}
_LABELS = THREE_WAY
_FILES = ("mpe_train.txt", "mpe_dev.txt", "mpe_test.txt")
_FIELDS = 10
_MERGED_TAIL = re.compile(r"^\s*(\d+)\s+([A-Za-z]+)\s*$")  # "3   contradiction"


def _repair(fields: list[str]) -> list[str]:
    """Split a last field that holds the last vote count and the label ("3   contradiction")."""
    if len(fields) == _FIELDS - 1 and (merged := _MERGED_TAIL.match(fields[-1])):
        return [*fields[:-1], merged.group(1), merged.group(2)]
    return fields


def _caption(value: str, path: Path, line: int, field: str) -> tuple[str, str]:
    """(image file name, caption text) of one ``<image>.jpg#k/<caption>`` field."""
    ref, sep, text = value.partition("/")
    if not sep or "#" not in ref:
        raise InputError(
            "expected '<image>.jpg#k/<caption>'", file=str(path), line=line, field=field
        )
    text = clean(text)
    if text and text[-1] not in ".!?\"'":
        text += "."
    return ref.split("#", 1)[0].strip(), text


def load(root: Path) -> list[NLIPair]:
    """MPE items: four captions of an image -> hypothesis."""
    pairs: list[NLIPair] = []
    for name in _FILES:
        path = Path(root) / SOURCE / name
        for i, fields in tsv_rows(path, _FIELDS, skip_header=True, repair=_repair):
            label = label_of(_LABELS, fields[9], path, i, "gold_label")
            captions = [_caption(fields[k], path, i, f"premise{k}") for k in range(1, 5)]
            premise = " ".join(text for _, text in captions if text)
            hypothesis = clean(fields[5])
            if fits(premise, hypothesis):
                image = captions[0][0]
                pairs.append(make_pair(premise, hypothesis, label, SOURCE, image))
    return pairs
