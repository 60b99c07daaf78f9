"""Fit the learned label decision (:mod:`auditor.label_model`) on authored-corpus signals.

Usage::

    python bench/eval_authored.py --split train --signals out/signals_train.pkl
    python bench/eval_authored.py --split dev --signals out/signals_dev.pkl
    python bench/fit_label_model.py out/signals_train.pkl --dev out/signals_dev.pkl \
        --out auditor/samples/label_model.json

Every factual claim (the extractor's call) with a factual gold label is a row. The
inverse regularisation strength is chosen by leave-one-domain-out cross-validation on
the training signals (mean accuracy over held-out domains); the model is then fitted on
all of them. With ``--dev``, the rules and the model are compared on the dev claims,
per sentence as ``bench/eval_authored.py`` scores them, with paired cluster-bootstrap
intervals of the accuracy difference.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from authored_corpus import load_split
from eval_authored import ScoredClaim, load_signals, paired_accuracy, score, sentence_rows

from auditor.digest import sha256_bytes
from auditor.label_model import CLASSES, LabelModel, features, fit_label_model
from auditor.labels import LabelPolicy, decide_label

GRID = (0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0)
FACTUAL = {c.value for c in CLASSES}


def rows(claims: list[ScoredClaim]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Feature matrix, gold labels and domains of the claims the model decides."""
    chosen = [c for c in claims if c.pred != "not_factual" and c.gold in FACTUAL]
    policy = LabelPolicy()
    x = np.array([features(c.signals, policy) for c in chosen])
    return x, np.array([c.gold for c in chosen]), np.array([c.domain for c in chosen])


def choose_c(x: np.ndarray, y: np.ndarray, domains: np.ndarray) -> tuple[float, dict[str, float]]:
    """The grid value with the best mean leave-one-domain-out accuracy."""
    scores = {}
    for c in GRID:
        accs = []
        for d in np.unique(domains):
            held = domains == d
            model = fit_label_model(x[~held], y[~held], c=c)
            pred = np.array(model.classes)[model.probabilities(x[held]).argmax(axis=1)]
            accs.append(float((pred == y[held]).mean()))
        scores[str(c)] = round(float(np.mean(accs)), 4)
    best = max(GRID, key=lambda c: scores[str(c)])
    return best, scores


def relabel(claims: list[ScoredClaim], model: LabelModel | None) -> list[ScoredClaim]:
    """The claims with the model's labels, or the rules' (``model`` None); non-factual
    claims keep theirs. The rules read the same signals: an irrelevant claim is
    ``unknown`` before any vote is read, so judging it too changes none of their labels."""
    policy = LabelPolicy()
    out = []
    for c in claims:
        if c.pred == "not_factual":
            out.append(c)
            continue
        label, _ = (model.decide if model else decide_label)(c.signals, policy)
        out.append(replace(c, pred=label.value))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("train", type=Path, nargs="+", help="signals of the fitting domains")
    parser.add_argument("--dev", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    claims = [c for path in args.train for c in load_signals(path)]
    x, y, domains = rows(claims)
    c, cv = choose_c(x, y, domains)
    model = fit_label_model(
        x,
        y,
        c=c,
        provenance={
            "data": "authored corpus, train split (data/authored/train)",
            "signals_sha256": [sha256_bytes(p.read_bytes()) for p in args.train],
            "domains": sorted(set(domains.tolist())),
            "leave_one_domain_out_accuracy": cv,
        },
    )
    report: dict[str, Any] = {"c": c, "cv": cv, "rows": len(y)}
    if args.dev:
        dev = load_signals(args.dev)
        split = sorted({d.domain for d in dev})
        data = {k: v for k, v in load_split("dev").items() if k in split}
        before = sentence_rows(relabel(dev, None), data)
        after = sentence_rows(relabel(dev, model), data)
        report["dev_rules"] = score(before)
        report["dev_model"] = score(after)
        report["dev_paired_accuracy"] = paired_accuracy(before, after)
    if args.out:
        model.save(args.out)
    print(json.dumps(report, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
