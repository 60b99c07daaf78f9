"""The index grows by segments: adds equal a from-scratch build, compaction changes no
result, segments are shared between generations, ivfpq waits until it can train."""

from __future__ import annotations

import hashlib
import os
import shutil
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

from auditor.retrieval import EvidenceIndex, compact, ingest, make_document
from auditor.retrieval import dense as dense_mod
from auditor.retrieval.corpus import _Rows
from auditor.types import DocumentVersion

pytestmark = pytest.mark.slow  # loads the MiniLM encoder

TOPICS = ["budget", "river", "election", "vaccine", "bridge", "harvest", "tariff", "orbit"]


def _docs() -> list[DocumentVersion]:
    docs = [
        make_document(
            f"d{i}",
            f"The {TOPICS[i % 8]} report {i} says the {TOPICS[(i * 3) % 8]} grew by {i} "
            f"percent. Officials discussed the {TOPICS[(i + 5) % 8]} at length in {1990 + i}.",
            published_at=f"{2000 + i % 20}-01-01",
        )
        for i in range(24)
    ]
    # later versions of d1 and d2 (one dated before the stored one: inserted into the
    # history, which re-dates the older version), a version with its own valid_to
    docs.append(
        make_document("d1", "The budget report was revised in 2024.", published_at="2024-05-01")
    )
    docs.append(make_document("d2", "An early river draft from 1999.", published_at="1999-01-01"))
    docs.append(
        make_document(
            "d3",
            "The election figures were corrected.",
            published_at="2023-01-01",
            valid_to="2023-06-01",
        )
    )
    return docs


QUERIES = ["budget grew percent", "river officials", "election figures corrected", "orbit 1995"]


def _results(ix: Path) -> list[object]:
    idx = EvidenceIndex.open(ix)
    out: list[object] = [
        [(v.doc_id, v.version, v.digest, v.valid_to, v.superseded) for v in idx.versions()],
        [(c.chunk_id, c.doc_id, c.version, c.start, c.end) for c in idx.chunks()],
        idx.manifest["corpus_digest"],
    ]
    for mode in ("dense", "lexical", "hybrid"):
        for as_of in (None, datetime(2010, 6, 1), datetime(2023, 3, 1)):
            hits = idx.search(QUERIES, k=8, mode=mode, as_of=as_of)
            out.append(
                [[(h.chunk.chunk_id, round(h.score, 6), h.superseded) for h in q] for q in hits]
            )
    return out


def test_adds_then_compact_equal_a_from_scratch_build(tmp_path: Path) -> None:
    docs = _docs()
    scratch, grown = tmp_path / "scratch", tmp_path / "grown"
    ingest(docs, scratch)
    for lo, hi in ((0, 10), (10, 20), (20, 25), (25, len(docs))):
        ingest(docs[lo:hi], grown)
    manifest = EvidenceIndex.open(grown).manifest
    assert len(manifest["segments"]) == 4
    assert manifest["corpus_digest"] == EvidenceIndex.open(scratch).manifest["corpus_digest"]
    expected = _results(scratch)
    assert _results(grown) == expected  # corpus-wide BM25 statistics: same ranking, same scores
    merged, notes = compact(grown)
    assert len(merged["segments"]) == 1 and notes == ()
    assert _results(grown) == expected


def test_growing_links_old_segments_and_writes_only_new_ones(tmp_path: Path) -> None:
    docs = _docs()
    ix = tmp_path / "ix"
    ingest(docs[:10], ix)
    first = EvidenceIndex.open(ix)
    seg = first.generation / first.manifest["segments"][0]["name"]
    inode = os.stat(seg / "vectors.npy").st_ino
    ingest(docs[10:20], ix)
    second = EvidenceIndex.open(ix)
    assert second.generation != first.generation
    old_seg = second.generation / first.manifest["segments"][0]["name"]
    assert os.stat(old_seg / "vectors.npy").st_ino == inode  # shared, not copied
    assert [s["chunks"] for s in second.manifest["segments"]][1] == len(second) - len(first)


def test_failed_add_keeps_the_previous_generation(tmp_path: Path) -> None:
    docs = _docs()
    ix = tmp_path / "ix"
    ingest(docs[:20], ix)
    before = _results(ix)

    def fail(_result: object) -> None:
        raise RuntimeError("ledger down")

    with pytest.raises(RuntimeError):
        ingest(docs[20:], ix, on_commit=fail)
    assert _results(ix) == before
    assert sorted(p.name for p in ix.iterdir() if p.name.startswith("gen-")) == ["gen-000001"]


