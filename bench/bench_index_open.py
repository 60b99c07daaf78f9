"""Time to open a large evidence index and answer its first search, in a fresh process.

    python bench/bench_index_open.py prepare --work DIR [--data DIR] [--claims 10]
                                     [--docs 45000] [--seed 0]
    python bench/bench_index_open.py open --work DIR [--profile OUT.prof]
    python bench/bench_index_open.py forms --work DIR [--chunks 200000] [--segments 4]
                                     [--rounds 2]

``prepare`` builds an index of ``--docs`` one-sentence documents (the WiCE pool
shape) without paying ~12 minutes of encoder CPU: the evidence sentences of the first
``--claims`` WiCE dev claims are embedded for real (MiniLM), every other sentence (the
rest of the WiCE dev evidence pool, then copies of it under new ids, ``#2``, ``#3``,
..., until ``--docs`` documents) gets a seeded random unit vector
(``numpy.random.default_rng(seed)`` keyed by the text's sha256, so the same text gets
the same vector in every build). All of it goes through the library's own writer,
:func:`auditor.retrieval.ingest` with an ``encoder`` callable, in one ingest (one
segment, as a fresh ``auditor ingest`` of the pool writes it), and the ledger
``DIR/base.db`` records the corpus as the command does. The claims become one-sentence
answers in ``DIR/answers.jsonl``, so ``bench/audit_overhead.py run --work DIR`` audits
them against this index as a whole ``auditor audit`` process. Lexical scores are real
(BM25 over the real texts); dense scores of the filler are random, so dense hits come
from the really embedded evidence.

``open`` (run it in a fresh interpreter, e.g. from another checkout with that checkout
first on ``PYTHONPATH``) prints one JSON line: the import of the index module, the
``EvidenceIndex.open`` call and the first search (``lexical`` mode, one claim, k=5: no
encoder is loaded, so the time is the index's own), each in seconds, plus peak memory.
``--profile`` writes a cProfile of the open and the search.

``forms`` compares the two on-disk forms of one index in one process: it builds
``--chunks`` synthetic one-chunk documents (``bench_scale.py``'s Zipf texts and
precomputed random unit vectors: no encoder) in ``--segments`` ingests, copies the
index and rewrites the copy in the older JSON form (``chunks.jsonl``, ``catalog.json``,
``counts.npz`` + ``vocab.json``, no ``has_newer.npy``; the tests' rewriter), then opens
each form in turn, ``--rounds`` times alternately, and times the open and the first
search (lexical, five queries, k=10: the BM25 tables are read, no encoder is loaded),
then opens and searches each once more under ``tracemalloc`` for the memory the
open and the search allocated and still hold (``held_mb``) and at most (``peak_mb``):
Python and numpy allocations, order-independent in one process, unlike RSS; the flat
FAISS copy of the vectors (C++, the same in both forms) and page-cache pages of
memory-mapped files are not counted. It prints one JSON object with each form's best
times and memory, the binary/JSON ratios, and whether the hits and scores were
identical.

To compare two versions of the code (as docs/performance.md does): ``prepare`` once
with each (``PYTHONPATH=<checkout>``; the same input gives the same manifest but for
``created_at``), then alternate ``open`` runs of the two in fresh interpreters, and
whole audits with ``bench/audit_overhead.py run --work W [--stages] [--warm] --rows
OUT.json`` after copying each prepared ``index``, ``base.db`` and ``answers.jsonl`` into
the same folder ``W`` (the run id names the index folder, so rows compare exactly).
"""

from __future__ import annotations

import time

T_START = time.perf_counter()

import argparse  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from profile_paths import _wice, _write_jsonl  # noqa: E402  (stdlib imports only)


def _seeded_unit(text: str, seed: int, dim: int) -> Any:
    import numpy as np

    key = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")
    v = np.random.default_rng([seed, key]).standard_normal(dim).astype(np.float32)
    return v / np.linalg.norm(v)


