"""Sentence-aware chunking keeps exact character offsets and unique, stable ids."""

from __future__ import annotations

import numpy as np
import pytest

from auditor.retrieval import chunk_document, chunk_spans, make_document, split_sentences
from auditor.types import DocumentVersion

TEXT = (
    "Dr. Smith visited the U.S. Senate in 1999. He met J. Doe there! Was it useful? "
    '"Yes," he said.\n\n# Notes\n- first point\n- second point\nThe end.'
)


def _versioned(doc: DocumentVersion, label: str = "v1") -> DocumentVersion:
    from dataclasses import replace

    return replace(doc, version=label)


def test_sentences_respect_abbreviations_quotes_and_markdown() -> None:
    got = [TEXT[s:e] for s, e in split_sentences(TEXT)]
    assert got == [
        "Dr. Smith visited the U.S. Senate in 1999.",
        "He met J. Doe there!",
        "Was it useful?",
        '"Yes," he said.',
        "# Notes",
        "- first point",
        "- second point\nThe end.",
    ]


def test_chunks_are_exact_slices_of_whole_sentences() -> None:
    rng = np.random.default_rng(0)
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"]
    sentences = [
        " ".join(rng.choice(words, size=int(rng.integers(3, 30)))).capitalize() + "."
        for _ in range(60)
    ]
    text = "  ".join(sentences)
    sentences_spans = split_sentences(text)
    starts = {s for s, _ in sentences_spans}
    ends = {e for _, e in sentences_spans}
    longest = max(e - s for s, e in sentences_spans)
    assert longest < 400
    for max_chars in (40, 120, 400):
        spans = chunk_spans(text, max_chars)
        assert spans == sorted(spans)
        assert all(e - s <= max_chars for s, e in spans)
        assert all(text[s:e] == text[s:e].strip() for s, e in spans)
        if max_chars >= longest:  # no sentence needs cutting: chunks are whole sentences
            assert all(s in starts and e in ends for s, e in spans)
            assert len(spans) < len(sentences_spans)  # and sentences were packed together
        covered = "".join(text[s:e] for s, e in spans).replace(" ", "")
        assert covered == text.replace(" ", "")


def test_overlong_sentence_is_cut_at_whitespace() -> None:
    text = " ".join(["word"] * 100) + "."
    spans = chunk_spans(text, 50)
    assert len(spans) > 1
    assert all(e - s <= 50 for s, e in spans)
    assert all(
        text[s:e].split() and all(w in ("word", "word.") for w in text[s:e].split())
        for s, e in spans
    )


def test_chunk_ids_are_deterministic_and_unique_across_documents() -> None:
    a = _versioned(make_document("a", TEXT))
    b = _versioned(make_document("b", TEXT))
    a2 = _versioned(make_document("a", TEXT), "v3")
    chunks_a = chunk_document(a, 60)
    assert [c.chunk_id for c in chunks_a] == [c.chunk_id for c in chunk_document(a, 60)]
    ids = [c.chunk_id for doc in (a, b, a2) for c in chunk_document(doc, 60)]
    assert len(ids) == len(set(ids))
    for c in chunks_a:
        assert a.text[c.start : c.end] == c.text
        assert (c.doc_id, c.version, c.digest) == ("a", "v1", a.digest)


def test_chunking_validates_inputs() -> None:
    with pytest.raises(ValueError, match="max_chars"):
        chunk_spans("text", 0)
    with pytest.raises(ValueError, match="no version label"):
        chunk_document(make_document("a", "Text."))
    assert chunk_spans("   \n  ") == []
