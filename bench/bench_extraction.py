"""Claim extraction quality on FactBench and throughput of the rule-based extractor.

Quality (answers of FactBench that carry a human claim list):
- recall: share of human claims matched by an extracted *factual* claim of the
  same answer; precision: share of extracted factual claims matched by a human
  claim of the same answer. Matcher: MiniLM (auditor.embedding.encode) cosine
  >= threshold (0.8 by default; 0.7 shown for sensitivity); a claim may match
  several (no one-to-one assignment).
- claims per sentence: factual claims / sentences of the sentence splitter,
  next to the human figure (human claims / the same sentences).
Each figure carries a 95% cluster-bootstrap interval (clusters = answers).

Throughput: answers/s of ``rules`` vs the ``sentences`` baseline on
FactBench answers of 80-120 words, in the same process (torch and spaCy on
``--threads`` threads).

Usage: python bench/bench_extraction.py [--data DIR] [--atomic] [--limit N] [--threads 2]
    [--llm-url http://HOST:PORT/v1 [--llm-model NAME] [--llm-constraint gbnf]]
(``--llm-url``: the LLM extractor too, against any OpenAI-compatible server, e.g.
``python -m llama_cpp.server --model SmolLM2-135M-Instruct.Q4_1.gguf``; its fallbacks to
the rule-based extractor are counted and printed)
(``--atomic``: only the answers whose human claims are atomic, sources factcheckgpt and
factool-qa, the ones the recall/precision aims are set on)
(data dir default: $AUDITOR_DATA or ../shared/data relative to the repo).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

from auditor.embedding import encode
from auditor.extract import build_extractor
from auditor.stats.bootstrap import cluster_bootstrap_weights, percentile_interval
from auditor.types import Answer

REPO = Path(__file__).resolve().parents[1]
ATOMIC_SOURCES = ("factcheckgpt", "factool-qa")


def _data_dir(arg: str | None) -> Path:
    if arg:
        return Path(arg)
    return Path(os.environ.get("AUDITOR_DATA", REPO.parent / "shared" / "data"))


def _load(path: Path) -> list[dict]:
    rows = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                row = json.loads(line)
                row["_line"] = number
                rows.append(row)
    return rows


def _match(
    human: list[str], human_ans: np.ndarray, claims: list[str], claim_ans: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Best same-answer cosine for every human claim and every extracted claim."""
    h = encode(human)
    c = encode(claims)
    sim = h @ c.T
    same = human_ans[:, None] == claim_ans[None, :]
    sim = np.where(same, sim, -1.0)
    best_h = sim.max(axis=1) if sim.shape[1] else np.full(len(human), -1.0)
    best_c = sim.max(axis=0) if sim.shape[0] else np.full(len(claims), -1.0)
    return best_h, best_c


def _per_answer(values: np.ndarray, owner: np.ndarray, n: int) -> np.ndarray:
    return (
        np.bincount(owner, weights=values.astype(float), minlength=n)
        if owner.size
        else (np.zeros(n))
    )


