"""Loading RAG answers to audit (JSONL), with errors naming file, line and field."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

from auditor.clock import parse_datetime
from auditor.errors import InputError
from auditor.jsonl import BadLines, check_fields, read_jsonl, require
from auditor.spans.unicode import nfc
from auditor.types import Answer, Context

ANSWER_FIELDS = tuple(f.name for f in fields(Answer))
"""The fields of an answer record (any other field is an error naming the closest one)."""
CONTEXT_FIELDS = tuple(f.name for f in fields(Context))
"""The fields of one of an answer's ``contexts``."""


def load_answers(path: str | Path) -> list[Answer]:
    """Read answer lines ``{"id", "question", "answer", "contexts"?, "as_of"?, "origin"?}``.

    ``contexts`` is an optional list of ``{"id", "text", "source"?, "published_at"?}``;
    a context without an id gets ``ctx-<n>`` (its position). ``origin`` is an optional
    object of strings kept in the ledger with the answer (an imported answer's trace
    and span ids, :mod:`auditor.importers`). Duplicate answer ids,
    unknown fields (``"questoin"``: the error names ``question``) and a file with no
    answer are errors. Nothing is partially returned: every bad line of the file is
    named in one error (:class:`auditor.jsonl.InputErrors`, the first
    :data:`auditor.jsonl.MAX_REPORTED` and the count).
    """
    bad = BadLines(path)
    answers = answers_from_records(read_jsonl(path, bad=bad), source=str(path), bad=bad)
    if not answers:
        raise InputError("no answers (the file is empty)", file=str(path))
    return answers


def answers_from_records(
    records: Iterable[tuple[int, Mapping[str, Any]]],
    *,
    source: str,
    bad: BadLines | None = None,
) -> list[Answer]:
    """Validate ``(line, record)`` pairs as :func:`load_answers` does (errors name
    ``source``, the line and the field; every bad record is named, together with those
    already in ``bad``)."""
    answers: list[Answer] = []
    seen: dict[str, int] = {}
    file = source
    found = BadLines(source) if bad is None else bad
    for line, record in records:
        with found.collect():
            answers.append(_answer(line, record, file=file, seen=seen))
    found.check()
    return answers


def _answer(line: int, record: Mapping[str, Any], *, file: str, seen: dict[str, int]) -> Answer:
    """One answer record of :func:`answers_from_records`, checked."""
    if not isinstance(record, Mapping):
        raise InputError(f"expected an object, got {type(record).__name__}", file=file, line=line)
    record = dict(record)
    check_fields(record, ANSWER_FIELDS, file=file, line=line)
    answer_id = require(record, "id", (str, int), file=file, line=line)
    answer_id = str(answer_id)
    if not answer_id.strip():
        raise InputError("must not be empty", file=file, line=line, field="id")
    if answer_id in seen:
        raise InputError(
            f"duplicate answer id {answer_id!r} (first on line {seen[answer_id]})",
            file=file,
            line=line,
            field="id",
        )
    seen[answer_id] = line
    question = require(record, "question", str, file=file, line=line, optional=True) or ""
    text = require(record, "answer", str, file=file, line=line)
    contexts = _contexts(record.get("contexts"), file=file, line=line)
    as_of = parse_datetime(record.get("as_of"), file=file, line=line, field="as_of")
    origin = _origin(record.get("origin"), file=file, line=line)
    return Answer(
        id=answer_id, question=question, answer=text, contexts=contexts, as_of=as_of, origin=origin
    )


def answer_to_record(answer: Answer) -> dict[str, Any]:
    """An answer as a line of an answer file (what :func:`load_answers` reads back);
    fields without a value are left out."""
    record: dict[str, Any] = {"id": answer.id, "question": answer.question, "answer": answer.answer}
    if answer.contexts:
        record["contexts"] = [
            {k: v for k, v in asdict(c).items() if v is not None} for c in answer.contexts
        ]
    if answer.as_of is not None:
        record["as_of"] = answer.as_of.isoformat()
    if answer.origin:
        record["origin"] = dict(answer.origin)
    return record


AnswersInput = str | Path | Sequence[Answer | Mapping[str, Any]]
"""Answers as a JSONL path, or a sequence of :class:`Answer` or dicts of its fields."""


def coerce_answers(answers: AnswersInput) -> list[Answer]:
    """Answers from a JSONL path, :class:`Answer` objects or dicts (validated alike; a dict
    is named ``answers[i]`` in errors, so the line number is its position + 1)."""
    if isinstance(answers, str | Path):
        return load_answers(answers)
    if not isinstance(answers, Sequence):
        raise InputError(
            f"expected a JSONL path or a sequence of answers, got {type(answers).__name__}",
            field="answers",
        )
    if all(isinstance(a, Answer) for a in answers):
        out = [a for a in answers if isinstance(a, Answer)]
        ids = [a.id for a in out]
        if len(set(ids)) != len(ids):
            raise InputError("duplicate answer ids", field="answers")
        return out
    records: list[tuple[int, Any]] = []
    for i, item in enumerate(answers):
        if isinstance(item, Answer):
            records.append(
                (i + 1, {**asdict(item), "contexts": [asdict(c) for c in item.contexts]})
            )
        else:
            records.append((i + 1, item))
    return answers_from_records(records, source="answers")


def _origin(value: object, *, file: str, line: int) -> dict[str, str]:
    """An answer's ``origin``: an object of strings (trace and span ids...), or absent."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputError("expected an object of strings", file=file, line=line, field="origin")
    for key, item in value.items():
        if not isinstance(item, str):
            raise InputError(
                f"expected a string, got {type(item).__name__}",
                file=file,
                line=line,
                field=f"origin.{key}",
            )
    return dict(value)


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
        check_fields(item, CONTEXT_FIELDS, file=file, line=line, where=f"{where}.")
        text = item.get("text")
        if not isinstance(text, str):
            raise InputError(
                "missing or non-string 'text'", file=file, line=line, field=f"{where}.text"
            )
        ctx_id = item.get("id")
        contexts.append(
            Context(
                id=str(ctx_id) if ctx_id not in (None, "") else f"ctx-{i}",
                text=nfc(text),
                source=item.get("source") if isinstance(item.get("source"), str) else None,
                published_at=parse_datetime(
                    item.get("published_at"), file=file, line=line, field=f"{where}.published_at"
                ),
            )
        )
    return tuple(contexts)
