"""Inter-author agreement on the authored corpus: Cohen's kappa between the first
authors' labels and a second author's blind labels of a seeded sample.

``python bench/authored_agreement.py`` reads ``data/authored/agreement/sample.jsonl`` (the
sample, sentences only) and ``second_author.jsonl`` (the second author's labels, same
order), matches each item to the first author's label by its sentence text (an item
whose sentence was edited after sampling is left out and counted), and prints kappa with
a 95 % cluster-bootstrap interval (answers are the clusters), the raw agreement and the
confusion table.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from authored_corpus import LABELS, ROOT, load_split

from auditor.stats.bootstrap import cluster_bootstrap_weights, percentile_interval


def kappa(a: np.ndarray, b: np.ndarray, w: np.ndarray | None = None) -> float:
    """Cohen's kappa of two label arrays (optionally weighted items)."""
    w = np.ones(len(a)) if w is None else w
    total = w.sum()
    observed = (w * (a == b)).sum() / total
    expected = sum(((w * (a == k)).sum() / total) * ((w * (b == k)).sum() / total) for k in LABELS)
    return float((observed - expected) / (1 - expected)) if expected < 1 else float("nan")


def main() -> int:
    folder = ROOT / "agreement"
    sample = [json.loads(x) for x in (folder / "sample.jsonl").read_text().splitlines()]
    second = [json.loads(x) for x in (folder / "second_author.jsonl").read_text().splitlines()]
    first = {
        (split, domain, s.answer_id, s.sentence): s.label
        for split in ("train", "dev")
        for domain, sentences in load_split(split).items()
        for s in sentences
    }
    a, b, clusters, missing = [], [], [], 0
    for item, other in zip(sample, second, strict=True):
        key = (item["split"], item["domain"], item["answer_id"], item["sentence"])
        if key not in first:
            missing += 1
            continue
        a.append(first[key])
        b.append(other["label"])
        clusters.append(f"{item['domain']}/{item['answer_id']}")
    x, y = np.array(a), np.array(b)
    weights = cluster_bootstrap_weights(np.array(clusters), 2000, np.random.default_rng(0))
    boot = [kappa(x, y, w) for w in weights]
    lo, hi = percentile_interval(boot)
    report = {
        "items": len(x),
        "left_out_edited_after_sampling": missing,
        "kappa": round(kappa(x, y), 3),
        "kappa_interval": [round(lo, 3), round(hi, 3)],
        "raw_agreement": round(float((x == y).mean()), 3),
        "confusion_first_vs_second": {
            k: dict(Counter(v for u, v in zip(x, y, strict=True) if u == k)) for k in LABELS
        },
    }
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
