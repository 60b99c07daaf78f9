"""Binary, memory-mapped index tables (version catalogue, BM25 postings) and the
incremental corpus digest: an index in the older JSON form opens, searches and grows
as before, converts (``auditor compact --convert``, or on ``compact``) with the same
hits and scores, and a corpus digest recorded under the old definition still verifies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
from typer.testing import CliRunner

from auditor.cli import _register_commands, app
from auditor.digest import set_hash
from auditor.errors import AuditorError
from auditor.retrieval import EvidenceIndex, compact, convert, ingest, store
from auditor.retrieval import lexical as lexical_mod
from auditor.retrieval import segments as segments_mod
from auditor.retrieval.reader import in_json_form, segments_without_tables
from auditor.retrieval.segments import check_corpus_digest, corpus_digest
from auditor.retrieval.tables import read_strings, write_strings
from tests.test_index_growth import _docs, _results
from tests.test_index_tables import _as_jsonl


def _replace_json(path: Path, obj: Any) -> None:
    """Segments are hard-linked between generations: replace a file, never edit it."""
    path.unlink(missing_ok=True)
    path.write_text(json.dumps(obj), encoding="utf-8")


def _as_old_json(ix: Path) -> dict[str, Any]:
    """Rewrite the live generation of ``ix`` as the code before the binary catalogue,
    postings and corpus digest definition 2 wrote it (on top of :func:`_as_jsonl`: no
    chunk tables); return its manifest."""
    _as_jsonl(ix)
    gen = store.require_generation(ix)
    manifest = store.read_json(gen / store.MANIFEST)
    for entry in manifest["segments"]:
        seg = gen / entry["name"]
        cat = seg / segments_mod.CATALOG
        cols: dict[str, Any] = {
            c: read_strings(cat, c).tolist() for c in segments_mod.STRING_COLUMNS
        }
        cols["file_source"] = [s or None for s in cols["file_source"]]
        cols["offset"] = [
            int(o) for o in np.cumsum([0, *map(len, (seg / store.VERSIONS).open("rb"))])[:-1]
        ]
        _replace_json(seg / store.CATALOG_JSON, cols)
        for f in cat.iterdir():
            f.unlink()
        cat.rmdir()
        (seg / segments_mod.SEGMENT_DIGEST).unlink()
        lex_dir = seg / store.LEXICAL
        lex = lexical_mod.LexicalSegment.load(lex_dir)
        counts, lengths, vocab = lex.counts(), np.array(lex.lengths), list(lex.vocab)
        for f in list(lex_dir.iterdir()):
            f.unlink()
        np.savez(
            lex_dir / lexical_mod.OLD_COUNTS,
            data=counts.data.astype(np.float32),
            indices=counts.indices.astype(np.int32),
            indptr=counts.indptr.astype(np.int64),
            lengths=lengths,
            shape=np.array(counts.shape, dtype=np.int64),
        )
        _replace_json(lex_dir / lexical_mod.OLD_VOCAB, vocab)
    manifest["corpus_digest"] = corpus_digest(gen, manifest, 1)
    del manifest["corpus_digest_version"]
    _replace_json(gen / store.MANIFEST, manifest)
    return dict(manifest)


def _grown(ix: Path) -> Path:
    docs = _docs()
    for lo, hi in ((0, 10), (10, 20), (20, 25), (25, len(docs))):
        ingest(docs[lo:hi], ix)
    return ix


def _content(ix: Path) -> list[object]:
    """:func:`_results` but the manifest's corpus digest (versions, chunks, searches)."""
    out = _results(ix)
    return out[:2] + out[3:]


@pytest.mark.slow  # loads the MiniLM encoder
def test_old_json_index_converts_with_the_same_results(tmp_path: Path) -> None:
    binary = _grown(tmp_path / "binary")
    expected = _content(binary)
    scratch = tmp_path / "scratch"
    ingest(_docs(), scratch)
    v2 = EvidenceIndex.open(scratch).manifest
    assert v2["corpus_digest_version"] == 2
    # definition 2 is a set hash: four segments and one give the same digest
    assert EvidenceIndex.open(binary).manifest["corpus_digest"] == v2["corpus_digest"]

    old = _as_old_json(binary)
    gen = store.require_generation(binary)
    assert all(in_json_form(gen / s["name"]) for s in old["segments"])
    assert segments_without_tables(binary, old) == 4  # what `auditor ingest` notes
    assert _content(binary) == expected  # the JSON form reads as before
    check_corpus_digest(binary, old)  # definition 1, recomputed

    _register_commands()
    result = CliRunner().invoke(app, ["compact", "--convert", "--index", str(binary)])
    assert result.exit_code == 0, result.output
    assert "4 segment(s) converted" in result.output
    idx = EvidenceIndex.open(binary)
    assert idx.manifest == old  # same manifest: same identity in the ledger
    assert segments_without_tables(binary, idx.manifest) == 0
    assert (idx.generation / store.HAS_NEWER).is_file()
    assert _content(binary) == expected  # same hits, same scores
    assert convert(binary) == (old, 0)  # nothing left to convert: no new generation

    compact(binary)
    merged = EvidenceIndex.open(binary).manifest
    assert merged["corpus_digest"] == v2["corpus_digest"]  # the definition changed, recorded
    assert _content(binary) == expected
    check_corpus_digest(binary, old)  # a run recorded under definition 1 still verifies
    check_corpus_digest(binary, merged)
    with pytest.raises(AuditorError, match="definition 2"):
        check_corpus_digest(binary, {**merged, "corpus_digest": "0" * 64})
    with pytest.raises(AuditorError, match="definition 9"):
        check_corpus_digest(binary, {**merged, "corpus_digest_version": 9})


