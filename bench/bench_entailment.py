"""Benchmarks of the shipped entailment cross-encoder.

Two parts (``--part``):

- ``heldout``: accuracy and balanced accuracy, three-way and binary (entailment vs not),
  on the evaluation parts of ``../shared/data/nli`` that training never sees (SICK test,
  SNLI test, GLUE RTE re-split test, held-out slices of the claim sets; see
  ``auditor/entailment/data.py``), for the fp32 model and its dynamic int8 version
  (the accuracy cost of quantising), or for the weights folders given by ``--weights``;
  item-bootstrap intervals and paired differences against the first model.
- ``speed``: pairs/s on two threads for a 30-word claim against a 200-word evidence
  window (real text: FaithBench sources and summaries), fp32 vs bf16 vs dynamic int8,
  with the ratios measured in the same process.

- ``docs``: the judge on the document-level evaluation sets (WiCE dev, each SummEdits
  domain, Factcheck-Bench stance, FaithBench), on the parts whose documents were held
  out of training (:func:`auditor.entailment.synth.evaluation_split`), a seeded sample of
  at most ``--n`` items per set: balanced accuracy with abstentions counted as errors,
  κ on decided items, abstention rate, 95 % cluster-bootstrap intervals, for every
  configuration in ``--configs`` (judge parameters, e.g. other weights) scored in the
  same process, with paired differences against the first, and the reader pairs each
  configuration reads. Configurations that share weights share the reader's score
  cache, so list the one that reads the most (e.g. ``prune_below`` 0) first: the
  others then cost almost nothing, and their seconds mean nothing (compare pairs read).
  ``--split train`` scores the training-side parts instead (for tuning thresholds);
  ``--scores OUT`` keeps each item's scores so thresholds can be re-tuned without
  re-reading (``--part tune``).
- ``tune``: from a ``--scores`` file of ``docs --split train``, the vote thresholds
  (``support_at``, ``reject_below``) that maximise the mean balanced accuracy
  (abstentions as errors) over the sets; among settings within 0.005 of the best, the
  widest abstention band.
- ``tune-cached``: the same, from the shipped judge's scores on the items the default
  stacker is fitted on (``bench/calibrate_shared.py fit-default``'s vote cache).

Usage::

    python bench/bench_entailment.py --part heldout [--data DIR] [--per-source 1500]
        [--weights OLD_DIR,NEW_DIR]
    python bench/bench_entailment.py --part speed [--data DIR] [--n 256]
    python bench/bench_entailment.py --part docs [--n 200] [--configs JSON] [--scores OUT]
    python bench/bench_entailment.py --part tune --scores OUT
    python bench/bench_entailment.py --part tune-cached [--limit 250]
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import calibrate_shared as shared

from auditor.entailment.data import LABEL_MAPPING, load_mix
from auditor.entailment.model import load_model
from auditor.entailment.train import _sample


def _balanced_accuracy(y: np.ndarray, pred: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Balanced accuracy of ``pred`` against ``y`` on each resample (rows of ``idx``)."""
    yy, pp = y[idx], pred[idx]
    recalls = []
    for label in np.unique(y):
        mask = yy == label
        hits = (mask & (pp == label)).sum(axis=1)
        totals = mask.sum(axis=1)
        recalls.append(np.where(totals > 0, hits / np.maximum(totals, 1), np.nan))
    return np.nanmean(np.stack(recalls), axis=0)


