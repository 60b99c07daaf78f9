"""Sentence embeddings stored at ingest: what they cost at ingest, what they save at audit.

    python bench/bench_sentence_vectors.py [--data DIR] [--set summedits:news]
                                           [--items 40] [--repeats 2] [--json OUT]

One process, on a multi-sentence corpus (the source documents of ``--items``
SummEdits or FaithBench records, their summaries audited as answers):

1. ingest with sentence embeddings (as ``auditor ingest`` now does) and without (the
   index as written before: no ``sentences.npy``), alternating which goes first, as
   the ratio of the times (the cost increase) and the texts each encodes;
2. audit the summaries (the default offline panel, a fresh ledger each time, the
   encoder's text cache and the reader's score cache cleared) against each index,
   alternating, as the ratio of the times (the speed-up), with the encoder's time and
   the texts it encoded (on the old index: the evidence sentences; on the new one:
   the claims only), and the labels of the two audits compared.

Encoder time is measured by wrapping ``auditor.embedding._run_model``. Data path:
``--data``, else ``$AUDITOR_DATA``, else ``../shared/data``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from calibrate_shared import data_dir, load

from auditor.progress import quiet_third_party

quiet_third_party()


class EncoderClock:
    """Seconds inside the MiniLM forward pass, and the texts it was run on."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.texts = 0
        self.seen: list[str] = []

    def install(self) -> None:
        from auditor import embedding

        real = embedding._run_model

        def timed(texts: list[str], batch_size: int) -> Any:
            t0 = time.perf_counter()
            try:
                return real(texts, batch_size)
            finally:
                self.seconds += time.perf_counter() - t0
                self.texts += len(texts)
                self.seen.extend(texts)

        embedding._run_model = timed  # type: ignore[assignment]

    def read(self) -> tuple[float, int]:
        return self.seconds, self.texts


@contextmanager
def without_sentences() -> Iterator[None]:
    """Ingest as before sentence embeddings were stored (no sentence rows written)."""
    from auditor.retrieval import ingestion as index_mod

    real = index_mod._split_new
    index_mod._split_new = lambda corpus, chunks: index_mod._Split()  # type: ignore[assignment]
    try:
        yield
    finally:
        index_mod._split_new = real  # type: ignore[assignment]


