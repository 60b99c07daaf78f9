"""Benchmark: report generation from the ledger for a synthetic run of 10,000 claims.

Writes a synthetic run (``--claims`` claims in answers of ``--per-answer`` claims,
7 judge votes each, a few human audits) and a second run sharing its claims to a
temporary SQLite ledger, then times with B = ``--boot`` (default 2000):

- the report card (docs/report-card.md figures with cluster-bootstrap intervals),
- the whole report (card, label shares, judge statistics, human agreement,
  history) with ``--compare`` to the second run, and its HTML rendering;

against a baseline in the same process: the same nine figures computed with the
item-level bootstrap (``auditor.stats.bootstrap.ratio_with_interval``, a
``(B, n_claims)`` weight matrix per figure). Aim: under 10 s for the report.

Usage::

    python bench/bench_report.py [--claims 10000] [--per-answer 5] [--boot 2000]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from auditor.digest import content_digest, sha256_text
from auditor.report.card import build_report_card, claim_indicators, figure_specs
from auditor.report.full import build_full_report
from auditor.report.html import to_html
from auditor.stats.bootstrap import ratio_with_interval
from auditor.types import Chunk, Component, DocumentVersion
from ledger import (
    AnswerResult,
    ClaimRecord,
    ClaimResult,
    Ledger,
    RetrievalRecord,
    VerdictRecord,
    VoteRecord,
    open_ledger,
)

LABELS = np.array(["supported", "contradicted", "not_supported", "unknown", "stale", "not_factual"])
JUDGES = [f"judge{i}" for i in range(7)]


def write_run(ledger: Ledger, tag: str, n_claims: int, per_answer: int, seed: int) -> str:
    rng = np.random.default_rng(seed)
    roles = {
        "extractor": Component("extractor", "rules", "1", content_digest(["e"]), {}),
        "panel": Component("panel", "bench", "1", content_digest(["p", tag]), {}),
        "stacker": Component("stacker", "raim", "1", content_digest(["s", tag]), {}),
    }
    for j in JUDGES:
        roles[f"judge:{j}"] = Component("judge", j, "1", content_digest(["j", j]), {})
    run_id = content_digest(["bench-run", tag])
    n_answers = n_claims // per_answer
    ledger.begin_run(
        run_id,
        kind="audit",
        input_digest=sha256_text(tag),
        as_of=None,
        config={},
        components=roles,
        n_answers=n_answers,
    )
    labels = rng.choice(LABELS, size=n_claims, p=[0.5, 0.1, 0.1, 0.15, 0.05, 0.1])
    votes = rng.choice([0.0, 0.5, 1.0], size=(n_claims, len(JUDGES)))
    probs = rng.random(n_claims)
    doc = DocumentVersion(
        doc_id="bench-doc",
        version="v1",
        text="Evidence text.",
        digest=sha256_text("Evidence text."),
    )
    chunk = Chunk(
        chunk_id="bench-chunk",
        doc_id="bench-doc",
        version="v1",
        digest=doc.digest,
        start=0,
        end=14,
        text="Evidence text.",
    )
    for a in range(n_answers):
        claims, retrievals, vote_rows, verdicts = [], [], [], []
        for k in range(a * per_answer, (a + 1) * per_answer):
            cid = sha256_text(f"claim {k}")
            factual = labels[k] != "not_factual"
            claims.append(ClaimRecord(cid, f"claim {k}", [(0, 5)], bool(factual), "claim"))
            if factual:
                retrievals.append(
                    RetrievalRecord(
                        cid, 0, "bench-chunk", "bench-doc", doc.digest, 0.8, False, False, "q"
                    )
                )
                vote_rows += [
                    VoteRecord(
                        cid, roles[f"judge:{j}"].digest, j, float(votes[k, i]), "", {}, 0.0, None
                    )
                    for i, j in enumerate(JUDGES)
                ]
            verdicts.append(VerdictRecord(cid, str(labels[k]), float(probs[k]), "bench"))
        ledger.record_answer(
            run_id,
            AnswerResult(
                answer_id=f"answer {a}",
                question=None,
                answer="text",
                answer_digest="d",
                as_of=None,
                seq=a,
                claims=claims,
                retrievals=retrievals,
                votes=vote_rows,
                verdicts=verdicts,
                evidence_versions=[doc],
                evidence_chunks=[chunk],
            ),
        )
    ledger.finish_run(run_id)
    return run_id


def baseline_card(claims: list[ClaimResult], n_boot: int) -> float:
    """The nine figures with the item-level bootstrap; returns seconds."""
    t0 = time.perf_counter()
    ind = claim_indicators(claims)
    clusters = np.array([c.answer_id for c in claims]).astype(str)
    for i, (_, num, den, _) in enumerate(figure_specs()):
        ratio_with_interval(
            ind[num] & ind[den],
            ind[den],
            clusters,
            n_boot=n_boot,
            rng=np.random.default_rng([0, i]),
        )
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=int, default=10_000)
    parser.add_argument("--per-answer", type=int, default=5)
    parser.add_argument("--boot", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, open_ledger(Path(tmp) / "bench.db") as ledger:
        t0 = time.perf_counter()
        run_a = write_run(ledger, "a", args.claims, args.per_answer, 0)
        run_b = write_run(ledger, "b", args.claims, args.per_answer, 1)
        claims = ledger.claim_results(run_a)
        ledger.record_human_audits(
            run_a,
            [
                (c.claim_id, "bench", "supported" if k % 2 else "contradicted", None)
                for k, c in enumerate(claims[:500])
            ],
        )
        print(
            f"wrote 2 runs of {args.claims} claims ({args.claims // args.per_answer} "
            f"answers each) in {time.perf_counter() - t0:.1f} s"
        )
        t0 = time.perf_counter()
        claims = ledger.claim_results(run_a)
        read = time.perf_counter() - t0
        t0 = time.perf_counter()
        build_report_card(run_a, claims, n_boot=args.boot)
        card = time.perf_counter() - t0
        t0 = time.perf_counter()
        report = build_full_report(ledger, run_a, compare_to=run_b, n_boot=args.boot)
        full = time.perf_counter() - t0
        t0 = time.perf_counter()
        html = to_html(report)
        render = time.perf_counter() - t0
        base = baseline_card(claims, args.boot)
    print(
        f"B = {args.boot}: read claims {read:.2f} s; report card {card:.2f} s; whole report "
        f"with --compare (card, label shares, judges, human agreement, history, paired "
        f"comparison; reads included) {full:.2f} s; HTML {render:.2f} s "
        f"({len(html) / 1e3:.0f} kB); total {full + render:.2f} s"
    )
    print(
        f"baseline (item-level bootstrap, same nine figures) {base:.2f} s: "
        f"card speed-up {base / card:.1f}x"
    )


if __name__ == "__main__":
    main()
