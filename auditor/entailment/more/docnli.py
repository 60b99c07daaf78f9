"""Small data files of the DocNLI repo (Yin et al., 2021): binary MNLI and MCTest-NLI.

* ``Data/binary-MNLI/{dev,test}.txt``: MNLI dev-matched + dev-mismatched recast to two classes
  (neutral + contradiction -> ``not_entailment``).
* ``Data/MCTest-NLI/*_in_entail.txt``: children's stories vs statements built from MCTest
  questions and answer options (wrong options -> ``non_entailment``).

TSV without header: label, premise, hypothesis. ``entailment`` -> entailment; ``not_entailment``
/ ``non_entailment`` -> :data:`NOT_ENTAILMENT`. The repo's binary-FEVER-NLI files are not in the
snapshot (they overlap held-back FEVER-Symmetric) and are not read even if present.

Split: 5% hash of the premise text (there are no ids; an MCTest story is its own key, so all
statements about one story land on one side).

Overlap: about 7,700 of the 10,071 pairs of ``../nli/taxinli_mnli`` (TaxiNLI, from MNLI dev)
recur here with the same premise and hypothesis; deduplicate when mixing both sources.

Counts (25,407 pairs read): binary-MNLI 19,647 read, 0 dropped for length; MCTest-NLI 5,760
read, 1,888 dropped because the story is over 220 words (no evidence marks to cut it down);
23,519 kept.
"""

from __future__ import annotations

from pathlib import Path

from auditor.entailment.data import ENTAILMENT, NOT_ENTAILMENT, NLIPair
from auditor.entailment.more._common import clean, fits, label_of, make_pair, tsv_rows

SOURCE = "docnli_repo_mnli_fever_mctest"
LABEL_MAPPING: dict[str, str] = {
    "entailment": "entailment",
    "not_entailment (binary-MNLI)": "not_entailment",
    "non_entailment (MCTest-NLI)": "not_entailment",
    "split": "binary-MNLI dev + test and MCTest-NLI pooled; hash of the premise text, 5% eval",
}
_LABELS = {"entailment": ENTAILMENT, "not_entailment": NOT_ENTAILMENT}
_MCTEST_LABELS = {"entailment": ENTAILMENT, "non_entailment": NOT_ENTAILMENT}
_FILES = (
    ("binary-MNLI/dev.txt", _LABELS),
    ("binary-MNLI/test.txt", _LABELS),
    ("MCTest-NLI/mc160.train_in_entail.txt", _MCTEST_LABELS),
    ("MCTest-NLI/mc160.dev_in_entail.txt", _MCTEST_LABELS),
    ("MCTest-NLI/mc160.test_in_entail.txt", _MCTEST_LABELS),
    ("MCTest-NLI/mc500.dev_in_entail.txt", _MCTEST_LABELS),
    ("MCTest-NLI/mc500.test_in_entail.txt", _MCTEST_LABELS),
)


def load(root: Path) -> list[NLIPair]:
    """Binary MNLI (dev m+mm) and MCTest-NLI stories of at most 220 words."""
    pairs: list[NLIPair] = []
    for name, mapping in _FILES:
        path = Path(root) / SOURCE / "Data" / name
        for i, fields in tsv_rows(path, 3, encoding="utf-8"):
            label = label_of(mapping, fields[0], path, i, "label")
            premise, hypothesis = clean(fields[1]), clean(fields[2])
            if fits(premise, hypothesis):
                pairs.append(make_pair(premise, hypothesis, label, SOURCE, premise))
    return pairs
