"""Reader training pairs from the labelled training side of the evaluation sets.

The rule-made pairs of :mod:`auditor.entailment.synth` teach the reader what document
errors look like; these pairs teach it what the evaluation sets' own errors look like,
from their labels, on the training side of the document split only
(:func:`auditor.entailment.synth.evaluation_split`), and only on the **reader part** of
that side: a sha256 of each item's cluster (its document or claim) puts two thirds of
the training side's clusters in the reader part and the rest in the **stacker part**
(``calibrate_shared.training_part``), so a stacker fitted on the stacker part never sees votes the
reader was trained on. The held-out side is never read here.

Pairs are shaped the way the entailment judge reads (``auditor.judges.entailment``):
each claim sentence against the evidence chunks that cover it best.

- FaithBench: a summary sentence that overlaps an "Unwanted" annotation span of any
  annotator is not entailed by its three best-covering source sentences nor its two
  best-covering 200-word windows; a sentence of a summary labelled consistent (no span
  at all) is entailed by its best-covering window. Sentences with only "Benign" spans
  are left out.
- SummEdits: an inconsistent summary's sentences that no consistent summary of the same
  document contains (the edited ones) are not entailed by their best chunks; each
  sentence of a consistent summary is entailed by its best-covering window.
- WiCE: a supported claim is entailed by its first set of supporting sentences (in
  document order, joined); a partially or not supported claim is not entailed by its
  three best-covering evidence sentences.
- Factcheck-Bench stance: the claim against its evidence, completely-support ->
  entailment, refute -> contradiction, irrelevant -> neutral (partial support left out).

"Not entailed" is label 3 (:data:`auditor.entailment.data.NOT_ENTAILMENT`): the
training loss asks for neutral or contradiction without choosing between them, since
the labels do not say which.

    python bench/reader_pairs.py OUT.jsonl [--data ../shared/data]
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from calibrate_shared import (
    SUMMEDITS_DOMAINS,
    data_dir,
    load,
    split_records,
    training_part,
)
from eval_localisation import load_faithbench

from auditor.digest import sha256_text
from auditor.entailment.data import CONTRADICTION, ENTAILMENT, NEUTRAL, NOT_ENTAILMENT
from auditor.entailment.model import evidence_windows
from auditor.entailment.synth import SynthPair, evaluation_split, write_pairs
from auditor.judges.entailment import coverage
from auditor.text import sentences


def _best(chunks: list[str], part: str, k: int) -> list[str]:
    ranked = sorted(
        ((coverage(part, c), c) for c in chunks if c.strip()), key=lambda r: (-r[0], r[1])
    )
    return [c for cov, c in ranked[:k] if cov > 0]


def _chunk_pairs(
    part: str, document: str, supported: bool, source: str, doc: str, rule: str
) -> list[SynthPair]:
    """A supported claim sentence against its best-covering window; an unsupported one
    against every chunk the judge reads first: its three best-covering sentences and its
    two best-covering windows (support is the maximum over chunks, so none may entail)."""
    if supported:
        chosen = _best(evidence_windows(document), part, 1)
    else:
        chosen = list(
            dict.fromkeys(
                _best(sentences(document), part, 3) + _best(evidence_windows(document), part, 2)
            )
        )
    label = ENTAILMENT if supported else NOT_ENTAILMENT
    return [SynthPair(c, part, label, source, rule, doc, "train") for c in chosen]


def summedits_pairs(root: Path, domain: str) -> list[SynthPair]:
    """Pairs of one SummEdits domain's reader part."""
    name = f"summedits:{domain}"
    records = split_records(name, root, "reader", None, 0)
    consistent: dict[str, set[str]] = {}
    for r in load(name, root):
        if r["label"] == 0:
            consistent.setdefault(r["cluster"], set()).update(sentences(r["claim"]))
    pairs = []
    for r in records:
        parts = sentences(r["claim"]) or [r["claim"]]
        for part in parts:
            if r["label"] == 1 and part in consistent.get(r["cluster"], set()):
                continue
            pairs += _chunk_pairs(
                part, r["evidence"], r["label"] == 0, f"se_{domain}", r["cluster"], "label"
            )
    return pairs


