"""WiCE train split, non-supported-tokens subset (Kamoi et al., 2023): Wikipedia sub-claims
(hypothesis) against the cited web article, all labelled partially_supported.

Premise: the article's supporting sentences (the union of the annotated supporting sets),
in article order; page metadata lines read "Title: ..." / "Published: ...", and markdown
heading and bullet marks are removed. A partially supported claim is not entailed by
them, but its supported part may be, so it maps to not_entailment, not contradiction. No
supported pairs are made by deleting the unsupported tokens: the remainders are mostly
ungrammatical fragments. A label other than partially_supported / supported /
not_supported is an error.

Split: hash of the WiCE claim id (``meta.id`` without its ``-N`` sub-claim suffix: the
sub-claims of one claim share the article), 5% eval.

Length: all 374 sub-claims kept (longest supporting-sentence premise under 220 words).
"""

from __future__ import annotations

import re
from pathlib import Path

from auditor.entailment.data import ENTAILMENT, NOT_ENTAILMENT, NLIPair
from auditor.entailment.more._common import clean, fits, jsonl_file, make_pair, record_label

SOURCE = "wice_nst_train"
LABEL_MAPPING: dict[str, str] = {
    "supported": "entailment",
    "partially_supported": "not_entailment",
    "not_supported": "not_entailment",
    "split": "hash of the WiCE claim id (meta.id without the sub-claim suffix), 5% eval",
}

_LABELS = {
    "supported": ENTAILMENT,
    "partially_supported": NOT_ENTAILMENT,
    "not_supported": NOT_ENTAILMENT,
}
_META = re.compile(r"^\(meta data\) (TITLE|PUBLISHED DATETIME):\s*")
_META_NAMES = {"TITLE": "Title", "PUBLISHED DATETIME": "Published"}
_MARK = re.compile(r"^(?:#+|[*|-])\s+")


def _sentence(text: str) -> str:
    """An article line as premise text: "(meta data) TITLE: X" -> "Title: X.", markdown
    heading / bullet marks removed."""
    text = clean(text)
    match = _META.match(text)
    if match:
        text = f"{_META_NAMES[match.group(1)]}: {text[match.end() :]}"
    else:
        stripped = _MARK.sub("", text)
        if stripped == text:
            return text
        text = stripped
    return text if not text or text.endswith((".", "?", "!", ":")) else text + "."


def load(root: Path) -> list[NLIPair]:
    """WiCE sub-claims vs their supporting article sentences (partially supported =
    not_entailment); claims hash-split 5% eval."""
    path = root / SOURCE / "train.jsonl"
    pairs = []
    for number, record in jsonl_file(path):
        label = record_label(_LABELS, record, "label", path, number)
        evidence = record.get("evidence") or []
        indices = sorted({i for group in record.get("supporting_sentences") or [] for i in group})
        premise = clean(" ".join(_sentence(evidence[i]) for i in indices if 0 <= i < len(evidence)))
        hypothesis = clean(record.get("claim", ""))
        if not fits(premise, hypothesis):
            continue
        meta_id = str((record.get("meta") or {}).get("id") or "")
        key = meta_id.rsplit("-", 1)[0] if meta_id else hypothesis
        pairs.append(make_pair(premise, hypothesis, label, SOURCE, key))
    return pairs
