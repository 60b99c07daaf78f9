"""Scale figures for docs/scale.md: stage throughput, index growth, ANN recall and
memory, concurrent ledger writes.

    python bench/bench_scale.py stages  [--data DIR] [--answers 8]
    python bench/bench_scale.py index   [--sizes 10000,100000,1000000] [--add 1000]
    python bench/bench_scale.py ann     [--n 1000000] [--hnsw-n 100000] [--queries 1000]
    python bench/bench_scale.py ledger  [--pg URL] [--answers 400] [--workers 1,2,4]
    (each takes --json OUT to keep the figures)

``stages``: the offline panel audits ``--answers`` WiCE dev claims (one-sentence
answers) against an index of their evidence sentences, through
:class:`auditor.Auditor`, with a timer around the function that does each stage
(extract, retrieve, each judge, stack, label, localize, ledger write, and the two
models' forward passes, using :class:`bench_throughput.ModelClock`); prints seconds
and claims/s per stage. Needs the shared data (``--data`` / ``$AUDITOR_DATA``).

``index``: synthetic one-chunk documents (about 40 words from a 5,000-word Zipf
vocabulary) with precomputed random unit vectors (no encoder: the figures are the
index's own cost). For each size N: one ingest of N documents into a fresh flat
index (the rebuild cost), then an ingest of ``--add`` more (the growth cost), with
the part of it spent reading the version list (the one term that still grows with
N), and the time to open the index. At the size named by ``--compare`` (default
100,000) the rebuild of all N + add documents is timed too: the done-when ratio.

``ann``: ``--n`` synthetic unit vectors (384-d; ``--data clustered``: 4,096 centres,
noise chosen so a point's cosine to its centre is about 0.75; ``--data latent``:
clustered points of a 32-d latent space mapped linearly to 384-d, closer to text
embeddings' low intrinsic dimension), queries are perturbed data points; exact
top-10 by a flat index, then recall@10 and memory of IVF-PQ (``nlist`` 1,024, m=48
x 8 bits) at several ``nprobe``, with 100 candidates re-scored exactly, and of HNSW
(M=32) at ``--hnsw-n`` (HNSW at 1M on one core takes too long for this machine).
Memory is the serialised index size (what it occupies in RAM).

``ledger``: synthetic answers (3 claims, 5 retrievals, 5 judge votes and a verdict
per claim) written by W processes at once to one PostgreSQL ledger (every
process writes its own run), one answer per transaction and ``--batch`` answers per
transaction (:meth:`ledger.Ledger.record_answers`); SQLite single writer as the
baseline. Prints claims/s and rows/s, and checks the row counts.

Run heavy parts once, on a quiet machine if possible, with ``OMP_NUM_THREADS=1``
(figures are single-core). Nothing from the shared data is written anywhere.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import resource
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

DIM = 384


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# ---------------------------------------------------------------------- stages
def stages(data_arg: str | None, n_answers: int) -> dict[str, Any]:
    """Seconds and claims/s per audit stage, timed in one process (see the module doc)."""
    from bench_throughput import ModelClock, wice_rows
    from calibrate_shared import data_dir

    from auditor import AuditConfig, Auditor, embedding
    from auditor.extract.rules import RuleExtractor
    from auditor.graph import flow
    from auditor.judges.base import LocalJudge
    from auditor.judges.panel import load_panel
    from auditor.retrieval import ingest, make_document
    from ledger import Ledger, open_ledger

    rows = wice_rows(data_dir(data_arg))[:n_answers]
    clock = ModelClock()
    clock.install()

    def timed(key: str, owner: Any, attr: str) -> None:
        clock.seconds[key] = 0.0
        clock.calls[key] = 0
        setattr(owner, attr, clock._wrap(key, getattr(owner, attr)))

    timed("extract", RuleExtractor, "extract_detailed")
    for fn in ("gather_evidence", "judge_audits", "stack_audits", "label_audits"):
        timed(fn, flow, fn)
    timed("localize_audits", flow, "localize_audits")
    timed("ledger write", Ledger, "record_answer")
    seen: set[type] = set()
    for member in load_panel().members:
        cls = type(member)
        if cls in seen:
            continue
        seen.add(cls)
        method = "score_batch" if cls.score_batch is not LocalJudge.score_batch else "score"
        timed(f"judge {member.name}", cls, method)
    docs = [
        make_document(f"{c}:{s}", sent)
        for c, row in enumerate(rows)
        for s, sent in enumerate(row["evidence"])
        if sent.strip()
    ]
    answers = [
        {"id": f"a{c}", "question": "", "answer": row["claim"]} for c, row in enumerate(rows)
    ]
    out: dict[str, Any] = {"answers": len(answers)}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        db = work / "ledger.db"
        embedding.encode(["warm up"], cache=False)
        enc_before = clock.seconds["encoder"]
        t0 = time.perf_counter()
        with open_ledger(db) as ledger:
            result = ingest(
                docs,
                work / "index",
                on_commit=lambda r: ledger.record_corpus(list(r.versions), list(r.chunks)),
            )
        ingest_s = time.perf_counter() - t0
        embed_s = clock.seconds["encoder"] - enc_before
        out["ingest"] = {"chunks": len(result.chunks), "seconds": ingest_s, "encoder_s": embed_s}
        embedding.clear_cache()
        before = dict(clock.seconds)
        t0 = time.perf_counter()
        with Auditor(work / "index", db, config=AuditConfig()) as auditor:
            auditor.audit(answers[:1])  # loads the models (and writes one answer)
            load_s = time.perf_counter() - t0
            embedding.clear_cache()
            before = dict(clock.seconds)
            t0 = time.perf_counter()
            run = auditor.audit(answers[1:])
        wall = time.perf_counter() - t0
    n_claims = len(run.claims)
    spent = {k: clock.seconds[k] - before.get(k, 0.0) for k in clock.seconds}
    out.update({"claims": n_claims, "audit_wall_s": wall, "load_s": load_s, "stages": {}})
    print(
        f"ingest: {len(result.chunks)} chunks in {ingest_s:.1f} s "
        f"(encoder {embed_s:.1f} s: {len(result.chunks) / max(embed_s, 1e-9):,.0f} chunks/s)"
    )
    print(
        f"audit: models loaded and a first answer audited in {load_s:.1f} s; then "
        f"{len(answers) - 1} answers, {n_claims} claims in {wall:.1f} s"
    )
    print(f"{'stage':34s} {'seconds':>8s} {'share':>6s} {'claims/s':>9s}")
    for key, s in spent.items():
        label = {"encoder": "  MiniLM encoder forward", "reader": "  reader (NLI) forward"}.get(
            key, key
        )
        rate = n_claims / s if s > 0 else float("inf")
        out["stages"][key] = {"seconds": s, "claims_per_s": rate}
        print(f"{label:34s} {s:8.2f} {100 * s / wall:5.1f}% {rate:9.1f}")
    print(f"{'whole audit':34s} {wall:8.2f} {100.0:5.1f}% {n_claims / wall:9.1f}")
    out["claims_per_s"] = n_claims / wall
    out["peak_rss_mb"] = _rss_mb()
    return out


# ---------------------------------------------------------------------- index growth
class SyntheticCorpus:
    """Deterministic one-chunk documents and their precomputed unit vectors, generated
    in blocks of :data:`BLOCK` rows on demand (a 1M-chunk run never holds them all)."""

    BLOCK = 100_000

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.vocab = [f"w{i}x" for i in range(5000)]
        ranks = np.arange(1, len(self.vocab) + 1, dtype=np.float64)
        self.p = (1 / ranks) / (1 / ranks).sum()
        self._vectors: dict[int, np.ndarray] = {}

    def texts(self, lo: int, hi: int) -> list[str]:
        """Texts of rows ``lo`` to ``hi`` (row ``i`` starts "Record i says")."""
        out: list[str] = []
        for b in range(lo // self.BLOCK, (hi - 1) // self.BLOCK + 1):
            rng = np.random.default_rng([self.seed, b])
            words = rng.choice(len(self.vocab), size=(self.BLOCK, 40), p=self.p)
            first = b * self.BLOCK
            for i in range(max(lo, first), min(hi, first + self.BLOCK)):
                out.append(
                    f"Record {i} says " + " ".join(self.vocab[w] for w in words[i - first]) + "."
                )
        return out

    def _block_vectors(self, b: int) -> np.ndarray:
        if b not in self._vectors:
            if len(self._vectors) >= 2:
                self._vectors.pop(next(iter(self._vectors)))
            self._vectors[b] = unit_vectors(self.BLOCK, np.random.default_rng([self.seed, b, 1]))
        return self._vectors[b]

    def encoder(self, texts: list[str]) -> np.ndarray:
        """The ``encoder`` argument of ingest: the precomputed vector of each text's row."""
        rows = [int(t.split(" ", 2)[1]) for t in texts]
        return np.stack([self._block_vectors(r // self.BLOCK)[r % self.BLOCK] for r in rows])

    def documents(self, lo: int, hi: int) -> list[Any]:
        from auditor.retrieval import make_document

        return [make_document(f"d{lo + i}", t) for i, t in enumerate(self.texts(lo, hi))]


def unit_vectors(n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` random unit vectors (float32), generated in blocks to bound memory."""
    out = np.empty((n, DIM), dtype=np.float32)
    for lo in range(0, n, 100_000):
        block = rng.standard_normal((min(100_000, n - lo), DIM), dtype=np.float32)
        block /= np.linalg.norm(block, axis=1, keepdims=True)
        out[lo : lo + len(block)] = block
    return out


def _timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    t0 = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - t0


def index_growth(sizes: Sequence[int], n_add: int, compare: int) -> dict[str, Any]:
    """Build, grow, open and (at ``compare``) rebuild flat indexes of synthetic chunks.

    Sizes up to :attr:`SyntheticCorpus.BLOCK` are built by one ingest (timed: the
    rebuild cost). Larger ones grow the largest such index by ingests of one block
    (100,000 documents) each, timed: the add cost against the size, and a lean way to
    reach 1M chunks on this machine (one ingest of 1M documents holds them all in
    memory); their from-scratch build time is not measured.
    """
    from auditor.retrieval import EvidenceIndex, compact, ingest, store
    from auditor.retrieval.segments import Catalog

    block = SyntheticCorpus.BLOCK
    corpus = SyntheticCorpus()
    out: dict[str, Any] = {"add": n_add, "sizes": {}, "block_adds": {}}
    print(
        f"{'chunks':>9s} {'build s':>8s} {'add s':>7s} {'of it: catalogue':>17s} "
        f"{'open s':>7s} {'open after add':>15s}"
    )
    small = [n for n in sizes if n <= block]
    large = [n for n in sizes if n > block]
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP")) as tmp:
        for n in small:
            ix = Path(tmp) / f"ix{n}"
            base = corpus.documents(0, n)
            corpus.encoder([base[0].text])  # generate the block's vectors untimed
            _, build_s = _timed(lambda ix=ix, base=base: ingest(base, ix, encoder=corpus.encoder))
            del base
            extra = corpus.documents(ADD_ROWS + n, ADD_ROWS + n + n_add)
            row = _add_and_open(ix, extra, corpus, ingest, EvidenceIndex, store, Catalog)
            row["build_s"] = build_s
            out["sizes"][str(n)] = row
            _print_row(n, row)
            if n == compare:
                row["compact_s"] = _timed(lambda ix=ix: compact(ix))[1]
                docs = corpus.documents(0, n) + extra
                _, rebuild_s = _timed(
                    lambda d=docs, r=Path(tmp) / "rebuild": ingest(d, r, encoder=corpus.encoder)
                )
                del docs
                row["rebuild_s"] = rebuild_s
                row["add_over_rebuild"] = row["add_s"] / rebuild_s
                print(
                    f"at {n:,} chunks: adding {n_add:,} documents took {row['add_s']:.2f} s; "
                    f"rebuilding all {n + n_add:,} took {rebuild_s:.2f} s: ratio "
                    f"{row['add_s'] / rebuild_s:.3f} (compact: {row['compact_s']:.2f} s)"
                )
        if large and block in small:
            # grow the block-sized index (block + n_add chunks now) one block at a time
            ix = Path(tmp) / f"ix{block}"
            have, next_row = block + n_add, block
            for target in large:
                while have < target:
                    docs = corpus.documents(next_row, next_row + block)
                    _, s = _timed(lambda d=docs, ix=ix: ingest(d, ix, encoder=corpus.encoder))
                    del docs
                    print(f"  grown from {have:,} to {have + block:,} chunks: {s:.1f} s")
                    out["block_adds"][str(have)] = s
                    have += block
                    next_row += block
                extra = corpus.documents(ADD_ROWS + target, ADD_ROWS + target + n_add)
                row = _add_and_open(ix, extra, corpus, ingest, EvidenceIndex, store, Catalog)
                row["chunks"] = have
                out["sizes"][str(target)] = row
                _print_row(have, row)
                have += n_add
    out["peak_rss_mb"] = _rss_mb()
    return out


ADD_ROWS = 100_000_000
"""Rows of the documents added to an index start here (never in the index already)."""


def _add_and_open(
    ix: Path,
    extra: list[Any],
    corpus: SyntheticCorpus,
    ingest: Any,
    index_cls: Any,
    store: Any,
    catalog_cls: Any,
) -> dict[str, float]:
    """Open ``ix`` (unless it is large: opening reads every chunk), time reading its
    catalogue, add ``extra``, open it again."""
    big = int(store.read_json(store.require_generation(ix) / store.MANIFEST)["chunks"]) > 200_000
    open_s = float("nan") if big else _timed(lambda: index_cls.open(ix))[1]
    gen = store.require_generation(ix)
    manifest = store.read_json(gen / store.MANIFEST)
    _, read_s = _timed(lambda: catalog_cls.read(gen, manifest))
    corpus.encoder([d.text for d in extra[:1]])  # generate the block's vectors untimed
    _, add_s = _timed(lambda: ingest(extra, ix, encoder=corpus.encoder))
    _, open2_s = _timed(lambda: index_cls.open(ix))
    return {
        "add_s": add_s,
        "read_catalogue_s": read_s,
        "open_s": open_s,
        "open_after_add_s": open2_s,
    }


def _print_row(n: int, row: dict[str, float]) -> None:
    build = f"{row['build_s']:8.2f}" if "build_s" in row else f"{'-':>8s}"
    print(
        f"{n:9,d} {build} {row['add_s']:7.3f} {row['read_catalogue_s']:17.3f} "
        f"{row['open_s']:7.2f} {row['open_after_add_s']:15.2f}"
    )


# ---------------------------------------------------------------------- ANN
def clustered_vectors(
    n: int, rng: np.random.Generator, centres: np.ndarray, noise: float
) -> np.ndarray:
    """``n`` unit vectors around random ``centres`` (float32, built in blocks)."""
    out = np.empty((n, DIM), dtype=np.float32)
    for lo in range(0, n, 100_000):
        m = min(100_000, n - lo)
        block = centres[rng.integers(0, len(centres), m)] + noise * rng.standard_normal(
            (m, DIM), dtype=np.float32
        )
        block /= np.linalg.norm(block, axis=1, keepdims=True)
        out[lo : lo + m] = block
    return out


def latent_vectors(n: int, rng: np.random.Generator, mix: np.ndarray) -> np.ndarray:
    """``n`` unit vectors with low intrinsic dimension: clustered points in a 32-d latent
    space mapped to 384-d by ``mix`` (text embeddings have low intrinsic dimension)."""
    out = np.empty((n, DIM), dtype=np.float32)
    centres = np.random.default_rng(7).standard_normal((4096, mix.shape[0]), dtype=np.float32)
    for lo in range(0, n, 100_000):
        m = min(100_000, n - lo)
        z = centres[rng.integers(0, len(centres), m)] + 0.6 * rng.standard_normal(
            (m, mix.shape[0]), dtype=np.float32
        )
        block = z @ mix
        block /= np.linalg.norm(block, axis=1, keepdims=True)
        out[lo : lo + m] = block
    return out


def ann(n: int, hnsw_n: int, n_queries: int, data: str = "clustered") -> dict[str, Any]:
    """Recall@10 against flat and memory of IVF-PQ (at ``n``) and HNSW (at ``hnsw_n``)."""
    import faiss

    from auditor.retrieval import dense

    rng = np.random.default_rng(1)
    if data == "latent":
        mix = rng.standard_normal((32, DIM), dtype=np.float32)
        base = latent_vectors(n, rng, mix)
        noise = 0.02
    else:
        centres = unit_vectors(4096, rng)
        noise = 0.045  # |noise| ~ 0.045 * sqrt(384) = 0.88: cosine to the centre ~ 0.75
        base = clustered_vectors(n, rng, centres, noise)
    picks = rng.integers(0, n, n_queries)
    queries = base[picks] + 0.5 * noise * rng.standard_normal((n_queries, DIM), dtype=np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    out: dict[str, Any] = {"n": n, "queries": n_queries, "hnsw_n": hnsw_n, "data": data}

    def truth(m: int) -> np.ndarray:
        flat = faiss.IndexFlatIP(DIM)
        flat.add(base[:m])
        _, ids = flat.search(queries, 10)
        return ids

    def recall(ids: np.ndarray, gt: np.ndarray) -> float:
        return float(np.mean([len(set(a) & set(b)) / 10 for a, b in zip(ids, gt, strict=True)]))

    gt, flat_s = _timed(lambda: truth(n))
    out["flat"] = {"bytes": n * DIM * 4, "search_s_per_query": flat_s / n_queries}
    print(
        f"flat {n:,}: {n * DIM * 4 / 2**20:,.0f} MiB, exact search "
        f"{1000 * flat_s / n_queries:.1f} ms/query (1 thread)"
    )
    params = {"nlist": 1024, "m": 48, "nbits": 8, "nprobe": 16}
    index, build_s = _timed(lambda: dense.build_index(base, "ivfpq", params)[0])
    size = len(faiss.serialize_index(index))
    out["ivfpq"] = {"params": params, "build_s": build_s, "bytes": size, "recall_at_10": {}}
    print(
        f"ivfpq {n:,} (nlist 1024, 48x8-bit codes): built in {build_s:.0f} s, "
        f"{size / 2**20:,.1f} MiB ({size / (n * DIM * 4):.3f} of flat)"
    )
    for nprobe in (8, 16, 32, 64, 128):
        index.nprobe = nprobe
        (_, ids), s = _timed(lambda index=index: index.search(queries, 10))
        r = recall(ids, gt)
        out["ivfpq"]["recall_at_10"][str(nprobe)] = {
            "recall": r,
            "ms_per_query": 1000 * s / n_queries,
        }
        print(f"  nprobe {nprobe:4d}: recall@10 {r:.3f}, {1000 * s / n_queries:.2f} ms/query")
    # re-ranking: 100 IVF-PQ candidates re-scored exactly with the stored vectors
    index.nprobe = 32
    (_, cand), s = _timed(lambda index=index: index.search(queries, 100))
    exact = np.einsum("qd,qkd->qk", queries, base[np.clip(cand, 0, None)])
    exact[cand < 0] = -np.inf
    top = np.take_along_axis(cand, np.argsort(-exact, axis=1)[:, :10], axis=1)
    r = recall(top, gt)
    out["ivfpq"]["rerank_100_nprobe_32"] = {"recall": r, "ms_per_query": 1000 * s / n_queries}
    print(f"  nprobe   32, 100 candidates re-scored exactly: recall@10 {r:.3f}")
    del index
    if hnsw_n:
        gt_h = truth(hnsw_n)
        hnsw, build_s = _timed(lambda: dense.build_index(base[:hnsw_n], "hnsw", {})[0])
        size = len(faiss.serialize_index(hnsw))
        out["hnsw"] = {"build_s": build_s, "bytes": size, "recall_at_10": {}}
        print(
            f"hnsw {hnsw_n:,} (M 32, efConstruction 200): built in {build_s:.0f} s "
            f"({hnsw_n / build_s:,.0f} vectors/s), {size / 2**20:,.1f} MiB "
            f"({size / (hnsw_n * DIM * 4):.2f} of flat)"
        )
        for ef in (32, 64, 128, 256):
            hnsw.hnsw.efSearch = ef
            (_, ids), s = _timed(lambda: hnsw.search(queries, 10))
            r = recall(ids, gt_h)
            out["hnsw"]["recall_at_10"][str(ef)] = {
                "recall": r,
                "ms_per_query": 1000 * s / n_queries,
            }
            print(f"  efSearch {ef:4d}: recall@10 {r:.3f}, {1000 * s / n_queries:.2f} ms/query")
    out["peak_rss_mb"] = _rss_mb()
    return out


# ---------------------------------------------------------------------- ledger
CLAIMS, HITS, VOTES = 3, 5, 5


def synthetic_run(tag: str, n_answers: int) -> tuple[str, dict[str, Any], list[Any]]:
    """A run id, its components and ``n_answers`` answer results (nothing written)."""
    from auditor.digest import content_digest, sha256_text
    from auditor.types import Chunk, Component, DocumentVersion
    from ledger import AnswerResult, ClaimRecord, RetrievalRecord, VerdictRecord, VoteRecord

    judges = [Component("judge", f"j{i}", "1", content_digest(["j", i]), {}) for i in range(VOTES)]
    roles: dict[str, Any] = {
        "extractor": Component("extractor", "rules", "1", content_digest(["e"]), {}),
        "panel": Component("panel", "p", "1", content_digest(["p"]), {}),
        "stacker": Component("stacker", "s", "1", content_digest(["s"]), {}),
        **{f"judge:{j.name}": j for j in judges},
    }
    run_id = content_digest(["bench-run", tag])
    results = []
    for a in range(n_answers):
        claims, retrievals, votes, verdicts, versions, chunks = [], [], [], [], [], []
        for c in range(CLAIMS):
            text = f"{tag} answer {a} claim {c}"
            cid = sha256_text(text)
            claims.append(ClaimRecord(cid, text, [(0, len(text))], True, "claim"))
            for h in range(HITS):
                ev = f"evidence {(a * 7 + c * 3 + h) % 5000}"  # shared across answers
                v = DocumentVersion(
                    doc_id=f"doc{sha256_text(ev)[:10]}",
                    version="v1",
                    text=ev,
                    digest=sha256_text(ev),
                )
                ch = Chunk(f"{v.digest[:16]}:0", v.doc_id, "v1", v.digest, 0, len(ev), ev)
                versions.append(v)
                chunks.append(ch)
                retrievals.append(
                    RetrievalRecord(
                        cid, h, ch.chunk_id, v.doc_id, v.digest, 0.5, False, False, text
                    )
                )
            votes += [VoteRecord(cid, j.digest, j.name, 0.5, "raw", {}, 0.01, None) for j in judges]
            verdicts.append(VerdictRecord(cid, "supported", 0.2, "bench"))
        results.append(
            AnswerResult(
                answer_id=f"a{a}",
                question="q",
                answer="a",
                answer_digest=sha256_text(f"{tag}{a}"),
                as_of=None,
                seq=a,
                claims=claims,
                retrievals=retrievals,
                votes=votes,
                verdicts=verdicts,
                evidence_versions=versions,
                evidence_chunks=chunks,
            )
        )
    return run_id, roles, results


ROWS_PER_CLAIM = 1 + HITS + VOTES + 1  # claim, retrievals, votes, verdict


def _ledger_worker(url: str, tag: str, n_answers: int, batch: int, start: Any, q: Any) -> None:
    from ledger import open_ledger

    run_id, roles, results = synthetic_run(tag, n_answers)
    with open_ledger(url) as ledger:
        ledger.begin_run(
            run_id,
            kind="audit",
            input_digest=tag,
            as_of=None,
            config={},
            components=roles,
            n_answers=n_answers,
        )
        q.put(("ready", 0.0, 0))
        start.wait(120)
        t0 = time.perf_counter()
        for lo in range(0, n_answers, batch):
            if batch == 1:
                ledger.record_answer(run_id, results[lo])
            else:
                ledger.record_answers(run_id, results[lo : lo + batch])
        q.put(("done", time.perf_counter() - t0, ledger.retries))


def ledger_writes(
    url: str, n_answers: int, workers: Sequence[int], batches: Sequence[int]
) -> dict[str, Any]:
    """Claims/s of W concurrent writers (one run each) at each batch size."""
    from ledger import open_ledger

    ctx = mp.get_context("spawn")
    out: dict[str, Any] = {}
    for w in workers:
        for batch in batches:
            tag = f"w{w}b{batch}t{time.time_ns()}"
            start, q = ctx.Event(), ctx.Queue()
            procs = [
                ctx.Process(
                    target=_ledger_worker, args=(url, f"{tag}-{i}", n_answers, batch, start, q)
                )
                for i in range(w)
            ]
            for p in procs:
                p.start()
            for _ in procs:  # every worker has imported, built its answers, begun its run
                q.get(timeout=300)
            t0 = time.perf_counter()
            start.set()
            done = [q.get(timeout=600)[1:] for _ in procs]
            wall = time.perf_counter() - t0
            for p in procs:
                p.join()
            claims = w * n_answers * CLAIMS
            retries = sum(r for _, r in done)
            key = f"{w} writers, {batch}/tx"
            out[key] = {
                "claims_per_s": claims / wall,
                "rows_per_s": claims * ROWS_PER_CLAIM / wall,
                "retries": retries,
            }
            print(
                f"{key:22s}: {claims:,} claims in {wall:6.2f} s = {claims / wall:8,.0f} "
                f"claims/s, {claims * ROWS_PER_CLAIM / wall:9,.0f} rows/s, {retries} retries"
            )
    with open_ledger(url) as ledger:
        expected = sum(w for w in workers) * len(batches) * n_answers * CLAIMS
        assert ledger.count("claim") == expected, (ledger.count("claim"), expected)
        assert ledger.count("judge_vote") == expected * VOTES
    return out


def ledger(pg: str | None, n_answers: int, workers: Sequence[int], batch: int) -> dict[str, Any]:
    """SQLite (one writer) and, with ``pg``, PostgreSQL with several writers."""
    from bench_ledger import _pg_database

    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        print("sqlite (one writer):")
        out["sqlite"] = ledger_writes(str(Path(tmp) / "l.db"), n_answers, [1], [1, batch])
    if pg:
        with _pg_database(pg) as url:
            print("postgresql:")
            out["postgresql"] = ledger_writes(url, n_answers, workers, [1, batch])
    else:
        print("postgresql: skipped (no --pg URL and no AUDITOR_TEST_PG_URL)")
    return out


# ---------------------------------------------------------------------- main
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="what", required=True)
    s = sub.add_parser("stages")
    s.add_argument("--data", default=None)
    s.add_argument("--answers", type=int, default=8)
    s = sub.add_parser("index")
    s.add_argument("--sizes", default="10000,100000,1000000")
    s.add_argument("--add", type=int, default=1000)
    s.add_argument("--compare", type=int, default=100_000)
    s = sub.add_parser("ann")
    s.add_argument("--n", type=int, default=1_000_000)
    s.add_argument("--hnsw-n", type=int, default=100_000)
    s.add_argument("--queries", type=int, default=1000)
    s.add_argument("--data", choices=("clustered", "latent"), default="clustered")
    s = sub.add_parser("ledger")
    s.add_argument("--pg", default=os.environ.get("AUDITOR_TEST_PG_URL"))
    s.add_argument("--answers", type=int, default=400)
    s.add_argument("--workers", default="1,2,4")
    s.add_argument("--batch", type=int, default=32)
    for p in sub.choices.values():
        p.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = ap.parse_args()
    from auditor.progress import quiet_third_party

    quiet_third_party()
    if args.what == "stages":
        result = stages(args.data, args.answers)
    elif args.what == "index":
        sizes = [int(x) for x in args.sizes.split(",")]
        result = index_growth(sizes, args.add, args.compare)
    elif args.what == "ann":
        result = ann(args.n, args.hnsw_n, args.queries, args.data)
    else:
        result = ledger(
            args.pg, args.answers, [int(x) for x in args.workers.split(",")], args.batch
        )
    print(f"peak resident memory: {_rss_mb():,.0f} MB")
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
