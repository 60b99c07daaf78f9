"""OpenTelemetry spans: OpenInference (Arize Phoenix) and OTel GenAI conventions.

Reads what ``opentelemetry-sdk`` writes (``ReadableSpan.to_json``: ``ConsoleSpanExporter``
or a file exporter, pretty-printed or one per line), OTLP JSON (``{"resourceSpans":
...}``, as the Collector's file exporter writes it; ids hex or base64) and span lists
(``[...]`` or ``{"data": [...]}``, attributes flat or nested). Spans are grouped by
trace; one answer per trace that has an LLM span (traces without one are not answers
and are left out): the last LLM span with an answer gives the question (its last user
message, else the retriever's query) and the answer (its last assistant message);
every retriever span of the trace gives its documents, in order, as the answer's
contexts. The answer id is the trace id; ``origin`` keeps the trace and span ids.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from auditor.clock import parse_datetime
from auditor.errors import InputError
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

# OpenInference (openinference.semconv.trace.SpanAttributes)
OI_KIND = "openinference.span.kind"
OI_INPUT, OI_OUTPUT = "input.value", "output.value"
OI_INPUT_MESSAGES, OI_OUTPUT_MESSAGES = "llm.input_messages", "llm.output_messages"
OI_DOCUMENTS = "retrieval.documents"
# OTel GenAI semantic conventions
GENAI_OPERATION = "gen_ai.operation.name"
GENAI_INPUT_MESSAGES, GENAI_OUTPUT_MESSAGES = "gen_ai.input.messages", "gen_ai.output.messages"
GENAI_PROMPT, GENAI_COMPLETION = "gen_ai.prompt", "gen_ai.completion"
GENAI_DOCUMENTS, GENAI_QUERY = "gen_ai.retrieval.documents", "gen_ai.retrieval.query.text"
GENAI_LLM_OPERATIONS = frozenset({"chat", "text_completion", "generate_content"})

_HEX = re.compile(r"[0-9a-fA-F]+")


@dataclass(frozen=True)
class Span:
    """One span, as every export format reads: ids as hex, attributes flat."""

    trace_id: str
    span_id: str
    start: float
    attributes: Mapping[str, Any]
    where: Where
    end: float = 0.0
    order: int = 0
    """Its place in the file (ties of time keep file order)."""

    def attribute(self, key: str) -> Where:
        """Where attribute ``key`` of this span is (for errors)."""
        return self.where.at("attributes").at(key)

    @property
    def is_llm(self) -> bool:
        return (
            self.attributes.get(OI_KIND) == "LLM"
            or self.attributes.get(GENAI_OPERATION) in GENAI_LLM_OPERATIONS
        )

    @property
    def is_retriever(self) -> bool:
        return self.attributes.get(OI_KIND) == "RETRIEVER" or (
            self.attributes.get(GENAI_OPERATION) == "retrieval"
        )


def otel_answers(documents: Sequence[tuple[Where, Any]], bad: BadLines) -> AnswerRecords:
    """Answer records from exported spans (see the module doc)."""
    traces: dict[str, list[Span]] = {}
    count = 0
    for where, value in items(documents, "data", "spans"):
        with bad.collect():
            for span in _spans(where, expect_object(value, where)):
                traces.setdefault(span.trace_id, []).append(replace(span, order=count))
                count += 1
    out = []
    for trace_id, spans in traces.items():
        llm = [s for s in spans if s.is_llm]
        if not llm:
            continue
        with bad.collect():
            out.append((min(s.where.line for s in llm), _answer(trace_id, spans, llm)))
    return out


def _spans(where: Where, record: dict[str, Any]) -> list[Span]:
    """The spans of one top-level record: an OTLP ``resourceSpans`` document or a span."""
    if "resourceSpans" in record:
        return _otlp_spans(where, record)
    return [_sdk_span(where, record)]


def _sdk_span(where: Where, record: dict[str, Any]) -> Span:
    """A span as ``ReadableSpan.to_json`` writes it (or Phoenix: ``context`` ids without
    ``0x``, nested attributes)."""
    context = expect_object(record.get("context"), where.at("context"))
    return Span(
        trace_id=_hex_id(context.get("trace_id"), where.at("context").at("trace_id")),
        span_id=_hex_id(context.get("span_id"), where.at("context").at("span_id")),
        start=_iso_time(record.get("start_time")),
        end=_iso_time(record.get("end_time")),
        attributes=_flat(record.get("attributes") or {}),
        where=where,
    )


def _otlp_spans(where: Where, record: dict[str, Any]) -> list[Span]:
    spans = []
    for r, resource in enumerate(_list(record, "resourceSpans", where)):
        at_r = where.at("resourceSpans").at(r)
        resource = expect_object(resource, at_r)
        scopes = "scopeSpans" if "scopeSpans" in resource else "instrumentationLibrarySpans"
        for s, scope in enumerate(_list(resource, scopes, at_r)):
            at_s = at_r.at(scopes).at(s)
            for i, span in enumerate(_list(expect_object(scope, at_s), "spans", at_s)):
                at = at_s.at("spans").at(i)
                span = expect_object(span, at)
                spans.append(
                    Span(
                        trace_id=_hex_id(span.get("traceId"), at.at("traceId")),
                        span_id=_hex_id(span.get("spanId"), at.at("spanId")),
                        start=int(span.get("startTimeUnixNano") or 0) / 1e9,
                        end=int(span.get("endTimeUnixNano") or 0) / 1e9,
                        attributes=_otlp_attributes(span.get("attributes") or [], at),
                        where=at,
                    )
                )
    return spans


def _list(record: dict[str, Any], key: str, where: Where) -> list[Any]:
    value = record.get(key) or []
    if not isinstance(value, list):
        raise where.at(key).error("expected an array")
    return value


def _otlp_attributes(values: Any, where: Where) -> dict[str, Any]:
    """OTLP ``[{"key", "value": {"stringValue": ...}}]`` as a flat dict."""
    if not isinstance(values, list):
        raise where.at("attributes").error("expected an array of {key, value}")
    out = {}
    for i, item in enumerate(values):
        if not isinstance(item, dict) or not isinstance(item.get("key"), str):
            raise where.at("attributes").at(i).error("expected {key, value}")
        out[item["key"]] = _any_value(item.get("value"))
    return _flat(out)


def _any_value(value: Any) -> Any:
    """An OTLP ``AnyValue`` as a plain value."""
    if not isinstance(value, dict):
        return value
    if "arrayValue" in value:
        return [_any_value(v) for v in (value["arrayValue"] or {}).get("values", [])]
    if "kvlistValue" in value:
        pairs = (value["kvlistValue"] or {}).get("values", [])
        return {p.get("key"): _any_value(p.get("value")) for p in pairs if isinstance(p, dict)}
    if "intValue" in value:
        return int(value["intValue"])
    for key in ("stringValue", "boolValue", "doubleValue", "bytesValue"):
        if key in value:
            return value[key]
    return None


def _flat(attributes: Any, prefix: str = "") -> dict[str, Any]:
    """Nested attributes (``{"input": {"value": ...}}``, lists of objects) as dotted keys
    (``input.value``, ``retrieval.documents.0.document.content``); flat ones as they are."""
    if not isinstance(attributes, dict):
        return {}
    out: dict[str, Any] = {}
    for key, value in attributes.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(_flat(value, f"{name}."))
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            out.update(_flat({str(i): v for i, v in enumerate(value)}, f"{name}."))
        else:
            out[name] = value
    return out


def _hex_id(value: Any, where: Where) -> str:
    """A trace or span id as lowercase hex: ``0x``-prefixed or plain hex, or base64 (what
    protobuf's JSON mapping writes for OTLP bytes)."""
    if not isinstance(value, str) or not value:
        raise where.error("missing trace or span id")
    text = value.removeprefix("0x")
    if len(text) in (16, 32) and _HEX.fullmatch(text):
        return text.lower()
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) not in (8, 16):
        raise where.error(f"not a hex or base64 trace or span id: {value!r}")
    return raw.hex()


