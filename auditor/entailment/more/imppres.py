"""IMPPRES (Jeretic et al., 2020): template-generated pairs for presupposition and scalar
implicature (low lexical diversity: a small auxiliary slice).

* ``dataset/presupposition/*.jsonl``: ``gold_label``, three-way.
* ``dataset/implicature/*.jsonl``: two labels per pair, ``gold_label_log`` (logical reading)
  and ``gold_label_prag`` (pragmatic reading). The logical reading is used: "some" does not
  entail "not all" for a strict evidence check, so those pairs are neutral.

Split: 5% hash of the group key. Presupposition pairs carry ``UID`` (the file's paradigm type)
and ``paradigmID``; a paradigm (one trigger sentence in its affirmative, negated, interrogative,
modal and conditional forms, plus its controls) is the group, key ``"<UID>#<paradigmID>"``;
no premise text occurs in two paradigms. Implicature pairs have no paradigm id: the key is the
premise text.

Counts (25,500 pairs read): 0 dropped for length (template sentences); 25,500 kept.
"""

from __future__ import annotations

import json
from pathlib import Path

from auditor.entailment.data import CONTRADICTION, ENTAILMENT, NEUTRAL, NLIPair, hash_split
from auditor.errors import InputError

SOURCE = "imppres"
LABEL_MAPPING: dict[str, str] = {
    "entailment (gold_label; implicature: gold_label_log)": "entailment",
    "neutral (gold_label; implicature: gold_label_log)": "neutral",
    "contradiction (gold_label; implicature: gold_label_log)": "contradiction",
    "split": (
        "hash of the paradigm (UID#paradigmID) for presupposition files, of the premise "
        "text for implicature files, 5% eval"
    ),
}
MAX_WORDS = 220
EVAL_SHARE = 0.05
_LABELS = {"entailment": ENTAILMENT, "neutral": NEUTRAL, "contradiction": CONTRADICTION}
_KINDS = (("presupposition", "gold_label"), ("implicature", "gold_label_log"))


def _clean(text: str) -> str:
    return " ".join(text.split())


def _label(value: object, path: Path, line: int, field: str) -> int:
    try:
        return _LABELS[str(value).strip()]
    except KeyError:
        raise InputError(
            f"unknown label {value!r}", file=str(path), line=line, field=field
        ) from None


def load(root: Path) -> list[NLIPair]:
    """IMPPRES presupposition and implicature pairs (implicature: logical labels)."""
    pairs: list[NLIPair] = []
    for kind, field in _KINDS:
        for path in sorted((Path(root) / SOURCE / "dataset" / kind).glob("*.jsonl")):
            for i, raw in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
                if not raw.strip():
                    continue
                try:
                    record = json.loads(raw)
                except json.JSONDecodeError as exc:
                    raise InputError(f"bad JSON: {exc.msg}", file=str(path), line=i) from None
                label = _label(record.get(field), path, i, field)
                premise = _clean(record.get("sentence1") or "")
                hypothesis = _clean(record.get("sentence2") or "")
                if not premise or not hypothesis or len(premise.split()) > MAX_WORDS:
                    continue
                paradigm = record.get("paradigmID")
                if kind == "presupposition" and paradigm is not None:
                    key = f"{record.get('UID') or path.stem}#{paradigm}"
                else:
                    key = premise
                pairs.append(
                    NLIPair(premise, hypothesis, label, SOURCE, hash_split(key, EVAL_SHARE))
                )
    return pairs
