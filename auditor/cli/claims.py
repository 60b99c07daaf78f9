"""Command ``claims``: split answers into atomic claims with character spans.

Input: JSONL lines ``{"id", "question", "answer"}``. Output (``--format jsonl``):
one line per answer ``{"id", "claims": [{"id", "text", "spans": [[start, end], ...],
"factual", "kind"}], "extractor": {"name", "version", "digest"}}`` with half-open
character offsets into ``answer``; ``"fallback"`` is added when an LLM extractor
fell back to the rule-based one for that answer.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from auditor.cli import app
from auditor.cli._common import FormatOption
from auditor.errors import InputError
from auditor.extract import Extraction, build_extractor
from auditor.jsonl import read_jsonl, require, write_jsonl
from auditor.types import Answer

_BATCH = 256
_FORMATS = ("jsonl", "text")


def load_answers(path: Path) -> Iterator[tuple[int, Answer]]:
    """``(line, Answer)`` for each line of an answers file, once the whole file is read;
    errors name file, line and field, every bad line of the file together."""
    from auditor.jsonl import BadLines

    bad = BadLines(path)
    out: list[tuple[int, Answer]] = []
    seen: dict[str, int] = {}
    for line, record in read_jsonl(path, bad=bad):
        with bad.collect():
            out.append((line, _answer(path, line, record, seen)))
    bad.check()
    if not seen:
        raise InputError("no answers (the file is empty)", file=str(path))
    yield from out


def _answer(path: Path, line: int, record: dict[str, Any], seen: dict[str, int]) -> Answer:
    """One line of an answers file, checked (:func:`load_answers`)."""
    from auditor.answers import ANSWER_FIELDS
    from auditor.jsonl import check_fields

    check_fields(record, ANSWER_FIELDS, file=path, line=line)
    raw_id = require(record, "id", (str, int), file=path, line=line)
    if isinstance(raw_id, bool):
        raise InputError("expected str, got bool", file=str(path), line=line, field="id")
    answer_id = str(raw_id)
    question = require(record, "question", str, file=path, line=line, optional=True) or ""
    text = require(record, "answer", str, file=path, line=line)
    for field, value in (("id", answer_id), ("question", question), ("answer", text)):
        if any("\ud800" <= ch <= "\udfff" for ch in value):
            raise InputError(
                "not valid Unicode (lone surrogate escape)",
                file=str(path),
                line=line,
                field=field,
            )
    if answer_id in seen:
        raise InputError(
            f"duplicate id {answer_id!r} (first on line {seen[answer_id]})",
            file=str(path),
            line=line,
            field="id",
        )
    seen[answer_id] = line
    return Answer(id=answer_id, question=question, answer=text)


def extraction_record(extraction: Extraction) -> dict[str, Any]:
    """The JSON output record of one answer's extraction."""
    record: dict[str, Any] = {
        "id": extraction.answer_id,
        "claims": [
            {
                "id": c.id,
                "text": c.text,
                "spans": [list(s) for s in c.spans],
                "factual": c.factual,
                "kind": c.kind,
                "topic": c.topic,
            }
            for c in extraction.claims
        ],
        "extractor": {
            "name": extraction.extractor.name,
            "version": extraction.extractor.version,
            "digest": extraction.extractor.digest,
        },
    }
    prompt = extraction.extractor.config.get("prompt_digest")
    if prompt:
        record["extractor"]["prompt_digest"] = prompt
    if extraction.fallback:
        record["fallback"] = extraction.fallback
    return record


@app.command("claims")
def claims_command(
    answers: Annotated[Path, typer.Argument(help="JSONL file of {id, question, answer}.")],
    extractor: Annotated[
        str, typer.Option("--extractor", help="Extractor: rules | sentences | llm.")
    ] = "rules",
    output_format: FormatOption = "jsonl",
    base_url: Annotated[
        str | None,
        typer.Option(
            "--base-url",
            envvar="AUDITOR_LLM_BASE_URL",
            help="LLM extractor: OpenAI-compatible endpoint.",
        ),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option("--model", envvar="AUDITOR_LLM_MODEL", help="LLM extractor: model name."),
    ] = None,
    api_key_env: Annotated[
        str,
        typer.Option(
            "--api-key-env", help="LLM extractor: environment variable holding the API key."
        ),
    ] = "OPENAI_API_KEY",
) -> None:
    """Split answers into atomic claims with character spans (factual or not)."""
    fmt = output_format.lower()
    if fmt not in _FORMATS:
        raise InputError(
            f"unknown format {output_format!r}; expected one of {', '.join(_FORMATS)}",
            field="--format",
        )
    params: dict[str, Any] = {}
    if extractor == "llm":
        params = {"base_url": base_url, "model": model, "api_key_env": api_key_env}
    ex = build_extractor(extractor, params)
    items = [answer for _, answer in load_answers(answers)]  # whole file valid first
    for start in range(0, len(items), _BATCH):
        _emit(ex.extract_detailed(items[start : start + _BATCH]), fmt)


def _emit(extractions: list[Extraction], fmt: str) -> None:
    if fmt == "jsonl":
        write_jsonl(extraction_record(e) for e in extractions)
        return
    out = sys.stdout
    for e in extractions:
        note = f" (fallback: {e.fallback})" if e.fallback else ""
        out.write(f"# {e.answer_id}: {len(e.claims)} claims{note}\n")
        for c in e.claims:
            mark = "+" if c.factual else "-"
            spans = " ".join(f"[{s},{e_})" for s, e_ in c.spans)
            out.write(f"  {mark} {c.kind:<11} {spans}  {c.text}\n")
