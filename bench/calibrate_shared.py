"""Loaders for the shared benchmark sets -> ``auditor calibrate`` DATA.jsonl records.

Every record is ``{"id", "cluster", "claim", "evidence", "label"}`` with label
1 = hallucinated/unsupported, 0 = supported. Mappings follow issue 5 exactly:

- ``wice``: WiCE claim dev; ``supported`` -> 0, ``partially_supported`` and
  ``not_supported`` -> 1; cluster = claim.
- ``summedits:<domain>``: SummEdits; label 1 (consistent) -> 0, 0 -> 1;
  cluster = document.
- ``factcheck``: Factcheck-Bench stance; ``completely-support`` -> 0,
  ``refute`` and ``irrelevant`` -> 1, ``partially-support`` dropped;
  cluster = claim.
- ``faithbench``: FaithBench summary level (``worst-label`` of FaithBench.csv);
  Consistent/Benign -> 0, Unwanted -> 1, Questionable dropped; cluster = source.

Usage::

    python bench/calibrate_shared.py wice OUT.jsonl [--data DIR] [--limit N] [--seed S]

The data path defaults to ``../shared/data`` relative to the repository, and is
overridden by the environment variable ``AUDITOR_DATA`` or ``--data``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from auditor.digest import sha256_text

SUMMEDITS_DOMAINS = ("news", "podcast", "sales_call", "sales_email", "samsum")
DATASETS = ("wice", *(f"summedits:{d}" for d in SUMMEDITS_DOMAINS), "factcheck", "faithbench")

Record = dict[str, Any]


def data_dir(explicit: str | None = None) -> Path:
    """The shared data folder: ``explicit``, else $AUDITOR_DATA, else ../shared/data."""
    if explicit:
        return Path(explicit)
    env = os.environ.get("AUDITOR_DATA")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[1].parent / "shared" / "data"


def load_wice(root: Path) -> Iterator[Record]:
    """WiCE claim dev."""
    mapping = {"supported": 0, "partially_supported": 1, "not_supported": 1}
    with open(root / "wice" / "claim" / "dev.jsonl", encoding="utf-8") as handle:
        for i, line in enumerate(handle):
            row = json.loads(line)
            ident = str(row.get("meta", {}).get("id", i))
            yield {
                "id": f"wice-{ident}",
                "cluster": sha256_text(row["claim"])[:16],
                "claim": row["claim"],
                "evidence": list(row["evidence"]),
                "label": mapping[row["label"]],
            }


def load_summedits(root: Path, domain: str) -> Iterator[Record]:
    """One SummEdits domain (both its ``evaluation`` and ``test`` splits)."""
    rows = json.loads((root / "summedits" / f"summedits_{domain}.json").read_text("utf-8"))
    for row in rows:
        yield {
            "id": f"summedits-{domain}-{row['id']}",
            "cluster": sha256_text(row["doc"])[:16],
            "claim": row["summary"],
            "evidence": row["doc"],
            "label": 1 - int(row["label"]),
        }


def load_factcheck(root: Path) -> Iterator[Record]:
    """Factcheck-Bench claim/evidence stance (partially-support dropped)."""
    mapping = {"completely-support": 0, "refute": 1, "irrelevant": 1}
    path = root / "factcheck_gpt" / "subtask3_claim_evidence_stance.jsonl"
    with open(path, encoding="utf-8") as handle:
        for i, line in enumerate(handle):
            row = json.loads(line)
            if row["stance"] not in mapping:
                continue
            yield {
                "id": f"factcheck-{i}",
                "cluster": sha256_text(row["claim"])[:16],
                "claim": row["claim"],
                "evidence": row["evidence"],
                "label": mapping[row["stance"]],
            }


def load_faithbench(root: Path) -> Iterator[Record]:
    """FaithBench summary level from FaithBench.csv's ``worst-label``."""
    mapping = {"Consistent": 0, "Benign": 0, "Unwanted": 1}
    with open(root / "faithbench" / "FaithBench.csv", encoding="utf-8", newline="") as handle:
        for i, row in enumerate(csv.DictReader(handle)):
            label = row["worst-label"].split(".")[0]
            if label not in mapping:
                continue
            yield {
                "id": f"faithbench-{i}",
                "cluster": sha256_text(row["source"])[:16],
                "claim": row["summary"].strip(),
                "evidence": row["source"],
                "label": mapping[label],
            }