def faithbench_pairs(root: Path) -> list[SynthPair]:
    """Pairs of FaithBench's reader part, unsupported sentences found by the spans."""
    pairs = []
    for kind in ("unwanted", "any"):
        for item in load_faithbench(root / "faithbench", kind):
            source = item["evidence"][0]
            cluster = sha256_text(source)[:16]
            if evaluation_split("faithbench", item["text"], source) != "train":
                continue
            if training_part("faithbench", cluster) != "reader":
                continue
            spans = [s for annotator in item["annotators"] for s in annotator]
            text = item["text"]
            offset = 0
            for part in sentences(text):
                start = text.find(part, offset)
                end = start + len(part)
                offset = max(offset, end)
                marked = any(s < end and start < e for s, e in spans)
                if kind == "unwanted" and marked:
                    pairs += _chunk_pairs(part, source, False, "faithbench", cluster, "span")
                elif kind == "any" and not item["annotators"]:
                    pairs += _chunk_pairs(part, source, True, "faithbench", cluster, "no span")
    return pairs


def wice_pairs(root: Path) -> list[SynthPair]:
    """Pairs of WiCE dev's reader part."""
    path = root / "wice" / "claim" / "dev.jsonl"
    pairs = []
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        evidence = [e for e in row["evidence"] if isinstance(e, str)]
        if evaluation_split("wice", row["claim"], evidence) != "train":
            continue
        cluster = sha256_text(row["claim"])[:16]
        if training_part("wice", cluster) != "reader":
            continue
        if row["label"] == "supported":
            sets = row["supporting_sentences"]
            sets = ast.literal_eval(sets) if isinstance(sets, str) else sets
            if sets and sets[0]:
                premise = " ".join(evidence[i] for i in sorted(sets[0]) if i < len(evidence))
                pairs.append(
                    SynthPair(premise, row["claim"], ENTAILMENT, "wice", "gold", cluster, "train")
                )
        else:
            for chunk in _best(evidence, row["claim"], 3):
                pairs.append(
                    SynthPair(chunk, row["claim"], NOT_ENTAILMENT, "wice", "best", cluster, "train")
                )
    return pairs


def factcheck_pairs(root: Path) -> list[SynthPair]:
    """Pairs of Factcheck-Bench stance's reader part (three-way)."""
    mapping = {"completely-support": ENTAILMENT, "refute": CONTRADICTION, "irrelevant": NEUTRAL}
    path = root / "factcheck_gpt" / "subtask3_claim_evidence_stance.jsonl"
    pairs = []
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["stance"] not in mapping:
            continue
        if evaluation_split("factcheck", row["claim"], row["evidence"]) != "train":
            continue
        cluster = sha256_text(row["claim"])[:16]
        if training_part("factcheck", cluster) != "reader":
            continue
        pairs.append(
            SynthPair(
                row["evidence"],
                row["claim"],
                mapping[row["stance"]],
                "factcheck",
                "stance",
                cluster,
                "train",
            )
        )
    return pairs


def build(root: Path) -> list[SynthPair]:
    """Every pair of the reader part of the five sets' training side."""
    pairs = wice_pairs(root) + factcheck_pairs(root) + faithbench_pairs(root)
    for domain in SUMMEDITS_DOMAINS:
        pairs += summedits_pairs(root, domain)
    return pairs


def main(argv: list[str] | None = None) -> int:
    """Write the pairs as JSONL and print their counts per source and label."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out")
    parser.add_argument("--data", default=None)
    args = parser.parse_args(argv)
    pairs = build(data_dir(args.data))
    write_pairs(pairs, args.out)
    counts = Counter((p.source, p.label) for p in pairs)
    print(json.dumps({f"{s}/{lab}": n for (s, lab), n in sorted(counts.items())}, indent=1))
    print(len(pairs), "pairs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
