"""Loaders for the public NLI and fact-verification sets the entailment judge trains on.

Every loader maps its dataset's labels to three classes (:data:`LABELS`) and tags each
pair ``train`` or ``eval``: official test/dev splits where the dataset has them,
otherwise a deterministic hash split over a group key (the claim), so no claim appears
on both sides. The mapping is recorded in :data:`LABEL_MAPPING` and in the training
record. Claim sets with only support/refute labels get neutral pairs by pairing a
claim with evidence that is not its gold evidence (FM2: another sentence of the same
page; FEVER: a related premise of another claim, found by BM25).
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from auditor.errors import InputError

LABELS: tuple[str, str, str] = ("entailment", "neutral", "contradiction")
ENTAILMENT, NEUTRAL, CONTRADICTION = 0, 1, 2
NOT_ENTAILMENT = 3
"""A training label meaning "neutral or contradiction, not said which" (labelled sets
that only say a claim is unsupported): its loss is that of the two classes together."""
TARGET_NAMES: tuple[str, ...] = (*LABELS, "not_entailment")
"""Names of the training labels (:data:`LABELS` and :data:`NOT_ENTAILMENT`)."""

LABEL_MAPPING: dict[str, dict[str, str]] = {
    "esnli_snli": {
        "entailment": "entailment",
        "neutral": "neutral",
        "contradiction": "contradiction",
        "split": "dev -> train, test -> eval",
    },
    "taxinli_mnli": {
        "entailment": "entailment",
        "neutral": "neutral",
        "contradiction": "contradiction",
        "split": "hash of pairID, 10% eval",
    },
    "sick": {
        "ENTAILMENT": "entailment",
        "NEUTRAL": "neutral",
        "CONTRADICTION": "contradiction",
        "split": "train + trial -> train, test -> eval",
    },
    "fever_nli_dev": {
        "entailment (SUPPORTS)": "entailment",
        "not_entailment (REFUTES)": "contradiction",
        "claim + BM25-related premise of another claim": "neutral",
        "split": "hash of claim, 10% eval",
    },
    "climate_fever": {
        "SUPPORTS": "entailment",
        "NOT_ENOUGH_INFO": "neutral",
        "REFUTES": "contradiction",
        "split": "hash of claim_id, 15% eval",
    },
    "covidfact": {
        "entailment": "entailment",
        "not_entailment (REFUTED)": "contradiction",
        "split": "RTE train -> train, RTE dev -> eval",
    },
    "healthver": {
        "Supports": "entailment",
        "Neutral": "neutral",
        "Refutes": "contradiction",
        "split": "hash of claim, 15% eval (dev file only; test is held back)",
    },
    "scifact_rte": {
        "entailment": "entailment",
        "not_entailment (CONTRADICT)": "contradiction",
        "split": "train -> train, dev -> eval",
    },
    "fm2": {
        "SUPPORTS": "entailment",
        "REFUTES": "contradiction",
        "claim + non-gold retrieved sentence of the same page": "neutral",
        "split": "hash of id, 20% eval (dev file only; test is held back)",
    },
    "rte_glue": {
        "entailment": "entailment",
        "not_entailment": "not entailment (binary eval only)",
        "split": "resplit_test -> eval only (binary)",
    },
}

_DETOK = [
    (re.compile(r"-LRB-"), "("),
    (re.compile(r"-RRB-"), ")"),
    (re.compile(r"-LSB-"), "["),
    (re.compile(r"-RSB-"), "]"),
    (re.compile(r"``|''"), '"'),
    (re.compile(r"\( "), "("),
    (re.compile(r" ([.,;:!?)'%])"), r"\1"),
    (re.compile(r" n't"), "n't"),
    (re.compile(r"\s+"), " "),
]


@dataclass(frozen=True)
class NLIPair:
    """One premise-hypothesis pair with its class (index into :data:`LABELS`)."""

    premise: str
    hypothesis: str
    label: int
    source: str
    split: str  # "train" or "eval"
    binary_only: bool = False  # label is entailment vs not (not_entailment stored as 1)


def detokenize(text: str) -> str:
    """Undo PTB-style tokenisation (``-LRB-``, spaces before punctuation)."""
    for pattern, repl in _DETOK:
        text = pattern.sub(repl, text)
    return text.strip()


def hash_split(key: str, eval_share: float) -> str:
    """``eval`` for a share ``eval_share`` of keys (by sha256 of the key), else ``train``."""
    bucket = int(hashlib.sha256(key.encode("utf-8")).hexdigest()[:8], 16) / 0xFFFFFFFF
    return "eval" if bucket < eval_share else "train"


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _tsv(path: Path) -> Iterator[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        yield from csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)


def _label(mapping: dict[str, int], value: str, path: Path, line: int, field: str) -> int:
    try:
        return mapping[value.strip()]
    except KeyError:
        raise InputError(
            f"unknown label {value!r}", file=str(path), line=line, field=field
        ) from None


_THREE = {"entailment": ENTAILMENT, "neutral": NEUTRAL, "contradiction": CONTRADICTION}


def load_snli(root: Path) -> list[NLIPair]:
    """SNLI dev (train) and test (eval) from the e-SNLI line-aligned files."""
    pairs = []
    for part, split in (("dev", "train"), ("test", "eval")):
        folder = root / "esnli_snli"
        s1, s2 = _lines(folder / f"s1.{part}.txt"), _lines(folder / f"s2.{part}.txt")
        labels_path = folder / f"labels.{part}.txt"
        for i, (p, h, y) in enumerate(zip(s1, s2, _lines(labels_path), strict=True)):
            label = _label(_THREE, y, labels_path, i + 1, "label")
            pairs.append(NLIPair(detokenize(p), detokenize(h), label, "esnli_snli", split))
    return pairs


def load_mnli(root: Path) -> list[NLIPair]:
    """TaxiNLI's MultiNLI subset; 10% of pairIDs held out."""
    path = root / "taxinli_mnli" / "taxinli10k.tsv"
    return [
        NLIPair(
            row["prem"],
            row["hyp"],
            _label(_THREE, row["label"], path, i + 2, "label"),
            "taxinli_mnli",
            hash_split(row["pairID"], 0.10),
        )
        for i, row in enumerate(_tsv(path))
    ]


