"""Evidence sentences are embedded once, at ingest: the index stores the sentences of
each multi-sentence chunk (the judges' split) with their vectors, an audit encodes no
evidence text from the index, an index written before they were stored still audits
(encoding them, as before) to the same votes and labels, and growth, supersession,
rebuilds and compaction keep the sentence rows with their chunks."""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from auditor import AuditConfig, Auditor, embedding
from auditor.demo import prepare_sample_index, sample_path
from auditor.retrieval import EvidenceIndex, compact, ingest, load_documents, make_document, store
from auditor.text import sentence_spans, sentences
from auditor.types import DocumentVersion
from tests._ledger_compare import ledger_rows, same
from tests.conftest import RunCli

pytestmark = pytest.mark.slow  # loads the MiniLM encoder

CONFIG = AuditConfig(as_of=datetime(2026, 6, 30, tzinfo=UTC))


def _corpus() -> list[DocumentVersion]:
    return load_documents([sample_path("corpus.jsonl")])


def test_sentence_spans_are_the_judges_sentences() -> None:
    rng = random.Random(7)
    pieces = ["Word", "word", "3", ".", "!", "?", " ", "  ", "\n", "\t", "\u00a0", '"', "(", "É"]
    texts = [d.text for d in _corpus()] + [
        "",
        "   ",
        "One.",
        "  Padded start. Padded end.  ",
        'No break here.lower case. Two  spaces.\n\nNew paragraph! Done? (Yes) "Quoted." 3 x',
        "Tab\tbefore. After\u00a0nbsp. Ünïcode first? É next.",
        *("".join(rng.choice(pieces) for _ in range(rng.randint(1, 40))) for _ in range(2000)),
    ]
    for text in texts:
        spans = sentence_spans(text)
        assert [text[s:e] for s, e in spans] == sentences(text), repr(text)


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("sentvec")
    return prepare_sample_index(work / "index", work / "corpus.db")


def _check_aligned(idx: EvidenceIndex) -> tuple[int, int]:
    """Every stored sentence row belongs to its chunk: the texts are the judges'
    sentences of the chunk text, the vectors the encoder's. Returns (chunks with
    stored sentences, of which multi-sentence)."""
    texts: list[str] = []
    stored: list[np.ndarray] = []
    known = multi = 0
    for row, chunk in enumerate(idx.chunks()):
        got = idx.sentences(row)
        if got is None:
            continue
        known += 1
        multi += len(got[0]) > 1
        assert got[0] == sentences(chunk.text), chunk.chunk_id
        assert got[1].shape == (len(got[0]), embedding.EMBEDDING_DIM)
        texts.extend(got[0])
        stored.append(got[1])
    if texts:
        fresh = embedding.encode(texts, cache=False)
        np.testing.assert_allclose(np.concatenate(stored), fresh, atol=2e-5)
    return known, multi


def test_ingest_stores_every_multi_sentence_chunks_sentences(index: Path) -> None:
    idx = EvidenceIndex.open(index)
    assert idx.stores_sentences
    known, multi = _check_aligned(idx)
    assert known == len(idx) and multi >= 10  # the sample chunks are mostly multi-sentence
    seg = idx.generation / idx.manifest["segments"][0]["name"]
    rows = np.load(seg / store.SENTENCE_SPANS)
    vectors = np.load(seg / store.SENTENCES)
    assert idx.manifest["segments"][0]["sentences"] == len(rows) == len(vectors)


def _evidence_texts(idx: EvidenceIndex) -> set[str]:
    return {t for c in idx.chunks() for t in (c.text, *sentences(c.text))}


