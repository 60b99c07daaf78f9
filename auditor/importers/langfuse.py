"""Langfuse traces: the public API's JSON (``GET /api/public/traces/{id}``: a trace with
its ``observations``; ``GET /api/public/traces``: ``{"data": [...]}``; ``GET
/api/public/v2/observations``: observations with their ``traceId``), a list of those,
or JSON lines of them.

One answer per trace: the question is the trace's ``input`` (else its root
observation's, else its last generation's), the answer its ``output`` (likewise); the
output of every retrieval observation (type ``RETRIEVER``, or a name with ``retriev``
in it: LangChain's retrievers) gives its documents, in order, as the answer's contexts.
The answer id is the trace id; ``origin`` keeps the trace id and the id of the
observation the answer came from.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from auditor.importers._common import (
    ANSWER_KEYS,
    QUESTION_KEYS,
    AnswerRecords,
    Where,
    document_context,
    expect_object,
    imported_record,
    items,
    text_of,
)
from auditor.jsonl import BadLines

DOCUMENT_LIST_KEYS = ("documents", "docs", "contexts", "results")
"""Where a retrieval output object holds its documents (``{"documents": [...]}``)."""


def langfuse_answers(documents: Sequence[tuple[Where, Any]], bad: BadLines) -> AnswerRecords:
    """Answer records from a Langfuse export (see the module doc)."""
    traces: dict[str, tuple[Where, dict[str, Any]]] = {}
    observations: dict[str, list[tuple[Where, dict[str, Any]]]] = {}
    for where, value in items(documents, "data"):
        with bad.collect():
            record = expect_object(value, where)
            if "traceId" in record and "type" in record:  # an observation on its own
                observations.setdefault(str(record["traceId"]), []).append((where, record))
                continue
            trace_id = record.get("id")
            if not isinstance(trace_id, str) or not trace_id:
                raise where.at("id").error("missing trace id")
            traces[trace_id] = (where, record)
            nested = record.get("observations") or []
            if not isinstance(nested, list):
                raise where.at("observations").error("expected an array")
            for i, item in enumerate(nested):  # the trace list gives observation ids only
                if isinstance(item, dict):
                    at = where.at("observations").at(i)
                    observations.setdefault(trace_id, []).append((at, item))
    out = []
    for trace_id in dict.fromkeys([*traces, *observations]):
        trace = traces.get(trace_id)
        where = trace[0] if trace else observations[trace_id][0][0]
        with bad.collect():
            answer = _answer(trace_id, trace, observations.get(trace_id, []))
            out.append((where.line, answer))
    return out


def _answer(
    trace_id: str,
    trace: tuple[Where, dict[str, Any]] | None,
    observations: list[tuple[Where, dict[str, Any]]],
) -> dict[str, Any]:
    ordered = sorted(observations, key=lambda o: str(o[1].get("startTime") or ""))
    roots = [o for o in ordered if not o[1].get("parentObservationId")]
    generations = [o for o in ordered if o[1].get("type") == "GENERATION"]
    # where the question and answer are looked for, in order
    sources = [*([trace] if trace else []), *roots[:1], *generations[-1:]]
    question = next(
        (q for _, r in sources if (q := _value(r, "input", "user", QUESTION_KEYS))), None
    )
    answered = [(w, r) for w, r in sources if _value(r, "output", "assistant", ANSWER_KEYS)]
    where, record = answered[0] if answered else sources[0]
    contexts = [
        context
        for at, observation in ordered
        if _is_retrieval(observation)
        for context in _documents(observation.get("output"), at.at("output"))
    ]
    origin = {"format": "langfuse", "trace_id": trace_id}
    if record is not (trace[1] if trace else None):
        origin["span_id"] = str(record.get("id"))
    return imported_record(
        answer_id=trace_id,
        question=question,
        answer=_value(record, "output", "assistant", ANSWER_KEYS),
        contexts=contexts,
        origin=origin,
        answer_at=where.at("output"),
    )


def _value(record: dict[str, Any], key: str, role: str, keys: Sequence[str]) -> str | None:
    value = record.get(key)
    return None if value is None else text_of(value, role=role, keys=keys)


def _is_retrieval(observation: dict[str, Any]) -> bool:
    name = str(observation.get("name") or "").lower()
    return observation.get("type") == "RETRIEVER" or "retriev" in name


def _documents(output: Any, where: Where) -> list[dict[str, Any]]:
    """A retrieval observation's output as contexts: a list of documents (strings or
    objects), or an object holding one under :data:`DOCUMENT_LIST_KEYS`."""
    if output is None:
        return []
    if isinstance(output, dict):
        key = next((k for k in DOCUMENT_LIST_KEYS if isinstance(output.get(k), list)), None)
        if key is None:
            return [document_context(output, where)]
        output, where = output[key], where.at(key)
    if not isinstance(output, list):
        return [document_context(output, where)]
    return [document_context(d, where.at(i)) for i, d in enumerate(output)]