def load_sick(root: Path) -> list[NLIPair]:
    """SICK: train and trial for training, the annotated test split for evaluation."""
    mapping = {"ENTAILMENT": ENTAILMENT, "NEUTRAL": NEUTRAL, "CONTRADICTION": CONTRADICTION}
    pairs = []
    for name, split in (
        ("SICK_train.txt", "train"),
        ("SICK_trial.txt", "train"),
        ("SICK_test_annotated.txt", "eval"),
    ):
        path = root / "sick" / name
        for i, row in enumerate(_tsv(path)):
            label = _label(mapping, row["entailment_judgment"], path, i + 2, "entailment_judgment")
            pairs.append(NLIPair(row["sentence_A"], row["sentence_B"], label, "sick", split))
    return pairs


def load_fever(root: Path, *, neutral_rank: int = 3) -> list[NLIPair]:
    """FEVER dev claims with gold evidence; neutral pairs pair a claim with the
    ``neutral_rank``-th BM25-ranked premise that is none of its gold premises."""
    import bm25s

    folder = root / "fever_nli_dev"
    premises = [detokenize(p) for p in _lines(folder / "dev.raw.input0.txt")]
    claims = _lines(folder / "dev.raw.input1.txt")
    labels_path = folder / "dev.label.txt"
    binary = {"entailment": ENTAILMENT, "not_entailment": CONTRADICTION}
    pairs = []
    gold: dict[str, set[str]] = {}
    for i, (p, c, y) in enumerate(zip(premises, claims, _lines(labels_path), strict=True)):
        label = _label(binary, y, labels_path, i + 1, "label")
        pairs.append(NLIPair(p, c, label, "fever_nli_dev", hash_split(c, 0.10)))
        gold.setdefault(c, set()).add(p)
    distinct = sorted({p for p in premises})
    retriever = bm25s.BM25()
    retriever.index(
        bm25s.tokenize(distinct, stopwords="en", show_progress=False), show_progress=False
    )
    unique_claims = sorted(gold)
    # every third claim gets a neutral pair, so the three classes stay roughly balanced
    chosen = unique_claims[::3]
    k = neutral_rank + 4
    docs, _ = retriever.retrieve(
        bm25s.tokenize(chosen, stopwords="en", show_progress=False), k=k, show_progress=False
    )
    for claim, ranked in zip(chosen, docs, strict=True):
        others = [distinct[j] for j in ranked if distinct[j] not in gold[claim]]
        if len(others) >= neutral_rank:
            pairs.append(
                NLIPair(
                    others[neutral_rank - 1],
                    claim,
                    NEUTRAL,
                    "fever_nli_dev",
                    hash_split(claim, 0.10),
                )
            )
    return pairs


