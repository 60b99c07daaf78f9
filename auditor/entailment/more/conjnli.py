"""ConjNLI (Saha et al., 2020): NLI stress test for conjunctions.

* ``conj_dev.tsv``: the human-annotated dev set (623 pairs).
* ``adversarial_train_15k.tsv``: 15,000 automatically perturbed pairs (labels rule-derived,
  somewhat noisy); partly PTB-tokenised (`` ,``, spaced quotes), so both files go through
  :func:`detokenize`.

TSV (UTF-8 with BOM, header Premise / Hypothesis / Label, no quoting), three-way labels.

Split: dev + adversarial pooled; 5% hash of the (cleaned) premise text (no ids).

Counts (15,623 pairs read): 0 dropped for length (longest premise 42 words); 15,623 kept.
"""

from __future__ import annotations

from pathlib import Path

from auditor.entailment.data import NLIPair, detokenize
from auditor.entailment.more._common import THREE_WAY, clean, fits, label_of, make_pair, tsv_rows

SOURCE = "conjnli"
LABEL_MAPPING: dict[str, str] = {
    "entailment": "entailment",
    "neutral": "neutral",
    "contradiction": "contradiction",
    "split": "conj_dev + adversarial_train_15k pooled; hash of the premise text, 5% eval",
}
_LABELS = THREE_WAY
_FILES = ("conj_dev.tsv", "adversarial_train_15k.tsv")
_HEADER = ["Premise", "Hypothesis", "Label"]


def load(root: Path) -> list[NLIPair]:
    """ConjNLI dev and adversarial training pairs, detokenised."""
    pairs: list[NLIPair] = []
    for name in _FILES:
        path = Path(root) / SOURCE / name
        for i, fields in tsv_rows(path, 3, header=_HEADER):
            label = label_of(_LABELS, fields[2], path, i, "Label")
            premise, hypothesis = clean(detokenize(fields[0])), clean(detokenize(fields[1]))
            if fits(premise, hypothesis):
                pairs.append(make_pair(premise, hypothesis, label, SOURCE, premise))
    return pairs