def prepare(work: Path, data: Path, n_claims: int, n_docs: int, seed: int) -> dict[str, Any]:
    """Write the answers, build ``work/index`` and ``work/base.db``; what was built."""
    import numpy as np

    from auditor import embedding
    from auditor.retrieval import ingest, load_documents
    from ledger import open_ledger

    rows = _wice(data)
    work.mkdir(parents=True, exist_ok=True)
    real: list[tuple[str, str]] = [
        (f"{c}:{s}", sent)
        for c, row in enumerate(rows[:n_claims])
        for s, sent in enumerate(row["evidence"])
        if sent.strip()
    ]
    pool: list[tuple[str, str]] = [
        (f"{c}:{s}", sent)
        for c, row in enumerate(rows)
        if c >= n_claims
        for s, sent in enumerate(row["evidence"])
        if sent.strip()
    ]
    filler: list[tuple[str, str]] = []
    copy = 1
    while len(real) + len(filler) < n_docs:
        for doc_id, sent in pool:
            if len(real) + len(filler) >= n_docs:
                break
            filler.append((doc_id if copy == 1 else f"{doc_id}#{copy}", sent))
        copy += 1
    real_texts = {t for _, t in real}
    dim = embedding.EMBEDDING_DIM
    encoded = {"real": 0, "seeded": 0}

    def encoder(texts: list[str]) -> Any:
        out = np.empty((len(texts), dim), dtype=np.float32)
        todo = [i for i, t in enumerate(texts) if t in real_texts]
        if todo:
            out[todo] = embedding.encode([texts[i] for i in todo], cache=False)
        for i, t in enumerate(texts):
            if t not in real_texts:
                out[i] = _seeded_unit(t, seed, dim)
        encoded["real"] += len(todo)
        encoded["seeded"] += len(texts) - len(todo)
        return out

    # read back as `auditor ingest DIR/docs.jsonl` reads its input
    _write_jsonl(work / "docs.jsonl", [{"id": d, "text": t} for d, t in real + filler])
    docs = load_documents([work / "docs.jsonl"])
    answers = [
        {"id": f"a{c}", "question": "", "answer": r["claim"]} for c, r in enumerate(rows[:n_claims])
    ]
    _write_jsonl(work / "answers.jsonl", answers)
    t0 = time.perf_counter()
    with open_ledger(work / "base.db") as ledger:
        result = ingest(
            docs,
            work / "index",
            encoder=encoder,
            on_commit=lambda r: ledger.record_corpus(list(r.added_versions), list(r.chunks)),
        )
    info = {
        "documents": len(docs),
        "really_embedded_documents": len(real),
        "seeded_documents": len(filler),
        "texts_encoded": encoded,
        "chunks": len(result.chunks),
        "seed": seed,
        "ingest_s": round(time.perf_counter() - t0, 1),
        "answers": len(answers),
        "code": str(Path(embedding.__file__).resolve().parent.parent),
    }
    (work / "built.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    return info


def open_and_search(work: Path, profile: Path | None) -> dict[str, Any]:
    """Open ``work/index`` and run one lexical search, timed (fresh interpreter)."""
    t0 = time.perf_counter()
    from auditor.retrieval.search import EvidenceIndex

    t_import = time.perf_counter() - t0
    query = json.loads((work / "answers.jsonl").read_text("utf-8").splitlines()[0])["answer"]
    prof = None
    if profile is not None:
        import cProfile

        prof = cProfile.Profile()
        prof.enable()
    t1 = time.perf_counter()
    idx = EvidenceIndex.open(work / "index")
    t_open = time.perf_counter() - t1
    t2 = time.perf_counter()
    hits = idx.search([query], k=5, mode="lexical")
    t_search = time.perf_counter() - t2
    if prof is not None and profile is not None:
        prof.disable()
        prof.dump_stats(str(profile))
    import auditor

    return {
        "code": str(Path(auditor.__file__).resolve().parent.parent),
        "chunks": len(idx),
        "import_s": round(t_import, 3),
        "open_s": round(t_open, 3),
        "first_search_s": round(t_search, 4),
        "open_and_search_s": round(t_open + t_search, 3),
        "process_s": round(time.perf_counter() - T_START, 3),
        "hits": [(h.chunk.chunk_id, h.document.doc_id, round(h.score, 6)) for h in hits[0]],
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "load": os.getloadavg()[0],
    }


def forms(work: Path, n_chunks: int, n_segments: int, rounds: int) -> dict[str, Any]:
    """Build one index, keep a copy in the JSON form, time both opening (same process)."""
    import gc
    import itertools
    import shutil
    import tracemalloc

    from bench_scale import SyntheticCorpus

    from auditor.retrieval import ingest
    from auditor.retrieval.search import EvidenceIndex

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from tests.test_index_binary import _as_old_json

    corpus = SyntheticCorpus()
    binary, old = work / "binary", work / "json"
    t0 = time.perf_counter()
    if not binary.exists():
        bounds = [n_chunks * i // n_segments for i in range(n_segments + 1)]
        for lo, hi in itertools.pairwise(bounds):
            ingest(corpus.documents(lo, hi), binary, encoder=corpus.encoder)
    build_s = time.perf_counter() - t0
    if not old.exists():
        shutil.copytree(binary, old)
        _as_old_json(old)
    rng_texts = corpus.texts(0, 5)
    queries = [" ".join(t.split()[3:9]) for t in rng_texts]
    best: dict[str, dict[str, float]] = {}
    hits: dict[str, Any] = {}
    for _ in range(rounds):
        for name, ix in (("json", old), ("binary", binary)):
            gc.collect()
            t1 = time.perf_counter()
            idx = EvidenceIndex.open(ix)
            t_open = time.perf_counter() - t1
            t2 = time.perf_counter()
            found = idx.search(queries, k=10, mode="lexical")
            t_search = time.perf_counter() - t2
            hits[name] = [[(h.chunk.chunk_id, h.score) for h in q] for q in found]
            row = {"open_s": t_open, "first_search_s": t_search}
            row["to_first_result_s"] = t_open + t_search
            prev = best.get(name)
            best[name] = row if prev is None else {k: min(prev[k], row[k]) for k in row}
            del idx, found
    for name, ix in (("json", old), ("binary", binary)):  # memory: one more, traced, pass
        gc.collect()
        tracemalloc.start()
        idx = EvidenceIndex.open(ix)
        idx.search(queries, k=10, mode="lexical")
        held, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        best[name]["held_mb"] = held / 2**20
        best[name]["peak_mb"] = peak / 2**20
        del idx
    ratio = {
        k: round(best["binary"][k] / best["json"][k], 3) if best["json"][k] else None
        for k in best["json"]
    }
    return {
        "chunks": n_chunks,
        "segments": n_segments,
        "rounds": rounds,
        "build_s": round(build_s, 1),
        "json": {k: round(v, 3) for k, v in best["json"].items()},
        "binary": {k: round(v, 3) for k, v in best["binary"].items()},
        "binary_over_json": ratio,
        "same_hits_and_scores": hits["json"] == hits["binary"],
        "load": os.getloadavg()[0],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--work", type=Path, required=True)
    p.add_argument("--data", default=None)
    p.add_argument("--claims", type=int, default=10)
    p.add_argument("--docs", type=int, default=45000)
    p.add_argument("--seed", type=int, default=0)
    o = sub.add_parser("open")
    o.add_argument("--work", type=Path, required=True)
    o.add_argument("--profile", type=Path, default=None)
    f = sub.add_parser("forms")
    f.add_argument("--work", type=Path, required=True)
    f.add_argument("--chunks", type=int, default=200_000)
    f.add_argument("--segments", type=int, default=4)
    f.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    if args.cmd == "forms":
        print(json.dumps(forms(args.work, args.chunks, args.segments, args.rounds)))
    elif args.cmd == "prepare":
        from calibrate_shared import data_dir

        info = prepare(args.work, data_dir(args.data), args.claims, args.docs, args.seed)
        print(json.dumps(info))
    else:
        print(json.dumps(open_and_search(args.work, args.profile)))


if __name__ == "__main__":
    main()