def load_climate_fever(root: Path) -> list[NLIPair]:
    """CLIMATE-FEVER claim-evidence pairs, three-way; 15% of claims held out."""
    path = root / "climate_fever" / "climate-fever.jsonl"
    mapping = {"SUPPORTS": ENTAILMENT, "NOT_ENOUGH_INFO": NEUTRAL, "REFUTES": CONTRADICTION}
    pairs = []
    for i, line in enumerate(_lines(path)):
        record = json.loads(line)
        split = hash_split(str(record["claim_id"]), 0.15)
        for evidence in record["evidences"]:
            label = _label(mapping, evidence["evidence_label"], path, i + 1, "evidence_label")
            pairs.append(
                NLIPair(evidence["evidence"], record["claim"], label, "climate_fever", split)
            )
    return pairs


def load_covidfact(root: Path) -> list[NLIPair]:
    """COVID-Fact RTE files: train for training, dev for evaluation (REFUTED = contradiction)."""
    mapping = {"entailment": ENTAILMENT, "not_entailment": CONTRADICTION}
    pairs = []
    for name, split in (("RTE-covidfact_train.tsv", "train"), ("RTE-covidfact_dev.tsv", "eval")):
        path = root / "covidfact" / name
        for i, row in enumerate(_tsv(path)):
            claim = row.get("Sentence2") or row.get("sentence2") or ""
            value = row.get("label") or row.get("entailment") or ""
            label = _label(mapping, value, path, i + 2, "label")
            pairs.append(NLIPair(row["sentence1"], claim, label, "covidfact", split))
    return pairs


def load_healthver(root: Path) -> list[NLIPair]:
    """HealthVer dev (the only part here), three-way; 15% of claims held out."""
    path = root / "healthver" / "healthver_dev.csv"
    mapping = {"Supports": ENTAILMENT, "Neutral": NEUTRAL, "Refutes": CONTRADICTION}
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    return [
        NLIPair(
            row["evidence"],
            row["claim"],
            _label(mapping, row["label"], path, i + 2, "label"),
            "healthver",
            hash_split(row["claim"], 0.15),
        )
        for i, row in enumerate(rows)
    ]


def load_scifact(root: Path) -> list[NLIPair]:
    """SciFact rationales: train for training, dev for evaluation (CONTRADICT = contradiction)."""
    mapping = {"entailment": ENTAILMENT, "not_entailment": CONTRADICTION}
    pairs = []
    for name, split in (("RTE-scifact_train.tsv", "train"), ("RTE-scifact_dev.tsv", "eval")):
        path = root / "scifact_rte" / name
        for i, row in enumerate(_tsv(path)):
            label = _label(mapping, row["entailment"], path, i + 2, "entailment")
            pairs.append(NLIPair(row["sentence1"], row["sentence2"], label, "scifact_rte", split))
    return pairs


