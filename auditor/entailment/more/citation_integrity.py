"""Citation-Integrity (Sarol et al., 2024), MultiVerS packaging: a biomedical citing
sentence (hypothesis) against sentences of the cited paper (premise).

Labels: SUPPORT -> entailment; REFUTE -> not_entailment, not contradiction, because this
packaging's REFUTE is the original NOT_ACCURATE, which also covers "not substantiated",
"oversimplified", "misquoted", "indirect" citations (see SOURCE.txt); NEI (no evidence
sentence: the passage is irrelevant to the citation) -> neutral.

Premise: the evidence sentence(s) for SUPPORT / REFUTE; for NEI the whole passage (the ~5
sentences of the cited paper retrieved for that citation). Hypothesis: the citing sentence
with the citation markers (``[<|cit|>]``, ``(<|multi_cit|>)``, ``<|other_cit|>`` ...) removed.

Split: every citation has its own ``doc_id``, but a paper cited several times recurs under
several ids with the same sentences, so passages sharing a sentence of at least five words
form one group (union-find; 180 groups), keyed by its smallest ``doc_id``; 5% eval.

Length: 3,060 claims; 11 dropped because the premise has more than 220 words (10 NEI
passages, 1 SUPPORT evidence sentence); 3,049 kept.
"""

from __future__ import annotations

import re
from pathlib import Path

from auditor.entailment.data import ENTAILMENT, NEUTRAL, NOT_ENTAILMENT, NLIPair
from auditor.entailment.more._common import clean, find, fits, jsonl_file, make_pair, union
from auditor.errors import InputError

SOURCE = "citation_integrity"
LABEL_MAPPING: dict[str, str] = {
    "SUPPORT": "entailment",
    "REFUTE": "not_entailment (original NOT_ACCURATE: not only contradiction)",
    "NEI": "neutral (no evidence sentence; premise = the retrieved passage)",
    "split": (
        "hash of the cited-paper group (passages sharing a sentence; key = smallest doc_id), "
        "5% eval; train, dev and test all pooled"
    ),
}

_LABELS = {"SUPPORT": ENTAILMENT, "REFUTE": NOT_ENTAILMENT}
_CITE_GROUP = re.compile(r"\s*[\[(][^\[\]()]*<\|\w+\|>[^\[\]()]*[\])]")
_CITE = re.compile(r"<\|\w+\|>")
_SPACE_PUNCT = re.compile(r"\s+([.,;:])")
_LINK_MIN_WORDS = 5
_HEADING = re.compile(r"^#+\s*")  # some passage sentences are markdown headings


def _claim_text(text: str) -> str:
    text = _CITE.sub(" ", _CITE_GROUP.sub("", text))
    return clean(_SPACE_PUNCT.sub(r"\1", clean(text)))


def _paper_groups(corpus: dict[int, list[str]]) -> dict[int, int]:
    """doc_id -> smallest doc_id of the passages it shares a sentence with (transitively)."""
    parent = {doc_id: doc_id for doc_id in corpus}
    first: dict[str, int] = {}
    for doc_id in sorted(corpus):
        for sentence in corpus[doc_id]:
            if len(sentence.split()) < _LINK_MIN_WORDS:
                continue
            union(parent, doc_id, first.setdefault(sentence, doc_id))
    return {doc_id: find(parent, doc_id) for doc_id in corpus}


def load(root: Path) -> list[NLIPair]:
    """Citing sentences vs cited-paper evidence (SUPPORT / REFUTE) or passage (NEI); cited-paper
    groups hash-split 5% eval; premises over 220 words dropped."""
    folder = root / SOURCE
    corpus: dict[int, list[str]] = {}
    for _, record in jsonl_file(folder / "corpus.jsonl"):
        corpus[int(record["doc_id"])] = [_HEADING.sub("", clean(s)) for s in record["abstract"]]
    groups = _paper_groups(corpus)
    pairs = []
    for part in ("train", "dev", "test"):
        path = folder / f"claims_{part}.jsonl"
        for number, record in jsonl_file(path):
            doc_id = int(record["cited_doc_ids"][0])
            sentences = corpus.get(doc_id, [])
            evidence = [
                (group["label"], index)
                for group_list in record["evidence"].values()
                for group in group_list
                for index in group["sentences"]
            ]
            if evidence:
                values = {str(value).strip() for value, _ in evidence}
                bad = values - set(_LABELS)
                if bad or len(values) != 1:
                    raise InputError(
                        f"unknown or mixed labels {sorted(values)!r}",
                        file=str(path),
                        line=number,
                        field="evidence.label",
                    )
                label = _LABELS[values.pop()]
                indices = sorted({index for _, index in evidence})
                premise = " ".join(sentences[i] for i in indices if i < len(sentences))
            else:
                label = NEUTRAL
                premise = " ".join(sentences)
            premise = clean(premise)
            hypothesis = _claim_text(record["claim"])
            if fits(premise, hypothesis):
                key = str(groups.get(doc_id, doc_id))
                pairs.append(make_pair(premise, hypothesis, label, SOURCE, key))
    return pairs