def _unit_encoder(texts: list[str]) -> np.ndarray:
    out = np.stack(
        [
            np.random.default_rng(int(hashlib.sha256(t.encode()).hexdigest()[:8], 16))
            .standard_normal(384)
            .astype(np.float32)
            for t in texts
        ]
    )
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def test_ivfpq_stays_flat_until_it_can_train(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dense_mod, "IVFPQ_MIN_TRAIN", 300)
    docs = [make_document(f"n{i}", f"Note {i} about item {i * 7}.") for i in range(400)]
    ix = tmp_path / "ix"
    first = ingest(docs[:200], ix, index_type="ivfpq", encoder=_unit_encoder)
    assert first.manifest["index_type"] == "flat"
    assert first.manifest["index_type_requested"] == "ivfpq"
    assert "ivfpq needs at least 300 chunks" in first.notes[0]
    second = ingest(docs[200:], ix, encoder=_unit_encoder)  # now large enough: trained
    assert second.manifest["index_type"] == "ivfpq"
    assert "index_type_requested" not in second.manifest
    idx = EvidenceIndex.open(ix)
    assert idx._dense.ntotal == 400 and len(idx.manifest["segments"]) == 1
    hits = idx.search(["item 21"], k=3, mode="lexical")
    assert hits[0][0].chunk.doc_id == "n3"
    # dense hits of an ivfpq index carry exact inner products with the stored vectors
    # rounded to float16 (candidates re-scored from vectors.f16.npy)
    from auditor import embedding

    q = embedding.encode(["Note 3 about item 21."])[0]
    dense_hits = idx.search(["Note 3 about item 21."], k=5, mode="dense")[0]
    half = np.asarray(idx._corpus.vectors).astype(np.float16).astype(np.float32)
    vectors = {c.chunk_id: half[i] for i, c in enumerate(idx.chunks())}
    exact = [float(q @ vectors[h.chunk.chunk_id]) for h in dense_hits]
    np.testing.assert_allclose([h.score for h in dense_hits], exact, rtol=1e-5)
    assert exact == sorted(exact, reverse=True)
    # a growing ivfpq index gets vectors added (no retraining)
    third = ingest([make_document("late", "A late note.")], ix, encoder=_unit_encoder)
    assert third.manifest["index_type"] == "ivfpq" and len(third.manifest["segments"]) == 2
    assert EvidenceIndex.open(ix)._dense.ntotal == 401


def test_growing_from_the_catalogue_equals_reading_every_version(tmp_path: Path) -> None:
    """The same ingests, one index growing from its catalogue (touched documents only),
    the other made to read every version (catalogues removed): same results."""
    docs = _docs()
    fast, full = tmp_path / "fast", tmp_path / "full"
    for lo, hi in ((0, 10), (10, 24), (24, 25), (25, 26), (26, len(docs)), (0, 5)):
        a = ingest(docs[lo:hi], fast)
        removed = [*full.glob("gen-*/seg-*/catalog")]
        for cat in removed:
            shutil.rmtree(cat)
        assert removed or (lo == 0 and hi == 10)  # the first ingest has nothing to remove
        b = ingest(docs[lo:hi], full)
        for field in ("added_versions", "superseded_versions", "unchanged", "retimed_versions"):
            assert getattr(a, field) == getattr(b, field), field
        assert list(a.versions) == list(b.versions)
        for key in ("corpus_digest", "documents", "versions", "chunks"):
            assert a.manifest.get(key) == b.manifest.get(key), key
    assert _results(fast) == _results(full)


def test_rerank_orders_candidates_by_exact_inner_product() -> None:
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((50, 8)).astype(np.float32)
    queries = rng.standard_normal((3, 8)).astype(np.float32)
    cand = np.array([[4, 9, 1, 30, -1], [7, 2, -1, -1, -1], [-1, -1, -1, -1, -1]])
    scores, rows = dense_mod.rerank(_Rows([vectors[:20], vectors[20:]], 8), queries, cand, 3)
    exact = [float(queries[0] @ vectors[r]) for r in (4, 9, 1, 30)]
    best = sorted(zip(exact, (4, 9, 1, 30), strict=True), reverse=True)[:3]
    assert rows[0].tolist() == [r for _, r in best]
    np.testing.assert_allclose(scores[0], [s for s, _ in best], rtol=1e-6)
    assert sorted(rows[1].tolist()[:2]) == [2, 7] and rows[1, 2] == -1
    assert rows[2].tolist() == [-1, -1, -1] and np.isneginf(scores[2]).all()
