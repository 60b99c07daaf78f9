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

from pathlib import Path

from auditor.entailment.data import NLIPair
from auditor.entailment.more._common import THREE_WAY, clean, fits, jsonl_file, label_of, make_pair

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
_LABELS = THREE_WAY
_KINDS = (("presupposition", "gold_label"), ("implicature", "gold_label_log"))


def load(root: Path) -> list[NLIPair]:
    """IMPPRES presupposition and implicature pairs (implicature: logical labels)."""
    pairs: list[NLIPair] = []
    for kind, field in _KINDS:
        for path in sorted((Path(root) / SOURCE / "dataset" / kind).glob("*.jsonl")):
            for i, record in jsonl_file(path):
                label = label_of(_LABELS, record.get(field), path, i, field)
                premise = clean(record.get("sentence1"))
                hypothesis = clean(record.get("sentence2"))
                if not fits(premise, hypothesis):
                    continue
                paradigm = record.get("paradigmID")
                if kind == "presupposition" and paradigm is not None:
                    key = f"{record.get('UID') or path.stem}#{paradigm}"
                else:
                    key = premise
                pairs.append(make_pair(premise, hypothesis, label, SOURCE, key))
    return pairs