def part_heldout(
    root: Path,
    per_source: int,
    seed: int = 0,
    weights: Sequence[str] | None = None,
    n_boot: int = 2000,
) -> dict[str, object]:
    """Three-way and binary balanced accuracy per held-out NLI source for each model, in one
    process, with 95 % item-bootstrap intervals and paired differences against the first.

    ``weights``: weights folders to compare (fp32); default the shipped weights in fp32,
    bf16 (:mod:`auditor.precision`) and dynamic int8 (the accuracy cost of each)."""
    from auditor.stacking.metrics import interval

    pairs = [p for p in load_mix(root / "nli") if p.split == "eval"]
    held_out = _sample(pairs, {s: per_source for s in LABEL_MAPPING}, np.random.default_rng(seed))
    models: list[tuple[str, str | None, bool, str]] = (
        [(Path(w).name or w, w, False, "fp32") for w in weights]
        if weights
        else [
            ("fp32", None, False, "fp32"),
            ("bf16", None, False, "bf16"),
            ("int8", None, True, "fp32"),
        ]
    )
    names = [m[0] for m in models]
    sources = sorted({p.source for p in held_out})
    predictions: dict[str, dict[str, np.ndarray]] = {}
    for name, folder, quantize, precision in models:
        model = load_model(folder, quantize=quantize, threads=2, precision=precision)
        start = time.perf_counter()
        predictions[name] = {}
        for source in sources:
            items = [p for p in held_out if p.source == source]
            probs = model.predict([p.premise for p in items], [p.hypothesis for p in items])
            predictions[name][source] = probs.argmax(axis=1)
        print(f"{name}: {len(held_out)} held-out pairs in {time.perf_counter() - start:.0f}s")
    rng = np.random.default_rng(seed)
    results: dict[str, object] = {"models": names, "per_source": per_source}
    for source in sources:
        items = [p for p in held_out if p.source == source]
        y = np.array([p.label for p in items])
        idx = np.vstack([np.arange(len(y)), rng.integers(0, len(y), (n_boot, len(y)))])
        views = [("bacc2", y == 0, {n: predictions[n][source] == 0 for n in names})]
        if not items[0].binary_only:
            views.insert(0, ("bacc3", y, {n: predictions[n][source] for n in names}))
        row: dict[str, object] = {"n": len(y)}
        print(f"\n== {source} (n={len(y)})")
        for metric, truth, preds in views:
            boot = {n: _balanced_accuracy(truth, preds[n], idx) for n in names}
            for n in names:
                ci = interval(boot[n][1:])
                entry: dict[str, object] = {"value": float(boot[n][0]), "ci": list(ci)}
                line = f"  {metric} {n:22s} {boot[n][0]:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]"
                if n != names[0]:
                    d = boot[n] - boot[names[0]]
                    dci = interval(d[1:])
                    entry["delta"] = [float(d[0]), *dci]
                    line += f"  d {d[0]:+.3f} [{dci[0]:+.3f}, {dci[1]:+.3f}]"
                row[f"{metric}:{n}"] = entry
                print(line)
        results[source] = row
    return results