@pytest.mark.slow  # loads the MiniLM encoder
def test_an_old_json_index_grows_and_compacts_to_the_binary_form(tmp_path: Path) -> None:
    docs = _docs()
    ix = tmp_path / "ix"
    ingest(docs[:20], ix)
    _as_old_json(ix)
    ingest(docs[20:], ix)  # grows from the JSON catalogue, adds a binary segment
    idx = EvidenceIndex.open(ix)
    assert [in_json_form(idx.generation / s["name"]) for s in idx.manifest["segments"]] == [
        True,
        False,
    ]
    scratch = tmp_path / "scratch"
    ingest(docs, scratch)
    assert idx.manifest["corpus_digest"] == EvidenceIndex.open(scratch).manifest["corpus_digest"]
    assert _content(ix) == _content(scratch)
    compact(ix)
    idx = EvidenceIndex.open(ix)
    assert not in_json_form(idx.generation / idx.manifest["segments"][0]["name"])
    assert _content(ix) == _content(scratch)


def _reference_scores(texts: list[list[str]], queries: list[str]) -> Any:
    """BM25 as the score-matrix product (``M @ Q.T``) over all texts, the way the index
    computed it before postings were scored per query term."""
    merged = lexical_mod.LexicalSegment.merge(
        [lexical_mod.LexicalSegment.build(t, None) for t in texts]
    )
    counts = merged.counts().tocsc()
    n_docs, n_vocab = counts.shape
    df = np.diff(counts.indptr).astype(np.float64)
    idf = np.log(1.0 + (n_docs - df + 0.5) / (df + 0.5)).astype(np.float32)
    avg = float(merged.lengths.sum()) / max(n_docs, 1)
    norm = 1.5 * (0.25 + 0.75 * merged.lengths.astype(np.float64) / avg)
    tf = counts.data.astype(np.float32)
    cols = np.repeat(np.arange(n_vocab), np.diff(counts.indptr))
    data = (idf[cols].astype(np.float64) * (tf / (norm[counts.indices] + tf))).astype(np.float32)
    matrix = sp.csc_matrix((data, counts.indices, counts.indptr), shape=(n_docs, n_vocab))
    vocab = {t: i for i, t in enumerate(merged.vocab)}
    rows, qcols = [], []
    for r, tokens in enumerate(lexical_mod.tokenize(queries, None)):
        ids = [vocab[t] for t in tokens if t in vocab]
        rows += [r] * len(ids)
        qcols += ids
    q = sp.csr_matrix(
        (np.ones(len(rows), np.float32), (rows, qcols)), shape=(len(queries), n_vocab)
    )
    return np.asarray((matrix @ q.T).T.toarray(), dtype=np.float32)


def test_postings_score_to_the_last_bit_as_the_score_matrix(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    words = [f"term{i}" for i in range(200)] + ["café", "naïve", "zebra"]
    texts = [
        [" ".join(rng.choice(words, size=int(rng.integers(2, 30)))) for _ in range(n)]
        for n in (120, 9, 60)
    ]
    queries = [" ".join(rng.choice(words, size=int(rng.integers(1, 9)))) for _ in range(60)]
    expected = _reference_scores(texts, queries)
    built = [lexical_mod.LexicalSegment.build(t, None) for t in texts]
    for i, seg in enumerate(built):
        seg.save(tmp_path / str(i))
    loaded = [lexical_mod.LexicalSegment.load(tmp_path / str(i)) for i in range(len(texts))]
    assert isinstance(loaded[0].tf, np.memmap)  # read lazily
    tokens = lexical_mod.tokenize(queries, None)
    for segs in (built, loaded, [lexical_mod.LexicalSegment.merge(loaded)]):
        index = lexical_mod.LexicalIndex.from_segments(segs, None)
        assert index._scorer is not None
        got = index._scorer.scores(tokens)
        assert np.array_equal(got, expected)
    assert loaded[0].column("café") == built[0].column("café") >= 0
    assert loaded[0].column("absent") == -1


def test_string_columns_and_a_damaged_one(tmp_path: Path) -> None:
    values = ["a", "", "café", "zz" * 50]
    write_strings(tmp_path, "col", values)
    col = read_strings(tmp_path, "col", 4)
    assert list(col) == values and col[2] == "café" and col[-1] == values[-1]
    assert col[1:3] == values[1:3]
    with pytest.raises(AuditorError, match=r"col\.offsets\.npy: 4 values, expected 5"):
        read_strings(tmp_path, "col", 5)
    data = (tmp_path / "col.npy").read_bytes()
    (tmp_path / "col.npy").write_bytes(data[:-3])
    with pytest.raises(AuditorError, match=r"col\.npy.*damaged"):
        read_strings(tmp_path, "col")


def test_set_hash_is_a_sum_over_parts_in_any_order() -> None:
    items = [f'["d{i}","v1","{i:064x}"]' for i in range(50)]
    whole = set_hash(items)
    parts = set_hash(items[:17]) + set_hash(items[17:][::-1])
    assert np.array_equal(whole, parts)
    assert not np.array_equal(whole, set_hash(items[:-1]))
