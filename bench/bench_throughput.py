"""Throughput of the long paths against the models' own speed, in one process.

    python bench/bench_throughput.py [--data DIR] [--claims 20] [--reader-pairs 256]
                                     [--calibrate-items 60] [--json OUT]

Measured one after the other in this process (the machine is shared and noisy: the
ratios, each taken against a limit measured minutes apart in the same process, are
what to read, not the absolute rates):

1. the limits: raw MiniLM encoder sentences/s (``auditor.embedding.MiniLM.encode`` on the
   ingest pool's distinct texts, batch 64, no cache) and raw reader pairs/s
   (``EntailmentModel.predict`` on WiCE evidence windows x claims, batch 32);
2. ingest chunks/s: ``auditor.retrieval.ingest`` of the pool (every evidence
   sentence of the first ``--claims`` WiCE dev claims, one document each: the
   WiCE pool shape) into a fresh index with the ledger write the command does, as a
   ratio of the raw encoder rate;
3. audit claims/s: the offline panel through :class:`auditor.Auditor` on those
   claims as one-sentence answers against that index, with the share of the time
   spent inside the encoder and the reader (the model-bound limit) and the claims/s
   the models alone would allow;
4. calibrate items/s: :func:`auditor.stacking.calibrate.calibrate` (offline panel,
   B=2000) on WiCE and SummEdits-news items, with the same model shares;
5. peak resident memory of the process.

Model time is measured by wrapping the two forward-pass entry points
(``auditor.embedding._run_model`` and ``EntailmentModel.predict``) with timers.
Data path: ``--data``, else ``$AUDITOR_DATA``, else ``../shared/data``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from calibrate_shared import data_dir, load

from auditor.progress import quiet_third_party

quiet_third_party()


class ModelClock:
    """Seconds spent inside the encoder and the reader forward passes."""

    def __init__(self) -> None:
        self.seconds = {"encoder": 0.0, "reader": 0.0}
        self.calls = {"encoder": 0, "reader": 0}

    def install(self) -> None:
        from auditor import embedding
        from auditor.entailment.model import EntailmentModel

        embedding._run_model = self._wrap("encoder", embedding._run_model)  # type: ignore[method-assign]
        EntailmentModel.predict = self._wrap("reader", EntailmentModel.predict)  # type: ignore[method-assign]

    def _wrap(self, key: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds[key] += time.perf_counter() - t0
                self.calls[key] += 1

        return timed

    def snapshot(self) -> dict[str, float]:
        return dict(self.seconds)


POOL_45K = 45_000
"""Size of the one-sentence WiCE pool the issue ingests (the figure is extrapolated)."""


def wice_rows(data: Path) -> list[dict[str, Any]]:
    path = data / "wice" / "claim" / "dev.jsonl"
    if not path.is_file():
        sys.exit(f"WiCE dev not found at {path} (set --data or AUDITOR_DATA)")
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line]


def _delta(after: dict[str, float], before: dict[str, float]) -> dict[str, float]:
    return {k: after[k] - before[k] for k in after}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=None)
    ap.add_argument(
        "--claims",
        type=int,
        default=20,
        help="WiCE claims audited; the pool is all their evidence sentences",
    )
    ap.add_argument("--reader-pairs", type=int, default=256)
    ap.add_argument("--calibrate-items", type=int, default=60)
    ap.add_argument("--bootstrap", type=int, default=2000)
    ap.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = ap.parse_args()
    data = data_dir(args.data)
    rows = wice_rows(data)[: args.claims]
    clock = ModelClock()
    clock.install()
    from auditor import embedding
    from auditor.entailment.model import evidence_windows, load_model
    from auditor.retrieval import ingest, make_document

    out: dict[str, Any] = {"claims": len(rows), "load_average_start": os.getloadavg()}
    out["precision"] = embedding.encoder_precision()
    print(
        f"load average at start: {' '.join(f'{x:.1f}' for x in os.getloadavg())}; "
        f"models in {out['precision']} (AUDITOR_PRECISION=fp32 or bf16 to choose)"
    )
    docs = [
        make_document(f"{c}:{s}", sent)
        for c, row in enumerate(rows)
        for s, sent in enumerate(row["evidence"])
        if sent.strip()
    ]
    texts = sorted({d.text.strip() for d in docs})
    embedding.encode(texts[:8], cache=False)  # load the model outside the timings

    # 1. limits
    t0 = time.perf_counter()
    embedding.encode(texts, cache=False)
    enc_rate = len(texts) / (time.perf_counter() - t0)
    reader = load_model()
    premises: list[str] = []
    hypotheses: list[str] = []
    for row in rows:
        for window in evidence_windows(" ".join(row["evidence"])):
            premises.append(window)
            hypotheses.append(row["claim"])
    premises, hypotheses = premises[: args.reader_pairs], hypotheses[: args.reader_pairs]
    reader.predict(premises[:4], hypotheses[:4])
    t0 = time.perf_counter()
    reader.predict(premises, hypotheses)
    reader_rate = len(premises) / (time.perf_counter() - t0)
    out["limits"] = {
        "encoder_sentences_per_s": enc_rate,
        "encoder_texts": len(texts),
        "reader_pairs_per_s": reader_rate,
        "reader_pairs": len(premises),
    }
    print(
        f"limit: raw encoder {enc_rate:,.1f} sentences/s ({len(texts):,} distinct texts); "
        f"raw reader {reader_rate:,.1f} pairs/s ({len(premises)} pairs)"
    )

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        from ledger import open_ledger

        db = work / "ledger.db"
        # 2. ingest
        embedding.clear_cache()
        before = clock.snapshot()
        t0 = time.perf_counter()

        def record(result: Any) -> None:
            with open_ledger(db) as ledger:
                ledger.record_corpus(list(result.versions), list(result.chunks))

        result = ingest(docs, work / "index", on_commit=record)
        took = time.perf_counter() - t0
        model = _delta(clock.snapshot(), before)["encoder"]
        n_chunks = len(result.chunks)
        ingest_rate = n_chunks / took
        out["ingest"] = {
            "chunks": n_chunks,
            "seconds": took,
            "chunks_per_s": ingest_rate,
            "ratio_to_raw_encoder": ingest_rate / enc_rate,
            "encoder_share": model / took,
        }
        out["ingest"]["extrapolated_45k_pool_seconds"] = POOL_45K / ingest_rate
        print(
            f"ingest: {n_chunks:,} chunks in {took:.1f} s = {ingest_rate:,.1f} chunks/s, "
            f"{ingest_rate / enc_rate:.2f} of the raw encoder rate "
            f"(encoder {100 * model / took:.0f}% of the time); the 45k pool at this rate: "
            f"{POOL_45K / ingest_rate / 60:.1f} min"
        )

        # 3. audit
        from auditor import AuditConfig, Auditor

        embedding.clear_cache()
        reader.clear_scores()
        answers = [
            {"id": f"a{c}", "question": "", "answer": row["claim"]} for c, row in enumerate(rows)
        ]
        before = clock.snapshot()
        reader_read = reader.requested_pairs, reader.forward_pairs
        t0 = time.perf_counter()
        with Auditor(work / "index", db, config=AuditConfig()) as auditor:
            run = auditor.audit(answers)
        took = time.perf_counter() - t0
        d = _delta(clock.snapshot(), before)
        n_claims = len(run.claims)
        model_s = d["encoder"] + d["reader"]
        out["audit"] = {
            "claims": n_claims,
            "seconds": took,
            "claims_per_s": n_claims / took,
            "encoder_share": d["encoder"] / took,
            "reader_share": d["reader"] / took,
            "model_bound_claims_per_s": n_claims / model_s if model_s else None,
            "ratio_to_model_bound": model_s / took,
            "reader_pairs_asked": reader.requested_pairs - reader_read[0],
            "reader_pairs_run": reader.forward_pairs - reader_read[1],
            "extrapolated_1000_claims_seconds": 1000 * took / max(n_claims, 1),
        }
        print(
            f"audit: reader asked {out['audit']['reader_pairs_asked']:,} pairs, ran "
            f"{out['audit']['reader_pairs_run']:,} through the network (the rest cached); "
            f"1,000 claims at this rate: {1000 * took / max(n_claims, 1) / 60:.1f} min"
        )
        print(
            f"audit: {n_claims} claims in {took:.1f} s = {n_claims / took:.2f} claims/s; "
            f"encoder {100 * d['encoder'] / took:.0f}%, reader {100 * d['reader'] / took:.0f}% "
            f"of the time; models alone would allow {n_claims / max(model_s, 1e-9):.2f} "
            f"claims/s (ratio {model_s / took:.2f})"
        )

    # 4. calibrate
    from auditor.judges.panel import load_panel
    from auditor.stacking.calibrate import CalibrationItem, calibrate

    half = args.calibrate_items // 2
    records = load("wice", data, limit=half) + load(
        "summedits:news", data, limit=args.calibrate_items - half
    )
    items = [
        CalibrationItem(
            r["id"],
            r["cluster"],
            r["claim"],
            tuple([r["evidence"]] if isinstance(r["evidence"], str) else r["evidence"]),
            int(r["label"]),
        )
        for r in records
    ]
    embedding.clear_cache()
    reader.clear_scores()  # calibration reads its items afresh, as its own command would
    before = clock.snapshot()
    t0 = time.perf_counter()
    calibrate(items, load_panel(), n_boot=args.bootstrap)
    took = time.perf_counter() - t0
    d = _delta(clock.snapshot(), before)
    model_s = d["encoder"] + d["reader"]
    out["calibrate"] = {
        "items": len(items),
        "seconds": took,
        "items_per_s": len(items) / took,
        "encoder_share": d["encoder"] / took,
        "reader_share": d["reader"] / took,
        "ratio_to_model_bound": model_s / took,
    }
    out["calibrate"]["extrapolated_1000_items_seconds"] = 1000 * took / len(items)
    print(
        f"calibrate: 1,000 items at this rate: {1000 * took / len(items) / 60:.1f} min "
        "(the bootstrap and stacker fit do not grow with the items; judging does)"
    )
    print(
        f"calibrate: {len(items)} items in {took:.1f} s = {len(items) / took:.2f} items/s; "
        f"encoder {100 * d['encoder'] / took:.0f}%, reader {100 * d['reader'] / took:.0f}% "
        f"(ratio to the model-bound rate {model_s / took:.2f})"
    )

    out["load_average_end"] = os.getloadavg()
    print(f"load average at end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["peak_rss_mb"] = peak_mb
    print(f"peak resident memory: {peak_mb:,.0f} MB")
    if args.json is not None:
        args.json.write_text(json.dumps(out, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
