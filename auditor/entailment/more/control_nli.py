"""ConTRoL (Liu et al., 2021): passage-level contextual reasoning NLI from verbal-reasoning
exams, as repackaged in the Curriculum benchmark (``control.zip``).

Three-way labels. Curriculum ``train`` is the official train; ``val`` is official dev + test.
The zip's ``__MACOSX`` entries are ignored.

Split: train + val pooled; 5% hash of the passage text (``uid`` is per pair, there is no
passage id; one passage has several hypotheses).

Counts (8,323 pairs read): 4,376 dropped because the passage is over 220 words (ConTRoL marks
no evidence sentences); 3,947 kept.
"""

from __future__ import annotations

from pathlib import Path

from auditor.entailment.data import NLIPair
from auditor.entailment.more._common import THREE_WAY, zip_jsonl_pairs

SOURCE = "control_nli"
LABEL_MAPPING: dict[str, str] = {
    "entailment": "entailment",
    "neutral": "neutral",
    "contradiction": "contradiction",
    "split": "Curriculum train + val pooled; hash of the passage (premise) text, 5% eval",
}
_LABELS = THREE_WAY
_MEMBERS = ("control/train.jsonl", "control/val.jsonl")


def load(root: Path) -> list[NLIPair]:
    """ConTRoL passages of at most 220 words with their hypotheses."""
    path = Path(root) / SOURCE / "control.zip"
    return zip_jsonl_pairs(path, _MEMBERS, SOURCE, _LABELS, "premise", "hypothesis")
