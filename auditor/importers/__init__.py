"""Answers from where RAG answers live: traces and evaluation data sets.

``import_answers(format, path)`` reads a file of one of :data:`FORMATS` and returns
its answers, each with its retrieved documents as its own contexts and, in
``origin``, where it came from (trace and span ids; format and row), which the
ledger keeps with it. The answers are checked as an answer file is
(:func:`auditor.answers.answers_from_records`), and a file with a bad record is an
error naming the file, line and JSON path of every bad record, with nothing returned.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from auditor.answers import answers_from_records
from auditor.errors import InputError
from auditor.importers._common import AnswerRecords, Where, read_documents
from auditor.importers.evalsets import deepeval_answers, ragas_answers
from auditor.importers.langfuse import langfuse_answers
from auditor.importers.otel import otel_answers
from auditor.jsonl import BadLines
from auditor.types import Answer

Importer = Callable[[Sequence[tuple[Where, Any]], BadLines], AnswerRecords]

FORMATS: dict[str, Importer] = {
    "otel": otel_answers,
    "langfuse": langfuse_answers,
    "ragas": ragas_answers,
    "deepeval": deepeval_answers,
}
"""The formats :func:`import_answers` reads: OpenTelemetry spans (OpenInference and
GenAI conventions), Langfuse traces, RAGAS and DeepEval evaluation data sets."""


def import_answers(format: str, path: str | Path) -> list[Answer]:
    """The answers in ``path``, a file of ``format`` (one of :data:`FORMATS`).

    An unknown format, a file that is not JSON, a record without an answer and a file
    without any answer are errors (:class:`auditor.errors.InputError`; every bad record
    of the file is named, with its line and JSON path).
    """
    importer = FORMATS.get(format.lower())
    if importer is None:
        raise InputError(
            f"unknown format {format!r}; choose one of {', '.join(FORMATS)}", field="format"
        )
    bad = BadLines(path)
    records = importer(read_documents(path, bad), bad)
    answers = answers_from_records(records, source=str(path), bad=bad)
    if not answers:
        raise InputError(f"no answers found in this {format} file", file=str(path))
    return answers


__all__ = ["FORMATS", "import_answers"]
