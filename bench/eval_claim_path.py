"""Summary benchmarks judged the way an audit reads an answer: claim by claim.

``bench/calibrate_shared.py`` hands every benchmark item to the panel whole (a FaithBench
summary of five sentences is one "claim"). An audit first splits an answer into atomic
claims (the rules extractor) and judges each against the evidence. This script scores
both readings of the same items with the same stacker:

- ``whole``: the stacker's probability on the item as one claim, threshold 0.5;
- ``claims``: the item's factual claims judged one by one, the item's probability the
  largest of its claims' (one unsupported claim makes the summary unfaithful), with the
  threshold that maximises balanced accuracy on the training side of the reader's
  document split (chosen there, never on the reported items).

It prints, per set, κ and balanced accuracy on the evaluation side with 95 %
cluster-bootstrap intervals and the paired difference claims - whole, and the
ROC AUC of both probabilities. Votes are cached like ``calibrate_shared.py``'s
(``AUDITOR_VOTE_CACHE``)::

    AUDITOR_DATA=../shared/data python bench/eval_claim_path.py \
        --sets faithbench,summedits:news,summedits:samsum --limit 150 --eval-limit 80
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import calibrate_shared as shared


def claim_records(records: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], np.ndarray]:
    """One record per factual claim of every item (the item itself when it has none),
    and the index of the item each belongs to."""
    from auditor.extract.registry import build_extractor
    from auditor.types import Answer

    extractor = build_extractor("rules")
    answers = [Answer(id=str(i), question="", answer=r["claim"]) for i, r in enumerate(records)]
    out: list[dict[str, Any]] = []
    owner: list[int] = []
    for i, (record, extraction) in enumerate(
        zip(records, extractor.extract_detailed(answers), strict=True)
    ):
        texts = [c.text for c in extraction.claims if c.factual] or [record["claim"]]
        for j, text in enumerate(texts):
            out.append({**record, "id": f"{record['id']}#{j}", "claim": text})
            owner.append(i)
    return out, np.asarray(owner)


def item_probabilities(
    name: str, side: str, records: list[dict[str, Any]], judges: list[Any], stacker: Any
) -> tuple[np.ndarray, np.ndarray]:
    """Per item: the stacker's probability on the whole item, and the largest of its
    claims' probabilities."""
    members = [j.name for j in judges]
    whole = stacker.predict_proba(shared.cached_votes(f"{name}/{side}", records, judges), members)
    claims, owner = claim_records(records)
    votes = shared.cached_votes(f"{name}/{side}/claims", claims, judges)
    largest = np.full(len(records), -np.inf)
    np.maximum.at(largest, owner, stacker.predict_proba(votes, members))
    return whole, largest


def best_threshold(labels: np.ndarray, prob: np.ndarray) -> float:
    """The threshold in [0.30, 0.90] (step 0.01) with the best balanced accuracy."""
    from auditor.stacking.metrics import scores

    grid = np.round(np.linspace(0.30, 0.90, 61), 2)
    bacc = scores((prob[:, None] >= grid).astype(float), labels)[1]
    return float(grid[int(np.argmax(bacc))])


def main(argv: list[str] | None = None) -> int:
    from sklearn.metrics import roc_auc_score

    from auditor.judges.panel import load_panel
    from auditor.stacking.metrics import bootstrap_scores, interval
    from auditor.stacking.model import load_stacker

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=None, help="shared data folder")
    parser.add_argument("--sets", default="faithbench,summedits:news,summedits:samsum")
    parser.add_argument("--limit", type=int, default=150, help="training items per set")
    parser.add_argument("--eval-limit", type=int, default=80, help="reported items per set")
    parser.add_argument("--stacker", default=None, help="stacker JSON (default: shipped)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--bootstrap", type=int, default=2000)
    args = parser.parse_args(argv)
    root = shared.data_dir(args.data)
    if not root.exists():
        print(f"error: data folder {root} not found (set AUDITOR_DATA)", file=sys.stderr)
        return 2
    judges = list(load_panel(None).members)
    stacker = load_stacker(args.stacker)
    for name in args.sets.split(","):
        train = shared.split_records(name, root, "train", args.limit, args.seed)
        _, train_claims = item_probabilities(name, "train", train, judges, stacker)
        threshold = best_threshold(np.asarray([r["label"] for r in train]), train_claims)
        held = shared.split_records(name, root, "eval", args.eval_limit, args.seed)
        labels = np.asarray([r["label"] for r in held])
        whole, claims = item_probabilities(name, "eval", held, judges, stacker)
        pred = np.stack([whole >= stacker.threshold, claims >= threshold], axis=1).astype(float)
        boot = bootstrap_scores(
            pred,
            labels,
            np.asarray([r["cluster"] for r in held]),
            n_boot=args.bootstrap,
            rng=np.random.default_rng(args.seed),
        )
        dk = interval(boot.boot_kappa[:, 1] - boot.boot_kappa[:, 0])
        db = interval(boot.boot_bacc[:, 1] - boot.boot_bacc[:, 0])
        print(f"== {name}: n={len(held)} positives={int(labels.sum())} threshold {threshold:.2f}")
        for j, system in enumerate(("whole", "claims")):
            k, b = interval(boot.boot_kappa[:, j]), interval(boot.boot_bacc[:, j])
            auc = roc_auc_score(labels, (whole, claims)[j])
            print(
                f"  {system:6s} kappa {boot.kappa[j]:.3f} [{k[0]:.3f}, {k[1]:.3f}]  "
                f"bacc {boot.bacc[j]:.3f} [{b[0]:.3f}, {b[1]:.3f}]  AUC {auc:.3f}"
            )
        print(
            f"  claims - whole: dkappa {boot.kappa[1] - boot.kappa[0]:+.3f} "
            f"[{dk[0]:+.3f}, {dk[1]:+.3f}]  dbacc {boot.bacc[1] - boot.bacc[0]:+.3f} "
            f"[{db[0]:+.3f}, {db[1]:+.3f}]"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