def load(
    name: str, root: Path | None = None, *, limit: int | None = None, seed: int = 0
) -> list[Record]:
    """Records of one dataset; ``limit`` keeps a random subset of whole clusters' items
    (items are sampled, clusters are kept as they are)."""
    root = root or data_dir()
    if name == "wice":
        records = list(load_wice(root))
    elif name.startswith("summedits:"):
        domain = name.split(":", 1)[1]
        if domain not in SUMMEDITS_DOMAINS:
            raise ValueError(f"name: unknown SummEdits domain {domain!r}")
        records = list(load_summedits(root, domain))
    elif name == "factcheck":
        records = list(load_factcheck(root))
    elif name == "faithbench":
        records = list(load_faithbench(root))
    else:
        raise ValueError(f"name: unknown dataset {name!r}; known: {', '.join(DATASETS)}")
    if limit is not None and limit < len(records):
        keep = np.sort(np.random.default_rng(seed).choice(len(records), limit, replace=False))
        records = [records[i] for i in keep]
    return records


def to_pairs(records: list[Record]) -> list[Any]:
    """Judge pairs of the records (evidence string or list of strings)."""
    from auditor.types import JudgePair

    pairs = []
    for r in records:
        evidence = r["evidence"]
        evidence = (evidence,) if isinstance(evidence, str) else tuple(evidence)
        pairs.append(JudgePair(claim=r["claim"], evidence=evidence))
    return pairs


def _code_digest(judge: Any) -> str:
    """Digest of the source of the judge's module and the shared text helpers: a code
    change invalidates cached votes even when the judge's name, version and params do not
    change."""
    import inspect

    import auditor.judges._text as text_helpers

    sources = [
        inspect.getsource(inspect.getmodule(type(judge)) or type(judge)),
        inspect.getsource(text_helpers),
    ]
    return sha256_text("\n".join(sources))[:8]


def cached_outputs(
    name: str, records: list[Record], judges: list[Any], cache: Path | None = None
) -> tuple[np.ndarray, list[list[dict[str, float]]]]:
    """Per-item judge outputs, each judge's cached on disk by dataset ids and judge digest:
    the ``(n, m)`` vote matrix and, per item, each member's named scores (what a score
    stacker reads). A refit after changing one judge re-runs that judge only."""
    import time

    cache = cache or Path(os.environ.get("AUDITOR_VOTE_CACHE", "/tmp/auditor_votes"))
    cache.mkdir(parents=True, exist_ok=True)
    ids_digest = sha256_text("\n".join(r["id"] for r in records))[:12]
    pairs = to_pairs(records)
    columns, score_columns = [], []
    for judge in judges:
        code = _code_digest(judge)
        path = cache / (
            f"{name.replace(':', '_')}-{ids_digest}-{judge.name}-{judge.digest[:12]}-{code}.json"
        )
        if path.exists():
            stored = json.loads(path.read_text(encoding="utf-8"))
        else:
            start = time.perf_counter()
            votes = judge.judge_sync(pairs)
            stored = [
                {"v": v.value, "s": {k: float(x) for k, x in v.scores.items()}} for v in votes
            ]
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(stored), encoding="utf-8")
            tmp.replace(path)
            print(
                f"  {name}: {judge.name} {len(pairs)} pairs in {time.perf_counter() - start:.1f}s",
                file=sys.stderr,
            )
        columns.append(np.array([row["v"] for row in stored], dtype=np.float64))
        score_columns.append([row["s"] for row in stored])
    per_item = [list(row) for row in zip(*score_columns, strict=True)] if judges else []
    return np.stack(columns, axis=1), per_item


def cached_votes(
    name: str, records: list[Record], judges: list[Any], cache: Path | None = None
) -> np.ndarray:
    """(n, m) vote matrix (see :func:`cached_outputs`)."""
    return cached_outputs(name, records, judges, cache)[0]


