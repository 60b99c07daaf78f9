"""Before and after on the authored corpus, paired: the labels of a baseline run against
the rules and the learned label decision on a candidate run's signals.

Usage::

    python bench/eval_authored.py --split test --weights OLD --stacker OLD.json \
        --signals out/base.pkl
    python bench/eval_authored.py --split test --policy model.toml --signals out/cand.pkl
    python bench/compare_decisions.py test out/base.pkl out/cand.pkl \
        [--label-model auditor/samples/label_model.json]

Prints, per sentence as ``bench/eval_authored.py`` scores it, the baseline's figures (its
labels as run), the candidate's figures under the rules and under the label model, and
the paired accuracy differences against the baseline (95 % cluster bootstrap over
answers). Aggregates only: the test split's items are never printed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from authored_corpus import load_split
from eval_authored import load_signals, paired_accuracy, score, sentence_rows
from fit_label_model import relabel

from auditor.label_model import load_label_model


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("split")
    parser.add_argument("baseline", type=Path)
    parser.add_argument("candidate", type=Path)
    parser.add_argument("--label-model", default="auditor/samples/label_model.json")
    args = parser.parse_args(argv)
    base = load_signals(args.baseline)
    cand = load_signals(args.candidate)
    data = load_split(args.split, only={c.domain for c in base} | {c.domain for c in cand})
    model = load_label_model(args.label_model)
    rows = {
        "baseline": sentence_rows(base, data),
        "rules": sentence_rows(relabel(cand, None), data),
        "label_model": sentence_rows(relabel(cand, model), data),
    }
    report: dict[str, object] = {name: score(r) for name, r in rows.items()}
    for name in ("rules", "label_model"):
        report[f"{name}_vs_baseline"] = paired_accuracy(rows["baseline"], rows[name])
    report["label_model_vs_rules"] = paired_accuracy(rows["rules"], rows["label_model"])
    print(json.dumps(report, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
