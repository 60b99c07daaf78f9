"""Benchmarks of the judge panel and RAIM stacking.

Four parts (``--part``):

- ``speed``: cross-fitted stacking plus B = 2000 paired cluster bootstrap of the
  whole ladder for 10,000 items x 10 members (synthetic votes), against a baseline
  in the same process: a Python loop over resamples (sklearn's weighted κ per system
  and resample), timed on a few resamples and scaled to B.
- ``throughput``: local panel throughput in claims/s (default panel, per member and
  in total) on shared-data pairs, against the cheapest member as a baseline.
- ``ladder``: the full ladder with 95% paired cluster-bootstrap intervals on WiCE
  dev, each SummEdits domain, Factcheck-Bench stance and FaithBench (mappings in
  ``calibrate_shared.py``); ``best_avg`` is the member with the best κ averaged over
  these datasets. Votes are cached on disk (``AUDITOR_VOTE_CACHE``).
- ``scores``: RAIM's vote stacker against the score stacker (judges' scores with
  abstention indicators, :mod:`auditor.stacking.features`) on the same folds, per data
  set and pooled, with the paired cluster bootstrap (Δκ, Δbacc with 95% intervals) and
  the admissibility of each set; ``--limit N`` samples N items per set (seeded).
  Per-item judge outputs are cached on disk (``AUDITOR_VOTE_CACHE``).

Usage::

    python bench/bench_stacking.py --part speed
    python bench/bench_stacking.py --part throughput [--n 300]
    python bench/bench_stacking.py --part ladder [--data DIR] [--json OUT]
    python bench/bench_stacking.py --part scores [--data DIR] [--limit N] [--sets A,B]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import calibrate_shared as shared

from auditor.stacking.calibrate import calibrate_votes
from auditor.stacking.fit import cross_fit
from auditor.stacking.metrics import bootstrap_scores, scores


def synthetic_votes(
    n: int, m: int, n_clusters: int, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    labels = (rng.random(n) < 0.4).astype(int)
    acc = rng.uniform(0.55, 0.85, m)
    correct = rng.random((n, m)) < acc
    votes = np.where(correct, labels[:, None], 1 - labels[:, None]).astype(float)
    votes[rng.random((n, m)) < 0.1] = 0.5
    clusters = rng.integers(0, n_clusters, n).astype(str)
    return votes, labels, clusters


def part_speed(n: int = 10_000, m: int = 10, n_boot: int = 2000) -> None:
    from sklearn.metrics import cohen_kappa_score

    for n_clusters in (2_000, 10_000):
        votes, labels, clusters = synthetic_votes(n, m, n_clusters)
        members = [f"m{i}" for i in range(m)]
        ids = [str(i) for i in range(n)]
        calibrate_votes(
            ids[:500], votes[:500], labels[:500], clusters[:500], members, n_boot=10
        )  # warm imports
        cpu = time.process_time()
        start = time.perf_counter()
        cross = cross_fit(votes, labels, clusters, seed=0)
        t_fit = time.perf_counter() - start
        pred = np.concatenate([votes, (cross.proba >= 0.5)[:, None].astype(float)], axis=1)
        start = time.perf_counter()
        bootstrap_scores(pred, labels, clusters, n_boot=n_boot, rng=np.random.default_rng(0))
        t_boot = time.perf_counter() - start
        t_cpu = time.process_time() - cpu
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            calibrate_votes(ids, votes, labels, clusters, members, n_boot=n_boot)
        t_all = time.perf_counter() - start
        # baseline: a Python loop over resamples, sklearn weighted kappa per system
        _, codes = np.unique(clusters, return_inverse=True)
        k = int(codes.max()) + 1
        rng = np.random.default_rng(1)
        n_loop = 10
        start = time.perf_counter()
        for _ in range(n_loop):
            draw = np.bincount(rng.integers(0, k, k), minlength=k)[codes]
            for s in range(pred.shape[1]):
                keep = (pred[:, s] != 0.5) & (draw > 0)
                cohen_kappa_score(labels[keep], pred[keep, s], sample_weight=draw[keep])
        t_loop = (time.perf_counter() - start) / n_loop * n_boot
        print(
            f"speed n={n} members={m} clusters={n_clusters} B={n_boot}: "
            f"cross-fit {t_fit:.2f}s, bootstrap of {pred.shape[1]} systems {t_boot:.2f}s, "
            f"stacking+bootstrap {t_fit + t_boot:.2f}s wall ({t_cpu:.2f}s CPU); "
            f"full calibrate_votes (7 rungs, "
            f"members, admissibility, final fit, predictions) {t_all:.2f}s; "
            f"loop baseline (scaled from {n_loop} resamples) {t_loop:.1f}s "
            f"= {t_loop / t_boot:.0f}x the vectorised bootstrap"
        )


def part_throughput(n: int = 300, data: str | None = None) -> None:
    from auditor.judges.panel import load_panel

    panel = load_panel(None)
    records = shared.load("faithbench", shared.data_dir(data), limit=n, seed=0)
    records += shared.load("factcheck", shared.data_dir(data), limit=n, seed=0)
    pairs = shared.to_pairs(records)
    from auditor.embedding import encode

    encode(["warm up the encoder"])
    timings = {}
    for judge in panel.members:
        start = time.perf_counter()
        judge.judge_sync(pairs)
        timings[judge.name] = time.perf_counter() - start
    start = time.perf_counter()
    panel.judge_sync(pairs)
    total = time.perf_counter() - start
    base = min(timings.values())
    for name, t in timings.items():
        print(
            f"throughput {name:22s} {len(pairs) / t:9.0f} claims/s  ({t / base:6.1f}x the "
            f"fastest member)"
        )
    print(
        f"throughput panel of {len(panel.members)} members: {len(pairs) / total:.1f} claims/s "
        f"on {len(pairs)} pairs (FaithBench + Factcheck-Bench samples, encoder warm)"
    )


def compare_without(
    votes: np.ndarray, labels: list[int], clusters: list[str], drop: int, n_boot: int, seed: int = 0
) -> dict[str, float | list[float]]:
    """Stacked panel with vs without member ``drop``: out-of-fold (same folds) kappa and
    balanced accuracy of both, and the paired cluster-bootstrap interval of the difference."""
    from auditor.stacking.metrics import interval

    keep = [j for j in range(votes.shape[1]) if j != drop]
    full = cross_fit(votes, labels, clusters, seed=seed).proba
    reduced = cross_fit(votes[:, keep], labels, clusters, seed=seed).proba
    pred = np.stack([(full >= 0.5), (reduced >= 0.5)], axis=1).astype(float)
    boot = bootstrap_scores(pred, labels, clusters, n_boot=n_boot, rng=np.random.default_rng(seed))
    dk = boot.boot_kappa[:, 0] - boot.boot_kappa[:, 1]
    db = boot.boot_bacc[:, 0] - boot.boot_bacc[:, 1]
    return {
        "kappa_with": float(boot.kappa[0]),
        "kappa_without": float(boot.kappa[1]),
        "kappa_with_ci": list(interval(boot.boot_kappa[:, 0])),
        "kappa_without_ci": list(interval(boot.boot_kappa[:, 1])),
        "delta_kappa": float(boot.kappa[0] - boot.kappa[1]),
        "delta_kappa_ci": list(interval(dk)),
        "bacc_with": float(boot.bacc[0]),
        "bacc_without": float(boot.bacc[1]),
        "delta_bacc": float(boot.bacc[0] - boot.bacc[1]),
        "delta_bacc_ci": list(interval(db)),
    }


def part_ladder(
    data: str | None = None, out: str | None = None, n_boot: int = 2000, without: str | None = None
) -> None:
    from auditor.judges.panel import load_panel

    panel = load_panel(None)
    members = list(panel.member_names)
    root = shared.data_dir(data)
    sets = {}
    for name in shared.DATASETS:
        records = shared.load(name, root)
        votes = shared.cached_votes(name, records, list(panel.members))
        sets[name] = (records, votes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        per = [scores(v, [r["label"] for r in recs], warn=False)[0] for recs, v in sets.values()]
    mean_kappa = np.nanmean(np.vstack(per), axis=0)
    best_avg = members[int(np.nanargmax(mean_kappa))]
    print(f"best_avg member (mean kappa over {len(sets)} sets): {best_avg}")
    results = {}
    for name, (records, votes) in sets.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            report = calibrate_votes(
                [r["id"] for r in records],
                votes,
                [r["label"] for r in records],
                [r["cluster"] for r in records],
                members,
                seed=0,
                n_boot=n_boot,
                best_avg=best_avg,
            ).report
        report.pop("predictions")
        results[name] = report
        print(
            f"\n== {name}: n={report['n_items']} clusters={report['n_clusters']} "
            f"positives={report['n_positive']}"
        )
        for row in report["members"] + report["ladder"]:
            k, kc = row["kappa"], row["kappa_ci"]
            b, bc = row["bacc"], row["bacc_ci"]
            fk = "  nan " if k is None else f"{k:6.3f}"
            fkc = "[nan]" if kc[0] is None else f"[{kc[0]:.3f}, {kc[1]:.3f}]"
            extra = f" abstain {row['abstain_rate']:.2f}" if "abstain_rate" in row else ""
            print(
                f"  {row['name']:22s} kappa {fk} {fkc:18s} bacc {b:.3f} "
                f"[{bc[0]:.3f}, {bc[1]:.3f}]{extra}"
            )
        for key, p in report["paired"].items():
            print(
                f"  {key}: dkappa {p['delta_kappa']:.3f} [{p['ci'][0]:.3f}, {p['ci'][1]:.3f}]"
                f" {p['verdict']}"
            )
        a = report["admissibility"]
        print(
            f"  admissible {a['admissible']}: {a['reason']} (share {a['share_competent']:.2f},"
            f" phi {a['mean_error_corr']})"
        )
        if without is not None:
            c = compare_without(
                votes,
                [r["label"] for r in records],
                [r["cluster"] for r in records],
                members.index(without),
                n_boot,
            )
            report["without_" + without] = c
            print(
                f"  stacked with {without}: kappa {c['kappa_with']:.3f} "
                f"[{c['kappa_with_ci'][0]:.3f}, {c['kappa_with_ci'][1]:.3f}]; without: "
                f"{c['kappa_without']:.3f} [{c['kappa_without_ci'][0]:.3f}, "
                f"{c['kappa_without_ci'][1]:.3f}]; dkappa {c['delta_kappa']:.3f} "
                f"[{c['delta_kappa_ci'][0]:.3f}, {c['delta_kappa_ci'][1]:.3f}]; dbacc "
                f"{c['delta_bacc']:.3f} [{c['delta_bacc_ci'][0]:.3f}, "
                f"{c['delta_bacc_ci'][1]:.3f}]"
            )
    print("\nbeats chance (lower bound of the kappa interval > 0):")
    for j, member in enumerate(members):
        wins = []
        for name, report in results.items():
            row = report["members"][j]
            if row["kappa_ci"][0] is not None and row["kappa_ci"][0] > 0:
                wins.append(
                    f"{name} kappa {row['kappa']:.3f} [{row['kappa_ci'][0]:.3f}, "
                    f"{row['kappa_ci'][1]:.3f}] bacc {row['bacc']:.3f} "
                    f"[{row['bacc_ci'][0]:.3f}, {row['bacc_ci'][1]:.3f}]"
                )
        print(f"  {member}: " + ("; ".join(wins) if wins else "none"))
    if out:
        Path(out).write_text(json.dumps(results, indent=1), encoding="utf-8")


def part_scores(
    data: str | None = None,
    out: str | None = None,
    n_boot: int = 2000,
    limit: int | None = None,
    sets: list[str] | None = None,
) -> None:
    from auditor.judges.panel import load_panel

    panel = load_panel(None)
    members = list(panel.member_names)
    root = shared.data_dir(data)
    pooled: dict[str, list] = {"ids": [], "votes": [], "scores": [], "labels": [], "clusters": []}
    results = {}

    def run(
        name: str, ids: list, votes: np.ndarray, scores_: list, labels: list, clusters: list
    ) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            report = calibrate_votes(
                ids,
                votes,
                labels,
                clusters,
                members,
                seed=0,
                n_boot=n_boot,
                scores=scores_,
                kind="best",
            ).report
        rungs = {row["name"]: row for row in report["ladder"]}
        paired = report["paired"]["scores_vs_votes"]
        adm = report["admissibility"]
        results[name] = {
            "n": report["n_items"],
            "votes": rungs["stacked"],
            "scores": rungs["score_stacked"],
            "paired": paired,
            "admissible": adm["admissible"],
            "best_cv": rungs["best_cv"],
            "shipped_kind": report["stacker_kind"],
        }

        def cell(row: dict) -> str:
            return (
                f"kappa {row['kappa']:.3f} [{row['kappa_ci'][0]:.3f}, "
                f"{row['kappa_ci'][1]:.3f}] bacc {row['bacc']:.3f} "
                f"[{row['bacc_ci'][0]:.3f}, {row['bacc_ci'][1]:.3f}]"
            )

        print(
            f"\n== {name}: n={report['n_items']} clusters={report['n_clusters']} "
            f"admissible={adm['admissible']} ({adm['reason']})"
        )
        print(f"  vote stacker   {cell(rungs['stacked'])}")
        print(
            f"  score stacker  {cell(rungs['score_stacked'])} "
            f"({rungs['score_stacked']['n_features']} features)"
        )
        print(f"  best_cv member {cell(rungs['best_cv'])}")
        print(
            f"  scores - votes: dkappa {paired['delta_kappa']:.3f} [{paired['ci'][0]:.3f}, "
            f"{paired['ci'][1]:.3f}] dbacc {paired['delta_bacc']:.3f} "
            f"[{paired['bacc_ci'][0]:.3f}, {paired['bacc_ci'][1]:.3f}] -> ships "
            f"{report['stacker_kind']}"
        )

    for name in sets or shared.DATASETS:
        records = shared.load(name, root, limit=limit)
        votes, scores_ = shared.cached_outputs(name, records, list(panel.members))
        ids = [r["id"] for r in records]
        labels = [r["label"] for r in records]
        clusters = [f"{name}/{r['cluster']}" for r in records]
        run(name, ids, votes, scores_, labels, clusters)
        if name != "faithbench":  # pooled = the default stacker's fitting sets
            pooled["ids"] += ids
            pooled["votes"].append(votes)
            pooled["scores"] += scores_
            pooled["labels"] += labels
            pooled["clusters"] += clusters
    run(
        "pooled (fit sets)",
        pooled["ids"],
        np.vstack(pooled["votes"]),
        pooled["scores"],
        pooled["labels"],
        pooled["clusters"],
    )
    if out:
        Path(out).write_text(json.dumps(results, indent=1), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description="judge panel and stacking benchmarks")
    parser.add_argument(
        "--part", choices=("speed", "throughput", "ladder", "scores"), required=True
    )
    parser.add_argument(
        "--limit", type=int, default=None, help="scores: a seeded sample of N items per data set"
    )
    parser.add_argument(
        "--sets", default=None, help="scores: comma-separated data sets (default: all)"
    )
    parser.add_argument("--data", default=None)
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--json", default=None)
    parser.add_argument("--bootstrap", type=int, default=2000)
    parser.add_argument(
        "--without",
        default=None,
        help="ladder: also compare the stacked panel with and without MEMBER",
    )
    args = parser.parse_args()
    if args.part == "speed":
        part_speed(n_boot=args.bootstrap)
    elif args.part == "throughput":
        part_throughput(args.n, args.data)
    elif args.part == "scores":
        part_scores(
            args.data,
            args.json,
            args.bootstrap,
            args.limit,
            args.sets.split(",") if args.sets else None,
        )
    else:
        part_ladder(args.data, args.json, args.bootstrap, args.without)


if __name__ == "__main__":
    main()