def load_fm2(root: Path) -> list[NLIPair]:
    """Fool Me Twice dev: gold evidence for E/C, one non-gold page sentence as neutral."""
    path = root / "fm2" / "dev.jsonl"
    mapping = {"SUPPORTS": ENTAILMENT, "REFUTES": CONTRADICTION}
    pairs = []
    for i, line in enumerate(_lines(path)):
        record = json.loads(line)
        split = hash_split(record["id"], 0.20)
        gold = [e["text"] for e in record["gold_evidence"]]
        label = _label(mapping, record["label"], path, i + 1, "label")
        pairs.append(NLIPair(" ".join(gold), record["text"], label, "fm2", split))
        others = [e["text"] for e in record["retrieved_evidence"] if e["text"] not in gold]
        if others:
            pairs.append(NLIPair(others[-1], record["text"], NEUTRAL, "fm2", split))
    return pairs


def load_rte(root: Path) -> list[NLIPair]:
    """GLUE RTE re-split test file, binary; evaluation only (not_entailment stored as neutral)."""
    path = root / "rte_glue" / "resplit_test.tsv"
    mapping = {"entailment": ENTAILMENT, "not_entailment": NEUTRAL}
    return [
        NLIPair(
            row["sentence1"],
            row["sentence2"],
            _label(mapping, row["label"], path, i + 2, "label"),
            "rte_glue",
            "eval",
            binary_only=True,
        )
        for i, row in enumerate(_tsv(path))
    ]


LOADERS: dict[str, Callable[[Path], list[NLIPair]]] = {
    "esnli_snli": load_snli,
    "taxinli_mnli": load_mnli,
    "sick": load_sick,
    "fever_nli_dev": load_fever,
    "climate_fever": load_climate_fever,
    "covidfact": load_covidfact,
    "healthver": load_healthver,
    "scifact_rte": load_scifact,
    "fm2": load_fm2,
    "rte_glue": load_rte,
}


def load_mix(root: str | Path, sources: list[str] | None = None) -> list[NLIPair]:
    """Load every named source (default: all of :data:`LOADERS`) from ``root``."""
    root = Path(root)
    if not root.is_dir():
        raise InputError("NLI data folder not found", file=str(root))
    names = sources or list(LOADERS)
    unknown = [n for n in names if n not in LOADERS]
    if unknown:
        raise InputError(
            f"unknown NLI sources {unknown}; known: {sorted(LOADERS)}", field="sources"
        )
    pairs: list[NLIPair] = []
    for name in names:
        pairs.extend(LOADERS[name](root))
    return pairs


def write_pair_file(pairs: list[NLIPair], path: str | Path) -> None:
    """Write pairs as xz-compressed JSONL (``p``, ``h``, ``y``, ``s``, ``split``, ``b``): the
    one file a training machine needs, whatever loaders made the pairs."""
    import lzma

    with lzma.open(path, "wt", encoding="utf-8", preset=6) as handle:
        for pair in pairs:
            row = {"p": pair.premise, "h": pair.hypothesis, "y": pair.label, "s": pair.source}
            row.update(split=pair.split, b=pair.binary_only)
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


def read_pair_file(path: str | Path) -> list[NLIPair]:
    """The pairs of :func:`write_pair_file`; a malformed line is an error naming it."""
    import lzma

    pairs = []
    with lzma.open(path, "rt", encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            try:
                row = json.loads(line)
                pairs.append(
                    NLIPair(
                        str(row["p"]),
                        str(row["h"]),
                        int(row["y"]),
                        str(row["s"]),
                        str(row["split"]),
                        bool(row["b"]),
                    )
                )
            except (ValueError, KeyError, TypeError) as exc:
                raise InputError(
                    f"not a pair record ({type(exc).__name__}: {exc})", file=str(path), line=number
                ) from None
    return pairs
