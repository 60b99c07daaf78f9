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

import json
import re
from pathlib import Path

from auditor.entailment.data import ENTAILMENT, NOT_ENTAILMENT, NLIPair, hash_split
from auditor.errors import InputError

SOURCE = "wice_nst_train"
LABEL_MAPPING: dict[str, str] = {
    "supported": "entailment",
    "partially_supported": "not_entailment",
    "not_supported": "not_entailment",
    "split": "hash of the WiCE claim id (meta.id without the sub-claim suffix), 5% eval",
}

MAX_WORDS = 220
_LABELS = {
    "supported": ENTAILMENT,
    "partially_supported": NOT_ENTAILMENT,
    "not_supported": NOT_ENTAILMENT,
}
_META = re.compile(r"^\(meta data\) (TITLE|PUBLISHED DATETIME):\s*")
_META_NAMES = {"TITLE": "Title", "PUBLISHED DATETIME": "Published"}
_MARK = re.compile(r"^(?:#+|[*|-])\s+")


def _clean(text: str) -> str:
    return " ".join(text.split())


def _sentence(text: str) -> str:
    """An article line as premise text: "(meta data) TITLE: X" -> "Title: X.", markdown
    heading / bullet marks removed."""
    text = _clean(text)
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
            evidence = record.get("evidence") or []
            indices = sorted(
                {i for group in record.get("supporting_sentences") or [] for i in group}
            )
            premise = _clean(
                " ".join(_sentence(evidence[i]) for i in indices if 0 <= i < len(evidence))
            )
            hypothesis = _clean(record.get("claim", ""))
            if not premise or not hypothesis or len(premise.split()) > MAX_WORDS:
                continue
            meta_id = str((record.get("meta") or {}).get("id") or "")
            key = meta_id.rsplit("-", 1)[0] if meta_id else hypothesis
            pairs.append(
                NLIPair(premise, hypothesis, _LABELS[value], SOURCE, hash_split(key, 0.05))
            )
    return pairs
