"""Search and growth of a segmented evidence index at N chunks: time to the first
query, the cost of an add, dense query latency and recall@10, memory and disk.

    python bench/bench_index_segments.py [--n 100000] [--segments 4] [--add 1000]
        [--queries 200] [--index-type ivfpq|flat] [--data clustered|latent]
        [--cold] [--work DIR] [--json OUT]
    python bench/bench_index_segments.py --fp16-text CLAIMS [--wice DIR] [--json OUT]

``--n`` one-sentence documents (text ``"r<i> x<i mod 1000>."``: a tiny BM25 vocabulary)
whose chunk vectors are precomputed synthetic 384-d unit vectors (``bench_scale.py``'s
``clustered``: 4,096 random centres, cosine to the centre about 0.75; or ``latent``:
clustered points of a 32-d space mapped to 384-d), passed to
:func:`auditor.retrieval.ingest` as its ``encoder`` (a lookup: no model, encoding
excluded from every figure), are ingested in ``--segments`` equal ingests (an ivfpq
index trains at the first, on its N / segments chunks). Then ``--add`` more documents
are ingested and timed (``add_s``; the bytes it wrote: the new segment, and the
generation's own tables, which are rewritten at each ingest).

A fresh process (so imports and memory are its own) then opens the index and times
``EvidenceIndex.open`` and the first dense search (k=10; the embedding model's weight
digest, checked at open and independent of N, is computed before the clock starts),
then searches ``--queries`` queries (each a data point plus noise) one at a time, in
``dense`` mode, k=10: p50 and p95 latency, and recall@10 against the exact top-10 of
every vector (float32 inner products over all rows). Memory is the process's resident
set after the first search (``rss_after_open_mb``) and after all of them (``rss_mb``)
minus before the open (``VmRSS``; ``RssAnon``: private memory; ``RssFile``: pages of
memory-mapped index files, shared between processes and reclaimable, which the kernel
maps 64 KiB around each page read when it is cached, so it overstates what random row
reads need), also per million chunks. For ivfpq it re-scores each query's candidates
from the float32 vectors and from the float16 ones and reports the largest score
difference, how many queries' top-10 order (and set) differs, the smallest float32
score gap inside a top-10, and each recall@10. With ``--cold`` the index's files are
dropped from the page cache (``posix_fadvise(DONTNEED)``, this index's files only)
before that process starts: the open and the searches read from disk, and ``RssFile``
then counts the pages the searches really read (a file still cached from its writing
may be mapped in large folios, many rows at a time, so warm ``RssFile`` overstates it).

Disk is every file of the live generation (hard links counted once), per million
chunks, with the vector files and the dense index files apart. Prints one JSON line.

``--fp16-text CLAIMS`` instead compares float32 and float16 scores on real MiniLM
embeddings: the evidence sentences of the first CLAIMS WiCE dev claims (``--wice``,
default ``$AUDITOR_DATA`` or ``../shared/data``) against every WiCE dev claim as a
query, exhaustive top-10 (not IVF candidates), scored both ways.
Run with ``OMP_NUM_THREADS=1`` (single-core figures). The index is built in a temporary
folder (inside ``--work`` when given: a disk with room) and removed at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_scale import DIM, clustered_vectors, latent_vectors, unit_vectors

K = 10


def synthetic(n: int, data: str, n_queries: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` unit vectors and ``n_queries`` queries (data points plus noise)."""
    rng = np.random.default_rng(1)
    if data == "latent":
        mix = rng.standard_normal((32, DIM), dtype=np.float32)
        base, noise = latent_vectors(n, rng, mix), 0.02
    else:
        base, noise = clustered_vectors(n, rng, unit_vectors(4096, rng), 0.045), 0.045
    picks = rng.integers(0, n, n_queries)
    queries = base[picks] + 0.5 * noise * rng.standard_normal((n_queries, DIM), dtype=np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    return base, queries.astype(np.float32)


def _docs(lo: int, hi: int) -> list[Any]:
    from auditor.retrieval import make_document

    return [make_document(f"d{i}", f"r{i} x{i % 1000}.") for i in range(lo, hi)]


def _disk(gen: Path) -> dict[str, int]:
    """Bytes of the generation's files (each inode once): all, vectors, dense index."""
    from auditor.retrieval import store

    seen: set[int] = set()
    out = {"total": 0, "vectors_f32": 0, "vectors_f16": 0, "dense": 0}
    for path in gen.rglob("*"):
        st = path.stat()
        if not path.is_file() or st.st_ino in seen:
            continue
        seen.add(st.st_ino)
        out["total"] += st.st_size
        if path.name == store.VECTORS:
            out["vectors_f32"] += st.st_size
        elif path.name == store.VECTORS_F16:
            out["vectors_f16"] += st.st_size
        elif path.name in (store.DENSE, store.IVF_TRAINED, store.IVF_LISTS):
            out["dense"] += st.st_size
    return out


def _evict(folder: Path) -> None:
    """Drop the files under ``folder`` from the page cache (they are fsynced: clean)."""
    for path in folder.rglob("*"):
        if path.is_file():
            fd = os.open(path, os.O_RDONLY)
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


def build(args: argparse.Namespace, ix: Path, base: np.ndarray) -> dict[str, Any]:
    """Ingest ``--n`` documents in ``--segments`` ingests, then time an add of ``--add``."""
    from auditor.retrieval import ingest, store

    def encoder(texts: list[str]) -> np.ndarray:
        return base[[int(t[1 : t.index(" ")]) for t in texts]]

    out: dict[str, Any] = {}
    step = -(-args.n // args.segments)
    t0 = time.perf_counter()
    for lo in range(0, args.n, step):
        hi = min(args.n, lo + step)
        first = args.index_type if lo == 0 else None  # later ingests keep (or train) it
        ingest(_docs(lo, hi), ix, index_type=first, encoder=encoder)
    out["build_s"] = time.perf_counter() - t0
    docs = _docs(args.n, args.n + args.add)
    t0 = time.perf_counter()
    result = ingest(docs, ix, encoder=encoder)
    out["add_s"] = time.perf_counter() - t0
    gen = store.require_generation(ix)
    new_seg = gen / result.manifest["segments"][-1]["name"]
    out["add_bytes_segment"] = sum(p.stat().st_size for p in new_seg.rglob("*") if p.is_file())
    out["add_bytes_generation_tables"] = sum(p.stat().st_size for p in gen.iterdir() if p.is_file())
    out["add_notes"] = list(result.notes)
    out["index_type"] = result.manifest["index_type"]
    out["index_params"] = result.manifest["index_params"]
    out["segments"] = len(result.manifest["segments"])
    return out


def probe(ix: Path, queries_path: Path, index_type: str) -> dict[str, Any]:
    """In this (fresh) process: open, first query, query latency, recall, memory."""
    import faiss  # noqa: F401  (imported before the baseline, as a worker has it)

    from auditor import embedding
    from auditor.retrieval import EvidenceIndex
    from auditor.retrieval import dense as dense_mod

    data = np.load(queries_path)
    queries, truth = data["queries"], data["truth"]
    lookup = {f"q{i}": q for i, q in enumerate(queries)}
    embedding.encode = lambda texts, *a, **kw: np.stack([lookup[t] for t in texts])  # type: ignore[assignment,misc]
    embedding.model_digest()  # hashes the model's weight files: independent of N
    before = _status()
    t0 = time.perf_counter()
    idx = EvidenceIndex.open(ix)
    open_s = time.perf_counter() - t0
    idx.search(["q0"], K, mode="dense")
    first_s = time.perf_counter() - t0
    opened = _status()
    times, found = [], []
    for i in range(len(queries)):
        t = time.perf_counter()
        hits = idx.search([f"q{i}"], K, mode="dense")[0]
        times.append(time.perf_counter() - t)
        found.append([int(h.document.doc_id[1:]) for h in hits])
        embedding.clear_cache()
    after = _status()
    n = len(idx)
    out: dict[str, Any] = {
        "chunks": n,
        "open_s": open_s,
        "open_to_first_result_s": first_s,
        "query_p50_ms": 1000 * float(np.percentile(times, 50)),
        "query_p95_ms": 1000 * float(np.percentile(times, 95)),
        "recall_at_10": _recall(found, truth),
        "rss_after_open_mb": {k: (opened[k] - before[k]) / 1024 for k in after},
        "rss_mb": {k: (after[k] - before[k]) / 1024 for k in after},
        "rss_mb_per_million": {k: (after[k] - before[k]) / 1024 * 1e6 / n for k in after},
    }
    if index_type == "ivfpq":
        out["fp16"] = _fp16_effect(idx, dense_mod, queries, truth)
    return out


def _fp16_effect(
    idx: Any, dense_mod: Any, queries: np.ndarray, truth: np.ndarray
) -> dict[str, Any]:
    """Re-score the same candidates from float32 and float16 vectors and compare."""
    _, cand = dense_mod.search(idx._dense, "ivfpq", queries, K * dense_mod.RERANK_FACTOR)
    s32, r32 = dense_mod.rerank(idx._corpus.vectors, queries, cand, cand.shape[1])
    s16, r16 = dense_mod.rerank(idx._corpus.half, queries, cand, cand.shape[1])
    diffs = []
    for q in range(len(queries)):  # the same candidate, scored both ways
        ok = r32[q] >= 0
        by_row = dict(zip(r16[q].tolist(), s16[q].tolist(), strict=True))
        diffs.append(max(abs(by_row[r] - s) for r, s in zip(r32[q][ok], s32[q][ok], strict=True)))
    differ = [q for q in range(len(queries)) if r32[q, :K].tolist() != r16[q, :K].tolist()]
    set_differ = [q for q in differ if set(r32[q, :K].tolist()) != set(r16[q, :K].tolist())]
    gaps = np.diff(-s32[:, :K], axis=1)
    return {
        "max_abs_score_diff": float(max(diffs)),
        "queries": len(queries),
        "top10_order_differs": len(differ),
        "top10_set_differs": len(set_differ),
        "smallest_float32_gap_in_top10": float(gaps[np.isfinite(gaps)].min()),
        "recall_at_10_float32": _recall(r32[:, :K].tolist(), truth),
        "recall_at_10_float16": _recall(r16[:, :K].tolist(), truth),
    }


def fp16_on_text(n_claims: int, wice: str | None) -> dict[str, Any]:
    """Exhaustive top-10 of real MiniLM embeddings scored from float32 and float16."""
    from bench_throughput import wice_rows
    from calibrate_shared import data_dir

    from auditor import embedding

    rows = wice_rows(data_dir(wice))
    pool = list(dict.fromkeys(s for r in rows[:n_claims] for s in r["evidence"] if s.strip()))
    claims = [r["claim"] for r in rows]
    t0 = time.perf_counter()
    base = embedding.encode(pool, cache=False)
    queries = embedding.encode(claims, cache=False)
    encode_s = time.perf_counter() - t0
    s32 = queries @ base.T
    s16 = queries @ base.astype(np.float16).astype(np.float32).T
    rows_ = np.broadcast_to(np.arange(len(pool)), s32.shape)
    top32 = np.lexsort((rows_, -s32), axis=1)[:, :K]
    top16 = np.lexsort((rows_, -s16), axis=1)[:, :K]
    differ = [q for q in range(len(claims)) if top32[q].tolist() != top16[q].tolist()]
    gaps = -np.diff(np.take_along_axis(s32, top32, axis=1), axis=1)
    return {
        "pool": len(pool),
        "queries": len(claims),
        "encode_s": encode_s,
        "max_abs_score_diff": float(np.abs(s32 - s16).max()),
        "top10_order_differs": len(differ),
        "top10_set_differs": sum(set(top32[q]) != set(top16[q]) for q in differ),
        "smallest_float32_gap_in_top10": float(gaps.min()),
        "top10_gaps_below_1e-4": int((gaps < 1e-4).sum()),
    }


def _recall(found: list[list[int]], truth: np.ndarray) -> float:
    return float(
        np.mean([len(set(f) & set(t.tolist())) / K for f, t in zip(found, truth, strict=True)])
    )


def _status() -> dict[str, int]:
    """VmRSS, RssAnon and RssFile of this process (kB)."""
    out = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "RssAnon", "RssFile"):
            out[key] = int(value.split()[0])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--segments", type=int, default=4)
    ap.add_argument("--add", type=int, default=1000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--index-type", choices=("ivfpq", "flat"), default="ivfpq")
    ap.add_argument("--data", choices=("clustered", "latent"), default="clustered")
    ap.add_argument("--cold", action="store_true", help="evict the index from the page cache")
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--json", type=Path, default=None, help="also write the figures here")
    ap.add_argument("--fp16-text", type=int, default=0, metavar="CLAIMS")
    ap.add_argument("--wice", default=None, help="the shared data folder (for --fp16-text)")
    ap.add_argument("--probe", nargs=2, type=Path, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    from auditor.progress import quiet_third_party

    quiet_third_party()
    if args.probe is not None:  # the fresh process: INDEX QUERIES
        print(json.dumps(probe(args.probe[0], args.probe[1], args.index_type)))
        return
    if args.fp16_text:
        _emit(fp16_on_text(args.fp16_text, args.wice), args.json)
        return
    with tempfile.TemporaryDirectory(dir=args.work) as tmp:
        ix = Path(tmp) / "index"
        base, queries = synthetic(args.n + args.add, args.data, args.queries)
        out: dict[str, Any] = {"n": args.n, "add": args.add, "data": args.data}
        out.update(build(args, ix, base))
        import faiss

        _, truth = faiss.knn(queries, base, K, faiss.METRIC_INNER_PRODUCT)
        del base
        np.savez(Path(tmp) / "queries.npz", queries=queries, truth=truth)
        from auditor.retrieval import store

        disk = _disk(store.require_generation(ix))
        chunks = args.n + args.add
        out["disk_bytes"] = disk
        out["disk_mb_per_million"] = {k: v / 2**20 * 1e6 / chunks for k, v in disk.items()}
        out["cold"] = args.cold
        if args.cold:
            _evict(ix)
        cmd = [sys.executable, __file__, "--index-type", args.index_type, "--probe", str(ix)]
        cmd.append(str(Path(tmp) / "queries.npz"))
        done = subprocess.run(cmd, check=True, capture_output=True, text=True)
        out.update(json.loads(done.stdout.strip().splitlines()[-1]))
    _emit(out, args.json)


def _emit(out: dict[str, Any], path: Path | None) -> None:
    """Print ``out`` as one JSON line (and write it to ``path``)."""
    line = json.dumps(out)
    print(line)
    if path is not None:
        path.write_text(line + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
