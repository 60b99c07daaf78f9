"""An ivfpq index grows by per-segment codes: an add encodes only its new chunks and
writes nothing to older segments, a search over the segments' memory-mapped lists
equals a search of the same codes held together, candidates are re-scored from the
float16 vectors, and an index kept in one ``dense.faiss`` still reads and grows.
Flat search over several segments is bit-identical to one index of every vector."""

from __future__ import annotations

import hashlib
import json
import mmap
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import faiss
import numpy as np
import pytest
from numpy.typing import NDArray

from auditor import embedding
from auditor.errors import AuditorError
from auditor.retrieval import EvidenceIndex, compact, ingest, make_document, store
from auditor.retrieval import dense as dense_mod
from auditor.retrieval.corpus import _Rows
from auditor.types import DocumentVersion

DIM = 384
CENTRES = np.random.default_rng(5).standard_normal((12, DIM)).astype(np.float32)


def _vector(text: str) -> NDArray[np.float32]:
    """A unit vector near one of 12 centres, fixed by the text (clustered, like text
    embeddings: near neighbours exist and the PQ codes must tell them apart)."""
    seed = int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)
    rng = np.random.default_rng(seed)
    v = CENTRES[seed % len(CENTRES)] + 0.6 * rng.standard_normal(DIM).astype(np.float32)
    return (v / np.linalg.norm(v)).astype(np.float32)


def _encoder(texts: list[str]) -> NDArray[np.float32]:
    return np.stack([_vector(t) for t in texts])


QUERIES = {f"query {i}": i for i in range(24)}
"""Query texts, each a perturbed copy of the vector of document ``e{7 * i}``."""


def _fake_encode(texts: list[str], *args: Any, **kwargs: Any) -> NDArray[np.float32]:
    out = []
    for t in texts:
        if t in QUERIES:
            v = _vector(_text(7 * QUERIES[t])) + 0.05 * np.random.default_rng(
                QUERIES[t]
            ).standard_normal(DIM).astype(np.float32)
            out.append(v / np.linalg.norm(v))
        else:
            out.append(_vector(t))
    return np.stack(out).astype(np.float32)


def _text(i: int) -> str:
    return f"Entry {i} records reading {i * 13} at station {i % 17}."


def _docs(lo: int, hi: int) -> list[DocumentVersion]:
    return [
        make_document(f"e{i}", _text(i), published_at=f"{2000 + i % 20}-03-01")
        for i in range(lo, hi)
    ]


