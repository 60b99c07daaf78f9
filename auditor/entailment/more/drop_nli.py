"""DROP passages recast to binary NLI (Curriculum benchmark, ``drop.zip``).

Premise = a DROP passage (NFL game summaries, history articles), hypothesis = a statement
built from a question and a (right or wrong) answer, often ungrammatical ("3 points did the
buccaneers need to tie in the first"). ``entailed`` -> entailment, ``not-entailed`` ->
:data:`NOT_ENTAILMENT`. The zip's ``__MACOSX`` entries are ignored.

Split: Curriculum train + val pooled; 5% hash of the passage text (rows carry only a running
index, no passage id; one passage has many statements).

Counts (33,148 pairs read): 11,125 dropped because the passage is over 220 words (DROP marks
no evidence sentences); 22,023 kept.
"""

from __future__ import annotations

from pathlib import Path

from auditor.entailment.data import ENTAILMENT, NOT_ENTAILMENT, NLIPair
from auditor.entailment.more._common import zip_jsonl_pairs

SOURCE = "drop_nli"
LABEL_MAPPING: dict[str, str] = {
    "entailed": "entailment",
    "not-entailed": "not_entailment",
    "split": "Curriculum train + val pooled; hash of the passage (premise) text, 5% eval",
}
_LABELS = {"entailed": ENTAILMENT, "not-entailed": NOT_ENTAILMENT}
_MEMBERS = ("drop/train.jsonl", "drop/val.jsonl")


def load(root: Path) -> list[NLIPair]:
    """DROP-NLI passages of at most 220 words with their statements."""
    path = Path(root) / SOURCE / "drop.zip"
    return zip_jsonl_pairs(path, _MEMBERS, SOURCE, _LABELS, "premise", "hypothesis")
