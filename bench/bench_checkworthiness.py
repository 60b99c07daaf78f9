"""Precision and recall of ``not_factual`` on Factcheck-GPT's check-worthiness labels.

Data (``factcheck_gpt/`` of the data directory, Wang et al. 2023, Apache-2.0):
- ``subtask1_sentence_checkworthiness.jsonl``: 311 answer sentences labelled ``yes``
  (check-worthy) or ``opinion`` / ``other`` / ``not_a_claim``;
- ``subtask2_claim_checkworthiness.jsonl``: 678 claims labelled ``factual`` or
  ``opinion`` / ``not_a_claim``.

Each sentence or claim is extracted alone as an answer by the ``rules`` extractor; it
is predicted ``not_factual`` when none of its claims is factual. Gold ``not_factual`` is
every label but ``yes`` / ``factual``. Precision and recall of ``not_factual`` carry a
95% bootstrap percentile interval (items resampled, 2000 resamples), per file and
pooled; the items each side got wrong are listed with ``--show``.

Usage: python bench/bench_checkworthiness.py [--data DIR] [--seed 0] [--show]
(data dir default: $AUDITOR_DATA or ../shared/data relative to the repo).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

from auditor.extract import build_extractor
from auditor.stats.bootstrap import cluster_bootstrap_weights, percentile_interval
from auditor.types import Answer

REPO = Path(__file__).resolve().parents[1]
FILES = {
    "sentences": ("subtask1_sentence_checkworthiness.jsonl", "sentence", "yes"),
    "claims": ("subtask2_claim_checkworthiness.jsonl", "claim", "factual"),
}
"""Per file: its name, the field holding the text, the label of a check-worthy item."""


def _data_dir(arg: str | None) -> Path:
    if arg:
        return Path(arg)
    return Path(os.environ.get("AUDITOR_DATA", REPO.parent / "shared" / "data"))


def _load(path: Path, field: str, worthy: str) -> tuple[list[str], np.ndarray]:
    """Texts and gold ``not_factual`` flags of one file."""
    texts, gold = [], []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                row = json.loads(line)
                texts.append(row[field])
                gold.append(row["checkworthy"] != worthy)
    return texts, np.array(gold, dtype=bool)


def predict(texts: list[str]) -> tuple[np.ndarray, list[str]]:
    """Whether the ``rules`` extractor finds no factual claim in each text, and the kinds
    of its non-factual claims (for the listing)."""
    answers = [Answer(id=str(i), question="", answer=t) for i, t in enumerate(texts)]
    extracted = build_extractor("rules").extract_many(answers)
    flags = np.array([not any(c.factual for c in claims) for claims in extracted], dtype=bool)
    kinds = [",".join(sorted({c.kind for c in claims if not c.factual})) for claims in extracted]
    return flags, kinds


def _fmt(num: np.ndarray, den: np.ndarray, weights: np.ndarray) -> str:
    if den.sum() == 0:
        return "undefined"
    with np.errstate(invalid="ignore", divide="ignore"):
        boot = (weights @ num) / (weights @ den)
    lo, hi = percentile_interval(boot)
    return f"{num.sum() / den.sum():.3f} [{lo:.3f}, {hi:.3f}] ({int(num.sum())}/{int(den.sum())})"


def report(name: str, gold: np.ndarray, pred: np.ndarray, seed: int) -> None:
    """Print precision and recall of ``not_factual`` with their intervals."""
    weights = cluster_bootstrap_weights(np.arange(gold.size), 2000, np.random.default_rng(seed))
    hit = (gold & pred).astype(float)
    print(
        f"[{name}] n={gold.size} gold not_factual={int(gold.sum())} "
        f"predicted={int(pred.sum())}\n"
        f"  precision {_fmt(hit, pred.astype(float), weights)}\n"
        f"  recall    {_fmt(hit, gold.astype(float), weights)}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=None, help="data directory")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--show", action="store_true", help="list the wrong predictions")
    args = parser.parse_args(argv)
    folder = _data_dir(args.data) / "factcheck_gpt"
    pooled_gold, pooled_pred = [], []
    for name, (filename, field, worthy) in FILES.items():
        path = folder / filename
        if not path.exists():
            print(f"{path} not found; pass --data or set AUDITOR_DATA", file=sys.stderr)
            return 1
        texts, gold = _load(path, field, worthy)
        pred, kinds = predict(texts)
        report(name, gold, pred, args.seed)
        if args.show:
            for text, g, p, kind in zip(texts, gold, pred, kinds, strict=True):
                if g != p:
                    print(f"    {'FP' if p else 'FN'} {kind or '-':12} {text}")
        pooled_gold.append(gold)
        pooled_pred.append(pred)
    report("pooled", np.concatenate(pooled_gold), np.concatenate(pooled_pred), args.seed)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
