"""Evidence index: versioned, timestamped, digested documents with dense, lexical and
hybrid retrieval and an as-of cutoff (docs/labels.md).

Typical use::

    docs = load_documents([Path("corpus.jsonl")])
    result = ingest(docs, Path(".auditor/index"))
    hits = EvidenceIndex.open(Path(".auditor/index")).search(["claim text"], k=5)
"""

from auditor.retrieval.asof import as_of_masks, version_times, visible_start
from auditor.retrieval.chunking import (
    DEFAULT_MAX_CHARS,
    chunk_document,
    chunk_documents,
    chunk_id,
    chunk_spans,
    split_sentences,
)
from auditor.retrieval.compaction import compact, convert
from auditor.retrieval.dense import INDEX_TYPES
from auditor.retrieval.documents import load_documents, make_document
from auditor.retrieval.ingestion import IngestResult, ingest
from auditor.retrieval.reader import check_manifest, read_versions
from auditor.retrieval.search import (
    DEFAULT_CANDIDATE_DEPTH,
    DEFAULT_RRF_K,
    MODES,
    EvidenceIndex,
    rrf_fuse,
)

__all__ = [
    "DEFAULT_CANDIDATE_DEPTH",
    "DEFAULT_MAX_CHARS",
    "DEFAULT_RRF_K",
    "INDEX_TYPES",
    "MODES",
    "EvidenceIndex",
    "IngestResult",
    "as_of_masks",
    "check_manifest",
    "chunk_document",
    "chunk_documents",
    "chunk_id",
    "chunk_spans",
    "compact",
    "convert",
    "ingest",
    "load_documents",
    "make_document",
    "read_versions",
    "rrf_fuse",
    "split_sentences",
    "version_times",
    "visible_start",
]
