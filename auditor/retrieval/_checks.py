"""Argument checks of the evidence index's entry points
(:func:`~auditor.retrieval.ingestion.ingest`, :meth:`~auditor.retrieval.search.EvidenceIndex.open`
and :meth:`~auditor.retrieval.search.EvidenceIndex.search`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from auditor.errors import AuditorError, InputError
from auditor.types import DocumentVersion


def _check_docs(docs: Sequence[DocumentVersion]) -> list[DocumentVersion]:
    if isinstance(docs, DocumentVersion) or not isinstance(docs, Sequence):
        raise AuditorError("docs: expected a sequence of DocumentVersion")
    for i, doc in enumerate(docs):
        if not isinstance(doc, DocumentVersion):
            raise AuditorError(f"docs[{i}]: expected a DocumentVersion, got {type(doc).__name__}")
        if not doc.text.strip():
            raise InputError(f"document {doc.doc_id!r} has empty text", field="text")
    return list(docs)


def _check_queries(queries: Sequence[str]) -> list[str]:
    if isinstance(queries, str) or not isinstance(queries, Sequence):
        raise AuditorError(
            f"queries: expected a sequence of strings (a list), not {type(queries).__name__}"
        )
    for i, q in enumerate(queries):
        if not isinstance(q, str):
            raise AuditorError(f"queries[{i}]: expected a string, got {type(q).__name__}")
    return list(queries)


def _check_positive(name: str, value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise AuditorError(f"{name}: expected a positive integer, got {value!r}")
    return value
