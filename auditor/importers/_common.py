"""What every importer shares: reading JSON files (one document, JSON lines, or the
concatenated pretty-printed objects an exporter writes), finding the text in a
message-like value, and building answer records (the answer JSONL format of
:mod:`auditor.answers`) with errors that name the file, line and JSON path."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from auditor.errors import InputError
from auditor.jsonl import BadLines

AnswerRecords = list[tuple[int, dict[str, Any]]]
"""Answer records of the answer JSONL format, each with the line it was read from."""


@dataclass(frozen=True)
class Where:
    """Where a value sits in the file: the line its top-level JSON value starts on and
    the JSON path inside that value (``[2].observations[1].output``)."""

    file: str
    line: int
    path: str = ""

    def at(self, step: str | int) -> Where:
        """The location of a member (``"output"``) or an item (``3``) of this value."""
        if isinstance(step, int):
            return Where(self.file, self.line, f"{self.path}[{step}]")
        return Where(self.file, self.line, f"{self.path}.{step}" if self.path else step)

    def error(self, message: str) -> InputError:
        """An :class:`InputError` naming the file, line and JSON path."""
        return InputError(message, file=self.file, line=self.line, field=self.path or None)


def read_documents(path: str | Path, bad: BadLines) -> list[tuple[Where, Any]]:
    """The top-level JSON values of ``path`` with where each starts: one JSON document,
    JSON lines, or pretty-printed values one after another (what
    ``ConsoleSpanExporter`` writes). A value that is not JSON is recorded in ``bad``
    and reading goes on at the next line that opens an object or array."""
    file = str(path)
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise InputError("no such file", file=file) from None
    except IsADirectoryError:
        raise InputError("is a directory, expected a JSON file", file=file) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", file=file) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"not valid UTF-8 (byte {exc.start})", file=file) from None
    decoder = json.JSONDecoder()
    found: list[tuple[Where, Any]] = []
    pos = 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            break
        line = text.count("\n", 0, pos) + 1
        try:
            value, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            bad.add(
                InputError(
                    f"malformed JSON: {exc.msg} (column {exc.colno})",
                    file=file,
                    line=exc.lineno,
                )
            )
            pos = _next_value_line(text, pos)
            continue
        found.append((Where(file, line), value))
    if not found and not bad:
        raise InputError("no records (the file is empty)", file=file)
    return found


def _next_value_line(text: str, pos: int) -> int:
    """The start of the first line after ``pos`` that opens an object or an array."""
    start = text.find("\n", pos)
    while start != -1:
        if text[start + 1 : start + 2] in ("{", "["):
            return start + 1
        start = text.find("\n", start + 1)
    return len(text)


def items(documents: Sequence[tuple[Where, Any]], *keys: str) -> Iterator[tuple[Where, Any]]:
    """The records of a file: each top-level value, or each item of a top-level array,
    or of the array under one of ``keys`` of a top-level object (``{"data": [...]}``)."""
    for where, value in documents:
        if isinstance(value, dict):
            key = next((k for k in keys if isinstance(value.get(k), list)), None)
            if key is None:
                yield where, value
                continue
            where, value = where.at(key), value[key]
        if isinstance(value, list):
            for i, item in enumerate(value):
                yield where.at(i), item
        else:
            yield where, value


def first(record: Mapping[str, Any], keys: Iterable[str]) -> tuple[str, Any] | tuple[None, None]:
    """The first of ``keys`` that ``record`` holds a non-null value for, with the value."""
    for key in keys:
        if record.get(key) is not None:
            return key, record[key]
    return None, None


QUESTION_KEYS = ("question", "query", "user_input", "input", "prompt", "messages")
"""Where a question sits in an input object (``{"question": ...}``, chat messages...)."""
ANSWER_KEYS = ("answer", "response", "output", "content", "text", "result", "completion")
"""Where an answer sits in an output object."""


def text_of(value: Any, *, role: str, keys: Sequence[str]) -> str | None:
    """The text in a message-like value, or None: a string as it is (a JSON string of an
    object or a list is read as that); of a list of chat messages the last one of
    ``role`` (``user`` or ``assistant``); of a message its ``content`` (text parts
    joined); of any other object the first of ``keys`` it holds."""
    if isinstance(value, str):
        stripped = value.strip()
        if stripped[:1] in ("{", "[") and stripped[-1:] in ("}", "]"):
            try:
                parsed = json.loads(stripped)
            except json.JSONDecodeError:
                return value
            return text_of(parsed, role=role, keys=keys)
        return value
    if isinstance(value, list):
        if value and all(isinstance(v, dict) and "role" in v for v in value):
            mine = [v for v in value if v.get("role") == role]
            return text_of(mine[-1], role=role, keys=keys) if mine else None
        parts = [_part_text(v) for v in value]
        texts = [p for p in parts if p is not None]
        return "\n".join(texts) if texts else None
    if isinstance(value, dict):
        if "role" in value or "parts" in value:
            _, content = first(value, ("content", "parts", "text"))
            return text_of(content, role=role, keys=keys) if content is not None else None
        _, inner = first(value, keys)
        return None if inner is None else text_of(inner, role=role, keys=keys)
    return None


def _part_text(part: Any) -> str | None:
    """The text of one content part: a string, ``{"type": "text", "text"|"content": ...}``."""
    if isinstance(part, str):
        return part
    if isinstance(part, dict) and part.get("type", "text") == "text":
        _, text = first(part, ("text", "content"))
        return text if isinstance(text, str) else None
    return None


DOCUMENT_TEXT_KEYS = ("page_content", "pageContent", "content", "text", "document")
"""Where a retrieved document's text sits (LangChain, LlamaIndex, plain objects)."""


