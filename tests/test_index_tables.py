"""Binary chunk and version tables: an index opens without parsing its records, a search
reads only the versions it returns, an index written as JSON lines (before the tables)
opens, searches and audits identically, growth / new versions / compact / an HNSW
rebuild keep the tables right, and a damaged table is an error naming its file."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from auditor import AuditConfig, Auditor
from auditor.demo import prepare_sample_index, sample_path
from auditor.errors import AuditorError
from auditor.retrieval import EvidenceIndex, compact, ingest, make_document, store
from auditor.retrieval import tables as tables_mod
from auditor.retrieval.reader import segments_without_tables
from auditor.retrieval.tables import ChunkIds, VersionTable, ids_to_bytes
from tests._ledger_compare import ledger_rows
from tests.test_index_growth import _docs, _results

pytestmark = pytest.mark.slow  # loads the MiniLM encoder

TABLE_FILES = (
    tables_mod.TABLES,
    tables_mod.CHUNK_TABLE,
    tables_mod.CHUNK_IDS,
    tables_mod.VERSION_OFFSETS,
    tables_mod.VERSION_TIMES,
)


def _as_jsonl(ix: Path) -> Path:
    """Rewrite the live generation of ``ix`` in place as the code before the tables wrote
    it: ``chunks.jsonl`` per segment (the same JSON lines), no tables, no has_newer.npy."""
    gen = store.require_generation(ix)
    manifest = store.read_json(gen / store.MANIFEST)
    for entry in manifest["segments"]:
        seg = gen / entry["name"]
        if not (seg / tables_mod.TABLES).is_file():
            continue
        table = np.load(seg / tables_mod.CHUNK_TABLE)
        ids = np.load(seg / tables_mod.CHUNK_IDS)
        # segments are hard-linked between generations: replace files, never edit them
        with open(seg / store.CHUNKS, "w", encoding="utf-8") as fh:
            for cid, (vrow, s, e) in zip(ids, table.tolist(), strict=True):
                rec = {"chunk_id": bytes(cid).hex(), "v": vrow, "start": s, "end": e}
                fh.write(json.dumps(rec) + "\n")
        for name in TABLE_FILES:
            (seg / name).unlink()
    (gen / store.HAS_NEWER).unlink(missing_ok=True)
    return ix


def _is_binary(ix: Path) -> bool:
    idx = EvidenceIndex.open(ix)
    segs = [idx.generation / s["name"] for s in idx.manifest["segments"]]
    return (idx.generation / store.HAS_NEWER).is_file() and all(
        (s / tables_mod.TABLES).is_file() and not (s / store.CHUNKS).exists() for s in segs
    )


def _grown(ix: Path) -> Path:
    docs = _docs()
    for lo, hi in ((0, 10), (10, 20), (20, 25), (25, len(docs))):
        ingest(docs[lo:hi], ix)
    return ix


def test_a_jsonl_index_opens_and_searches_as_its_tables_do(tmp_path: Path) -> None:
    ix = _grown(tmp_path / "tables")
    assert _is_binary(ix)
    old = _as_jsonl(Path(shutil.copytree(ix, tmp_path / "jsonl")))
    assert (store.require_generation(old) / "seg-000001" / store.CHUNKS).is_file()
    assert _results(old) == _results(ix)
    new_idx, old_idx = EvidenceIndex.open(ix), EvidenceIndex.open(old)
    # the as-of times from the stored columns equal those computed from every version
    for name in ("visible_from", "valid_to", "newer_visible_from", "has_newer"):
        np.testing.assert_array_equal(
            getattr(new_idx._times, name), getattr(old_idx._times, name), err_msg=name
        )
    assert new_idx._times.has_newer.sum() >= 3  # the corpus has superseded versions
    assert [str(v.valid_to) for v in new_idx.versions()] == [
        str(v.valid_to) for v in old_idx.versions()
    ]


def test_a_search_reads_only_the_versions_it_returns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ix = _grown(tmp_path / "ix")
    full = {(v.doc_id, v.version): v for v in EvidenceIndex.open(ix).versions()}
    read: list[int] = []
    real = tables_mod._record

    def spy(path: Path, row: int, data: bytes) -> object:
        read.append(row)
        return real(path, row, data)

    monkeypatch.setattr(tables_mod, "_record", spy)
    idx = EvidenceIndex.open(ix)
    assert isinstance(idx._corpus.versions, VersionTable)
    assert isinstance(idx._corpus.chunk_ids, ChunkIds)
    assert read == []  # opening read no version record
    hits = idx.search(["budget grew percent"], k=3, mode="lexical")[0]
    assert len(hits) == 3
    assert len(read) == len({(h.document.doc_id, h.document.version) for h in hits})
    for h in hits:  # what a hit carries is the stored record, made current
        assert h.document == full[(h.document.doc_id, h.document.version)]
        assert h.chunk.text == h.document.text[h.chunk.start : h.chunk.end]
    idx.search(["budget grew percent"], k=3, mode="lexical")
    assert len(read) == len({(h.document.doc_id, h.document.version) for h in hits})


def test_growth_new_versions_compact_and_hnsw_from_a_jsonl_index(tmp_path: Path) -> None:
    docs = _docs()
    scratch = tmp_path / "scratch"
    ingest(docs, scratch)
    ingest(
        [make_document("d5", "The orbit report 5 was withdrawn.", published_at="2030-01-01")],
        scratch,
    )
    expected = _results(scratch)
    # an index written before the tables, two segments, grown by this code
    ix = tmp_path / "ix"
    ingest(docs[:10], ix)
    ingest(docs[10:24], ix)
    _as_jsonl(ix)
    ingest(docs[24:], ix)  # new versions of stored documents, in a binary segment
    ingest(
        [make_document("d5", "The orbit report 5 was withdrawn.", published_at="2030-01-01")], ix
    )
    idx = EvidenceIndex.open(ix)
    gen = idx.generation
    names = [s["name"] for s in idx.manifest["segments"]]
    assert len(names) == 4
    assert [(gen / n / store.CHUNKS).is_file() for n in names] == [True, True, False, False]
    assert segments_without_tables(ix, idx.manifest) == 2  # what `auditor ingest` notes
    assert (gen / store.HAS_NEWER).is_file()  # written from the catalogue
    assert _results(ix) == expected  # mixed segments: the same content and search results
    compact(ix)
    assert _is_binary(ix) and _results(ix) == expected
    assert segments_without_tables(ix, EvidenceIndex.open(ix).manifest) == 0
    ingest([], ix, index_type="hnsw")  # a rebuilding ingest
    assert _is_binary(ix)
    hnsw = _results(ix)
    assert hnsw[:3] == expected[:3]  # versions, chunks, corpus digest
    lexical = slice(3 + 3, 3 + 6)  # dense (3 as-of dates), then lexical (3), then hybrid
    assert hnsw[lexical] == expected[lexical]


def test_the_tables_audit_like_json_lines(tmp_path: Path) -> None:
    """One index folder audited with its tables, then rewritten as JSON lines (same path,
    so the same run id): every ledger row is the same."""
    ix = prepare_sample_index(tmp_path / "index", tmp_path / "corpus.db")
    assert _is_binary(ix)
    config = AuditConfig(as_of=datetime(2026, 6, 30, tzinfo=UTC))
    rows = []
    for name in ("tables.db", "jsonl.db"):
        db = tmp_path / name
        shutil.copyfile(tmp_path / "corpus.db", db)
        with Auditor(ix, db, config=config) as auditor:
            auditor.audit(sample_path("answers.jsonl"))
        rows.append(ledger_rows(db))
        _as_jsonl(ix)
    assert not _is_binary(ix)
    assert rows[0] == rows[1]
    assert len(rows[0]["judge_vote"]) > 0


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ix = tmp_path_factory.mktemp("tables") / "ix"
    ingest(_docs(), ix)
    return ix


def _damage(ix: Path, tmp_path: Path, name: str) -> tuple[Path, Path]:
    copy = Path(shutil.copytree(ix, tmp_path / "damaged"))
    gen = store.require_generation(copy)
    path = gen / name if name == store.HAS_NEWER else gen / "seg-000001" / name
    return copy, path


@pytest.mark.parametrize(
    "name",
    [
        tables_mod.CHUNK_TABLE,
        tables_mod.CHUNK_IDS,
        tables_mod.VERSION_OFFSETS,
        tables_mod.VERSION_TIMES,
        store.VERSIONS,
        store.HAS_NEWER,
    ],
)
def test_a_truncated_table_is_an_error_naming_the_file(
    built: Path, tmp_path: Path, name: str
) -> None:
    ix, path = _damage(built, tmp_path, name)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 9])
    with pytest.raises(AuditorError, match=f"{path.name}.*(damaged|truncated)"):
        EvidenceIndex.open(ix)


def test_a_missing_table_or_newer_table_version_is_an_error_naming_the_file(
    built: Path, tmp_path: Path
) -> None:
    ix, path = _damage(built, tmp_path, tables_mod.VERSION_TIMES)
    path.unlink()
    with pytest.raises(AuditorError, match=tables_mod.VERSION_TIMES):
        EvidenceIndex.open(ix)
    marker = path.parent / tables_mod.TABLES
    meta = json.loads(marker.read_text("utf-8"))
    marker.write_text(json.dumps({**meta, "version": 99}), "utf-8")
    with pytest.raises(AuditorError, match=r"tables\.json: segment table version 99"):
        EvidenceIndex.open(ix)


def test_a_damaged_version_record_is_an_error_when_it_is_read(built: Path, tmp_path: Path) -> None:
    ix, path = _damage(built, tmp_path, store.VERSIONS)
    data = bytearray(path.read_bytes())
    data[:10] = b"#" * 10  # the first record, same length: the offsets still agree
    path.write_bytes(bytes(data))
    idx = EvidenceIndex.open(ix)  # nothing is read at open
    with pytest.raises(AuditorError, match=r"versions\.jsonl: version record 0 is unreadable"):
        idx.versions()


def test_chunk_ids_as_bytes() -> None:
    ids = ["0123456789abcdef0123456789abcdef", "f" * 32]
    raw = ids_to_bytes(ids)
    assert raw is not None and raw.shape == (2, 16)
    table = ChunkIds()
    table.add(raw)
    table.add(["not-hex"])
    assert list(table) == [*ids, "not-hex"] and table[1] == ids[1] and table[-1] == "not-hex"
    assert table.raw() is None  # a segment holding it keeps chunks.jsonl
    assert ids_to_bytes(["0123456789ABCDEF0123456789ABCDEF"]) is None  # upper case: as given
