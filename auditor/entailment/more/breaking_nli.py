"""Breaking NLI (Glockner, Shwartz & Goldberg, 2018): SNLI training premises with one word or
phrase substituted in the hypothesis (87% contradiction).

``breaking_nli_dataset.zip`` -> ``data/dataset.jsonl``: sentence1, sentence2, gold_label,
annotator_labels, category, pairID. Three-way labels.

Split: 5% hash of the premise text (``pairID`` is per pair; about 1,800 premises carry the
8,193 substitutions, so each premise keeps all its substitutions on one side).

Counts (8,193 pairs read): 0 dropped for length (SNLI captions); 8,193 kept.
"""

from __future__ import annotations

from pathlib import Path

from auditor.entailment.data import NLIPair
from auditor.entailment.more._common import THREE_WAY, zip_jsonl_pairs

SOURCE = "breaking_nli"
LABEL_MAPPING: dict[str, str] = {
    "entailment": "entailment",
    "neutral": "neutral",
    "contradiction": "contradiction",
    "split": "single test file; hash of the premise text, 5% eval",
}
_LABELS = THREE_WAY
_MEMBER = "data/dataset.jsonl"


def load(root: Path) -> list[NLIPair]:
    """Breaking NLI substitution pairs."""
    path = Path(root) / SOURCE / "breaking_nli_dataset.zip"
    return zip_jsonl_pairs(path, (_MEMBER,), SOURCE, _LABELS, "sentence1", "sentence2")