def document_context(document: Any, where: Where) -> dict[str, Any]:
    """One retrieved document as an answer context ``{"id"?, "text", "source"?}``: a
    string, or an object with its text under one of :data:`DOCUMENT_TEXT_KEYS` and an
    ``id`` and ``source`` of its own or in its ``metadata``."""
    if isinstance(document, str):
        return {"text": document}
    if not isinstance(document, dict):
        raise where.error(f"expected a document (a string or an object), got {_kind(document)}")
    key, text = first(document, DOCUMENT_TEXT_KEYS)
    if not isinstance(text, str):
        raise where.at(key or DOCUMENT_TEXT_KEYS[0]).error("missing or non-string document text")
    metadata = document.get("metadata")
    meta = metadata if isinstance(metadata, dict) else {}
    context: dict[str, Any] = {"text": text}
    _, doc_id = first({**meta, **document}, ("id", "doc_id", "document_id"))
    if isinstance(doc_id, str | int):
        context["id"] = str(doc_id)
    _, source = first({**meta, **document}, ("source", "url", "file_path"))
    if isinstance(source, str):
        context["source"] = source
    return context


def unique_contexts(contexts: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Contexts in order without repeats of the same text (a document retrieved twice),
    each with an id of its own (``ctx-<n>`` when it has none; a clash gets ``#<n>``)."""
    seen_text: set[str] = set()
    ids: set[str] = set()
    out: list[dict[str, Any]] = []
    for context in contexts:
        if context["text"] in seen_text:
            continue
        seen_text.add(context["text"])
        base = context.get("id") or f"ctx-{len(out)}"
        ctx_id, n = base, 1
        while ctx_id in ids:
            n += 1
            ctx_id = f"{base}#{n}"
        ids.add(ctx_id)
        out.append({**context, "id": ctx_id})
    return out


def imported_record(
    *,
    answer_id: str,
    question: str | None,
    answer: str | None,
    contexts: Iterable[dict[str, Any]],
    origin: Mapping[str, str],
    answer_at: Where,
) -> dict[str, Any]:
    """An answer record of the answer JSONL format; an answer that was not found is an
    error at ``answer_at`` (where it was looked for)."""
    if answer is None or not answer.strip():
        raise answer_at.error("missing answer (no answer text found)")
    return {
        "id": answer_id,
        "question": question or "",
        "answer": answer,
        "contexts": unique_contexts(contexts),
        "origin": dict(origin),
    }


def expect_object(value: Any, where: Where) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an error naming where it is."""
    if not isinstance(value, dict):
        raise where.error(f"expected an object, got {_kind(value)}")
    return value


def _kind(value: Any) -> str:
    names = {"dict": "an object", "list": "an array", "str": "a string"}
    return names.get(type(value).__name__, repr(value))
