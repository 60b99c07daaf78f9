"""Fit the learned check-worthiness screen on the authored corpus's train split.

    python bench/fit_checkworthiness.py [--out auditor/samples/checkworthiness.json]
                                        [--c 3] [--threshold 0.5] [--folds 5]

Every labelled sentence of the train split is extracted alone by the ``rules``
extractor without the screen; the sentences it keeps factual are the screen's inputs,
labelled not check-worthy when their gold label is ``not_factual``
(:func:`auditor.extract.checkworthiness.fit_screen`). Printed: the domain-grouped
cross-validated precision and recall of ``not_factual`` on train (the rules alone, and
the rules then the screen with its number-or-name guard, refitted per fold), and the
same on the dev split with the screen fitted on all of train. The test split is not read.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from authored_corpus import load_split

from auditor.extract import build_extractor
from auditor.extract.checkworthiness import fit_screen
from auditor.extract.rules import load_nlp
from auditor.types import Answer

REPO = Path(__file__).resolve().parents[1]


def sentences(split: str) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """Texts, gold not_factual, the rules' not_factual (alone, no screen), domains."""
    rows = [s for domain in load_split(split).values() for s in domain]
    texts = [s.sentence for s in rows]
    extractor = build_extractor("rules", checkworthiness=False)
    found = extractor.extract_detailed(
        [Answer(id=f"s{i}", question="", answer=t) for i, t in enumerate(texts)]
    )
    rules = np.array([not any(c.factual for c in e.claims) for e in found])
    gold = np.array([s.label == "not_factual" for s in rows])
    return texts, gold, rules, np.array([s.domain for s in rows])


def figures(predicted: np.ndarray, gold: np.ndarray) -> str:
    """Precision and recall of not_factual."""
    hit = int((predicted & gold).sum())
    return (
        f"precision {hit / max(int(predicted.sum()), 1):.3f} "
        f"recall {hit / max(int(gold.sum()), 1):.3f} (n={len(gold)}, not_factual {gold.sum()})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "auditor/samples/checkworthiness.json")
    parser.add_argument("--c", type=float, default=3.0)
    parser.add_argument("--threshold", type=float, default=0.5)
    parser.add_argument("--folds", type=int, default=5)
    args = parser.parse_args()

    texts, gold, rules, domains = sentences("train")
    names = sorted(set(domains))
    fold_of = {name: i % args.folds for i, name in enumerate(names)}
    folds = np.array([fold_of[d] for d in domains])
    screened = rules.copy()
    for k in range(args.folds):
        fit_rows = np.flatnonzero((folds != k) & ~rules)
        test_rows = np.flatnonzero((folds == k) & ~rules)
        screen = fit_screen(
            [texts[i] for i in fit_rows], gold[fit_rows], c=args.c, threshold=args.threshold
        )
        screened[test_rows] = screen.flags([texts[i] for i in test_rows], load_nlp())
    print(f"train, rules alone:        {figures(rules, gold)}")
    print(f"train, rules + screen (cv): {figures(screened, gold)}")

    keep = np.flatnonzero(~rules)
    screen = fit_screen(
        [texts[i] for i in keep],
        gold[keep],
        c=args.c,
        threshold=args.threshold,
        provenance={
            "data": "data/authored train split, sentences the rules keep factual",
            "domains": len(names),
            "fit_by": "bench/fit_checkworthiness.py",
        },
    )
    dev_texts, dev_gold, dev_rules, _ = sentences("dev")
    dev_keep = np.flatnonzero(~dev_rules)
    dev_screened = dev_rules.copy()
    dev_screened[dev_keep] = screen.flags([dev_texts[i] for i in dev_keep], load_nlp())
    print(f"dev, rules alone:          {figures(dev_rules, dev_gold)}")
    print(f"dev, rules + screen:       {figures(dev_screened, dev_gold)}")
    screen.save(args.out)
    print(f"wrote {args.out} (digest {screen.digest[:12]})")


if __name__ == "__main__":
    main()
