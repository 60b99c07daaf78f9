"""Sentence-aware chunking with character offsets into the document text.

Every chunk is ``text[start:end]`` of its document version exactly: chunks are
packed from whole sentences up to ``max_chars``; a sentence longer than that is
cut at whitespace. Chunk ids are derived from the document id, version label,
version digest and offsets, so they are deterministic and globally unique.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from auditor.digest import sha256_text
from auditor.types import Chunk, DocumentVersion, Span

DEFAULT_MAX_CHARS = 600
"""Default chunk length limit (about 120-150 word pieces, under MiniLM's 256)."""

# A sentence ends after . ! ? (optionally closed by quotes/brackets) followed by
# whitespace, or at a line break that ends a paragraph, heading or list item.
_BOUNDARY = re.compile(r"[.!?][\"'”’)\]]*(?P<ws>\s+)|\n\s*\n|\n(?=\s*(?:[#>*\-+]|\d+[.)]\s))")
_ABBREVIATIONS = frozenset(
    {
        "mr",
        "mrs",
        "ms",
        "dr",
        "prof",
        "sr",
        "jr",
        "st",
        "vs",
        "etc",
        "e.g",
        "i.e",
        "inc",
        "ltd",
        "co",
        "corp",
        "fig",
        "al",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
        "u.s",
        "u.k",
        "approx",
    }
)
_WORD_BEFORE = re.compile(r"([\w.]+)[.!?][\"'”’)\]]*$")


def split_sentences(text: str) -> list[Span]:
    """Sentence spans ``[start, end)`` of ``text`` (whitespace trimmed, none empty)."""
    if not isinstance(text, str):
        raise TypeError(f"text: expected str, got {type(text).__name__}")
    spans: list[Span] = []
    start = 0
    for match in _BOUNDARY.finditer(text):
        cut = match.start("ws") if match.group("ws") is not None else match.start()
        if _is_abbreviation(text, start, cut) and "\n" not in match.group():
            continue
        spans.extend(_trim(text, start, cut))
        start = match.end()
    spans.extend(_trim(text, start, len(text)))
    return spans


def chunk_spans(text: str, max_chars: int = DEFAULT_MAX_CHARS) -> list[Span]:
    """Chunk spans of ``text``: whole sentences packed greedily up to ``max_chars``."""
    if not isinstance(max_chars, int) or isinstance(max_chars, bool) or max_chars < 16:
        raise ValueError(f"max_chars: expected an integer >= 16, got {max_chars!r}")
    pieces: list[Span] = []
    for start, end in split_sentences(text):
        if end - start <= max_chars:
            pieces.append((start, end))
        else:
            pieces.extend(_cut_long(text, start, end, max_chars))
    chunks: list[Span] = []
    cur_start, cur_end = -1, -1
    for start, end in pieces:
        if cur_start < 0:
            cur_start, cur_end = start, end
        elif end - cur_start <= max_chars:
            cur_end = end
        else:
            chunks.append((cur_start, cur_end))
            cur_start, cur_end = start, end
    if cur_start >= 0:
        chunks.append((cur_start, cur_end))
    return chunks


def chunk_id(doc_id: str, version: str, digest: str, start: int, end: int) -> str:
    """Deterministic, globally unique id of a chunk (32 hex characters)."""
    return sha256_text(f"{doc_id}\x00{version}\x00{digest}\x00{start}\x00{end}")[:32]


def chunk_document(doc: DocumentVersion, max_chars: int = DEFAULT_MAX_CHARS) -> list[Chunk]:
    """The chunks of one document version, in text order."""
    if not doc.version:
        raise ValueError(f"document {doc.doc_id!r} has no version label yet")
    return [
        Chunk(
            chunk_id=chunk_id(doc.doc_id, doc.version, doc.digest, start, end),
            doc_id=doc.doc_id,
            version=doc.version,
            digest=doc.digest,
            start=start,
            end=end,
            text=doc.text[start:end],
        )
        for start, end in chunk_spans(doc.text, max_chars)
    ]


def chunk_documents(
    docs: Sequence[DocumentVersion], max_chars: int = DEFAULT_MAX_CHARS
) -> list[Chunk]:
    """The chunks of several document versions, document by document."""
    return [chunk for doc in docs for chunk in chunk_document(doc, max_chars)]


def _is_abbreviation(text: str, start: int, cut: int) -> bool:
    match = _WORD_BEFORE.search(text, max(start, cut - 32), cut)
    if match is None:
        return False
    word = match.group(1).lower().rstrip(".")
    if word in _ABBREVIATIONS:
        return True
    # single initials ("J. Smith") and dotted acronyms ("U.S.") do not end sentences
    return len(word) == 1 and word.isalpha() and match.group(0).endswith(".")


def _trim(text: str, start: int, end: int) -> list[Span]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return [(start, end)] if end > start else []


def _cut_long(text: str, start: int, end: int, max_chars: int) -> list[Span]:
    """Cut an over-long sentence at the last whitespace before each limit."""
    out: list[Span] = []
    while end - start > max_chars:
        limit = start + max_chars
        cut = text.rfind(" ", start + max_chars // 2, limit)
        if cut <= start:
            cut = limit
        out.extend(_trim(text, start, cut))
        start = cut
        while start < end and text[start].isspace():
            start += 1
    out.extend(_trim(text, start, end))
    return out
