"""Labels on the authored corpus (``data/authored/``): accuracy and per-label precision and
recall with 95 % cluster-bootstrap intervals (answers are the clusters).

Usage::

    python bench/eval_authored.py --split dev [--split test] [--policy policy.toml]
        [--weights DIR] [--signals out/signals_dev.pkl] [--json out/eval_dev.json]

Each domain's documents are ingested into a temporary index; its answers (each with its
own ``as_of``) run through the audit graph with the default panel and stacker; the
graph's writer step hands over the final claim records, from which the labels and the
labelling step's signals (:class:`auditor.labels.ClaimSignals`) are taken. A claim is
matched to the labelled sentence its span lies in (most characters); a sentence the
extractor made several claims of is scored once, by the label of its first factual
claim if it has one (``sentence_label``). ``--signals`` pickles every claim's signals with
its gold label, for fitting the label decision (``bench/fit_label_model.py``).

The test split is frozen (``data/authored/test.sha256``): this prints aggregate figures
only, never items.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _panel_variants import panel_with_reader
from authored_corpus import LABELS, ROOT, LabelledSentence, load_split

from auditor.stats.bootstrap import (
    cluster_bootstrap_weights,
    percentile_interval,
    ratio_with_interval,
)


@dataclass
class ScoredClaim:
    """One extracted claim with its gold (sentence) label, predicted label and signals."""

    domain: str
    answer_id: str
    sentence: int
    gold: str
    pred: str
    reason: str
    text: str
    signals: Any


def _overlap(a: tuple[int, int], b: tuple[int, int]) -> int:
    return max(0, min(a[1], b[1]) - max(a[0], b[0]))


def audit_domain(
    folder: Path,
    sentences: Sequence[LabelledSentence],
    config: Any,
    weights: str | None,
    stacker: str | None = None,
) -> list[ScoredClaim]:
    """Audit one domain's answers through the graph; every claim with its gold label."""
    from auditor import Auditor
    from auditor.answers import load_answers
    from auditor.graph.flow import build_audit_graph
    from auditor.retrieval import ingest, load_documents
    from ledger import open_ledger

    answers = load_answers(folder / "answers.jsonl")
    captured: list[Any] = []

    def capture(state: Any) -> list[str]:
        captured.extend(state["audits"])
        return [a.id for a in state["answers"]]

    with (
        tempfile.TemporaryDirectory(prefix="eval-authored-") as tmp,
        open_ledger(":memory:") as ledger,
    ):
        ingest(load_documents([folder / "corpus.jsonl"]), Path(tmp) / "index")
        panel = None
        if weights:
            panel = panel_with_reader(weights, Path(tmp))
        with Auditor(
            Path(tmp) / "index", ledger, panel=panel, stacker=stacker, config=config
        ) as auditor:
            components = auditor.components()
            graph = build_audit_graph(components, capture)
            extractions = components.extractor.extract_detailed(answers)
            graph.invoke({"answers": answers, "extractions": extractions})
    by_answer: dict[str, list[tuple[int, LabelledSentence]]] = {}
    for i, s in enumerate(sentences):
        by_answer.setdefault(s.answer_id, []).append((i, s))
    out = []
    for audit in captured:
        claim = audit.claim
        span = (min(s[0] for s in claim.spans), max(s[1] for s in claim.spans))
        candidates = by_answer.get(claim.answer_id, [])
        best = max(candidates, key=lambda c: _overlap(span, (c[1].start, c[1].end)), default=None)
        if best is None or _overlap(span, (best[1].start, best[1].end)) == 0:
            continue
        verdict = audit.verdict
        out.append(
            ScoredClaim(
                folder.name,
                claim.answer_id,
                best[0],
                best[1].label,
                str(verdict.label.value) if verdict else "unknown",
                verdict.reason if verdict else "",
                claim.text,
                audit.signals(),
            )
        )
    return out


def load_signals(path: Path) -> list[ScoredClaim]:
    """The claims ``--signals`` wrote."""
    return [ScoredClaim(**row) for row in pickle.loads(path.read_bytes())]


def sentence_label(claims: Sequence[ScoredClaim]) -> str:
    """One predicted label per labelled sentence: its first factual claim's label."""
    factual = [c for c in claims if c.pred != "not_factual"]
    return (factual or list(claims))[0].pred


