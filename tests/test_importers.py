"""``auditor import``: answers from OpenTelemetry spans (written here by the real SDK,
OpenInference and GenAI attributes), Langfuse traces and RAGAS / DeepEval data sets
(fixtures written by the libraries themselves: tests/fixtures/importers/README.md);
their retrieved documents become contexts, their trace ids reach the ledger, and a bad
file is a clean error with nothing written."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from alembic import command
from alembic.config import Config
from google.protobuf.json_format import MessageToJson
from openinference.semconv.trace import (
    DocumentAttributes,
    MessageAttributes,
    OpenInferenceSpanKindValues,
    SpanAttributes,
)
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import format_span_id, format_trace_id
from sqlalchemy import create_engine

from auditor import import_answers
from auditor.answers import load_answers
from auditor.errors import InputError
from ledger import open_ledger
from ledger.schema import migrations_dir
from tests._ledger_runs import Item, begin_audit, build_run
from tests.conftest import RunCli

FIXTURES = Path(__file__).parent / "fixtures" / "importers"
QUESTION = "How many stations does the Ardmore line have?"
ANSWER = "The Ardmore line has 12 stations."
DOCS = ["The Ardmore line opened in 1998 and has 12 stations.", "Trains run every 15 minutes."]


def _provider(*exporters: object) -> TracerProvider:
    provider = TracerProvider()
    for exporter in exporters:
        provider.add_span_processor(SimpleSpanProcessor(exporter))  # type: ignore[arg-type]
    return provider


def _openinference_trace(provider: TracerProvider) -> tuple[str, str]:
    """A RAG chain as OpenInference instruments it: chain, retriever, LLM (trace id, LLM
    span id)."""
    S, M, D = SpanAttributes, MessageAttributes, DocumentAttributes
    kind = OpenInferenceSpanKindValues
    tracer = provider.get_tracer("rag")
    with tracer.start_as_current_span("chain") as chain:
        chain.set_attribute(S.OPENINFERENCE_SPAN_KIND, kind.CHAIN.value)
        chain.set_attribute(S.INPUT_VALUE, QUESTION)
        with tracer.start_as_current_span("retrieve") as retriever:
            retriever.set_attribute(S.OPENINFERENCE_SPAN_KIND, kind.RETRIEVER.value)
            retriever.set_attribute(S.INPUT_VALUE, QUESTION)
            for i, text in enumerate(DOCS):
                prefix = f"{S.RETRIEVAL_DOCUMENTS}.{i}."
                retriever.set_attribute(prefix + D.DOCUMENT_ID, f"doc-{i}")
                retriever.set_attribute(prefix + D.DOCUMENT_CONTENT, text)
                retriever.set_attribute(
                    prefix + D.DOCUMENT_METADATA, json.dumps({"source": f"doc-{i}.md"})
                )
        with tracer.start_as_current_span("llm") as llm:
            llm.set_attribute(S.OPENINFERENCE_SPAN_KIND, kind.LLM.value)
            messages = [("system", "Answer from the context."), ("user", QUESTION)]
            for i, (role, content) in enumerate(messages):
                llm.set_attribute(f"{S.LLM_INPUT_MESSAGES}.{i}.{M.MESSAGE_ROLE}", role)
                llm.set_attribute(f"{S.LLM_INPUT_MESSAGES}.{i}.{M.MESSAGE_CONTENT}", content)
            llm.set_attribute(f"{S.LLM_OUTPUT_MESSAGES}.0.{M.MESSAGE_ROLE}", "assistant")
            llm.set_attribute(f"{S.LLM_OUTPUT_MESSAGES}.0.{M.MESSAGE_CONTENT}", ANSWER)
            llm.set_attribute(S.OUTPUT_VALUE, ANSWER)
        chain.set_attribute(S.OUTPUT_VALUE, ANSWER)
    with tracer.start_as_current_span("GET /health"):  # a trace that is not an answer
        pass
    context = llm.get_span_context()
    return format_trace_id(context.trace_id), format_span_id(context.span_id)


def _genai_trace(provider: TracerProvider) -> tuple[str, str]:
    """A RAG call with the OTel GenAI conventions: a retrieval span and a chat span."""
    tracer = provider.get_tracer("rag")
    with tracer.start_as_current_span("invoke_workflow rag"):
        with tracer.start_as_current_span("retrieval ardmore") as retrieval:
            retrieval.set_attribute("gen_ai.operation.name", "retrieval")
            retrieval.set_attribute("gen_ai.retrieval.query.text", "Ardmore line stations")
            docs = [{"id": f"doc-{i}", "score": 0.9, "content": t} for i, t in enumerate(DOCS)]
            docs.append({"id": "doc-without-text", "score": 0.2})
            retrieval.set_attribute("gen_ai.retrieval.documents", json.dumps(docs))
        with tracer.start_as_current_span("chat gpt-4o") as chat:
            chat.set_attribute("gen_ai.operation.name", "chat")
            chat.set_attribute("gen_ai.request.model", "gpt-4o")
            user = {"role": "user", "parts": [{"type": "text", "content": QUESTION}]}
            chat.set_attribute("gen_ai.input.messages", json.dumps([user]))
            out = {"role": "assistant", "parts": [{"type": "text", "content": ANSWER}]}
            chat.set_attribute("gen_ai.output.messages", json.dumps([out]))
    context = chat.get_span_context()
    return format_trace_id(context.trace_id), format_span_id(context.span_id)


def _legacy_genai_trace(provider: TracerProvider) -> str:
    """The flattened ``gen_ai.prompt.N`` / ``gen_ai.completion.N`` attributes (OpenLLMetry)."""
    with provider.get_tracer("rag").start_as_current_span("openai.chat") as chat:
        chat.set_attribute("gen_ai.operation.name", "chat")
        chat.set_attribute("gen_ai.prompt.0.role", "user")
        chat.set_attribute("gen_ai.prompt.0.content", QUESTION)
        chat.set_attribute("gen_ai.completion.0.role", "assistant")
        chat.set_attribute("gen_ai.completion.0.content", ANSWER)
    return format_trace_id(chat.get_span_context().trace_id)


def test_openinference_spans_written_by_the_sdk(tmp_path: Path) -> None:
    path = tmp_path / "spans.json"
    with path.open("w") as out:  # ConsoleSpanExporter's own format: indented JSON objects
        provider = _provider(ConsoleSpanExporter(out=out))
        trace_id, span_id = _openinference_trace(provider)
        provider.shutdown()
    (answer,) = import_answers("otel", path)
    assert (answer.id, answer.question, answer.answer) == (trace_id, QUESTION, ANSWER)
    assert [(c.id, c.text, c.source) for c in answer.contexts] == [
        ("doc-0", DOCS[0], "doc-0.md"),
        ("doc-1", DOCS[1], "doc-1.md"),
    ]
    assert answer.origin == {"format": "otel", "trace_id": trace_id, "span_id": span_id}


def test_genai_spans_as_otlp_json_and_as_json_lines(tmp_path: Path) -> None:
    memory = InMemorySpanExporter()
    lines = tmp_path / "spans.jsonl"
    with lines.open("w") as out:
        one_per_line = ConsoleSpanExporter(
            out=out, formatter=lambda s: s.to_json(indent=None) + "\n"
        )
        provider = _provider(memory, one_per_line)
        trace_id, span_id = _genai_trace(provider)
        legacy_id = _legacy_genai_trace(provider)
        provider.shutdown()
    spans: tuple[ReadableSpan, ...] = memory.get_finished_spans()
    otlp = tmp_path / "otlp.json"  # OTLP JSON (protobuf's JSON mapping: ids in base64)
    otlp.write_text(MessageToJson(encode_spans(spans)))
    for path in (otlp, lines):
        new, legacy = sorted(import_answers("otel", path), key=lambda a: a.id != trace_id)
        assert (new.id, new.question, new.answer) == (trace_id, QUESTION, ANSWER)
        # a document given by id alone is no evidence text: left to the audit's retrieval
        assert [(c.id, c.text) for c in new.contexts] == [("doc-0", DOCS[0]), ("doc-1", DOCS[1])]
        assert new.origin["span_id"] == span_id
        assert (legacy.id, legacy.question, legacy.answer) == (legacy_id, QUESTION, ANSWER)


@pytest.mark.parametrize(
    "fmt,name,ids",
    [
        ("ragas", "ragas.jsonl", ["ragas-1", "ragas-2"]),
        ("deepeval", "deepeval.json", ["deepeval-1", "deepeval-2"]),
        ("deepeval", "deepeval.jsonl", ["deepeval-1", "deepeval-2"]),
        ("langfuse", "langfuse_traces.json", ["trace-0", "trace-1"]),
        ("langfuse", "langfuse_observations.json", ["trace-0", "trace-1"]),
    ],
)
def test_data_sets_and_langfuse_exports_written_by_the_libraries(
    fmt: str, name: str, ids: list[str]
) -> None:
    first, second = import_answers(fmt, FIXTURES / name)
    assert [first.id, second.id] == ids
    assert (first.question, first.answer) == (QUESTION, ANSWER)
    assert [c.text for c in first.contexts] == DOCS
    assert [c.text for c in second.contexts] == DOCS[:1]
    assert first.origin["format"] == fmt
    if fmt == "langfuse":
        assert first.origin["trace_id"] == "trace-0"
        assert [c.source for c in first.contexts] == ["doc-0.md", "doc-1.md"]
    if fmt == "deepeval":  # DeepEval's RetrievedContextData keeps its source
        assert second.contexts[0].source == "https://example.org/ardmore"


def test_the_command_writes_answer_jsonl_that_audit_reads(tmp_path: Path, run_cli: RunCli) -> None:
    code, out, err = run_cli(["import", "langfuse", str(FIXTURES / "langfuse_traces.json")])
    assert code == 0, err
    written = tmp_path / "answers.jsonl"
    written.write_text(out)
    assert load_answers(written) == import_answers("langfuse", FIXTURES / "langfuse_traces.json")


@pytest.mark.parametrize(
    "fmt,content,message",
    [
        ("ragas", '{"user_input": "q", "response": "a"}\n{"user_input": "q", "resp', "line 2"),
        ("ragas", '{"user_input": "q", "response": "a"}\n{"user_input": "q"}\n', "'response'"),
        ("deepeval", '[{"input": "q", "actual_output": "a"}, {"input": "q"}]', "[1].actual_output"),
        ("deepeval", '[{"input": "q", "actual_output": 3}]', "[0].actual_output"),
        ("langfuse", '[{"id": "t1", "input": "q"}]', "[0].output"),
        ("otel", '{"name": "x", "context": {"trace_id": "nope"}}', "context.trace_id"),
        ("ragas", "", "empty"),
        ("otel", '{"name": "x", "context": {"trace_id": "0x' + "1" * 32 + '", "span_id": "0x'
         + "2" * 16 + '"}}', "no answers"),
        ("spans", "{}", "unknown format 'spans'; choose one of otel, langfuse, ragas, deepeval"),
    ],
)  # fmt: skip
def test_bad_files_are_one_clean_error_and_nothing_is_written(
    tmp_path: Path, run_cli: RunCli, fmt: str, content: str, message: str
) -> None:
    path = tmp_path / "export.json"
    path.write_text(content)
    with pytest.raises(InputError, match=message.replace("[", r"\[")):
        import_answers(fmt, path)
    code, out, err = run_cli(["import", fmt, str(path)])
    assert (code, out) == (2, "")
    assert err.startswith("error: ") and "Traceback" not in err


def test_a_missing_answer_names_the_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "ragas.jsonl"
    path.write_text('{"user_input": "q", "response": "a"}\n{"user_input": "q"}\n')
    with pytest.raises(InputError) as info:
        import_answers("ragas", path)
    assert (info.value.file, info.value.line, info.value.field) == (str(path), 2, "response")


def test_trace_ids_are_kept_in_the_ledger_and_an_older_ledger_migrates(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    run_id, roles, results = build_run(
        "origin", [Item("a1", "The line has 12 stations.", "supported")]
    )
    origin = {"format": "otel", "trace_id": "ab" * 16, "span_id": "cd" * 8}
    with open_ledger(path) as ledger:
        begin_audit(ledger, run_id, roles)
        ledger.record_answers(run_id, [replace(results[0], origin=origin)])
        assert [a["origin"] for a in ledger.run_answers(run_id)] == [origin]
    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    engine = create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.downgrade(config, "0009")
    engine.dispose()
    with open_ledger(path) as ledger:  # upgraded on opening; the answer kept, without origin
        assert [a["origin"] for a in ledger.run_answers(run_id)] == [{}]


@pytest.mark.slow
def test_an_imported_answer_audits_with_its_trace_id_in_the_ledger(tmp_path: Path) -> None:
    from auditor import AuditConfig, Auditor
    from auditor.labels import LabelPolicy
    from auditor.retrieval import EvidenceIndex, ingest
    from auditor.retrieval.documents import make_document

    path = tmp_path / "spans.json"
    with path.open("w") as out:
        provider = _provider(ConsoleSpanExporter(out=out))
        trace_id, span_id = _openinference_trace(provider)
        provider.shutdown()
    answers = import_answers("otel", path)
    ingest([make_document("other", "The Brightwater museum is free.")], tmp_path / "index")
    config = AuditConfig(as_of="2026-06-30", policy=LabelPolicy(label_model=None))
    with (
        open_ledger(tmp_path / "ledger.db") as ledger,
        Auditor(EvidenceIndex.open(tmp_path / "index"), ledger, config=config) as auditor,
    ):
        run = auditor.audit(answers)
        labels = {c["text"]: c["label"] for c in run.claims if c["factual"]}
        assert labels == {"The Ardmore line has 12 stations": "supported"}  # by its context
        (stored,) = ledger.run_answers(run.run_id)
        assert stored["answer_id"] == trace_id
        assert stored["origin"] == {"format": "otel", "trace_id": trace_id, "span_id": span_id}
