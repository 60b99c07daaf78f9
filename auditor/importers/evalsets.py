"""RAGAS and DeepEval evaluation data sets: one answer per row.

RAGAS (``EvaluationDataset.to_jsonl``/``to_list``, or a Hugging Face data set's JSON
lines): ``user_input``/``question``, ``response``/``answer``,
``retrieved_contexts``/``contexts``. DeepEval (``EvaluationDataset.save_as("json" |
"jsonl")``): ``input``, ``actual_output``, ``retrieval_context`` (DeepEval's JSON lines
join the list with ``|``; a ``deepeval_source=...,deepeval_context=...`` item keeps its
source). A row's id is its ``id`` (DeepEval: or ``name``), else ``<format>-<row>``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from auditor.importers._common import (
    AnswerRecords,
    Where,
    expect_object,
    first,
    imported_record,
    items,
)
from auditor.jsonl import BadLines


@dataclass(frozen=True)
class EvalSetFields:
    """The columns of one evaluation data set format, each by preference."""

    name: str
    ids: tuple[str, ...]
    questions: tuple[str, ...]
    answers: tuple[str, ...]
    contexts: tuple[str, ...]
    joined_by: str | None = None
    """The separator of a context list written as one string (DeepEval's JSON lines)."""


RAGAS = EvalSetFields(
    "ragas",
    ids=("id",),
    questions=("user_input", "question"),
    answers=("response", "answer"),
    contexts=("retrieved_contexts", "contexts"),
)
DEEPEVAL = EvalSetFields(
    "deepeval",
    ids=("id", "name"),
    questions=("input",),
    answers=("actual_output", "actualOutput"),
    contexts=("retrieval_context", "retrievalContext"),
    joined_by="|",
)

_DEEPEVAL_SOURCE, _DEEPEVAL_CONTEXT = "deepeval_source=", ",deepeval_context="


def ragas_answers(documents: Sequence[tuple[Where, Any]], bad: BadLines) -> AnswerRecords:
    """Answer records from a RAGAS data set (see the module doc)."""
    return _rows(documents, bad, RAGAS)


def deepeval_answers(documents: Sequence[tuple[Where, Any]], bad: BadLines) -> AnswerRecords:
    """Answer records from a DeepEval data set (see the module doc)."""
    return _rows(documents, bad, DEEPEVAL)


def _rows(
    documents: Sequence[tuple[Where, Any]], bad: BadLines, spec: EvalSetFields
) -> AnswerRecords:
    out = []
    for row, (where, value) in enumerate(items(documents, "samples", "test_cases", "goldens"), 1):
        with bad.collect():
            out.append((where.line, _row(row, where, expect_object(value, where), spec)))
    return out


def _row(row: int, where: Where, record: dict[str, Any], spec: EvalSetFields) -> dict[str, Any]:
    _, row_id = first(record, spec.ids)
    _, question = first(record, spec.questions)
    answer_key, answer = first(record, spec.answers)
    if answer is not None and not isinstance(answer, str):
        raise where.at(answer_key or "").error(f"expected a string, got {type(answer).__name__}")
    return imported_record(
        answer_id=str(row_id) if isinstance(row_id, str | int) else f"{spec.name}-{row}",
        question=question if isinstance(question, str) else None,
        answer=answer,
        contexts=_contexts(record, where, spec),
        origin={"format": spec.name, "row": str(row)},
        answer_at=where.at(answer_key or spec.answers[0]),
    )


def _contexts(record: dict[str, Any], where: Where, spec: EvalSetFields) -> list[dict[str, Any]]:
    key, value = first(record, spec.contexts)
    if value is None:
        return []
    if isinstance(value, str) and spec.joined_by is not None:
        value = value.split(spec.joined_by) if value else []
    if not isinstance(value, list):
        raise (where.at(key or "")).error("expected a list of strings")
    contexts = []
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise where.at(key or "").at(i).error("expected a string")
        contexts.append(_deepeval_context(item) if spec is DEEPEVAL else {"text": item})
    return contexts


def _deepeval_context(item: str) -> dict[str, Any]:
    """A DeepEval retrieval context item; ``deepeval_source=S,deepeval_context=T`` (how
    DeepEval writes one with a source) is the text T from S."""
    if item.startswith(_DEEPEVAL_SOURCE) and _DEEPEVAL_CONTEXT in item:
        source, text = item[len(_DEEPEVAL_SOURCE) :].split(_DEEPEVAL_CONTEXT, 1)
        return {"text": text, "source": source}
    return {"text": item}
