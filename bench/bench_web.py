"""Benchmark: page load time of the review queue of ``auditor serve`` on a run of 10,000 claims.

Writes a synthetic run (``--claims`` claims in answers of ``--per-answer`` claims; each
factual claim with 5 evidence passages of ~300 characters and 8 judge votes with raw
output; 500 human audits) to a temporary SQLite ledger, then times, ``--repeat`` times
each, through FastAPI's test client (the whole request: ledger reads, ordering,
filtering, evidence and votes of the page, deciding sentences, template):

- the queue's first page (all claims, flagged first; ``--per-page`` claims a page),
- the queue filtered to flagged, not-yet-reviewed claims,
- the last page, and the page found for one claim (``?claim=``),
- the JSON API's ``GET /api/runs/{run}/claims?flagged=true&limit=20``,
- the queue's first page as the first request of a new server (nothing cached: the
  run's claim rows are read from the ledger; later requests reuse them),

against references measured in the same process: ``Ledger.claim_results`` (every claim
of the run with its verdict, as the report reads them), ``Ledger.claim_labels`` (the
one light row per claim the queue orders and filters) and, as the baseline, the same
queue rendered unpaginated (every claim on one page). With Playwright and a Chromium
(``AUDITOR_CHROMIUM`` or ``chromium`` on the PATH) it also times the queue in a real
headless browser against a real ``uvicorn`` server (navigation to the load event).
Aim: under 1 s for the queue. Figures: median [min, max] over the repeats.

Usage::

    python bench/bench_web.py [--claims 10000] [--per-answer 5] [--per-page 20] [--repeat 15]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from auditor.digest import content_digest, sha256_text
from auditor.types import Chunk, Component, DocumentVersion
from ledger import (
    AnswerResult,
    ClaimRecord,
    Ledger,
    RetrievalRecord,
    VerdictRecord,
    VoteRecord,
    open_ledger,
)

LABELS = np.array(["supported", "contradicted", "not_supported", "unknown", "stale", "not_factual"])
JUDGES = [f"judge{i}" for i in range(8)]
WORDS = (
    "the",
    "line",
    "network",
    "station",
    "fare",
    "opened",
    "kilometres",
    "trains",
    "depot",
    "service",
    "route",
    "minutes",
    "airport",
    "harbor",
    "dollars",
    "monthly",
    "pass",
    "children",
    "travel",
    "free",
    "runs",
    "every",
    "electrified",
    "shortest",
    "longest",
    "built",
    "cost",
    "billion",
    "platform",
    "signal",
)


def _sentence(rng: np.random.Generator, n: int = 12) -> str:
    words = rng.choice(WORDS, size=n)
    return " ".join(words).capitalize() + f" {int(rng.integers(1, 2000))}."


def write_run(ledger: Ledger, n_claims: int, per_answer: int, seed: int = 0) -> str:
    """A complete synthetic run of realistic size; returns its id."""
    rng = np.random.default_rng(seed)
    roles = {
        "extractor": Component("extractor", "rules", "1", content_digest(["e"]), {}),
        "panel": Component("panel", "bench", "1", content_digest(["p"]), {}),
        "stacker": Component("stacker", "raim", "1", content_digest(["s"]), {}),
    }
    for j in JUDGES:
        roles[f"judge:{j}"] = Component("judge", j, "1", content_digest(["j", j]), {})
    run_id = content_digest(["bench-web", n_claims, per_answer, seed])
    n_answers = n_claims // per_answer
    ledger.begin_run(
        run_id,
        kind="audit",
        input_digest=sha256_text("bench-web"),
        as_of=None,
        config={"policy": {"threshold": 0.5}},
        components=roles,
        n_answers=n_answers,
    )
    labels = rng.choice(LABELS, size=n_claims, p=[0.5, 0.1, 0.1, 0.15, 0.05, 0.1])
    probs = rng.random(n_claims)
    docs = []
    for d in range(200):  # a corpus of 200 documents of 5 passages
        passages = [" ".join(_sentence(rng) for _ in range(4)) for _ in range(5)]
        text = "\n".join(passages)
        doc = DocumentVersion(
            doc_id=f"doc-{d}",
            version="v1",
            text=text,
            digest=sha256_text(text),
            source=f"https://example.org/{d}",
        )
        chunks, at = [], 0
        for k, p in enumerate(passages):
            chunks.append(
                Chunk(
                    chunk_id=f"doc-{d}:{k}",
                    doc_id=doc.doc_id,
                    version="v1",
                    digest=doc.digest,
                    start=at,
                    end=at + len(p),
                    text=p,
                )
            )
            at += len(p) + 1
        docs.append((doc, chunks))
    for a in range(n_answers):
        texts = [_sentence(rng) for _ in range(per_answer)]
        answer = " ".join(texts)
        claims, retrievals, votes, verdicts = [], [], [], []
        versions, chunk_rows = [], []
        at = 0
        for i, k in enumerate(range(a * per_answer, (a + 1) * per_answer)):
            cid = sha256_text(f"bench claim {k}")
            factual = labels[k] != "not_factual"
            claims.append(
                ClaimRecord(cid, texts[i], [(at, at + len(texts[i]))], bool(factual), "claim")
            )
            if factual:
                doc, chunks = docs[int(rng.integers(len(docs)))]
                versions.append(doc)
                chunk_rows += chunks
                for rank, chunk in enumerate(chunks):
                    retrievals.append(
                        RetrievalRecord(
                            cid,
                            rank,
                            chunk.chunk_id,
                            doc.doc_id,
                            doc.digest,
                            0.8 - 0.1 * rank,
                            False,
                            False,
                            texts[i],
                        )
                    )
                sentence = chunks[0].text.split(". ")[0] + "."
                votes += [
                    VoteRecord(
                        cid,
                        roles[f"judge:{j}"].digest,
                        j,
                        float(rng.choice([0.0, 0.5, 1.0])),
                        json.dumps({"ratio": 0.5, "sentence": sentence}),
                        {"support": 0.5},
                        0.001,
                        None,
                    )
                    for j in JUDGES
                ]
            p = float(probs[k]) if labels[k] not in ("unknown", "not_factual") else None
            verdicts.append(
                VerdictRecord(
                    cid,
                    str(labels[k]),
                    p,
                    "bench rule",
                    [(at, at + 4)] if labels[k] == "contradicted" else [],
                )
            )
            at += len(texts[i]) + 1
        ledger.record_answer(
            run_id,
            AnswerResult(
                answer_id=f"answer-{a}",
                question=f"Question {a}?",
                answer=answer,
                answer_digest=sha256_text(answer),
                as_of=None,
                seq=a,
                claims=claims,
                retrievals=retrievals,
                votes=votes,
                verdicts=verdicts,
                evidence_versions=versions,
                evidence_chunks=chunk_rows,
            ),
        )
    ledger.finish_run(run_id)
    return run_id


def timed(fn: Callable[[], object], repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def show(name: str, times: list[float]) -> float:
    med = statistics.median(times)
    print(
        f"  {name:<58} {med * 1e3:8.1f} ms  [{min(times) * 1e3:.1f}, "
        f"{max(times) * 1e3:.1f}]  n={len(times)}"
    )
    return med


def browser_times(db: Path, run_id: str, repeat: int, per_page: int) -> list[float] | None:
    """Navigation to the load event of the queue in headless Chromium, real server."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("  (no Playwright: the browser measurement is skipped)")
        return None
    exe = os.environ.get("AUDITOR_CHROMIUM") or shutil.which("chromium")
    if not exe:
        print("  (no Chromium: the browser measurement is skipped)")
        return None
    import uvicorn

    from auditor.web import create_app

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(str(db), per_page=per_page), host="127.0.0.1", port=port, log_level="warning"
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    url = f"http://127.0.0.1:{port}/runs/{run_id}/review"
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=exe,
                headless=True,
                args=[
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                    "--no-first-run",
                ],
            )
            page = browser.new_page()
            page.goto(url)  # warm
            times = timed(lambda: page.goto(url, wait_until="load"), repeat)
            browser.close()
    finally:
        server.should_exit = True
        thread.join(timeout=10)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=int, default=10_000)
    parser.add_argument("--per-answer", type=int, default=5)
    parser.add_argument("--per-page", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    from fastapi.testclient import TestClient

    from auditor.web import create_app

    with tempfile.TemporaryDirectory(prefix="auditor-bench-web-") as tmp:
        db = Path(tmp) / "bench.db"
        t0 = time.perf_counter()
        with open_ledger(db) as ledger:
            run_id = write_run(ledger, args.claims, args.per_answer)
            claims = ledger.claim_results(run_id)
            ledger.record_human_audits(
                run_id,
                [
                    (c.claim_id, "bench", "supported" if k % 2 else "contradicted", None)
                    for k, c in enumerate(claims[:500])
                ],
            )
        print(
            f"wrote a run of {len(claims)} claims ({args.claims // args.per_answer} "
            f"answers, {args.per_page} claims a page) in {time.perf_counter() - t0:.1f} s"
        )
        app = create_app(str(db), n_boot=2000, per_page=args.per_page)
        with (
            TestClient(app, base_url="http://127.0.0.1:8765") as client,
            open_ledger(db, create=False) as ledger,
        ):
            queue = f"/runs/{run_id}/review"

            def get(url: str) -> Callable[[], object]:
                def call() -> object:
                    res = client.get(url)
                    assert res.status_code == 200, res.text[:500]
                    return res

                return call

            get(queue)()  # warm (templates, first connection, the run's claim rows)
            size = len(client.get(queue).content)
            print(f"times per request (median [min, max]); queue page {size / 1e3:.0f} kB:")
            show(
                "reference: Ledger.claim_results (every claim, as reports read them)",
                timed(lambda: ledger.claim_results(run_id), args.repeat),
            )
            floor = show(
                "reference: Ledger.claim_labels (the queue's one row per claim)",
                timed(lambda: ledger.claim_labels(run_id), args.repeat),
            )
            first = show(
                "queue, first page (all claims, flagged first)", timed(get(queue), args.repeat)
            )
            show(
                "queue, flagged and not reviewed",
                timed(get(f"{queue}?flagged=true&reviewed=false"), args.repeat),
            )
            last = -(-args.claims // args.per_page)
            show(f"queue, last page ({last})", timed(get(f"{queue}?page={last}"), args.repeat))
            show(
                "queue, the page of one claim (?claim=)",
                timed(get(f"{queue}?claim={claims[-1].claim_id[:16]}"), args.repeat),
            )
            show(
                "API: GET /api/runs/{run}/claims?flagged=true&limit=20",
                timed(get(f"/api/runs/{run_id}/claims?flagged=true&limit=20"), args.repeat),
            )

            def cold() -> None:  # a new server: ledger opened, templates compiled, rows read
                with TestClient(
                    create_app(str(db), n_boot=2000, per_page=args.per_page),
                    base_url="http://127.0.0.1:8765",
                ) as fresh:
                    assert fresh.get(queue).status_code == 200

            def uncached() -> None:
                app.state.claim_rows.clear()
                get(queue)()

            show(
                "queue, first view of the run (its claim rows not kept yet)",
                timed(uncached, args.repeat),
            )
            show(
                "queue, first request of a new server (nothing cached)",
                timed(cold, max(3, args.repeat // 3)),
            )
            whole = show(
                f"baseline: the whole queue on one page ({args.claims} claims)",
                timed(get(f"{queue}?per_page={args.claims}"), 2),
            )
        print(
            f"paginated queue (claim rows kept): {first / whole:.4f} of the unpaginated "
            f"baseline ({whole / first:.0f}x faster); {first / floor:.2f}x the time of "
            "reading the claim rows"
        )
        times = browser_times(db, run_id, args.repeat, args.per_page)
        if times:
            show("headless Chromium: queue navigation to load, real server", times)


if __name__ == "__main__":
    main()