def strip_sentences(index_dir: Path) -> None:
    """Make the index what older versions wrote: no sentence files, no counts."""
    from auditor.retrieval import store

    gen = store.require_generation(index_dir)
    manifest = store.read_json(gen / store.MANIFEST)
    for entry in manifest["segments"]:
        entry.pop("sentences", None)
        (gen / entry["name"] / store.SENTENCES).unlink(missing_ok=True)
        (gen / entry["name"] / store.SENTENCE_SPANS).unlink(missing_ok=True)
    (gen / store.MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")


def timed(clock: EncoderClock, fn: Callable[[], Any]) -> tuple[Any, float, float, int]:
    """``fn()``, its wall time, and the encoder seconds and texts it used."""
    s0, n0 = clock.read()
    del clock.seen[:]
    t0 = time.perf_counter()
    out = fn()
    took = time.perf_counter() - t0
    s1, n1 = clock.read()
    return out, took, s1 - s0, n1 - n0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=None)
    ap.add_argument("--set", default="summedits:news", help="summedits:<domain> or faithbench")
    ap.add_argument("--items", type=int, default=40, help="records (claims) audited")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    records = load(args.set, data_dir(args.data), limit=args.items)
    clock = EncoderClock()
    clock.install()
    from auditor import AuditConfig, Auditor, embedding
    from auditor.entailment.model import load_model
    from auditor.retrieval import EvidenceIndex, ingest, make_document
    from auditor.text import sentences
    from ledger import open_ledger

    sources: dict[str, str] = {}
    for r in records:
        text = r["evidence"] if isinstance(r["evidence"], str) else " ".join(r["evidence"])
        sources.setdefault(text, f"doc{len(sources)}")
    docs = [make_document(doc_id, text) for text, doc_id in sources.items()]
    answers = [{"id": f"a{i}", "question": "", "answer": r["claim"]} for i, r in enumerate(records)]
    embedding.encode(["warm up the encoder"], cache=False)
    reader = load_model()
    reader.predict(["warm up"], ["the reader"])
    out: dict[str, Any] = {
        "set": args.set,
        "documents": len(docs),
        "claims_in": len(answers),
        "load_average_start": os.getloadavg(),
    }
    print(
        f"{args.set}: {len(docs)} source documents, {len(answers)} summaries; load "
        f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}"
    )

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        ingests: dict[str, list[tuple[float, float, int]]] = {"old": [], "new": []}
        for rep in range(args.repeats):
            for kind in ("old", "new") if rep % 2 == 0 else ("new", "old"):
                target = work / f"{kind}-{rep}"
                db = work / f"{kind}-{rep}.db"

                def run(target: Path = target, db: Path = db, kind: str = kind) -> Any:
                    def record(done: Any) -> None:
                        with open_ledger(db) as ledger:
                            ledger.record_corpus(list(done.versions), list(done.chunks))

                    if kind == "old":
                        with without_sentences():
                            return ingest(docs, target, on_commit=record)
                    return ingest(docs, target, on_commit=record)

                embedding.clear_cache()
                result, took, enc_s, enc_n = timed(clock, run)
                if kind == "old":
                    strip_sentences(target)
                ingests[kind].append((took, enc_s, enc_n))
                print(
                    f"ingest {kind} (rep {rep}): {took:.1f} s, encoder {enc_s:.1f} s on "
                    f"{enc_n:,} texts, {len(result.chunks)} chunks"
                )
        idx = EvidenceIndex.open(work / "new-0")
        n_sent = sum(len(sentences(c.text)) for c in idx.chunks())
        multi = sum(len(sentences(c.text)) > 1 for c in idx.chunks())
        old_t = statistics.median(t for t, _, _ in ingests["old"])
        new_t = statistics.median(t for t, _, _ in ingests["new"])
        out["ingest"] = {
            "chunks": len(idx),
            "multi_sentence_chunks": multi,
            "sentences": n_sent,
            "old_seconds": [t for t, _, _ in ingests["old"]],
            "new_seconds": [t for t, _, _ in ingests["new"]],
            "old_encoder_texts": ingests["old"][0][2],
            "new_encoder_texts": ingests["new"][0][2],
            "cost_ratio_new_over_old": new_t / old_t,
        }
        print(
            f"ingest: {len(idx)} chunks ({multi} of several sentences, {n_sent} sentences); "
            f"with sentences / without = {new_t / old_t:.2f}x the time "
            f"(median of {args.repeats}), {ingests['new'][0][2]:,} vs "
            f"{ingests['old'][0][2]:,} texts encoded"
        )

        # warm up the audit path (spaCy, the panel) outside the timings
        shutil.copy(work / "new-0.db", work / "warm.db")
        with Auditor(work / "new-0", work / "warm.db", config=AuditConfig()) as auditor:
            auditor.audit(answers[:1])
        evidence = {t for c in idx.chunks() for t in (c.text, *sentences(c.text))}
        audits: dict[str, list[tuple[float, float, int]]] = {"old": [], "new": []}
        evidence_encoded: dict[str, int] = {}
        labels: dict[str, list[tuple[str, str]]] = {}
        for rep in range(args.repeats):
            for kind in ("old", "new") if rep % 2 == 0 else ("new", "old"):
                db = work / f"audit-{kind}-{rep}.db"
                shutil.copy(work / f"{kind}-0.db", db)

                def audit(kind: str = kind, db: Path = db) -> Any:
                    with Auditor(work / f"{kind}-0", db, config=AuditConfig()) as auditor:
                        return auditor.audit(answers)

                embedding.clear_cache()
                reader.clear_scores()
                run_, took, enc_s, enc_n = timed(clock, audit)
                audits[kind].append((took, enc_s, enc_n))
                labels[kind] = [(c["id"], c["label"]) for c in run_.claims]
                claims = {c["text"] for c in run_.claims}
                evidence_encoded[kind] = len(set(clock.seen) & (evidence - claims))
                print(
                    f"audit {kind} (rep {rep}): {len(run_.claims)} claims in {took:.1f} s, "
                    f"encoder {enc_s:.1f} s on {enc_n:,} texts"
                )
        old_t = statistics.median(t for t, _, _ in audits["old"])
        new_t = statistics.median(t for t, _, _ in audits["new"])
        old_e = statistics.median(e for _, e, _ in audits["old"])
        new_e = statistics.median(e for _, e, _ in audits["new"])
        differ = sum(a != b for a, b in zip(labels["old"], labels["new"], strict=True))
        out["audit"] = {
            "claims": len(labels["new"]),
            "old_seconds": [t for t, _, _ in audits["old"]],
            "new_seconds": [t for t, _, _ in audits["new"]],
            "old_encoder_seconds": [e for _, e, _ in audits["old"]],
            "new_encoder_seconds": [e for _, e, _ in audits["new"]],
            "old_encoder_texts": audits["old"][0][2],
            "new_encoder_texts": audits["new"][0][2],
            "speedup_old_over_new": old_t / new_t,
            "encoder_speedup_old_over_new": old_e / new_e if new_e else None,
            "labels_differing": differ,
            "old_evidence_texts_encoded": evidence_encoded["old"],
            "new_evidence_texts_encoded": evidence_encoded["new"],
        }
        print(
            f"audit: without stored sentences / with = {old_t / new_t:.2f}x the time "
            f"(encoder {old_e:.1f} s -> {new_e:.1f} s; texts encoded "
            f"{audits['old'][0][2]:,} -> {audits['new'][0][2]:,}, of which index evidence "
            f"{evidence_encoded['old']:,} -> {evidence_encoded['new']:,}); "
            f"labels differing: {differ} of {len(labels['new'])}"
        )
    out["load_average_end"] = os.getloadavg()
    if args.json:
        args.json.write_text(json.dumps(out, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
