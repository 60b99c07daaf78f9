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
import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from auditor.digest import sha256_text

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _panel_variants import panel_with_reader

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
    """Digest of the source of the judge's module and of the text toolkit the judges read
    (every module of :mod:`auditor.text`), and of the judges' word lists
    (:func:`auditor.judges.wordlists.digest`, ablation included): a code or list change
    invalidates cached votes even when the judge's name, version and params do not
    change."""
    import inspect
    import pkgutil

    import auditor.text as toolkit
    from auditor.judges import wordlists

    module = inspect.getmodule(type(judge))
    sources = [inspect.getsource(module or type(judge))]
    sources += [
        (Path(toolkit.__file__).parent / f"{info.name}.py").read_text(encoding="utf-8")
        for info in sorted(pkgutil.iter_modules(toolkit.__path__), key=lambda i: i.name)
    ]
    # the word lists the judges read, and which of them are ablated now
    sources.append(wordlists.digest())
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
        stem = name.replace(":", "_").replace("/", "_")
        path = cache / f"{stem}-{ids_digest}-{judge.name}-{judge.digest[:12]}-{code}.json"
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
CLAIM_SETS = ("wice", "factcheck")
"""The claim-level sets (claims against evidence passages, shaped like audited RAG
answers): the shipped stacker's kind is chosen on these."""


READER_SHARE = 2 / 3
"""Share of the training side's clusters in its reader part (:func:`training_part`)."""


def training_part(name: str, cluster: str) -> str:
    """``reader`` or ``stacker``: the part of the training side an item's cluster (its
    document or claim) falls in, by a sha256 of ``name:cluster``. The reader may be
    trained on the reader part (``bench/reader_pairs.py``); a stacker fitted on the
    stacker part never sees votes of a reader trained on its items."""
    digest = hashlib.sha256(f"reader-part:{name}:{cluster}".encode()).hexdigest()
    return "reader" if int(digest[:8], 16) / 0xFFFFFFFF < READER_SHARE else "stacker"


SIDES = ("train", "eval", "reader", "stacker")


def split_records(name: str, root: Path, side: str, limit: int | None, seed: int) -> list[Record]:
    """Records of one set on one side of the document split the reader's training kept
    (:func:`auditor.entailment.synth.evaluation_split`): ``train`` for fitting, ``eval`` for
    reporting, ``reader`` or ``stacker`` for one part of the training side
    (:func:`training_part`); ``limit`` keeps a seeded sample."""
    from auditor.entailment.synth import evaluation_split

    if side not in SIDES:
        raise ValueError(f"side: {side!r} not in {SIDES}")
    half = "eval" if side == "eval" else "train"
    records = [
        r for r in load(name, root) if evaluation_split(name, r["claim"], r["evidence"]) == half
    ]
    if side in ("reader", "stacker"):
        records = [r for r in records if training_part(name, r["cluster"]) == side]
    if limit is not None and limit < len(records):
        keep = np.sort(np.random.default_rng(seed).choice(len(records), limit, replace=False))
        records = [records[i] for i in keep]
    return records


def _gather(
    names: tuple[str, ...], root: Path, side: str, limit: int | None, seed: int, members: list[Any]
) -> dict[str, Any]:
    block: dict[str, Any] = {"ids": [], "labels": [], "clusters": [], "datasets": [], "votes": []}
    block["scores"] = []
    for name in names:
        records = split_records(name, root, side, limit, seed)
        votes, scores = cached_outputs(f"{name}/{side}", records, members)
        block["votes"].append(votes)
        block["scores"] += scores
        block["ids"] += [r["id"] for r in records]
        block["labels"] += [r["label"] for r in records]
        block["clusters"] += [f"{name}/{r['cluster']}" for r in records]
        block["datasets"] += [name] * len(records)
    block["votes"] = np.vstack(block["votes"])
    return block


def _calibrate(block: dict[str, Any], members: list[str], kind: str, seed: int, n_boot: int) -> Any:
    import warnings

    from auditor.stacking.calibrate import calibrate_votes

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return calibrate_votes(
            block["ids"],
            block["votes"],
            block["labels"],
            block["clusters"],
            members,
            seed=seed,
            n_boot=n_boot,
            datasets=block["datasets"],
            scores=block["scores"],
            kind=kind,
        )


def _predict(stacker: Any, block: dict[str, Any], members: list[str]) -> np.ndarray:
    from auditor.stacking.features import features_from_outputs

    if stacker.kind == "votes":
        return stacker.predict_proba(block["votes"], members)
    if stacker.fallback_member is not None:
        return block["votes"][:, members.index(stacker.fallback_member)]
    x = features_from_outputs(block["votes"], block["scores"], members, stacker.features)
    return stacker.predict_proba(x, members)