def _speed_pairs(root: Path, n: int) -> tuple[list[str], list[str]]:
    windows, claims = [], []
    with open(root / "faithbench" / "FaithBench.csv", encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            source, summary = row["source"].split(), row["summary"].split()
            if len(source) >= 200 and len(summary) >= 30:
                windows.append(" ".join(source[:200]))
                claims.append(" ".join(summary[:30]))
            if len(windows) == n:
                break
    return windows, claims


def part_speed(root: Path, n: int, repeats: int = 3) -> dict[str, float]:
    windows, claims = _speed_pairs(root, n)
    rates = {}
    for name, quantize, precision in (
        ("fp32", False, "fp32"),
        ("bf16", False, "bf16"),
        ("int8", True, "fp32"),
    ):
        model = load_model(quantize=quantize, threads=2, precision=precision)
        model.predict(windows[:32], claims[:32])  # warm-up
        best = np.inf
        for _ in range(repeats):
            start = time.perf_counter()
            model.predict(windows, claims, batch_size=32)
            best = min(best, time.perf_counter() - start)
        rates[name] = len(windows) / best
    tokens = np.mean([len(t) for t in model.tokenizer(windows[:32], claims[:32])["input_ids"]])
    print(
        f"{len(windows)} pairs (200-word window + 30-word claim, ~{tokens:.0f} tokens), "
        f"2 threads, batch 32, best of {repeats}:"
    )
    print(
        f"  fp32 {rates['fp32']:.1f} pairs/s; bf16 {rates['bf16']:.1f} pairs/s; "
        f"int8 {rates['int8']:.1f} pairs/s; bf16/fp32 speed ratio "
        f"{rates['bf16'] / rates['fp32']:.2f}, int8/fp32 {rates['int8'] / rates['fp32']:.2f}"
    )
    return rates


DEFAULT_CONFIGS = '[{"name": "shipped", "params": {}}]'


def _doc_records(
    root: Path, split: str, n: int, seed: int, names: Sequence[str] | None = None
) -> dict[str, list[dict[str, object]]]:
    from auditor.entailment.synth import evaluation_split

    out = {}
    for name in names or shared.DATASETS:
        records = [
            r
            for r in shared.load(name, root)
            if evaluation_split(name, str(r["claim"]), r["evidence"]) == split
        ]
        if len(records) > n:
            keep = np.sort(np.random.default_rng(seed).choice(len(records), n, replace=False))
            records = [records[i] for i in keep]
        out[name] = records
    return out


def _params(config: dict[str, object]) -> dict[str, Any]:
    params = config.get("params", {})
    if not isinstance(params, dict):
        raise ValueError(f"configs: params of {config.get('name')!r} must be an object")
    return dict(params)


def part_docs(
    root: Path,
    n: int,
    configs: list[dict[str, object]],
    split: str = "eval",
    seed: int = 0,
    n_boot: int = 2000,
    scores_out: str | None = None,
    names: Sequence[str] | None = None,
) -> dict[str, object]:
    """The judge per configuration on the held-out (or training-side) document sets."""
    from auditor.judges.entailment import EntailmentJudge
    from auditor.stacking.metrics import bootstrap_scores, interval

    sets = _doc_records(root, split, n, seed, names)
    judges: list[Any] = [
        baseline_judge(_params(c)) if c.get("baseline") else EntailmentJudge(**_params(c))
        for c in configs
    ]
    names = [str(c["name"]) for c in configs]
    results: dict[str, object] = {"split": split, "n_max": n, "configs": configs}
    kept: dict[str, object] = {}
    seconds = dict.fromkeys(names, 0.0)
    read = dict.fromkeys(names, 0)  # pairs each configuration reads (cached or not)
    forward = dict.fromkeys(names, 0)  # pairs run through the network
    for dataset, records in sets.items():
        pairs = shared.to_pairs(records)
        labels = np.array([int(r["label"]) for r in records])  # type: ignore[call-overload]
        clusters = [str(r["cluster"]) for r in records]
        votes = np.zeros((len(records), len(judges)))
        item_scores = []
        for j, judge in enumerate(judges):
            reader = _reader_of(judge)
            asked, ran = reader.requested_pairs, reader.forward_pairs
            start = time.perf_counter()
            out = judge.judge_local(pairs)
            seconds[names[j]] += time.perf_counter() - start
            read[names[j]] += reader.requested_pairs - asked or reader.forward_pairs - ran
            forward[names[j]] += reader.forward_pairs - ran
            errors = [v.error for v in out if v.error and v.error != "no evidence"]
            if errors:
                raise RuntimeError(f"{names[j]} on {dataset}: {errors[0]}")
            votes[:, j] = [v.value for v in out]
            item_scores.append([dict(v.scores) for v in out])
        boot = bootstrap_scores(
            votes, labels, clusters, n_boot=n_boot, rng=np.random.default_rng(seed)
        )
        row: dict[str, object] = {"n": len(records), "positives": int(labels.sum())}
        print(f"\n== {dataset} ({split} part): n={len(records)} not-supported={int(labels.sum())}")
        for j, name in enumerate(names):
            bci = interval(boot.boot_bacc[:, j])
            kci = interval(boot.boot_kappa[:, j])
            abst = float(np.mean(votes[:, j] == 0.5))
            row[name] = {
                "bacc": float(boot.bacc[j]),
                "bacc_ci": list(bci),
                "kappa": float(boot.kappa[j]),
                "kappa_ci": list(kci),
                "abstain": abst,
            }
            line = (
                f"  {name:14s} bacc {boot.bacc[j]:.3f} [{bci[0]:.3f}, {bci[1]:.3f}]  "
                f"kappa {boot.kappa[j]:.3f} [{kci[0]:.3f}, {kci[1]:.3f}]  abstain {abst:.2f}"
            )
            if j:
                d = boot.boot_bacc[:, j] - boot.boot_bacc[:, 0]
                dci = interval(d)
                row[name]["delta_bacc_vs_" + names[0]] = [  # type: ignore[index]
                    float(boot.bacc[j] - boot.bacc[0]),
                    *dci,
                ]
                line += (
                    f"  d-bacc {boot.bacc[j] - boot.bacc[0]:+.3f} [{dci[0]:+.3f}, {dci[1]:+.3f}]"
                )
            print(line)
        results[dataset] = row
        kept[dataset] = {
            "labels": labels.tolist(),
            "clusters": clusters,
            "scores": item_scores,
            "votes": votes.tolist(),
        }
    results["seconds"] = seconds
    results["pairs_read"] = read
    results["forward_pairs"] = forward
    print(
        "\njudge seconds per configuration: "
        + ", ".join(f"{k} {v:.0f}s" for k, v in seconds.items())
        + "\n(configurations sharing weights share the reader's score cache: a later one"
        " reads its pairs from the cache; compare the pairs read)"
    )
    print(
        "reader pairs read per configuration: "
        + ", ".join(f"{k} {v:,} ({forward[k]:,} through the network)" for k, v in read.items())
    )
    if scores_out:
        Path(scores_out).write_text(json.dumps({"names": names, "sets": kept}), encoding="utf-8")
    return results


def _reader_of(judge: Any) -> Any:
    """The loaded reader a judge configuration uses (its pair counters)."""
    return load_model(
        getattr(judge, "_folder", None),
        quantize=bool(getattr(judge, "quantize", False)),
        precision=getattr(judge, "precision", "fp32"),
    )


def part_tune(scores_path: str, config: int = -1) -> dict[str, float]:
    """Thresholds from stored scores (see the module docstring)."""
    data = json.loads(Path(scores_path).read_text(encoding="utf-8"))
    return tune_thresholds(
        {
            dataset: (kept["labels"], kept["scores"][config])
            for dataset, kept in data["sets"].items()
        }
    )


def part_tune_cached(root: Path, limit: int | None, seed: int = 0) -> dict[str, float]:
    """Thresholds from the shipped judge's scores on the training side of the stacker's
    fitting sets, as ``calibrate_shared.py fit-default --limit`` cached them (computed
    when missing): the same items the default stacker is fitted on."""
    from auditor.judges.panel import load_panel

    judge = next(m for m in load_panel(None).members if m.name == "entailment")
    per_set = {}
    for name in shared.DEFAULT_FIT_SETS:
        records = shared.split_records(name, root, "train", limit, seed)
        _, scores = shared.cached_outputs(f"{name}/train", records, [judge])
        per_set[name] = ([r["label"] for r in records], [row[0] for row in scores])
    return tune_thresholds(per_set)


def tune_thresholds(
    per_set: dict[str, tuple[list[int], list[dict[str, float]]]],
) -> dict[str, float]:
    """The vote thresholds maximising the mean balanced accuracy (abstentions as errors)
    over the sets; among settings within 0.005 of the best, the widest abstention band."""
    from auditor.stacking.metrics import scores as kappa_bacc

    grid = np.round(np.arange(0.05, 0.951, 0.025), 3)
    rows = []
    for dataset, (labels, items) in per_set.items():
        e = np.array([s.get("max_entailment", np.nan) for s in items])
        c = np.array([s.get("contradicted", 0.0) for s in items])
        rows.append((dataset, np.asarray(labels), e, c))
    table = []
    for lo in grid:
        for hi in grid[grid >= lo]:
            baccs = []
            for _, truth, e, c in rows:
                vote = np.where(
                    np.isnan(e), 0.5, np.where(e >= hi, 0.0, np.where(e < lo, 1.0, 0.5))
                )
                vote = np.where(c > 0, 1.0, vote)
                baccs.append(float(kappa_bacc(vote, truth, warn=False)[1][0]))
            table.append((float(np.nanmean(baccs)), float(hi - lo), float(lo), float(hi)))
    best = max(t[0] for t in table)
    chosen = max((t for t in table if t[0] >= best - 0.005), key=lambda t: (t[1], t[0]))
    print(
        f"best mean bacc {best:.3f}; chosen reject_below {chosen[2]:.3f} support_at "
        f"{chosen[3]:.3f} (mean bacc {chosen[0]:.3f}, band {chosen[1]:.3f})"
    )
    return {
        "best": best,
        "mean_bacc": chosen[0],
        "reject_below": chosen[2],
        "support_at": chosen[3],
    }


BASELINE_COMMIT = "d013387"  # the entailment judge v3 (issue 9), the speed baseline


def baseline_judge(params: dict[str, object]) -> Any:
    """The v3 judge as committed at :data:`BASELINE_COMMIT`, loaded from git into a private
    module (not registered), for same-process speed and accuracy comparisons."""
    import subprocess
    import types

    source = subprocess.run(
        ["git", "show", f"{BASELINE_COMMIT}:auditor/judges/entailment.py"],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[1],
    ).stdout
    source = source.replace('@register_judge("entailment")\n', "")
    # the helpers it imports, where they live now (auditor/judges/_text.py is auditor/text/;
    # the registry left auditor/judges/base.py for auditor/judges/catalog.py)
    source = source.replace("from auditor.judges._text import", "from auditor.text import")
    source = source.replace("import LocalJudge, register_judge", "import LocalJudge")
    module = types.ModuleType("entailment_v3")
    exec(compile(source, "entailment_v3.py", "exec"), module.__dict__)
    judge = module.EntailmentJudge(**{k: v for k, v in params.items() if k != "weights"})
    if params.get("weights"):  # v3 reads the shipped weights; point it at the given ones
        from auditor.entailment.model import load_model

        folder = str(params["weights"])
        module.load_model = lambda quantize=False: load_model(
            folder, quantize=quantize, precision="fp32"
        )
    return judge


def main() -> None:
    parser = argparse.ArgumentParser(description="entailment judge benchmarks")
    parser.add_argument(
        "--part", choices=("heldout", "speed", "docs", "tune", "tune-cached"), required=True
    )
    parser.add_argument("--limit", type=int, default=250, help="tune-cached: fit-default's --limit")
    parser.add_argument(
        "--configs",
        default=DEFAULT_CONFIGS,
        help='JSON list of {"name", "params"} judge configurations',
    )
    parser.add_argument("--split", choices=("eval", "train"), default="eval")
    parser.add_argument("--sets", default=None, help="comma-separated subset of the sets")
    parser.add_argument("--scores", default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data", default=None, help="shared data folder")
    parser.add_argument("--per-source", type=int, default=1500)
    parser.add_argument("--n", type=int, default=256)
    parser.add_argument("--json", default=None)
    parser.add_argument(
        "--weights",
        default=None,
        help="heldout: comma-separated weights folders compared in one process "
        "(default: the shipped weights, fp32 vs int8)",
    )
    args = parser.parse_args()
    root = shared.data_dir(args.data)
    result: object
    if args.part == "heldout":
        result = part_heldout(
            root, args.per_source, weights=args.weights.split(",") if args.weights else None
        )
    elif args.part == "docs":
        result = part_docs(
            root,
            args.n,
            json.loads(args.configs),
            args.split,
            args.seed,
            scores_out=args.scores,
            names=args.sets.split(",") if args.sets else None,
        )
    elif args.part == "tune":
        result = part_tune(args.scores)
    elif args.part == "tune-cached":
        result = part_tune_cached(root, args.limit, args.seed)
    else:
        result = part_speed(root, args.n)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