DEFAULT_FIT_SETS = ("wice", *(f"summedits:{d}" for d in SUMMEDITS_DOMAINS), "factcheck")


def fit_default(
    out: Path, root: Path, *, seed: int = 0, n_boot: int = 200, kind: str = "votes"
) -> dict[str, Any]:
    """Fit the shipped default stacker for the default panel on the development sets
    (WiCE dev, the five SummEdits domains, Factcheck-Bench stance; FaithBench is kept out
    to evaluate it). Saves coefficients, members, threshold and the data digest.

    ``kind``: ``votes`` (RAIM's vote stacker), ``scores`` (the score stacker) or ``best``
    (the score stacker when its paired Δκ interval on these sets lies above 0)."""
    import warnings

    from auditor.judges.panel import load_panel
    from auditor.stacking.calibrate import calibrate_votes
    from auditor.stacking.features import features_from_outputs
    from auditor.stacking.fit import fit_score_stacker, fit_stacker

    panel = load_panel(None)
    members = list(panel.member_names)
    ids, labels, clusters, datasets, blocks = [], [], [], [], []
    scores: list[list[dict[str, float]]] = []
    for name in DEFAULT_FIT_SETS:
        records = load(name, root)
        block, block_scores = cached_outputs(name, records, list(panel.members))
        blocks.append(block)
        scores += block_scores
        ids += [r["id"] for r in records]
        labels += [r["label"] for r in records]
        clusters += [f"{name}/{r['cluster']}" for r in records]
        datasets += [name] * len(records)
    votes = np.vstack(blocks)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        report = calibrate_votes(
            ids,
            votes,
            labels,
            clusters,
            members,
            seed=seed,
            n_boot=n_boot,
            datasets=datasets,
            scores=scores,
            kind=kind,
        ).report
    rungs = {row["name"]: row for row in report["ladder"]}
    info = {
        "panel_digest": panel.digest,
        "datasets": list(DEFAULT_FIT_SETS),
        "n_items": len(labels),
        "seed": seed,
        "admissible": report["admissibility"]["admissible"],
        "cv_kappa": rungs["stacked"]["kappa"],
        "score_cv_kappa": rungs["score_stacked"]["kappa"],
        "scores_vs_votes": report["paired"]["scores_vs_votes"],
    }
    if report["stacker_kind"] == "scores":
        names = tuple(report["stacker"]["features"])
        features = features_from_outputs(votes, scores, members, names)
        stacker = fit_score_stacker(
            features, labels, members, names, info={**info, "cv_kappa": info["score_cv_kappa"]}
        )
    else:
        stacker = fit_stacker(votes, labels, members, clusters, info=info)
    stacker.save(out)
    summary = {
        k: report[k] for k in ("members", "ladder", "paired", "admissibility", "stacker_kind")
    }
    summary["stacker"] = stacker.to_dict()
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "dataset",
        choices=(*DATASETS, "fit-default"),
        help="a dataset to export, or fit-default to fit the shipped stacker",
    )
    parser.add_argument("out", help="output DATA.jsonl ('-' for stdout)")
    parser.add_argument("--data", default=None, help="shared data folder")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--kind",
        choices=("votes", "scores", "best"),
        default="votes",
        help="fit-default: the stacker to ship (best: the score stacker "
        "when it wins clearly on the fitting sets)",
    )
    args = parser.parse_args(argv)
    root = data_dir(args.data)
    if not root.exists():
        print(f"error: data folder {root} not found (set AUDITOR_DATA)", file=sys.stderr)
        return 2
    if args.dataset == "fit-default":
        summary = fit_default(Path(args.out), root, seed=args.seed, kind=args.kind)
        print(json.dumps(summary, indent=1))
        return 0
    records = load(args.dataset, root, limit=args.limit, seed=args.seed)
    out = sys.stdout if args.out == "-" else open(args.out, "w", encoding="utf-8")  # noqa: SIM115
    try:
        for record in records:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
    finally:
        if out is not sys.stdout:
            out.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