@pytest.fixture
def encoded(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every text the MiniLM model is run on (from a clean text cache)."""
    seen: list[str] = []
    real = embedding._run_model

    def spy(texts: list[str], batch_size: int) -> Any:
        seen.extend(texts)
        return real(texts, batch_size)

    embedding.clear_cache()
    monkeypatch.setattr(embedding, "_run_model", spy)
    yield seen
    embedding.clear_cache()


def _audit(index: Path, db: Path) -> Any:
    with Auditor(index, db, config=CONFIG) as auditor:
        return auditor.audit(sample_path("answers.jsonl"))


def _inline_texts() -> set[str]:
    out: set[str] = set()
    for line in sample_path("answers.jsonl").read_text("utf-8").splitlines():
        for ctx in json.loads(line).get("contexts", []):
            out.update([ctx["text"], *sentences(ctx["text"])])
    return out


def test_audit_encodes_no_evidence_from_the_index(
    index: Path, tmp_path: Path, encoded: list[str]
) -> None:
    run = _audit(index, tmp_path / "ledger.db")
    # a claim that names nothing is also encoded with its answer's topic
    claims = {c["text"] for c in run.claims} | {
        f"{c['text']} ({c['topic']})" for c in run.claims if c["topic"]
    }
    evidence = _evidence_texts(EvidenceIndex.open(index)) - claims - _inline_texts()
    assert encoded, "the claims are encoded"
    assert not set(encoded) & evidence  # no chunk or chunk sentence was encoded again
    # what was encoded: the claims and the one answer's own (inline) context
    assert set(encoded) <= claims | _inline_texts()
    assert set(encoded) & claims


def _strip_sentences(src: Path, dst: Path) -> Path:
    """A copy of the index as written before sentence embeddings were stored."""
    shutil.copytree(src, dst)
    gen = store.require_generation(dst)
    manifest = store.read_json(gen / store.MANIFEST)
    for entry in manifest["segments"]:
        del entry["sentences"]
        (gen / entry["name"] / store.SENTENCES).unlink()
        (gen / entry["name"] / store.SENTENCE_SPANS).unlink()
    (gen / store.MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    return dst


def test_an_index_without_sentences_audits_the_same_by_encoding_them(
    index: Path, tmp_path: Path, encoded: list[str]
) -> None:
    old = _strip_sentences(index, tmp_path / "old-index")
    old_idx = EvidenceIndex.open(old)
    assert not old_idx.stores_sentences and old_idx.sentences(0) is None
    new = _audit(index, tmp_path / "new.db")
    assert not set(encoded) & (_evidence_texts(old_idx) - _inline_texts())
    embedding.clear_cache()
    before = len(encoded)
    fallback = _audit(old, tmp_path / "old.db")
    # the fallback encodes evidence sentences at audit time (what the stored rows spare)
    re_encoded = set(encoded[before:]) & (_evidence_texts(old_idx) - _inline_texts())
    assert len(re_encoded) >= 10
    assert [(c["id"], c["label"], c["reason"]) for c in new.claims] == [
        (c["id"], c["label"], c["reason"]) for c in fallback.claims
    ]
    # the run ids differ (the runs name different index folders); everything else agrees
    rows_new = _without(ledger_rows(tmp_path / "new.db"), new.run_id)
    rows_old = _without(ledger_rows(tmp_path / "old.db"), fallback.run_id)
    for table in ("answer", "claim", "retrieval", "judge_vote", "verdict"):
        assert len(rows_new[table]) == len(rows_old[table]) > 0, table
        assert same(rows_new[table], rows_old[table]), table


def _without(rows: dict[str, list[tuple[Any, ...]]], run_id: str) -> dict[str, list[Any]]:
    """The rows with the run id replaced by a placeholder."""
    return {
        table: sorted((tuple("<run>" if v == run_id else v for v in row) for row in rs), key=repr)
        for table, rs in rows.items()
    }


def test_growth_supersession_rebuild_and_compact_keep_sentence_rows_aligned(
    tmp_path: Path, encoded: list[str]
) -> None:
    docs = _corpus()
    ix = tmp_path / "index"
    ingest(docs[:12], ix)
    ingest(docs[12:], ix)
    # a new version of a stored document, and one dated before it (inserted in between)
    fares = next(d for d in docs if d.doc_id == "nw-fares")
    ingest(
        [
            make_document(
                "nw-fares",
                "A single adult fare costs 3.10 dollars. Children under twelve travel free. "
                "A monthly pass costs 95 dollars.",
                published_at="2026-01-10",
            ),
            make_document(
                "nw-fares",
                "Fares were frozen for 2025. A monthly pass still costs 88 dollars.",
                published_at="2025-02-01",
            ),
        ],
        ix,
    )
    idx = EvidenceIndex.open(ix)
    assert len(idx.manifest["segments"]) == 3 and idx.stores_sentences
    chain = [v for v in idx.versions() if v.doc_id == "nw-fares"]
    assert len(chain) >= 3 and chain[0].superseded and fares.digest in {v.digest for v in chain}
    known, multi = _check_aligned(idx)
    assert known == len(idx) and multi > 0
    # a search over the three segments hands every returned chunk's sentences over
    embedding.clear_cache()
    hits = idx.search(["What does a monthly pass cost?"], k=len(idx), mode="dense")
    assert len(hits[0]) == len(idx)
    del encoded[:]
    for row in range(len(idx)):
        texts, vectors = idx.sentences(row)  # type: ignore[misc]
        np.testing.assert_allclose(embedding.encode(texts), vectors, atol=2e-5)
    assert encoded == []
    before = {c.chunk_id: idx.sentences(r) for r, c in enumerate(idx.chunks())}

    def same_rows(other: EvidenceIndex) -> None:
        assert len(other) == len(before)
        for row, chunk in enumerate(other.chunks()):
            got, want = other.sentences(row), before[chunk.chunk_id]
            assert got is not None and want is not None
            assert got[0] == want[0]
            np.testing.assert_allclose(got[1], want[1], atol=2e-5)

    compact(ix)  # one segment: rows carried, not re-encoded
    merged = EvidenceIndex.open(ix)
    assert len(merged.manifest["segments"]) == 1
    same_rows(merged)
    ingest([], ix, index_type="hnsw")  # a rebuilding ingest (another index type)
    same_rows(EvidenceIndex.open(ix))
    assert _check_aligned(EvidenceIndex.open(ix))[0] == len(before)


def test_an_old_index_grown_mixes_then_compact_adds_the_missing_sentences(
    tmp_path: Path, encoded: list[str]
) -> None:
    docs = _corpus()
    src = tmp_path / "src"
    ingest(docs[:20], src)
    ix = _strip_sentences(src, tmp_path / "old")
    ingest(
        [*docs[20:], make_document("nw-lines", "The network has 52 stations. It runs six lines.")],
        ix,
        undated_order="newest",
    )
    idx = EvidenceIndex.open(ix)
    n_old = idx.manifest["segments"][0]["chunks"]
    assert not idx.stores_sentences
    assert all(idx.sentences(r) is None for r in range(n_old))
    known, multi = _check_aligned(idx)
    assert known == len(idx) - n_old > 0 and multi > 0
    # a search hands the new segment's stored sentence vectors to the encoder's cache
    embedding.clear_cache()
    query = "How many stations does the network have?"
    hits = idx.search([query], k=len(idx), mode="dense")
    assert len(hits[0]) == len(idx)
    del encoded[:]
    for row in range(n_old, len(idx)):
        texts, vectors = idx.sentences(row)  # type: ignore[misc]
        np.testing.assert_allclose(embedding.encode(texts), vectors, atol=2e-5)
    assert encoded == []  # looked up, not encoded
    old_texts = [t for r in range(n_old) for t in sentences(idx.chunk(r).text)]
    embedding.encode(old_texts)  # the old segment's sentences: encoded when needed
    assert set(encoded) == set(old_texts) - {idx.chunk(r).text for r in range(len(idx))}
    embedding.clear_cache()
    compact(ix)
    done = EvidenceIndex.open(ix)
    assert done.stores_sentences
    assert _check_aligned(done)[0] == len(done) == len(idx)


def test_ingest_says_when_old_segments_lack_sentences_and_compact_fixes_it(
    index: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    old = _strip_sentences(index, tmp_path / "old")
    more = tmp_path / "more.jsonl"
    more.write_text(
        json.dumps({"id": "new-doc", "text": "A new line opens. It has four stations."}) + "\n",
        encoding="utf-8",
    )
    db = str(tmp_path / "l.db")
    code, _, err = run_cli(["ingest", str(more), "--index", str(old), "--db", db])
    assert code == 0
    assert "1 segment(s) of the index were written before" in err and "auditor compact" in err
    assert run_cli(["compact", "--index", str(old)])[0] == 0
    assert EvidenceIndex.open(old).stores_sentences
    more.write_text(json.dumps({"id": "other", "text": "Another. Two."}) + "\n", encoding="utf-8")
    code, _, err = run_cli(["ingest", str(more), "--index", str(old), "--db", db])
    assert code == 0 and "written before" not in err
