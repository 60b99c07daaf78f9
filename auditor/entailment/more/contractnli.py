"""ContractNLI dev + test (Koreeda & Manning, 2021): 17 fixed hypotheses against each
non-disclosure agreement, Entailment / Contradiction / NotMentioned.

Contracts average ~2k words, so the premise is never the whole document:

* Entailment / Contradiction: the annotated evidence spans, in document order.
* NotMentioned (no spans; the contract says nothing either way, so no part of it does):
  the one or two spans (a hash of contract and hypothesis decides, as evidence is one
  span for 44% of E/C pairs) of the same contract, of at least five words, that share the
  most hypothesis words, weighted by rarity among that contract's spans, in document
  order (one if two exceed 220 words) - a hard neutral premise on the hypothesis' topic.

Split: contracts sharing a span of at least eight words (template NDAs repeat clauses word
for word) form one group (union-find; 152 groups of 184 contracts), keyed by its smallest
file name; 5% of groups are eval (all 17 hypotheses of a contract together).

Length: 3,128 pairs; 45 dropped because the premise has more than 220 words (31
Entailment and 12 Contradiction evidence-span premises, 2 NotMentioned whose best span
alone is that long), 1 NotMentioned dropped as no span shares a hypothesis word; 3,082
kept.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import Counter
from pathlib import Path

from auditor.entailment.data import CONTRADICTION, ENTAILMENT, NEUTRAL, NLIPair
from auditor.entailment.more._common import (
    MAX_WORDS,
    clean,
    find,
    fits,
    make_pair,
    union,
    unknown_label,
)

SOURCE = "contractnli"
LABEL_MAPPING: dict[str, str] = {
    "Entailment": "entailment",
    "Contradiction": "contradiction",
    "NotMentioned": "neutral (premise: the 1-2 contract spans sharing most hypothesis words)",
    "split": (
        "hash of the contract group (contracts sharing an 8+ word span; key = smallest "
        "file name), 5% eval; dev and test both pooled"
    ),
}

_LABELS = {"Entailment": ENTAILMENT, "Contradiction": CONTRADICTION, "NotMentioned": NEUTRAL}
_MIN_SPAN_WORDS = 5
_LINK_MIN_WORDS = 8  # a shared span this long joins two contracts' groups
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    {
        "a",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "in",
        "is",
        "it",
        "its",
        "may",
        "of",
        "on",
        "or",
        "other",
        "shall",
        "some",
        "such",
        "that",
        "the",
        "to",
        "with",
    }
)


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def _line_of(text: str, start_key: str, key: str) -> int | None:
    """Line of the ``"choice"`` of annotation ``key`` in the document named ``start_key``."""
    start = text.find(f'"{start_key}"')
    if start < 0:
        return None
    match = re.compile(rf'"{re.escape(key)}"\s*:\s*\{{\s*"choice"').search(text, start)
    pos = match.end() if match else start
    return text.count("\n", 0, pos) + 1


def _neutral_premise(spans: list[str], hypothesis: str, coin: str) -> str:
    """The one or two spans (by a hash of ``coin``) sharing most rarity-weighted words with
    ``hypothesis``, in document order; one if two would exceed the word limit."""
    bags = [_words(s) if len(s.split()) >= _MIN_SPAN_WORDS else set() for s in spans]
    df = Counter(w for bag in bags for w in bag)
    target = _words(hypothesis)
    n = len(spans)
    scores = [sum(math.log(1 + n / df[w]) for w in bag & target) for bag in bags]
    ranked = sorted((i for i in range(n) if scores[i] > 0), key=lambda i: (-scores[i], i))
    count = 1 + hashlib.sha256(coin.encode("utf-8")).digest()[0] % 2
    premise = " ".join(spans[i] for i in sorted(ranked[:count]))
    if len(premise.split()) > MAX_WORDS:
        premise = " ".join(spans[i] for i in ranked[:1])
    return premise


def _contract_groups(documents: list[dict]) -> dict[str, str]:
    """file name -> smallest file name of the contracts it shares a span with (transitively):
    template NDAs repeat clauses word for word."""
    parent = {d["file_name"]: d["file_name"] for d in documents}
    first: dict[str, str] = {}
    for document in sorted(documents, key=lambda d: d["file_name"]):
        body = document["text"]
        for start, end in document["spans"]:
            span = clean(body[start:end])
            if len(span.split()) < _LINK_MIN_WORDS:
                continue
            union(parent, document["file_name"], first.setdefault(span, document["file_name"]))
    return {name: find(parent, name) for name in parent}


def load(root: Path) -> list[NLIPair]:
    """ContractNLI dev and test: evidence spans (or, for NotMentioned, the most related
    spans) vs the 17 hypotheses; contract groups hash-split 5% eval; premises over 220
    words dropped."""
    parts = []
    for part in ("dev", "test"):
        path = root / SOURCE / f"{part}.json"
        text = path.read_text(encoding="utf-8")
        parts.append((path, text, json.loads(text)))
    groups = _contract_groups([d for _, _, data in parts for d in data["documents"]])
    pairs = []
    for path, text, data in parts:
        hypotheses = {key: clean(v["hypothesis"]) for key, v in data["labels"].items()}
        for document in data["documents"]:
            body = document["text"]
            spans = [clean(body[start:end]) for start, end in document["spans"]]
            group = groups[document["file_name"]]
            for annotation_set in document["annotation_sets"]:
                for key, annotation in annotation_set["annotations"].items():
                    value = str(annotation.get("choice", "")).strip()
                    if value not in _LABELS:
                        line = _line_of(text, document["file_name"], key)
                        raise unknown_label(value, path, line, "choice")
                    hypothesis = hypotheses.get(key, "")
                    if annotation["spans"]:
                        premise = " ".join(spans[i] for i in sorted(set(annotation["spans"])))
                    elif value == "NotMentioned":
                        coin = f"{document['file_name']}/{key}"
                        premise = _neutral_premise(spans, hypothesis, coin)
                    else:
                        premise = ""
                    premise = clean(premise)
                    if fits(premise, hypothesis):
                        label = _LABELS[value]
                        pairs.append(make_pair(premise, hypothesis, label, SOURCE, group))
    return pairs