def _iso_time(value: Any) -> float:
    """A span's ISO start or end time in seconds (0 when absent or unreadable: it only
    orders spans)."""
    if not isinstance(value, str):
        return 0.0
    try:
        when = parse_datetime(value)
    except InputError:
        return 0.0
    return 0.0 if when is None else when.timestamp()


def _indexed(attributes: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    """``prefix.0.x``, ``prefix.1.x`` ... as ``[{"x": ...}, ...]`` (in index order)."""
    found: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        if not key.startswith(f"{prefix}."):
            continue
        index, _, rest = key[len(prefix) + 1 :].partition(".")
        if index.isdigit():
            found.setdefault(int(index), {})[rest] = value
    return [found[i] for i in sorted(found)]


def _json_attribute(value: Any) -> Any:
    """A structured attribute, written as a JSON string (span attributes are scalars)."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def _messages(span: Span, *, inputs: bool) -> list[dict[str, Any]]:
    """The chat messages of an LLM span as ``{"role", "content"}``, in order, from
    whichever convention it uses."""
    attrs = span.attributes
    oi = _indexed(attrs, OI_INPUT_MESSAGES if inputs else OI_OUTPUT_MESSAGES)
    if oi:
        return [_oi_message(m) for m in oi]
    genai = _json_attribute(attrs.get(GENAI_INPUT_MESSAGES if inputs else GENAI_OUTPUT_MESSAGES))
    if isinstance(genai, list):
        return [m for m in genai if isinstance(m, dict)]
    legacy = _indexed(attrs, GENAI_PROMPT if inputs else GENAI_COMPLETION)
    default_role = "user" if inputs else "assistant"
    return [{"role": m.get("role", default_role), "content": m.get("content")} for m in legacy]


def _oi_message(message: Mapping[str, Any]) -> dict[str, Any]:
    """An OpenInference message (``message.role``, ``message.content`` or
    ``message.contents.N.message_content.text``)."""
    content = message.get("message.content")
    if content is None:
        parts = _indexed(message, "message.contents")
        content = [{"type": "text", "text": p.get("message_content.text")} for p in parts]
    return {"role": message.get("message.role"), "content": content}


def _llm_answer(span: Span) -> str | None:
    output = _messages(span, inputs=False)
    if output:
        return text_of(output, role="assistant", keys=ANSWER_KEYS)
    value = span.attributes.get(OI_OUTPUT)
    return text_of(value, role="assistant", keys=ANSWER_KEYS) if value is not None else None


def _llm_question(span: Span) -> str | None:
    messages = _messages(span, inputs=True)
    return text_of(messages, role="user", keys=QUESTION_KEYS) if messages else None


def _retrieval(span: Span) -> tuple[str | None, list[dict[str, Any]]]:
    """A retriever span's query and documents (as contexts)."""
    attrs = span.attributes
    query = attrs.get(GENAI_QUERY) or attrs.get(OI_INPUT)
    oi = _indexed(attrs, OI_DOCUMENTS)
    if oi:
        contexts = []
        for i, doc in enumerate(oi):
            where = span.attribute(f"{OI_DOCUMENTS}.{i}.document.content")
            metadata = _json_attribute(doc.get("document.metadata"))
            contexts.append(
                document_context(
                    {
                        "content": doc.get("document.content"),
                        "id": doc.get("document.id"),
                        "metadata": metadata if isinstance(metadata, dict) else None,
                    },
                    where,
                )
            )
        return _text(query), contexts
    genai = _json_attribute(attrs.get(GENAI_DOCUMENTS))
    if genai is None:
        return _text(query), []
    if not isinstance(genai, list):
        raise span.attribute(GENAI_DOCUMENTS).error("expected a JSON array of documents")
    # a document given by id alone (no text) cannot be evidence: the audit's own
    # retrieval finds it in the index
    with_text = [d for d in genai if not isinstance(d, dict) or "content" in d or "text" in d]
    where = span.attribute(GENAI_DOCUMENTS)
    return _text(query), [document_context(d, where.at(i)) for i, d in enumerate(with_text)]


def _text(value: Any) -> str | None:
    return text_of(value, role="user", keys=QUESTION_KEYS) if value is not None else None


def _answer(trace_id: str, spans: list[Span], llm: list[Span]) -> dict[str, Any]:
    """The answer of one trace (``llm``: its LLM spans)."""
    ordered = sorted(llm, key=lambda s: (s.end or s.start, s.order))
    answered = [s for s in ordered if _llm_answer(s)]
    span = answered[-1] if answered else ordered[-1]
    retrievers = sorted((s for s in spans if s.is_retriever), key=lambda s: (s.start, s.order))
    found = [_retrieval(s) for s in retrievers]
    queries = [q for q, _ in found if q]
    question = _llm_question(span) or (queries[-1] if queries else None)
    return imported_record(
        answer_id=trace_id,
        question=question,
        answer=_llm_answer(span),
        contexts=[c for _, contexts in found for c in contexts],
        origin={"format": "otel", "trace_id": trace_id, "span_id": span.span_id},
        answer_at=span.attribute(
            OI_OUTPUT_MESSAGES if OI_KIND in span.attributes else GENAI_OUTPUT_MESSAGES
        ),
    )
