"""Benchmark the freshness watch: ``impact`` on a large synthetic ledger, and ``reaudit
--only-impacted`` against a full re-audit on a real corpus where 5 % of documents change.

``impact``: a synthetic SQLite ledger of ``--claims`` claims (default 1,000,000) in
``--runs`` runs (answers of 5 claims; 3 retrieved passages per claim, one of them
relevant; one document version per 10 claims), written in bulk through the ledger's
own batched insert; then an ingest gives 5 % of the documents a new version (through
:meth:`ledger.Ledger.record_corpus`, as ``auditor ingest`` does). Times
:func:`auditor.freshness.find_impact` (indexed queries, diffs, labels) against a
baseline in the same process: reading every run's evidence back
(:meth:`ledger.Ledger.claim_evidence`, what one would do without the indexes) and
checking it against the changed documents; both must find the same claims.

``reaudit``: ``--docs`` dated documents each stating one fact, ``--answers`` answers of
two of those facts, audited as of 2025-01-01 with the real pipeline (rules extractor,
index, offline panel, shipped stacker); then 5 % of the documents get a new version with
a changed number, and the run is re-audited as of 2025-06-01 with ``--only-impacted``
and in full (every claim judged again), in the same process after a warm-up. Prints
the share of claims judged again, both wall times and their ratio, and checks that
both give the same labels.

Usage::

    python bench/bench_freshness.py impact [--claims 1000000] [--runs 10]
    python bench/bench_freshness.py reaudit [--docs 400] [--answers 200]
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from auditor.digest import sha256_text
from auditor.freshness import find_impact
from auditor.types import Chunk, DocumentVersion
from ledger import Ledger, open_ledger
from ledger import models as m

PER_ANSWER = 5
PER_CLAIM = 3


def _doc(i: int, version: str, text: str, published: datetime) -> tuple[DocumentVersion, Chunk]:
    digest = sha256_text(text)
    doc = DocumentVersion(
        doc_id=f"doc-{i}", version=version, text=text, digest=digest, published_at=published
    )
    return doc, Chunk(
        chunk_id=f"{digest[:24]}:0:{len(text)}",
        doc_id=doc.doc_id,
        version=version,
        digest=digest,
        start=0,
        end=len(text),
        text=text,
    )


def _fact(i: int, value: int) -> str:
    return f"Survey item {i} of the regional register measures {value} units this year."


def write_synthetic(
    ledger: Ledger, n_claims: int, n_runs: int, seed: int = 0
) -> dict[int, tuple[DocumentVersion, Chunk]]:
    """Bulk-write the synthetic ledger (see the module doc); returns the documents."""
    rng = np.random.default_rng(seed)
    n_docs = max(n_claims // 10, 10)
    published = datetime(2024, 1, 1, tzinfo=UTC)
    docs = {i: _doc(i, "v1", _fact(i, i % 97), published) for i in range(n_docs)}
    ledger.record_corpus([d for d, _ in docs.values()], [c for _, c in docs.values()])
    extractor: dict[str, Any] = {
        "digest": sha256_text("bench-extractor"),
        "kind": "extractor",
        "name": "rules",
        "version": "1",
        "config": {},
        "created_at": None,
    }
    as_of = datetime(2025, 1, 1, tzinfo=UTC)
    done = datetime.now(UTC)  # the runs finish after the corpus was recorded
    per_run = n_claims // n_runs
    with ledger._tx() as conn:  # the ledger's own batched INSERT (bulk synthetic rows)
        ledger._insert_ignore(conn, m.ComponentRow, [extractor])
    for r in range(n_runs):
        run_id = sha256_text(f"bench-run-{r}")
        cited = rng.integers(0, n_docs, size=(per_run, PER_CLAIM))
        with ledger._tx() as conn:
            ledger._insert_ignore(
                conn,
                m.RunRow,
                [
                    {
                        "run_id": run_id,
                        "kind": "audit",
                        "status": "complete",
                        "input_digest": sha256_text(f"input-{r}"),
                        "as_of": as_of,
                        "config": {},
                        "n_answers": per_run // PER_ANSWER,
                        "created_at": done,
                        "finished_at": done,
                    }
                ],
            )
            ledger._insert_ignore(
                conn,
                m.AnswerRow,
                [
                    {
                        "run_id": run_id,
                        "answer_id": f"answer-{a}",
                        "question": None,
                        "answer": "text",
                        "answer_digest": "d",
                        "as_of": None,
                        "seq": a,
                        "extraction": {},
                        "created_at": done,
                    }
                    for a in range(per_run // PER_ANSWER)
                ],
            )
            claims, retrievals, verdicts = [], [], []
            for k in range(per_run):
                cid = sha256_text(f"{r}:{k}")
                claims.append(
                    {
                        "run_id": run_id,
                        "claim_id": cid,
                        "answer_id": f"answer-{k // PER_ANSWER}",
                        "text": f"claim {k}",
                        "spans": [[0, 5]],
                        "factual": True,
                        "kind": "claim",
                        "extractor_digest": extractor["digest"],
                        "seq": k % PER_ANSWER,
                    }
                )
                for rank in range(PER_CLAIM):
                    doc, chunk = docs[int(cited[k, rank])]
                    retrievals.append(
                        {
                            "run_id": run_id,
                            "claim_id": cid,
                            "rank": rank,
                            "chunk_id": chunk.chunk_id,
                            "doc_id": doc.doc_id,
                            "version_digest": doc.digest,
                            "score": 0.8 if rank == 0 else 0.2,
                            "superseded": False,
                            "inline": False,
                            "query": None,
                            "coverage": 0.9 if rank == 0 else 0.1,
                            "sentence_relevance": None,
                        }
                    )
                verdicts.append(
                    {
                        "run_id": run_id,
                        "claim_id": cid,
                        "panel_digest": "p",
                        "stacker_digest": "s",
                        "label": "supported",
                        "p_hallucinated": 0.1,
                        "reason": "bench",
                        "error_spans": [],
                        "created_at": done,
                    }
                )
            ledger._insert_ignore(conn, m.ClaimRow, claims)
            ledger._insert_ignore(conn, m.RetrievalRow, retrievals)
            ledger._insert_ignore(conn, m.VerdictRow, verdicts)
    return docs


def bench_impact(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp, open_ledger(Path(tmp) / "bench.db") as ledger:
        t0 = time.perf_counter()
        docs = write_synthetic(ledger, args.claims, args.runs)
        wrote = time.perf_counter() - t0
        rng = random.Random(1)
        changed = sorted(rng.sample(sorted(docs), max(1, len(docs) * 5 // 100)))
        update = datetime(2025, 3, 1, tzinfo=UTC)
        new = [_doc(i, "v2", _fact(i, i % 97 + 1), update) for i in changed]
        old = [replace_valid_to(docs[i][0], update) for i in changed]
        ledger.record_corpus([*old, *(d for d, _ in new)], [c for _, c in new])
        print(
            f"synthetic ledger: {args.claims:,} claims in {args.runs} runs, "
            f"{args.claims * PER_CLAIM:,} evidence rows, {len(docs):,} documents; "
            f"{len(changed):,} documents (5 %) get a new version; written in {wrote:.0f} s"
        )
        times = []
        report = None
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            report = find_impact(ledger)
            times.append(time.perf_counter() - t0)
        assert report is not None
        t0 = time.perf_counter()
        expected = baseline(ledger, {f"doc-{i}" for i in changed})
        base = time.perf_counter() - t0
        found = {(c.run_id, c.claim_id) for c in report.claims}
        assert found == expected, (len(found), len(expected))
        best = min(times)
        print(
            f"impact: {len(found):,} impacted claims ({len(found) / args.claims:.1%}); "
            f"find_impact {best:.2f} s (best of {args.repeat}: "
            f"{', '.join(f'{t:.2f}' for t in times)}), with diffs and labels"
        )
        print(
            f"baseline (read every run's evidence back and check it): {base:.2f} s; "
            f"speed-up {base / best:.1f}x; same claims found"
        )


def replace_valid_to(doc: DocumentVersion, valid_to: datetime) -> DocumentVersion:
    from dataclasses import replace

    return replace(doc, valid_to=valid_to, superseded=True)


def baseline(ledger: Ledger, changed_docs: set[str]) -> set[tuple[str, str]]:
    """Impacted claims found by reading every run's evidence back (no indexes used)."""
    out = set()
    for run in ledger.list_runs():
        for claim_id, rows in ledger.claim_evidence(run.run_id).items():
            if any(r["doc_id"] in changed_docs and r["score"] >= 0.5 for r in rows):
                out.add((run.run_id, claim_id))
    return out


