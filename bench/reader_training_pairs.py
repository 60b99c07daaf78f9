"""Build the reader's training pair file: every public NLI set, the rule-made document
pairs (not from the evaluation sets' training side, which the stacker fits on), the
evaluation sets' labelled reader part (``bench/reader_pairs.py``) and the authored
corpus (the train domains in ``data/authored/reader_trained_domains.txt``, else its reader
half), capped per source, deduplicated against held-out pairs.

``python bench/reader_training_pairs.py OUT.jsonl.xz [--data ../shared/data]
[--synth out/synth.jsonl] [--cap 20000] [--eval-cap 1000]`` writes the file that
``python -m auditor.entailment.train --pairs`` trains on (on a GPU machine too) and a
``.summary.json`` beside it (counts per source, split and label).

A training pair whose premise is the premise of any held-out pair (of any source) is
dropped: several sets share MNLI and FEVER text.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from authored_corpus import ROOT, reader_pairs

from auditor.entailment import more
from auditor.entailment.data import (
    ENTAILMENT,
    NOT_ENTAILMENT,
    TARGET_NAMES,
    NLIPair,
    load_mix,
    write_pair_file,
)

CAPS = {"imppres": 8000, "breaking_nli": 4000, "authored": 100_000, "authored_window": 100_000}
"""Per-source training caps below the default: templated sets teach their template."""


def _key(text: str) -> str:
    return " ".join(text.lower().split())


EVALUATION_SET_SOURCES = ("wice", "faithbench", "factcheck", "summedits")


def collect(data: Path, synth: Path | None, labelled: Path | None, log) -> list[NLIPair]:
    """Every pair of every source (before caps)."""
    pairs: list[NLIPair] = []
    started = time.time()
    pairs += load_mix(data / "nli")
    log(f"nli: {len(pairs)} pairs ({time.time() - started:.0f} s)")
    for name, load in more.LOADERS.items():
        got = load(data / "nli_more")
        pairs += got
        log(f"nli_more/{name}: {len(got)} pairs ({time.time() - started:.0f} s)")
    if synth and synth.is_file():
        from auditor.entailment.synth import read_pairs

        got = [
            NLIPair(p.premise, p.hypothesis, p.label, f"synth_{p.source}", p.split)
            for p in read_pairs(synth)
            # the evaluation sets' training side is fitted on by the stacker (its stacker
            # part): rule-made pairs from those documents are measured, never trained on
            if p.split == "eval" or not p.source.startswith(EVALUATION_SET_SOURCES)
        ]
        pairs += got
        log(f"synth: {len(got)} pairs")
    if labelled and labelled.is_file():
        got = []
        for line in labelled.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            source = f"evalsets_reader_part_{row['source']}"
            got.append(
                NLIPair(row["premise"], row["hypothesis"], int(row["label"]), source, "train")
            )
        pairs += got
        log(f"evaluation sets, reader part: {len(got)} pairs")
    listed = ROOT / "reader_trained_domains.txt"
    domains = set(listed.read_text().split()) if listed.is_file() else None
    for split in ("train", "dev"):
        if (ROOT / split).is_dir():
            got = reader_pairs(split, domains=domains)
            pairs += got
            log(f"authored {split}: {len(got)} pairs")
    return pairs


def stated_pairs(pairs: list[NLIPair], n: int, seed: int) -> list[NLIPair]:
    """Entailment pairs whose claim is stated verbatim: a sentence of a training premise
    against that premise (and, for a third, against itself). Minimal-edit sets (one word,
    one number changed) otherwise teach a small reader that near-identical text is a
    contradiction, so that an evidence sentence restating the claim exactly reads as one."""
    import re

    rng = np.random.default_rng(seed)
    premises = sorted({p.premise for p in pairs if p.split == "train"})
    out: list[NLIPair] = []
    for i in rng.permutation(len(premises)):
        if len(out) >= n:
            break
        premise = premises[int(i)]
        sentences = [s for s in re.split(r"(?<=[.!?])\s+", premise) if 5 <= len(s.split()) <= 40]
        if not sentences:
            continue
        sentence = sentences[int(rng.integers(len(sentences)))]
        source = "stated_verbatim"
        out.append(NLIPair(premise, sentence, ENTAILMENT, source, "train"))
        if rng.random() < 1 / 3:
            out.append(NLIPair(sentence, sentence, ENTAILMENT, source, "train"))
    return out


def select(
    pairs: list[NLIPair], cap: int, eval_cap: int, seed: int
) -> tuple[list[NLIPair], dict[str, int]]:
    """Caps per source (eval pairs too), and no training premise that is a held-out one."""
    rng = np.random.default_rng(seed)
    held = {_key(p.premise) for p in pairs if p.split == "eval"}
    dropped: Counter[str] = Counter()
    by: dict[tuple[str, str], list[NLIPair]] = defaultdict(list)
    for p in pairs:
        if p.split == "train" and (p.binary_only or _key(p.premise) in held):
            dropped[p.source] += 1
            continue
        by[(p.source, p.split)].append(p)
    out: list[NLIPair] = []
    for (source, split), items in sorted(by.items()):
        limit = eval_cap if split == "eval" else CAPS.get(source, cap)
        picks = sorted(rng.permutation(len(items))[:limit])
        out.extend(items[int(i)] for i in picks)
    return out, dict(dropped)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument(
        "--data", type=Path, default=Path(os.environ.get("RAG_AUDITOR_DATA", "../shared/data"))
    )
    parser.add_argument("--synth", type=Path, default=Path("out/synth.jsonl"))
    parser.add_argument(
        "--labelled",
        type=Path,
        default=Path("out/reader_pairs.jsonl"),
        help="bench/reader_pairs.py output (the evaluation sets' reader part)",
    )
    parser.add_argument("--cap", type=int, default=20_000)
    parser.add_argument(
        "--stated", type=int, default=12_000, help="verbatim-statement entailment pairs"
    )
    parser.add_argument("--eval-cap", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args(argv)
    pairs = collect(
        args.data, args.synth, args.labelled, lambda m: print(m, file=sys.stderr, flush=True)
    )
    pairs += stated_pairs(pairs, args.stated, args.seed)
    chosen, dropped = select(pairs, args.cap, args.eval_cap, args.seed)
    write_pair_file(chosen, args.out)
    counts: dict[str, dict[str, int]] = defaultdict(Counter)
    for p in chosen:
        counts[f"{p.source}/{p.split}"][TARGET_NAMES[p.label]] += 1
    summary = {
        "pairs": len(chosen),
        "train": sum(p.split == "train" for p in chosen),
        "eval": sum(p.split == "eval" for p in chosen),
        "not_entailment_train": sum(
            p.label == NOT_ENTAILMENT and p.split == "train" for p in chosen
        ),
        "dropped_train_pairs_sharing_a_held_out_premise_or_binary_eval_only": dropped,
        "per_source": {k: dict(v) for k, v in sorted(counts.items())},
        "cap": args.cap,
        "caps": CAPS,
        "eval_cap": args.eval_cap,
        "seed": args.seed,
        "bytes": args.out.stat().st_size,
    }
    Path(str(args.out) + ".summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(json.dumps({k: summary[k] for k in ("pairs", "train", "eval", "bytes")}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
