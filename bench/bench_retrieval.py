"""Evidence-index benchmarks: WiCE retrieval recall, ingest throughput, large-index latency.

    python bench/bench_retrieval.py [--data DIR] [--workdir DIR] [--tune]
                                    [--throughput-chunks N] [--large N]

1. Recall@1/5/10 on WiCE dev: every evidence sentence of every claim is its own
   document, all claims pooled in one index; each claim is a query; a query hits
   at k when one of its top-k sentences is one of its supporting sentences (by
   text: identical sentences indexed for several claims are interchangeable; the
   stricter by-id figure is printed too). Claims without supporting sentences are
   left out of the denominator. Dense, lexical and hybrid; ``--tune`` also grids
   the fusion constant and candidate depth (dev only: WiCE test is held back).
2. Ingest throughput: WiCE articles (evidence sentences joined) chunked and
   ingested into a fresh index, in chunks/s, as a ratio of raw MiniLM encoding
   throughput on the same chunk texts in the same process (interleaved, median).
3. ``--large N``: query latency p50/p95 of dense search at N chunks, flat vs
   HNSW, and HNSW recall@10 against flat, on real MiniLM embeddings of real
   sentences (the WiCE index vectors plus other shared-data sentences encoded
   here; if fewer than N real sentences were embedded the bench says so and
   reports at the real size, never padding with random vectors).

Data path: ``--data``, else env ``AUDITOR_DATA``, else ``../shared/data``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from auditor import embedding
from auditor.retrieval import (
    EvidenceIndex,
    chunk_documents,
    ingest,
    make_document,
)
from auditor.retrieval import dense as dense_mod
from auditor.types import DocumentVersion

KS = (1, 5, 10)


def _data_dir(arg: str | None) -> Path:
    if arg:
        return Path(arg)
    if os.environ.get("AUDITOR_DATA"):
        return Path(os.environ["AUDITOR_DATA"])
    return Path(__file__).resolve().parents[1] / ".." / "shared" / "data"


def load_wice(data: Path) -> list[dict]:
    path = data / "wice" / "claim" / "dev.jsonl"
    if not path.is_file():
        sys.exit(f"WiCE dev not found at {path} (set --data or AUDITOR_DATA)")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


# ---------------------------------------------------------------- 1. recall
def wice_documents(rows: list[dict]) -> list[DocumentVersion]:
    return [
        make_document(f"{c}:{s}", sent)
        for c, row in enumerate(rows)
        for s, sent in enumerate(row["evidence"])
        if sent.strip()
    ]


def build_wice_index(rows: list[dict], workdir: Path) -> EvidenceIndex:
    ix = workdir / "wice-dev-index"
    docs = wice_documents(rows)
    if (ix / "CURRENT").exists():
        idx = EvidenceIndex.open(ix)
        if len(idx.versions()) == len(docs):
            print(f"reusing {ix} ({len(idx)} chunks)")
            return idx
    started = time.perf_counter()
    result = ingest(docs, ix)
    took = time.perf_counter() - started
    print(
        f"built WiCE dev index: {len(result.chunks)} chunks from {len(docs)} sentences "
        f"in {took:.1f} s ({len(result.chunks) / took:.0f} chunks/s incl. duplicates)"
    )
    return EvidenceIndex.open(ix)


def recall_table(
    idx: EvidenceIndex, rows: list[dict], modes: Sequence[str]
) -> dict[str, dict[str, float]]:
    claims, gold_ids, gold_texts = [], [], []
    for c, row in enumerate(rows):
        support = {i for group in row["supporting_sentences"] for i in group}
        if not support:
            continue
        claims.append(row["claim"])
        gold_ids.append({f"{c}:{i}" for i in support})
        gold_texts.append({row["evidence"][i].strip() for i in support})
    out: dict[str, dict[str, float]] = {}
    for mode in modes:
        hits = idx.search(claims, k=max(KS), mode=mode)
        by_text = np.zeros((len(claims), max(KS)), dtype=bool)
        by_id = np.zeros_like(by_text)
        for q, per_query in enumerate(hits):
            for h in per_query:
                by_text[q, h.rank] = h.chunk.text.strip() in gold_texts[q]
                by_id[q, h.rank] = h.chunk.doc_id in gold_ids[q]
        out[mode] = {f"R@{k}": float(by_text[:, :k].any(axis=1).mean()) for k in KS}
        out[mode].update({f"R@{k} by id": float(by_id[:, :k].any(axis=1).mean()) for k in KS})
    out["_n"] = {"claims": float(len(claims))}
    return out


def print_recall(table: dict[str, dict[str, float]]) -> None:
    n = int(table["_n"]["claims"])
    print(
        f"\nWiCE dev retrieval recall ({n} claims with supporting sentences; "
        "hit = a supporting sentence in the top k)"
    )
    print(
        f"{'mode':8} "
        + " ".join(f"{'R@' + str(k):>6}" for k in KS)
        + "   | by id: "
        + " ".join(f"{'R@' + str(k):>6}" for k in KS)
    )
    for mode, figures in table.items():
        if mode.startswith("_"):
            continue
        print(
            f"{mode:8} "
            + " ".join(f"{figures[f'R@{k}']:6.3f}" for k in KS)
            + "   |        "
            + " ".join(f"{figures[f'R@{k} by id']:6.3f}" for k in KS)
        )


def tune(idx: EvidenceIndex, rows: list[dict]) -> None:
    print("\nhybrid tuning on WiCE dev (rrf_k x candidate depth): R@1 R@5 R@10")
    for rrf_k in (1.0, 10.0, 30.0, 60.0):
        for depth in (10, 20, 50, 100):
            idx.rrf_k, idx.candidate_depth = rrf_k, depth
            f = recall_table(idx, rows, ["hybrid"])["hybrid"]
            print(
                f"  rrf_k={rrf_k:5.1f} depth={depth:4d}: "
                + " ".join(f"{f[f'R@{k}']:.3f}" for k in KS)
            )


# ---------------------------------------------------------------- 2. throughput
def throughput(rows: list[dict], n_chunks: int, repeats: int = 3) -> None:
    articles: dict[str, str] = {}
    for c, row in enumerate(rows):
        text = " ".join(s.strip() for s in row["evidence"] if s.strip())
        if text not in articles.values():
            articles[f"article-{c}"] = text
    docs: list[DocumentVersion] = []
    chunks = 0
    for doc_id, text in articles.items():
        doc = make_document(doc_id, text)
        docs.append(doc)
        chunks += len(chunk_documents([_labelled(doc)]))
        if chunks >= n_chunks:
            break
    texts = [c.text for c in chunk_documents([_labelled(d) for d in docs])]
    embedding.encode(texts[:64])  # warm the model
    raw_rates, ingest_rates = [], []
    for _ in range(repeats):
        started = time.perf_counter()
        embedding.encode(texts)
        raw_rates.append(len(texts) / (time.perf_counter() - started))
        with tempfile.TemporaryDirectory() as tmp:
            started = time.perf_counter()
            result = ingest(docs, Path(tmp) / "ix")
            ingest_rates.append(len(result.chunks) / (time.perf_counter() - started))
    raw, ing = statistics.median(raw_rates), statistics.median(ingest_rates)
    print(
        f"\ningest throughput: {len(docs)} WiCE articles -> {len(texts)} chunks "
        f"(mean {np.mean([len(t) for t in texts]):.0f} chars), {repeats} interleaved runs"
    )
    print(
        f"  raw MiniLM encode: {raw:7.1f} chunks/s (runs: "
        + ", ".join(f"{r:.1f}" for r in raw_rates)
        + ")"
    )
    print(
        f"  ingest():          {ing:7.1f} chunks/s (runs: "
        + ", ".join(f"{r:.1f}" for r in ingest_rates)
        + ")"
    )
    print(f"  ratio ingest/raw:  {ing / raw:.3f}")


def _labelled(doc: DocumentVersion) -> DocumentVersion:
    from dataclasses import replace

    return replace(doc, version="v1")


# ---------------------------------------------------------------- 3. large index
def extra_sentences(data: Path, limit: int, exclude: set[str]) -> list[str]:
    """Real sentences from other shared datasets, in a fixed order (the cache is a prefix):
    FaithBench sources and summaries, FactBench records, FEVER-NLI dev evidence and
    claims, e-SNLI premises and hypotheses."""
    from auditor.retrieval import split_sentences

    found: list[str] = []
    seen = set(exclude)

    def take(text: str) -> bool:
        for s, e in split_sentences(text):
            sent = text[s:e]
            if len(sent) >= 20 and sent not in seen:
                seen.add(sent)
                found.append(sent)
                if len(found) >= limit:
                    return True
        return False

    for path in sorted((data / "faithbench").glob("batch_*.json")):
        for item in json.loads(path.read_text(encoding="utf-8")).get("samples", []):
            if take(str(item.get("source", ""))) or take(str(item.get("summary", ""))):
                return found
    factbench = data / "factcheck_gpt" / "Factbench.jsonl"
    if factbench.is_file():
        for line in factbench.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            for value in rec.values():
                if isinstance(value, str) and take(value):
                    return found
    nli = data / "nli"
    for rel in (
        "fever_nli_dev/dev.raw.input0.txt",
        "fever_nli_dev/dev.raw.input1.txt",
        "esnli_snli/s1.dev.txt",
        "esnli_snli/s2.dev.txt",
        "esnli_snli/s1.test.txt",
        "esnli_snli/s2.test.txt",
    ):
        path = nli / rel
        if path.is_file():
            for line in path.read_text(encoding="utf-8").splitlines():
                if take(line):
                    return found
    return found


def large(
    idx: EvidenceIndex, rows: list[dict], data: Path, workdir: Path, n: int, max_encode_s: float
) -> None:
    base = np.load(idx.generation / "vectors.npy")
    texts = [c.text for c in idx.chunks()]
    _, first = np.unique(np.array(texts, dtype=object), return_index=True)
    real = base[np.sort(first)]  # distinct sentences only
    cache = workdir / "extra-vectors.npy"
    need = n - len(real)
    extra = np.zeros((0, real.shape[1]), dtype=np.float32)
    if cache.is_file():
        extra = np.load(cache)
    if need > len(extra) and max_encode_s > 0:
        sentences = extra_sentences(data, need, set(texts))[len(extra) :]
        embedding.encode(sentences[:32])
        started, parts = time.perf_counter(), [extra]
        for lo in range(0, len(sentences), 2048):
            if time.perf_counter() - started > max_encode_s:
                break
            parts.append(embedding.encode(sentences[lo : lo + 2048]))
        extra = np.concatenate(parts).astype(np.float32)
        np.save(cache, extra)
        print(f"encoded {len(extra)} extra real sentences in total (cache {cache})")
    vectors = np.concatenate([real, extra[: max(need, 0)]])[:n].astype(np.float32)
    if len(vectors) < n:
        print(
            f"\nNOTE: only {len(vectors)} real sentence embeddings available "
            f"({len(real)} distinct WiCE dev sentences + {len(extra)} others); "
            f"reporting at {len(vectors)}, not {n}"
        )
    queries = embedding.encode([r["claim"] for r in rows])
    held = vectors[-200:]  # also query with indexed-distribution sentences (perturbed)
    rng = np.random.default_rng(0)
    noisy = held + rng.normal(0, 0.02, held.shape).astype(np.float32)
    noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
    queries = np.concatenate([queries, noisy]).astype(np.float32)
    print(
        f"\ndense search at {len(vectors)} chunks, {len(queries)} single-vector queries "
        f"({len(rows)} WiCE claims + {len(noisy)} perturbed corpus sentences), k=10"
    )
    started = time.perf_counter()
    flat, _ = dense_mod.build_index(vectors, "flat", {})
    print(f"  flat build {time.perf_counter() - started:.1f} s")
    started = time.perf_counter()
    hnsw, params = dense_mod.build_index(vectors, "hnsw", {})
    print(
        f"  hnsw build {time.perf_counter() - started:.1f} s (M={params['M']}, "
        f"efConstruction={params['ef_construction']})"
    )
    truth = flat.search(queries, 10)[1]
    flat_lat = _latencies(flat, "flat", queries)
    print(
        f"  flat           p50 {np.percentile(flat_lat, 50):7.3f} ms  "
        f"p95 {np.percentile(flat_lat, 95):7.3f} ms"
    )
    for ef in (32, 64, 128, 256):
        hnsw.hnsw.efSearch = ef
        got = hnsw.search(queries, 10)[1]
        recall = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(got, truth, strict=True)])
        lat = _latencies(hnsw, "hnsw", queries)
        print(
            f"  hnsw ef={ef:<4d}  p50 {np.percentile(lat, 50):7.3f} ms  "
            f"p95 {np.percentile(lat, 95):7.3f} ms  recall@10 vs flat {recall:.4f}  "
            f"speed-up p50 x{np.percentile(flat_lat, 50) / np.percentile(lat, 50):.1f}"
        )
    mask = rng.random(len(vectors)) < 0.5  # an as-of cutoff hiding half the corpus
    truth_m = dense_mod.search(flat, "flat", queries, 10, mask)[1]
    hnsw.hnsw.efSearch = DEFAULT_EF
    got_m = dense_mod.search(hnsw, "hnsw", queries, 10, mask)[1]
    recall_m = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(got_m, truth_m, strict=True)])
    print(f"  with a 50% as-of mask: hnsw ef={DEFAULT_EF} recall@10 vs flat {recall_m:.4f}")


DEFAULT_EF = dense_mod.DEFAULT_PARAMS["hnsw"]["ef_search"]


def search_latency(idx: EvidenceIndex, rows: list[dict], n_queries: int = 100) -> None:
    """End-to-end single-query ``EvidenceIndex.search`` latency (embedding included)."""
    claims = [r["claim"] for r in rows[:n_queries]]
    idx.search(claims[:2], k=10)  # warm
    print(
        f"\nEvidenceIndex.search, one query at a time, k=10, {len(idx)} chunks "
        f"({idx.manifest['index_type']}), {len(claims)} WiCE claims:"
    )
    for mode in ("dense", "lexical", "hybrid"):
        lat = []
        for claim in claims:
            started = time.perf_counter()
            idx.search([claim], k=10, mode=mode)
            lat.append((time.perf_counter() - started) * 1000)
        print(
            f"  {mode:8} p50 {np.percentile(lat, 50):7.1f} ms  p95 {np.percentile(lat, 95):7.1f} ms"
        )
    started = time.perf_counter()
    idx.search(claims, k=10, mode="hybrid")
    took = time.perf_counter() - started
    print(f"  hybrid, all {len(claims)} as one batch: {took * 1000 / len(claims):.1f} ms/query")


def _latencies(index: object, kind: str, queries: np.ndarray) -> np.ndarray:
    out = []
    for q in queries:
        started = time.perf_counter()
        dense_mod.search(index, kind, q[None, :], 10)
        out.append((time.perf_counter() - started) * 1000)
    return np.array(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", help="shared data folder (default $AUDITOR_DATA or ../shared/data)"
    )
    parser.add_argument(
        "--workdir",
        default=str(Path(tempfile.gettempdir()) / "auditor-bench-retrieval"),
        help="where the WiCE index and embedding caches are kept",
    )
    parser.add_argument("--tune", action="store_true", help="grid RRF k / depth on dev")
    parser.add_argument(
        "--throughput-chunks",
        type=int,
        default=1500,
        help="chunks for the throughput run (0 = skip)",
    )
    parser.add_argument(
        "--large", type=int, default=0, help="run the large-index latency bench at this many chunks"
    )
    parser.add_argument(
        "--max-encode-s",
        type=float,
        default=240.0,
        help="time cap for encoding extra real sentences for --large",
    )
    parser.add_argument("--skip-recall", action="store_true")
    args = parser.parse_args()
    data = _data_dir(args.data)
    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    rows = load_wice(data)
    idx = None
    if not args.skip_recall or args.large:
        idx = build_wice_index(rows, workdir)
    if not args.skip_recall and idx is not None:
        print_recall(recall_table(idx, rows, ["dense", "lexical", "hybrid"]))
        if args.tune:
            tune(idx, rows)
    if args.throughput_chunks:
        throughput(rows, args.throughput_chunks)
    if args.large and idx is not None:
        search_latency(idx, rows)
        large(idx, rows, data, workdir, args.large, args.max_encode_s)


if __name__ == "__main__":
    main()