def evaluate_stackers(
    stackers: dict[str, Any],
    block: dict[str, Any],
    members: list[str],
    *,
    n_boot: int = 2000,
    seed: int = 0,
    reference: str = "votes",
) -> dict[str, Any]:
    """κ and balanced accuracy (abstentions counted as errors) of each stacker and of the
    entailment reader alone, per data set and pooled over the claim-level sets, with 95 %
    cluster-bootstrap intervals and paired differences against ``reference``."""
    from auditor.stacking.metrics import bootstrap_scores, interval

    names = list(stackers)
    columns = [
        (_predict(stackers[n], block, members) >= stackers[n].threshold).astype(float)
        for n in names
    ]
    if "entailment" in members:
        names.append("reader alone")
        columns.append(block["votes"][:, members.index("entailment")])
    pred = np.stack(columns, axis=1)
    labels = np.asarray(block["labels"])
    clusters = np.asarray(block["clusters"])
    datasets = np.asarray(block["datasets"])
    groups = {d: datasets == d for d in dict.fromkeys(block["datasets"])}
    groups["claim-level pooled"] = np.isin(datasets, CLAIM_SETS)
    ref = names.index(reference)
    out: dict[str, Any] = {
        "items": {
            "ids": list(block["ids"]),
            "labels": labels.tolist(),
            "clusters": clusters.tolist(),
            "datasets": datasets.tolist(),
            "predictions": {n: pred[:, j].tolist() for j, n in enumerate(names)},
        }
    }
    for group, mask in groups.items():
        if not mask.any():
            continue
        boot = bootstrap_scores(
            pred[mask], labels[mask], clusters[mask], n_boot=n_boot, rng=np.random.default_rng(seed)
        )
        row: dict[str, Any] = {"n": int(mask.sum()), "positives": int(labels[mask].sum())}
        for j, name in enumerate(names):
            cell: dict[str, Any] = {
                "kappa": float(boot.kappa[j]),
                "kappa_ci": list(interval(boot.boot_kappa[:, j])),
                "bacc": float(boot.bacc[j]),
                "bacc_ci": list(interval(boot.boot_bacc[:, j])),
            }
            if j != ref:
                cell["delta_kappa"] = [
                    float(boot.kappa[j] - boot.kappa[ref]),
                    *interval(boot.boot_kappa[:, j] - boot.boot_kappa[:, ref]),
                ]
                cell["delta_bacc"] = [
                    float(boot.bacc[j] - boot.bacc[ref]),
                    *interval(boot.boot_bacc[:, j] - boot.boot_bacc[:, ref]),
                ]
            row[name] = cell
        out[group] = row
    return out


def print_evaluation(evaluation: dict[str, Any], reference: str = "votes") -> None:
    """The held-out table of :func:`evaluate_stackers` on stderr."""
    for group, row in evaluation.items():
        if group == "items":
            continue
        print(f"\n== {group}: n={row['n']} positives={row['positives']}", file=sys.stderr)
        for name, cell in row.items():
            if not isinstance(cell, dict):
                continue
            k, b = cell["kappa_ci"], cell["bacc_ci"]
            line = (
                f"  {name:14s} kappa {cell['kappa']:.3f} [{k[0]:.3f}, {k[1]:.3f}]  "
                f"bacc {cell['bacc']:.3f} [{b[0]:.3f}, {b[1]:.3f}]"
            )
            if "delta_kappa" in cell:
                dk, db = cell["delta_kappa"], cell["delta_bacc"]
                line += (
                    f"  vs {reference}: dkappa {dk[0]:+.3f} [{dk[1]:+.3f}, {dk[2]:+.3f}]"
                    f" dbacc {db[0]:+.3f} [{db[1]:+.3f}, {db[2]:+.3f}]"
                )
            print(line, file=sys.stderr)


