"""Loading RAG answers to audit (JSONL), with errors naming file, line and field."""

from __future__ import annotations

from pathlib import Path

from auditor.errors import InputError
from auditor.jsonl import parse_datetime, read_jsonl, require
from auditor.types import Answer, Context


def load_answers(path: str | Path) -> list[Answer]:
    """Read answer lines ``{"id", "question", "answer", "contexts"?, "as_of"?}``.

    ``contexts`` is an optional list of ``{"id", "text", "source"?, "published_at"?}``;
    a context without an id gets ``ctx-<n>`` (its position). Duplicate answer ids
    are an error. Nothing is partially returned: the first bad line raises.
    """
    answers: list[Answer] = []
    seen: dict[str, int] = {}
    file = str(path)
    for line, record in read_jsonl(path):
        answer_id = require(record, "id", (str, int), file=file, line=line)
        answer_id = str(answer_id)
        if not answer_id.strip():
            raise InputError("must not be empty", file=file, line=line, field="id")
        if answer_id in seen:
            raise InputError(f"duplicate answer id {answer_id!r} (first on line "
                             f"{seen[answer_id]})", file=file, line=line, field="id")
        seen[answer_id] = line
        question = require(record, "question", str, file=file, line=line, optional=True) or ""
        text = require(record, "answer", str, file=file, line=line)
        contexts = _contexts(record.get("contexts"), file=file, line=line)
        as_of = parse_datetime(record.get("as_of"), file=file, line=line, field="as_of")
        answers.append(Answer(id=answer_id, question=question, answer=text,
                              contexts=contexts, as_of=as_of))
    return answers


def _contexts(value: object, *, file: str, line: int) -> tuple[Context, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise InputError("expected a list of objects", file=file, line=line, field="contexts")
    contexts = []
    for i, item in enumerate(value):
        where = f"contexts[{i}]"
        if not isinstance(item, dict):
            raise InputError("expected an object", file=file, line=line, field=where)
        text = item.get("text")
        if not isinstance(text, str):
            raise InputError("missing or non-string 'text'", file=file, line=line,
                             field=f"{where}.text")
        ctx_id = item.get("id")
        contexts.append(Context(
            id=str(ctx_id) if ctx_id not in (None, "") else f"ctx-{i}",
            text=text,
            source=item.get("source") if isinstance(item.get("source"), str) else None,
            published_at=parse_datetime(item.get("published_at"), file=file, line=line,
                                        field=f"{where}.published_at")))
    return tuple(contexts)
