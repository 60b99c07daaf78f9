"""Command: ``auditor import FORMAT FILE`` (answers from traces and evaluation data sets,
docs/inputs.md#importing-from-traces-and-eval-datasets)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from auditor.cli import app


@app.command("import")
def import_(
    format: Annotated[
        str,
        typer.Argument(help="What FILE holds: otel, langfuse, ragas or deepeval."),
    ],
    file: Annotated[Path, typer.Argument(help="The exported traces or data set (JSON).")],
) -> None:
    """Write the answers in FILE (traces or an evaluation data set) as answer JSONL on
    stdout, each with its retrieved documents as contexts and its trace ids; nothing is
    written when a record is bad."""
    from auditor.answers import answer_to_record
    from auditor.importers import import_answers
    from auditor.jsonl import write_jsonl

    write_jsonl(answer_to_record(a) for a in import_answers(format, file))