def fit_default(
    out: Path,
    root: Path,
    *,
    seed: int = 0,
    n_boot: int = 200,
    kind: str = "best",
    limit: int | None = None,
    eval_boot: int = 2000,
    sets: tuple[str, ...] = DEFAULT_FIT_SETS,
    eval_sets: tuple[str, ...] = DATASETS,
    eval_limit: int | None = None,
    fit_side: str = "train",
    panel_file: Path | None = None,
) -> dict[str, Any]:
    """Fit the shipped default stacker for the default panel and report it on held-out data.

    Fitting uses the training side of the document split of ``sets`` (default: WiCE dev,
    the five SummEdits domains, Factcheck-Bench stance), at most ``limit`` items per set;
    reporting the evaluation side of ``eval_sets``, at most ``eval_limit`` per set.
    ``fit_side="stacker"`` fits on the stacker part of the training side only (for a
    reader trained on its reader part, :func:`training_part`).
    ``kind``: ``votes`` (RAIM's vote stacker), ``scores`` (the score stacker) or
    ``best``: the score stacker when its paired Δκ interval lies above 0 on the
    claim-level sets (:data:`CLAIM_SETS`), cross-fitted on their training side. RAIM's
    admissibility test on the pooled fitting data is recorded in ``info.admissible`` (not
    admissible: the coefficients are kept, report cards warn, and
    ``info.strict_fallback_member`` names the member a strict reading would use). Both
    stackers and the reader alone are
    then scored on the evaluation side of every set, FaithBench included (never fitted
    on), with paired cluster-bootstrap differences; so is the stacker ``out`` held before
    (``previous``, when its members match), and the per-item predictions are returned
    (``held_out["items"]``) for paired comparisons across runs."""
    from dataclasses import replace

    from auditor.judges.panel import load_panel
    from auditor.stacking.model import load_stacker

    panel = load_panel(panel_file)
    members = list(panel.member_names)
    judges = list(panel.members)
    previous = load_stacker(out if out.exists() else None)
    train = _gather(sets, root, fit_side, limit, seed, judges)
    if kind == "best":
        claim_mask = np.isin(np.asarray(train["datasets"]), CLAIM_SETS)
        claim_block = {
            k: (
                v[claim_mask]
                if isinstance(v, np.ndarray)
                else [x for x, m in zip(v, claim_mask, strict=True) if m]
            )
            for k, v in train.items()
        }
        kind = _calibrate(claim_block, members, "best", seed, n_boot).report["stacker_kind"]
    fitted = {k: _calibrate(train, members, k, seed, n_boot) for k in ("votes", "scores")}
    report = fitted[kind].report
    rungs = {row["name"]: row for row in report["ladder"]}
    info = {
        "panel_digest": panel.digest,
        "datasets": list(sets),
        "split": (
            "training side of the reader's document split"
            if fit_side == "train"
            else f"{fit_side} part of the training side of the reader's document split"
        ),
        "limit_per_set": limit,
        "n_items": len(train["labels"]),
        "seed": seed,
        "admissible": report["admissibility"]["admissible"],
        "cv_kappa": rungs["score_stacked" if kind == "scores" else "stacked"]["kappa"],
        "scores_vs_votes": report["paired"]["scores_vs_votes"],
        "kind_chosen_on": list(CLAIM_SETS),
    }
    # Not admissible: the coefficients are shipped anyway with info.admissible false, and
    # every report card built with them warns (docs/stacking.md, "The shipped stacker").
    info["strict_fallback_member"] = fitted[kind].stacker.fallback_member
    stacker = replace(fitted[kind].stacker, info=info, fallback_member=None)
    stacker.save(out)
    held_out = _gather(eval_sets, root, "eval", eval_limit or limit, seed, judges)
    comparable = {k: replace(fitted[k].stacker, fallback_member=None) for k in ("votes", "scores")}
    if list(previous.members) == members:
        comparable["previous"] = replace(previous, fallback_member=None)
    evaluation = evaluate_stackers(comparable, held_out, members, n_boot=eval_boot, seed=seed)
    # each member's vote per held-out item: how many votes a change of a judge changed
    evaluation["items"]["members"] = members
    evaluation["items"]["votes"] = held_out["votes"].tolist()
    print_evaluation(evaluation)
    summary = {
        k: report[k] for k in ("members", "ladder", "paired", "admissibility", "stacker_kind")
    }
    summary["stacker"] = stacker.to_dict()
    summary["held_out"] = evaluation
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
    parser.add_argument(
        "--limit", type=int, default=None, help="items per set (fit-default: per set and side)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--kind",
        choices=("votes", "scores", "best"),
        default="best",
        help="fit-default: the stacker to ship (best: the score stacker "
        "when it wins clearly on the claim-level fitting sets)",
    )
    parser.add_argument("--sets", default=None, help="fit-default: comma-separated fit sets")
    parser.add_argument(
        "--eval-sets", default=None, help="fit-default: comma-separated held-out report sets"
    )
    parser.add_argument("--eval-limit", type=int, default=None, help="fit-default: per eval set")
    parser.add_argument(
        "--fit-side",
        choices=("train", "stacker"),
        default="train",
        help="fit-default: the training side, or only its stacker part (training_part)",
    )
    parser.add_argument(
        "--weights", default=None, help="fit-default: the entailment reader's weights folder"
    )
    args = parser.parse_args(argv)
    root = data_dir(args.data)
    if not root.exists():
        print(f"error: data folder {root} not found (set AUDITOR_DATA)", file=sys.stderr)
        return 2
    if args.dataset == "fit-default":
        summary = fit_default(
            Path(args.out),
            root,
            seed=args.seed,
            kind=args.kind,
            limit=args.limit,
            sets=tuple(args.sets.split(",")) if args.sets else DEFAULT_FIT_SETS,
            eval_sets=tuple(args.eval_sets.split(",")) if args.eval_sets else DATASETS,
            eval_limit=args.eval_limit,
            fit_side=args.fit_side,
            panel_file=panel_with_reader(args.weights, Path(tempfile.mkdtemp()))
            if args.weights
            else None,
        )
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