# ---------------------------------------------------------------------- reaudit
PLACES = [
    "Ashby",
    "Brookfield",
    "Carrow",
    "Dunmore",
    "Elmstead",
    "Fairholm",
    "Glenrock",
    "Harwick",
    "Ivybridge",
    "Kestwick",
    "Larkhill",
    "Millbrook",
    "Northam",
    "Oakridge",
    "Pendle",
    "Quarry Bank",
    "Redwater",
    "Stonebury",
    "Thornfield",
    "Upwell",
]
THINGS = [
    ("library", "lends up to", "books per member"),
    ("ferry", "runs every", "minutes on weekdays"),
    ("museum", "shows", "paintings in its main hall"),
    ("stadium", "seats", "thousand spectators"),
    ("swimming pool", "is heated to", "degrees"),
    ("bakery", "sells", "loaves on Saturdays"),
    ("hospital", "has", "beds in its maternity ward"),
    ("tram line", "stops at", "stations"),
    ("school", "teaches", "pupils in its first grade"),
    ("market", "hosts", "stalls every Sunday"),
    ("orchestra", "employs", "musicians"),
    ("vineyard", "covers", "hectares of slate terraces"),
    ("airport", "serves", "destinations"),
    ("zoo", "keeps", "species of birds"),
    ("cinema", "has", "screens"),
    ("park", "grows", "varieties of roses"),
    ("castle", "has", "towers"),
    ("choir", "has", "singers"),
    ("bridge", "charges a toll of", "euros for cars"),
    ("harbor", "berths", "fishing boats"),
]