def quality(
    rows: list[dict],
    extractors: dict[str, dict],
    thresholds: list[float],
    seed: int,
    n_boot: int = 2000,
) -> None:
    """Recall and precision of each extractor (name -> its parameters); the first is the
    baseline, and every other one is also reported paired against its predecessor."""
    answers = [
        Answer(id=str(r["_line"]), question=r["prompt"] or "", answer=r["response"]) for r in rows
    ]
    n = len(rows)
    human = [c for r in rows for c in r["claims"]]
    human_ans = np.array([i for i, r in enumerate(rows) for _ in r["claims"]])
    sources = np.array([r["source"] for r in rows])
    atomic = np.isin(sources, ATOMIC_SOURCES)
    sentences = build_extractor("sentences").extract_many(answers)
    n_sent = np.array([len(s) for s in sentences], dtype=float)
    n_human = np.bincount(human_ans, minlength=n).astype(float)
    print(
        f"answers: {n} (atomic human claims: {int(atomic.sum())} answers from "
        f"{'+'.join(ATOMIC_SOURCES)}; sentence-level human claims: felm-wk "
        f"{int((sources == 'felm-wk').sum())}); human claims: {len(human)}; "
        f"sentences: {int(n_sent.sum())}"
    )
    rng = np.random.default_rng(seed)
    groups = {
        name: mask
        for name, mask in {"all": np.ones(n, bool), "atomic": atomic, "felm-wk": ~atomic}.items()
        if mask.any()
    }
    # one set of answer-level resamples shared by every figure: differences are paired
    weights = cluster_bootstrap_weights(np.arange(n), n_boot, rng)

    def ratio(num: np.ndarray, den: np.ndarray, mask: np.ndarray) -> tuple[float, np.ndarray]:
        w = weights[:, mask]
        with np.errstate(invalid="ignore", divide="ignore"):
            boot = (w @ num[mask]) / (w @ den[mask])
        return float(num[mask].sum() / den[mask].sum()), boot

    def fmt(point: float, boot: np.ndarray) -> str:
        lo, hi = percentile_interval(boot)
        return f"{point:.3f} [{lo:.3f}, {hi:.3f}]"

    for group, mask in groups.items():
        print(f"  human claims/sentence [{group}]: {fmt(*ratio(n_human, n_sent, mask))}")
    figures: dict[str, dict[tuple[str, str, float], tuple[float, np.ndarray]]] = {}
    names = list(extractors)
    for name in names:
        extractor = build_extractor(name, extractors[name])
        start = time.perf_counter()
        detailed = extractor.extract_detailed(answers)
        elapsed = time.perf_counter() - start
        extracted = [list(e.claims) for e in detailed]
        fallbacks = Counter(e.fallback.split(":")[0] for e in detailed if e.fallback is not None)
        patched = sum(bool(e.notes) for e in detailed)
        claims = [c.text for cl in extracted for c in cl if c.factual]
        claim_ans = np.array(
            [i for i, cl in enumerate(extracted) for c in cl if c.factual], dtype=int
        )
        nonfactual = sum(1 for cl in extracted for c in cl if not c.factual)
        best_h, best_c = _match(human, human_ans, claims, claim_ans)
        print(
            f"\n{name}: {len(claims)} factual claims, {nonfactual} non-factual ({elapsed:.1f}s); "
            f"answers that fell back whole: {sum(fallbacks.values())} {dict(fallbacks)}, "
            f"with sentences covered by rules: {patched}"
        )
        n_claims = np.bincount(claim_ans, minlength=n).astype(float)
        figures[name] = {}
        for group, mask in groups.items():
            line = [f"  [{group}] claims/sentence {fmt(*ratio(n_claims, n_sent, mask))}"]
            for t in thresholds:
                rec = ratio(_per_answer(best_h >= t, human_ans, n), n_human, mask)
                pre = ratio(_per_answer(best_c >= t, claim_ans, n), n_claims, mask)
                figures[name][(group, "recall", t)] = rec
                figures[name][(group, "precision", t)] = pre
                line.append(f"cos>={t}: recall {fmt(*rec)} precision {fmt(*pre)}")
            print("\n      ".join(line))
    for b, a in itertools.pairwise(names):
        print(f"\npaired differences {a} - {b} (same answer resamples):")
        for group in groups:
            parts = []
            for t in thresholds:
                for metric in ("recall", "precision"):
                    pa, ba = figures[a][(group, metric, t)]
                    pb, bb = figures[b][(group, metric, t)]
                    parts.append(f"{metric}@{t} {fmt(pa - pb, ba - bb)}")
            print(f"  [{group}] " + "; ".join(parts))


def throughput(rows: list[dict], n: int, repeats: int) -> None:
    pool = [r for r in rows if r.get("response") and 80 <= len(r["response"].split()) <= 120]
    pool = pool[:n]
    answers = [Answer(id=str(i), question="", answer=r["response"]) for i, r in enumerate(pool)]
    words = np.mean([len(a.answer.split()) for a in answers])
    rates = {}
    for name in ("sentences", "rules"):
        extractor = build_extractor(name)
        extractor.extract_many(answers[:20])  # warm-up (model load)
        best = np.inf
        for _ in range(repeats):
            start = time.perf_counter()
            extractor.extract_many(answers)
            best = min(best, time.perf_counter() - start)
        rates[name] = len(answers) / best
        print(
            f"  {name}: {rates[name]:.1f} answers/s ({len(answers)} answers, "
            f"{words:.0f} words on average, best of {repeats})"
        )
    print(f"  rules / sentences speed ratio: {rates['rules'] / rates['sentences']:.2f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", default=None, help="data directory (default $AUDITOR_DATA or ../shared/data)"
    )
    parser.add_argument(
        "--limit", type=int, default=0, help="answers with human claims to use (0 = all)"
    )
    parser.add_argument(
        "--atomic", action="store_true", help=f"only answers from {'+'.join(ATOMIC_SOURCES)}"
    )
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--throughput-n", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip-quality", action="store_true")
    parser.add_argument(
        "--llm-url",
        default=None,
        help="also measure the LLM extractor on this OpenAI-compatible endpoint (.../v1)",
    )
    parser.add_argument("--llm-model", default="smollm2", help="the endpoint's model name")
    parser.add_argument(
        "--llm-constraint", default="gbnf", help="output constraint: gbnf, json_schema or none"
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    torch.set_num_threads(args.threads)
    path = _data_dir(args.data) / "factcheck_gpt" / "Factbench.jsonl"
    if not path.exists():
        print(f"FactBench not found at {path}; pass --data or set AUDITOR_DATA", file=sys.stderr)
        return 1
    rows = _load(path)
    labelled = [r for r in rows if r.get("response") and r.get("claims")]
    if args.atomic:
        labelled = [r for r in labelled if r["source"] in ATOMIC_SOURCES]
    if args.limit:
        labelled = labelled[: args.limit]
    if not args.skip_quality:
        print("== quality (FactBench answers with human claims)")
        extractors: dict[str, dict] = {"sentences": {}, "rules": {}}
        if args.llm_url:
            extractors["llm"] = {
                "base_url": args.llm_url,
                "model": args.llm_model,
                "constraint": None if args.llm_constraint == "none" else args.llm_constraint,
                "api_key_env": None,
                "timeout_s": 300,
                "max_concurrency": 1,
            }
        quality(labelled, extractors, [0.8, 0.7], args.seed)
    if args.throughput_n:
        print("\n== throughput (FactBench answers of 80-120 words)")
        throughput(rows, args.throughput_n, args.repeats)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