def score(rows: Sequence[tuple[str, str, str]], n_boot: int = 2000) -> dict[str, Any]:
    """Accuracy and per-label precision / recall with cluster-bootstrap intervals;
    ``rows`` are (cluster, gold, predicted)."""
    rng = np.random.default_rng(0)
    clusters = np.array([r[0] for r in rows])
    gold = np.array([r[1] for r in rows])
    pred = np.array([r[2] for r in rows])

    def ratio(num: np.ndarray, den: np.ndarray) -> list[float]:
        if den.sum() == 0:
            return [float("nan")] * 3
        point, (lo, hi) = ratio_with_interval(
            num.astype(float), den.astype(float), clusters, n_boot=n_boot, rng=rng
        )
        return [round(point, 3), round(lo, 3), round(hi, 3)]

    out: dict[str, Any] = {"n": len(rows), "accuracy": ratio(gold == pred, np.ones(len(rows)))}
    for label in LABELS:
        out[label] = {
            "n": int((gold == label).sum()),
            "recall": ratio((gold == label) & (pred == label), gold == label),
            "precision": ratio((gold == label) & (pred == label), pred == label),
        }
    out["confusion"] = {
        g: dict(Counter(p for gg, p in zip(gold, pred, strict=True) if gg == g)) for g in LABELS
    }
    return out


def paired_accuracy(
    before: list[tuple[str, str, str]], after: list[tuple[str, str, str]]
) -> dict[str, Any]:
    """Accuracy difference (after - before) with a paired cluster-bootstrap interval."""
    clusters = np.array([r[0] for r in before])
    diff = np.array(
        [float(a[2] == a[1]) - float(b[2] == b[1]) for a, b in zip(after, before, strict=True)]
    )
    weights = cluster_bootstrap_weights(clusters, 2000, np.random.default_rng(0))
    boot = (weights @ diff) / weights.sum(axis=1)
    lo, hi = percentile_interval(boot)
    return {"difference": round(float(diff.mean()), 3), "interval": [round(lo, 3), round(hi, 3)]}


def evaluate_split(
    split: str,
    config: Any,
    weights: str | None,
    log: Any,
    stacker: str | None = None,
    domains: set[str] | None = None,
) -> tuple[list[ScoredClaim], dict[str, Any]]:
    """Audit every domain of ``split`` (or those named); its claims and sentence figures."""
    data = load_split(split, only=domains)
    claims: list[ScoredClaim] = []
    for domain, sentences in data.items():
        started = time.time()
        got = audit_domain(ROOT / split / domain, sentences, config, weights, stacker)
        claims.extend(got)
        log(f"{split}/{domain}: {len(got)} claims ({time.time() - started:.0f} s)")
    return claims, score(sentence_rows(claims, data))


def sentence_rows(
    claims: Sequence[ScoredClaim], data: dict[str, list[LabelledSentence]]
) -> list[tuple[str, str, str]]:
    """(answer cluster, gold, predicted) per labelled sentence; a sentence no claim
    covers is predicted ``not_factual`` (the extractor found nothing to check)."""
    grouped: dict[tuple[str, int], list[ScoredClaim]] = {}
    for c in claims:
        grouped.setdefault((c.domain, c.sentence), []).append(c)
    rows = []
    for domain, sentences in data.items():
        for i, s in enumerate(sentences):
            got = grouped.get((domain, i))
            rows.append(
                (f"{domain}/{s.answer_id}", s.label, sentence_label(got) if got else "not_factual")
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    from auditor import AuditConfig
    from auditor.config import load_policy

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", action="append", required=True)
    parser.add_argument("--policy", default=None, help="label policy TOML")
    parser.add_argument("--weights", default=None, help="entailment weights folder")
    parser.add_argument("--stacker", default=None, help="stacker JSON (default: shipped)")
    parser.add_argument("--domains", default=None, help="comma-separated domains only")
    parser.add_argument("--signals", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    config = AuditConfig()
    if args.policy:
        config = replace(config, policy=load_policy(args.policy))
    results = {}
    everything: list[ScoredClaim] = []
    for split in args.split:
        claims, figures = evaluate_split(
            split,
            config,
            args.weights,
            lambda m: print(m, file=sys.stderr, flush=True),
            args.stacker,
            set(args.domains.split(",")) if args.domains else None,
        )
        everything.extend(claims)
        results[split] = figures
        print(json.dumps({split: figures}, indent=1))
    if args.signals:
        args.signals.parent.mkdir(parents=True, exist_ok=True)
        args.signals.write_bytes(pickle.dumps([vars(c) for c in everything]))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