def corpus_fact(i: int, value: int) -> str:
    place = PLACES[i % len(PLACES)]
    thing, verb, unit = THINGS[(i // len(PLACES)) % len(THINGS)]
    edition = i // (len(PLACES) * len(THINGS))
    extra = f" according to edition {edition + 1} of the guide" if edition else ""
    return f"The {place} {thing} {verb} {value} {unit}{extra}."


def bench_reaudit(args: argparse.Namespace) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from auditor import AuditConfig, Auditor
    from auditor.freshness import reaudit
    from auditor.retrieval import ingest
    from auditor.retrieval.documents import make_document
    from auditor.types import Answer

    rng = random.Random(0)
    values = {i: rng.randint(3, 90) for i in range(args.docs)}
    docs = [
        make_document(f"doc-{i}", corpus_fact(i, v), published_at="2024-01-01")
        for i, v in values.items()
    ]
    answers = []
    for a in range(args.answers):
        i, j = rng.sample(range(args.docs), 2)
        answers.append(
            Answer(
                id=f"a{a}",
                question="",
                answer=f"{corpus_fact(i, values[i])} {corpus_fact(j, values[j])}",
            )
        )
    changed = rng.sample(range(args.docs), max(1, args.docs * 5 // 100))
    update = [
        make_document(f"doc-{i}", corpus_fact(i, values[i] + 7), published_at="2025-03-01")
        for i in changed
    ]
    with tempfile.TemporaryDirectory() as tmp, open_ledger(Path(tmp) / "l.db") as ledger:

        def record(result: Any) -> None:
            versions = {
                (v.doc_id, v.version): v
                for v in (*result.unchanged, *result.superseded_versions, *result.added_versions)
            }
            ledger.record_corpus(list(versions.values()), list(result.chunks))

        index = Path(tmp) / "index"
        ingest(docs, index, on_commit=record)
        t0 = time.perf_counter()
        config = AuditConfig(as_of=datetime(2025, 1, 1, tzinfo=UTC))
        with Auditor(index, ledger, config=config) as auditor:
            run = auditor.audit(answers)
        first = time.perf_counter() - t0
        ingest(update, index, on_commit=record)
        with Auditor(index, ledger) as auditor:
            reaudit(auditor, run.run_id, as_of="2025-02-01", only_impacted=True)  # warm-up
            t0 = time.perf_counter()
            partial = reaudit(auditor, run.run_id, as_of="2025-06-01", only_impacted=True)
            t_partial = time.perf_counter() - t0
            t0 = time.perf_counter()
            full = reaudit(auditor, run.run_id, as_of="2025-06-01", only_impacted=False)
            t_full = time.perf_counter() - t0
        impacted = find_impact(
            ledger, runs=[run.run_id], as_of=datetime(2025, 6, 1, tzinfo=UTC)
        ).claims
        same = {c.claim_id: c.label for c in ledger.claim_results(partial.run_id)} == {
            c.claim_id: c.label for c in ledger.claim_results(full.run_id)
        }
        labels_before = run.labels
        labels_after = {c.label: 0 for c in ledger.claim_results(full.run_id)}
        for c in ledger.claim_results(full.run_id):
            labels_after[c.label] += 1
    print(
        f"corpus {args.docs} documents, {len(changed)} changed (5 %); {args.answers} answers, "
        f"{partial.n_claims} claims; first audit {first:.1f} s; labels before "
        f"{dict(labels_before)}, after {labels_after}"
    )
    print(
        f"impact names {len(impacted)} claims; reaudit --only-impacted judged again "
        f"{partial.n_rejudged} of {partial.n_claims} claims ({partial.share_rejudged:.1%}), "
        f"carried {partial.n_carried}; {t_partial:.1f} s"
    )
    print(
        f"full re-audit judged again {full.n_rejudged} claims in {t_full:.1f} s; "
        f"--only-impacted took {t_partial / t_full:.0%} of the full re-audit's time "
        f"({t_full / t_partial:.1f}x faster); same labels: {same}"
    )
    if not same:
        raise SystemExit("labels differ between --only-impacted and the full re-audit")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    imp = sub.add_parser("impact", help="impact query time on a synthetic ledger")
    imp.add_argument("--claims", type=int, default=1_000_000)
    imp.add_argument("--runs", type=int, default=10)
    imp.add_argument("--repeat", type=int, default=3)
    re_ = sub.add_parser("reaudit", help="reaudit --only-impacted against a full re-audit")
    re_.add_argument("--docs", type=int, default=400)
    re_.add_argument("--answers", type=int, default=200)
    args = parser.parse_args()
    bench_impact(args) if args.what == "impact" else bench_reaudit(args)


if __name__ == "__main__":
    main()
