"""Ingest: versions, digests, idempotence, supersession, atomic generation swaps."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from auditor.errors import AuditorError, InputError
from auditor.retrieval import EvidenceIndex, IngestResult, ingest, make_document, store

pytestmark = pytest.mark.slow  # loads the MiniLM encoder

DOCS = [
    make_document(
        "tower", "The Eiffel Tower is in Paris. It opened in 1889.", published_at="2020-01-01"
    ),
    make_document("berlin", "Berlin is the capital of Germany. It has many museums."),
    make_document(
        "moon", "The Moon orbits the Earth about every 27 days.", valid_from="2021-06-01"
    ),
]


def _live(index_dir: Path) -> str:
    return (index_dir / "CURRENT").read_text().strip()


def test_first_ingest_builds_index_with_manifest(tmp_path: Path) -> None:
    from auditor import embedding

    result = ingest(DOCS, tmp_path / "ix")
    assert [v.version for v in result.added_versions] == ["v1", "v1", "v1"]
    assert result.unchanged == () and result.superseded_versions == ()
    assert {c.doc_id for c in result.chunks} == {"tower", "berlin", "moon"}
    m = result.manifest
    assert (m["embedding_model"], m["embedding_digest"]) == (
        embedding.MODEL_NAME,
        embedding.model_digest(),
    )
    assert (m["dimension"], m["index_type"]) == (384, "flat")
    assert (m["documents"], m["versions"], m["chunks"]) == (3, 3, len(result.chunks))
    idx = EvidenceIndex.open(tmp_path / "ix")
    assert idx.manifest == m
    assert [c.chunk_id for c in idx.chunks()] == [c.chunk_id for c in result.chunks]
    assert {v.doc_id: v.digest for v in idx.versions()} == {d.doc_id: d.digest for d in DOCS}


def test_reingest_unchanged_changes_nothing(tmp_path: Path) -> None:
    ix = tmp_path / "ix"
    ingest(DOCS, ix)
    before = _live(ix)
    seen: list[IngestResult] = []
    result = ingest(DOCS, ix, on_commit=seen.append)
    assert not result.changed and result.chunks == () and len(result.unchanged) == 3
    assert _live(ix) == before
    assert len(EvidenceIndex.open(ix).versions()) == 3
    assert len(seen) == 1 and seen[0].added_versions == ()


def test_changed_text_adds_version_and_supersedes(tmp_path: Path) -> None:
    ix = tmp_path / "ix"
    ingest(DOCS, ix)
    new = make_document("tower", "The Eiffel Tower is in Lyon now.", published_at="2024-03-01")
    result = ingest([new], ix)
    assert [(v.doc_id, v.version) for v in result.added_versions] == [("tower", "v2")]
    (old,) = result.superseded_versions
    assert old.version == "v1" and old.superseded
    assert old.valid_to == datetime(2024, 3, 1, tzinfo=UTC)
    versions = {(v.doc_id, v.version): v for v in EvidenceIndex.open(ix).versions()}
    assert versions[("tower", "v1")].superseded and versions[("tower", "v1")].text == DOCS[0].text
    assert not versions[("tower", "v2")].superseded
    # an explicit valid_to is kept; an explicit label is used
    gone = make_document("berlin", "Berlin: capital.", version="2025", valid_from="2025-01-01")
    with pytest.raises(InputError, match="undated"):  # berlin v1 is undated: order unknown
        ingest([gone], ix)
    ingest([gone], ix, undated_order="oldest")
    versions = {(v.doc_id, v.version): v for v in EvidenceIndex.open(ix).versions()}
    assert versions[("berlin", "v1")].valid_to == datetime(2025, 1, 1, tzinfo=UTC)
    assert ("berlin", "2025") in versions


def test_version_label_conflict_is_refused_and_nothing_changes(tmp_path: Path) -> None:
    ix = tmp_path / "ix"
    ingest([make_document("a", "First text.", version="r1")], ix)
    before = _live(ix)
    with pytest.raises(InputError, match="already exists"):
        ingest([make_document("a", "Other text.", version="r1")], ix)
    assert _live(ix) == before


def test_on_commit_error_keeps_previous_index(tmp_path: Path) -> None:
    ix = tmp_path / "ix"
    ingest(DOCS, ix)
    before = _live(ix)
    hits_before = EvidenceIndex.open(ix).search(["Eiffel Tower"], k=3)

    def fail(result: IngestResult) -> None:
        assert result.manifest["versions"] == 4  # called with the fully built generation
        raise RuntimeError("ledger down")

    with pytest.raises(RuntimeError, match="ledger down"):
        ingest(
            [make_document("tower", "Changed text.", published_at="2024-01-01")], ix, on_commit=fail
        )
    assert _live(ix) == before
    assert sorted(p.name for p in ix.iterdir()) == [".lock", "CURRENT", before]
    idx = EvidenceIndex.open(ix)
    assert len(idx.versions()) == 3
    hits_after = idx.search(["Eiffel Tower"], k=3)
    assert [h.chunk.chunk_id for h in hits_after[0]] == [h.chunk.chunk_id for h in hits_before[0]]


def test_crash_during_swap_leaves_previous_index_usable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ix = tmp_path / "ix"
    ingest(DOCS, ix)
    before = _live(ix)
    real_replace = store.os.replace

    def crash_on_pointer(src: object, dst: object) -> None:
        if str(dst).endswith("CURRENT"):
            raise OSError("simulated crash before CURRENT is replaced")
        real_replace(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr(store.os, "replace", crash_on_pointer)
    with pytest.raises(OSError, match="simulated crash"):
        ingest([make_document("new", "A brand new document.")], ix)
    monkeypatch.undo()
    # the new generation folder may exist, but CURRENT still names the complete old one
    assert _live(ix) == before
    assert {v.doc_id for v in EvidenceIndex.open(ix).versions()} == {"tower", "berlin", "moon"}
    # a half-written temp folder from a crash is ignored, then cleaned by the next ingest
    (ix / ".tmp-deadbeef").mkdir()
    (ix / ".tmp-deadbeef" / "manifest.json").write_text("{")
    result = ingest([make_document("new", "A brand new document.")], ix)
    assert result.changed
    assert not (ix / ".tmp-deadbeef").exists()
    assert {v.doc_id for v in EvidenceIndex.open(ix).versions()} == {
        "tower",
        "berlin",
        "moon",
        "new",
    }


def test_open_refuses_other_embedding_model_and_non_index(tmp_path: Path) -> None:
    ix = tmp_path / "ix"
    ingest(DOCS[:1], ix)
    manifest_path = ix / _live(ix) / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest_path.write_text(json.dumps({**manifest, "embedding_digest": "0" * 64}))
    with pytest.raises(AuditorError, match="different weights"):
        EvidenceIndex.open(ix)
    manifest_path.write_text(json.dumps({**manifest, "embedding_model": "other/model"}))
    with pytest.raises(AuditorError, match="other/model"):
        EvidenceIndex.open(ix)
    with pytest.raises(AuditorError, match="other/model"):
        ingest(DOCS[1:], ix)  # nor does ingest mix embeddings
    (tmp_path / "plain").mkdir()
    with pytest.raises(AuditorError, match="not an evidence index"):
        EvidenceIndex.open(tmp_path / "plain")
    with pytest.raises(AuditorError, match="no such evidence index"):
        EvidenceIndex.open(tmp_path / "missing")
    (tmp_path / "plain" / "notes.txt").write_text("mine")
    with pytest.raises(AuditorError, match="not empty"):
        ingest(DOCS, tmp_path / "plain")


@pytest.mark.parametrize("index_type", ["hnsw", "ivf"])
def test_approximate_index_types_and_switching(tmp_path: Path, index_type: str) -> None:
    ix = tmp_path / "ix"
    docs = [
        make_document(f"d{i}", f"Fact number {i} is about topic {i % 7} and item {i}.")
        for i in range(80)
    ]
    ingest(docs[:60], ix, index_type=index_type)
    idx = EvidenceIndex.open(ix)
    assert idx.manifest["index_type"] == index_type
    assert (ix / _live(ix) / "dense.faiss").is_file()
    ingest(docs[60:], ix)  # default keeps the existing type and extends it
    idx = EvidenceIndex.open(ix)
    assert idx.manifest["index_type"] == index_type and len(idx) == 80
    hits = idx.search(["Fact number 70 is about topic 0 and item 70."], k=1, mode="dense")
    assert hits[0][0].chunk.doc_id == "d70"
    ingest([], ix, index_type="flat")  # switching type rebuilds without re-encoding
    assert EvidenceIndex.open(ix).manifest["index_type"] == "flat"
    with pytest.raises(AuditorError, match="index_type"):
        ingest([], ix, index_type="lsh")


def test_identical_chunk_texts_are_embedded_once(tmp_path: Path) -> None:
    from auditor import embedding

    calls: list[list[str]] = []

    def encoder(texts: list[str]):  # the real model, recording what it is asked
        calls.append(list(texts))
        return embedding.encode(texts)

    docs = [
        make_document(f"copy{i}", "The same sentence in several documents.") for i in range(4)
    ] + [make_document("other", "A different sentence.")]
    result = ingest(docs, tmp_path / "ix", encoder=encoder)
    assert len(result.chunks) == 5
    assert calls == [["The same sentence in several documents.", "A different sentence."]]
    hits = EvidenceIndex.open(tmp_path / "ix").search(["same sentence"], k=5, mode="dense")[0]
    copies = [h for h in hits if h.chunk.doc_id.startswith("copy")]
    assert len(copies) == 4 and len({round(h.score, 5) for h in copies}) == 1