@pytest.fixture
def grown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An ivfpq index trained at its first ingest (400 chunks), then grown by three."""
    monkeypatch.setattr(dense_mod, "IVFPQ_MIN_TRAIN", 300)
    monkeypatch.setattr(embedding, "encode", _fake_encode)
    ix = tmp_path / "ix"
    ingest(_docs(0, 400), ix, index_type="ivfpq", encoder=_encoder)
    for lo in (400, 500, 600):
        ingest(_docs(lo, lo + 100), ix, encoder=_encoder)
    yield ix
    embedding.clear_cache()


def _files(folder: Path) -> dict[str, tuple[int, int, int]]:
    """Every file under ``folder``: inode, size, modification time (ns)."""
    out = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            st = path.stat()
            out[str(path.relative_to(folder))] = (st.st_ino, st.st_size, st.st_mtime_ns)
    return out


def test_an_add_encodes_its_chunks_only_and_leaves_older_segments_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dense_mod, "IVFPQ_MIN_TRAIN", 300)
    ix = tmp_path / "ix"
    first = ingest(_docs(0, 400), ix, index_type="ivfpq", encoder=_encoder)
    assert first.manifest["index_type"] == "ivfpq"
    assert first.manifest["dense_trained"] == "seg-000001"
    before: dict[str, dict[str, tuple[int, int, int]]] = {}
    for lo in (400, 500, 600):
        gen = store.require_generation(ix)
        names = [e["name"] for e in store.read_json(gen / store.MANIFEST)["segments"]]
        before = {name: _files(gen / name) for name in names}
        result = ingest(_docs(lo, lo + 100), ix, encoder=_encoder)
        assert result.notes == ()
        new_gen = store.require_generation(ix)
        assert not (new_gen / store.DENSE).exists()
        for name, files in before.items():  # same files (hard links), no byte written
            assert _files(new_gen / name) == files, name
        new_seg = new_gen / result.manifest["segments"][-1]["name"]
        assert (new_seg / store.IVF_LISTS).is_file() and (new_seg / store.VECTORS_F16).is_file()
        assert not (new_seg / store.IVF_TRAINED).exists()  # the trained index is stored once
        assert result.manifest["dense_trained"] == "seg-000001"
    idx = EvidenceIndex.open(ix)
    assert len(idx.manifest["segments"]) == 4 and idx._dense.ntotal == 700
    # the new segment's lists hold its 100 chunks, numbered after the 600 before them
    lists = faiss.read_InvertedLists(
        faiss.FileIOReader(str(idx.generation / "seg-000004" / store.IVF_LISTS)), 0
    )
    ids = np.concatenate(
        [faiss.rev_swig_ptr(lists.get_ids(i), lists.list_size(i)) for i in range(lists.nlist)]
    )
    assert sorted(ids.tolist()) == list(range(600, 700))


def _together(idx: EvidenceIndex) -> Any:
    """The trained index holding every segment's codes in one set of inverted lists
    (read and merged in segment order: the same codes, copied together)."""
    gen = idx.generation
    index = faiss.read_index(str(gen / idx.manifest["dense_trained"] / store.IVF_TRAINED))
    for entry in idx.manifest["segments"]:
        lists = faiss.read_InvertedLists(
            faiss.FileIOReader(str(gen / entry["name"] / store.IVF_LISTS)), 0
        )
        index.invlists.merge_from(lists, 0)
    index.ntotal = len(idx)
    return index


def _before(version: DocumentVersion, when: datetime) -> bool:
    return version.published_at is not None and version.published_at <= when


def _half(idx: EvidenceIndex) -> NDArray[np.float32]:
    """Every stored vector rounded to float16 and widened again."""
    return np.asarray(idx._corpus.vectors).astype(np.float16).astype(np.float32)


def test_segments_searched_together_equal_the_same_codes_in_one_index(grown: Path) -> None:
    idx = EvidenceIndex.open(grown)
    together = _together(idx)
    half = _half(idx)
    texts = list(QUERIES)
    qvec = _fake_encode(texts)
    as_of = datetime(2009, 6, 1, tzinfo=UTC)
    visible_v = np.array([_before(v, as_of) for v in idx._corpus.versions])
    for mask in (None, visible_v[idx._corpus.chunk_version]):
        for depth in (10, 50):
            got = dense_mod.search(idx._dense, "ivfpq", qvec, depth, mask)
            want = dense_mod.search(together, "ivfpq", qvec, depth, mask)
            assert np.array_equal(got[1], want[1]) and np.array_equal(got[0], want[0])
    for k in (1, 5, 10):
        for when, mask in ((None, None), (as_of, visible_v[idx._corpus.chunk_version])):
            hits = idx.search(texts, k, mode="dense", as_of=when)
            _, cand = dense_mod.search(together, "ivfpq", qvec, k * dense_mod.RERANK_FACTOR, mask)
            exact = np.einsum("qd,qkd->qk", qvec, half[np.clip(cand, 0, None)])
            exact[cand < 0] = -np.inf
            for q, row_hits in enumerate(hits):
                assert len(row_hits) == k  # k visible chunks, not k minus the hidden ones
                order = np.lexsort((cand[q], -exact[q]))[:k]
                rows = [idx._corpus.chunk_ids.index(h.chunk.chunk_id) for h in row_hits]
                assert rows == cand[q][order].tolist()
                np.testing.assert_allclose(
                    [h.score for h in row_hits], exact[q][order], rtol=0, atol=1e-6
                )
                if mask is not None:
                    assert all(_before(h.document, as_of) for h in row_hits)


def test_rescored_hits_carry_float16_inner_products(grown: Path) -> None:
    idx = EvidenceIndex.open(grown)
    half, full = _half(idx), np.asarray(idx._corpus.vectors)
    texts = list(QUERIES)
    qvec = _fake_encode(texts)
    ids = idx._corpus.chunk_ids
    for q, hits in enumerate(idx.search(texts, 10, mode="dense")):
        rows = [ids.index(h.chunk.chunk_id) for h in hits]
        scores = np.array([h.score for h in hits])
        # the score is the float32 product of the query with the float16-rounded vector
        np.testing.assert_allclose(scores, half[rows] @ qvec[q], rtol=0, atol=1e-6)
        assert np.all(np.diff(scores) <= 0)
        # ... which is within float16 rounding of the float32 product
        assert np.max(np.abs(scores - full[rows] @ qvec[q])) < 2e-3
    # the vectors stay in their segments' memory-mapped files (nothing concatenated)
    for rows_ in (idx._corpus.vectors, idx._corpus.half):
        assert isinstance(rows_, _Rows) and len(rows_.parts) == 4
        assert all(_mapped(p) for p in rows_.parts)


def _mapped(a: NDArray[Any]) -> bool:
    """Whether ``a`` is a view of a memory-mapped file."""
    base: Any = a
    while base is not None:
        if isinstance(base, (mmap.mmap, np.memmap)):
            return True
        base = getattr(base, "base", None)
    return False


def _to_single_file(ix: Path) -> None:
    """Rewrite the live generation as an older one: one dense.faiss, no per-segment
    codes or float16 vectors, no ``dense_trained`` in the manifest."""
    gen = store.require_generation(ix)
    manifest = store.read_json(gen / store.MANIFEST)
    index = faiss.read_index(str(gen / manifest.pop("dense_trained") / store.IVF_TRAINED))
    vectors = np.concatenate(
        [np.load(gen / e["name"] / store.VECTORS) for e in manifest["segments"]]
    )
    index.add(vectors)
    faiss.write_index(index, str(gen / store.DENSE))
    for name in (store.IVF_TRAINED, store.IVF_LISTS, store.VECTORS_F16):
        for path in gen.glob(f"seg-*/{name}"):
            path.unlink()
    (gen / store.MANIFEST).write_text(json.dumps(manifest))


def test_an_index_in_one_dense_file_reads_and_grows_as_before(grown: Path) -> None:
    _to_single_file(grown)
    idx = EvidenceIndex.open(grown)
    assert idx._corpus.half is None  # re-scored from the float32 vectors, as before
    texts = list(QUERIES)
    qvec = _fake_encode(texts)
    full = np.asarray(idx._corpus.vectors)
    ids = idx._corpus.chunk_ids
    for q, hits in enumerate(idx.search(texts, 5, mode="dense")):
        rows = [ids.index(h.chunk.chunk_id) for h in hits]
        np.testing.assert_allclose([h.score for h in hits], full[rows] @ qvec[q], rtol=0, atol=1e-6)
    result = ingest(_docs(700, 720), grown, encoder=_encoder)
    assert "keeps one dense.faiss" in result.notes[0] and "compact" in result.notes[0]
    gen = store.require_generation(grown)
    assert (gen / store.DENSE).is_file() and "dense_trained" not in result.manifest
    assert not list(gen.glob(f"seg-*/{store.VECTORS_F16}"))
    assert EvidenceIndex.open(grown)._dense.ntotal == 720
    manifest, _ = compact(grown)  # stored per segment again
    gen = store.require_generation(grown)
    assert manifest["dense_trained"] == manifest["segments"][0]["name"]
    assert not (gen / store.DENSE).exists()
    again = EvidenceIndex.open(grown)
    assert again._dense.ntotal == 720 and again._corpus.half is not None
    hits = again.search(["query 3"], 1, mode="dense")
    assert hits[0][0].chunk.doc_id == "e21"


def test_compact_merges_and_retrains_per_segment_codes(grown: Path) -> None:
    before = EvidenceIndex.open(grown).search(list(QUERIES), 1, mode="dense")
    manifest, _ = compact(grown)
    assert len(manifest["segments"]) == 1
    assert manifest["index_params"]["nlist"] == dense_mod.ivf_nlist(700)  # retrained on all
    after = EvidenceIndex.open(grown).search(list(QUERIES), 1, mode="dense")
    # each query's own document is its best hit, before and after
    assert [h[0].chunk.doc_id for h in after] == [h[0].chunk.doc_id for h in before]
    assert [h[0].chunk.doc_id for h in after] == [f"e{7 * i}" for i in QUERIES.values()]


def test_damaged_segment_codes_are_an_error_naming_the_file(grown: Path) -> None:
    gen = store.require_generation(grown)
    path = gen / "seg-000004" / store.IVF_LISTS
    data = path.read_bytes()
    path.unlink()  # a new file: the older generation's link is gone already
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(AuditorError, match=r"seg-000004/ivfpq\.lists\.faiss"):
        EvidenceIndex.open(grown)
    path.unlink()
    with pytest.raises(AuditorError, match=r"seg-000004/ivfpq\.lists\.faiss"):
        EvidenceIndex.open(grown)
    (gen / "seg-000004" / store.VECTORS_F16).unlink()
    path.write_bytes(data)
    idx = EvidenceIndex.open(grown)  # float16 vectors missing in a segment: float32 used
    assert idx._corpus.half is None


def test_flat_search_over_segments_is_bit_identical_to_one_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embedding, "encode", _fake_encode)
    ix = tmp_path / "ix"
    for lo, hi in ((0, 150), (150, 230), (230, 301)):
        ingest(_docs(lo, hi), ix, encoder=_encoder)
    idx = EvidenceIndex.open(ix)
    assert len(idx.manifest["segments"]) == 3
    assert all(_mapped(p) for p in idx._corpus.vectors.parts)  # no concatenated copy
    gen = idx.generation
    one = faiss.IndexFlatIP(DIM)
    one.add(
        np.concatenate([np.load(gen / e["name"] / store.VECTORS) for e in idx.manifest["segments"]])
    )
    mask = np.arange(len(idx)) % 3 != 0
    for n_queries in (1, 7, 24):  # FAISS scores one query at a time below 20, with BLAS above
        qvec = _fake_encode(list(QUERIES)[:n_queries])
        for m in (None, mask):
            got = dense_mod.search(idx._dense, "flat", qvec, 10, m)
            want = dense_mod.search(one, "flat", qvec, 10, m)
            assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    embedding.clear_cache()


@pytest.mark.skipif(not Path("/proc/self/smaps").is_file(), reason="reads Linux smaps")
def test_vector_files_are_mapped_for_random_reads(grown: Path) -> None:
    idx = EvidenceIndex.open(grown)
    flags: dict[str, str] = {}
    current = ""
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split()
        if "-" in head[0] and len(head) >= 6 and str(idx.generation) in head[-1]:
            current = head[-1]
        elif line.startswith("VmFlags:") and current:
            flags[current] = line
            current = ""
    mapped = {Path(p).name for p in flags}
    assert {store.VECTORS, store.VECTORS_F16} <= mapped
    # madvise(MADV_RANDOM) shows as "rr": no read-ahead around the rows a search reads
    assert all(" rr" in f for p, f in flags.items() if Path(p).name.startswith("vectors"))
