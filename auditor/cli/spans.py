"""Commands: ``auditor spans score`` and ``auditor spans loo`` (span metrics, docs/spans.md).

``score`` compares predicted with gold character spans (JSONL lines ``{"id", "text"?,
"spans": [[start, end], ...]}``, half-open offsets, matched by id). ``loo`` runs the
leave-one-annotator-out protocol on a Mu-SHROOM-format file. Both print one JSON
object keyed by the six metrics; ``--diagnostics`` adds the nested-boundary,
partial-overlap and one-char-per-gold subsets.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from auditor.cli import app
from auditor.errors import InputError
from auditor.jsonl import read_jsonl, require
from auditor.spans import (
    METRICS,
    SpanBatch,
    SpanValidationError,
    aggregate,
    batch_from_lists,
    diagnose,
    leave_one_annotator_out,
    load_annotated,
    span_counts,
)

spans_app = typer.Typer(
    name="spans",
    help="Span localisation metrics: score predictions, leave-one-annotator-out agreement.",
    no_args_is_help=True,
)
app.add_typer(spans_app, name="spans")

_FORMATS = ("json", "table")


def _check_format(fmt: str) -> str:
    fmt = fmt.lower()
    if fmt not in _FORMATS:
        raise InputError(
            f"unknown format {fmt!r}; choose one of {', '.join(_FORMATS)}", field="--format"
        )
    return fmt


def _read_span_file(path: Path) -> dict[str, tuple[int, str | None, list[Any]]]:
    """id -> (line, text or None, raw spans); errors name file, line and field.

    Checks one line at a time (the reference path: :func:`_SpanFile.read` falls back to
    it to name the first bad line).
    """
    out: dict[str, tuple[int, str | None, list[Any]]] = {}
    fname = str(path)
    for line, rec in read_jsonl(path):
        item_id = require(rec, "id", (str, int), file=fname, line=line)
        key = str(item_id)
        if key in out:
            raise InputError(
                f"duplicate id {key!r} (first on line {out[key][0]})",
                file=fname,
                line=line,
                field="id",
            )
        text = require(rec, "text", str, file=fname, line=line, optional=True)
        spans = require(rec, "spans", list, file=fname, line=line)
        try:
            batch_from_lists(
                [spans], name="spans", text_lengths=None if text is None else [len(text)]
            )
        except SpanValidationError as exc:
            raise InputError(
                exc.detail.replace("spans[0] ", ""), file=fname, line=line, field="spans"
            ) from None
        out[key] = (line, text, spans)
    return out


def _read_records(path: Path) -> tuple[list[int], list[dict[str, Any]]]:
    """All objects of a JSONL file: ``(line_numbers, objects)``, blank lines skipped.

    ``orjson`` one line at a time, with the cyclic garbage collector paused (it would
    rescan the many new containers again and again: three times the parse time of a
    100,000-line file). A line orjson refuses (or that is not an object) sends the
    file through :func:`read_jsonl`, which names the line or accepts what only the
    standard parser takes (NaN). orjson reads an integer beyond 64 bits as a float;
    every field used here is type-checked, so such a line fails the check and the
    file goes through the reference path too.
    """
    import orjson

    try:
        raw = path.read_bytes()
    except OSError:
        list(read_jsonl(path))  # raises the error naming the file
        raise
    lines = raw.split(b"\n")
    try:
        if any(map(bytes.isspace, lines)):  # a blank line that is not empty: rare
            raise ValueError
        # every pass in C: the line numbers of the non-empty lines, their objects
        numbers = list(itertools.compress(itertools.count(1), lines))
        objects: list[dict[str, Any]] = list(map(orjson.loads, itertools.compress(lines, lines)))
        if objects and set(map(type, objects)) != {dict}:
            raise ValueError
    except ValueError:  # orjson.JSONDecodeError, not an object, a whitespace-only line
        pairs = list(read_jsonl(path))
        return [n for n, _ in pairs], [o for _, o in pairs]
    return numbers, objects


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        # the parsed file (hundreds of thousands of small containers) lives to the end of
        # the command: kept out of every later collection instead of scanned by it
        gc.freeze()
        if collecting:
            gc.enable()


_NO_TEXT = 1 << 62
"""Text length standing in for "no text given" (no bound on the spans)."""


class _SpanFile:
    """A validated span file, columns in file order, canonical spans as one batch."""

    def __init__(
        self,
        lines: list[int],
        ids: list[str],
        texts: list[str | None],
        spans: list[Any],
        batch: SpanBatch,
    ) -> None:
        self.lines, self.ids, self.texts, self.spans, self.batch = lines, ids, texts, spans, batch

    @functools.cached_property
    def row(self) -> dict[str, int]:
        """Position of each id (built only when the two files' orders differ)."""
        return {k: i for i, k in enumerate(self.ids)}

    @classmethod
    def read(cls, path: Path) -> _SpanFile:
        """Parse and validate the whole file at once (one vectorised span check).

        Anything unusual (a field of the wrong type, a duplicate id, a bad span) sends
        the file through :func:`_read_span_file`, which names the first bad line.
        """
        with _gc_paused():
            return cls._read(path)

    @classmethod
    def _read(cls, path: Path) -> _SpanFile:
        numbers, records = _read_records(path)
        batch: SpanBatch | None = None
        try:  # column by column, each one pass in C (a Python loop over lines costs more)
            raw_ids = [rec["id"] for rec in records]
            texts: list[str | None] = [rec.get("text") for rec in records]
            spans: list[Any] = [rec["spans"] for rec in records]
            id_types, text_types = set(map(type, raw_ids)), set(map(type, texts))
            if (
                id_types <= {str, int}
                and text_types <= {str, type(None)}
                and (not spans or set(map(type, spans)) == {list})
            ):
                ids = raw_ids if id_types == {str} else list(map(str, raw_ids))
                if len(set(ids)) == len(ids):
                    batch = _checked_batch(
                        list(itertools.chain.from_iterable(spans)), list(map(len, spans)), texts
                    )
        except (KeyError, TypeError, ValueError):
            batch = None
        if batch is None:
            slow = _read_span_file(path)  # raises naming the file, line and field
            keys = list(slow)  # valid after all (e.g. a boolean id): the reference result
            return cls(
                [slow[k][0] for k in keys],
                keys,
                [slow[k][1] for k in keys],
                [slow[k][2] for k in keys],
                batch_from_lists([slow[k][2] for k in keys], name="spans"),
            )
        return cls(numbers, ids, texts, spans, batch)


def _checked_batch(flat: list[Any], counts: list[int], texts: list[str | None]) -> SpanBatch | None:
    """The canonical batch of a whole file's spans when every span is a valid pair of
    integers inside its text (what :func:`batch_from_lists` checks), else ``None``."""
    import numpy as np

    arr = np.asarray(flat) if flat else np.zeros((0, 2), np.int64)
    if arr.ndim != 2 or arr.shape[1] != 2 or arr.dtype.kind not in "iu":
        return None
    arr = arr.astype(np.int64, copy=False)
    item = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    starts, ends = arr[:, 0], arr[:, 1]
    limit = np.array([_NO_TEXT if t is None else len(t) for t in texts], dtype=np.int64)
    if (starts < 0).any() or (ends < starts).any() or (ends > limit[item]).any():
        return None
    return SpanBatch.from_arrays(item, starts, ends, len(counts))


def _aligned(gold_path: Path, pred_path: Path) -> tuple[list[str], SpanBatch, SpanBatch]:
    gold = _SpanFile.read(gold_path)
    pred = _SpanFile.read(pred_path)
    for a, b, pa, pb in ((gold, pred, gold_path, pred_path), (pred, gold, pred_path, gold_path)):
        if len(a.ids) == len(b.ids) and a.ids == b.ids:
            continue
        missing = [k for k in a.ids if k not in b.row]
        if missing:
            line = a.lines[a.row[missing[0]]]
            raise InputError(
                f"id {missing[0]!r} has no line in {pb}"
                + (f" ({len(missing)} ids missing)" if len(missing) > 1 else ""),
                file=str(pa),
                line=line,
                field="id",
            )
    ids = gold.ids
    same_order = pred.ids == ids
    order = range(len(ids)) if same_order else [pred.row[k] for k in ids]
    if not (same_order and gold.texts == pred.texts):
        for i, (k, j) in enumerate(zip(ids, order, strict=True)):
            tg, tp = gold.texts[i], pred.texts[j]
            if tg is not None and tp is not None and tg != tp:
                raise InputError(
                    f"id {k!r}: text differs from the gold file's text",
                    file=str(pred_path),
                    line=pred.lines[j],
                    field="text",
                )
    p = (
        pred.batch
        if same_order
        else batch_from_lists([pred.spans[j] for j in order], name="pred", ids=ids)
    )
    return ids, gold.batch, p


def _emit(result: dict[str, Any], fmt: str) -> None:
    if fmt == "json":
        typer.echo(json.dumps(result, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    console = Console()

    def table(title: str, scores: dict[str, dict[str, float]]) -> None:
        t = Table(title=title)
        for col in ("metric", "precision", "recall", "F1 / score"):
            t.add_column(col, justify="left" if col == "metric" else "right")
        for key in METRICS:
            v = scores[key]
            if "score" in v:
                t.add_row(key, "", "", f"{v['score']:.3f}")
            else:
                t.add_row(key, f"{v['precision']:.3f}", f"{v['recall']:.3f}", f"{v['f1']:.3f}")
        console.print(t)

    if "majority" in result:
        for ref in ("majority", "union"):
            for avg in ("macro", "micro"):
                table(f"LOO reference={ref}, {avg}", result[ref][avg])
        console.print(f"items: {result['n_items']}, annotator span sets: {result['n_annotations']}")
    else:
        table("span metrics", {k: result[k] for k in METRICS})
    if "diagnostics" in result:
        console.print_json(json.dumps(result["diagnostics"]))


@spans_app.command("score")
def score(
    gold: Annotated[Path, typer.Option("--gold", help="Gold JSONL: {id, text?, spans}.")],
    pred: Annotated[Path, typer.Option("--pred", help="Predicted JSONL: {id, text?, spans}.")],
    average: Annotated[
        str, typer.Option("--average", help="macro: mean of per-item scores; micro: pooled counts.")
    ] = "macro",
    fmt: Annotated[
        str, typer.Option("--format", help="Output format: json or table.", case_sensitive=False)
    ] = "json",
    diagnostics: Annotated[
        bool,
        typer.Option(
            "--diagnostics",
            help="Add the nested-boundary, partial-overlap and one-char-per-gold subsets "
            "(why Span Coverage F1 and character IoU disagree).",
        ),
    ] = False,
) -> None:
    """Score predicted spans against gold spans with the six span metrics.

    Spans are half-open [start, end) character offsets; lines are matched by id and
    an id missing on either side is an error. With "text", spans past it are an error.
    """
    fmt = _check_format(fmt)
    if average not in ("macro", "micro"):
        raise InputError(f"must be macro or micro, got {average!r}", field="--average")
    _, g, p = _aligned(gold, pred)
    counts = span_counts(g, p)
    result: dict[str, Any] = dict(aggregate(counts, average))
    if diagnostics:
        result["diagnostics"] = diagnose(g, p, counts=counts)
    _emit(result, fmt)


@spans_app.command("loo")
def loo(
    file: Annotated[
        Path,
        typer.Argument(
            help="Mu-SHROOM-format JSONL: id, model_output_text, annotations "
            "(annotator -> [[start, end], ...])."
        ),
    ],
    fmt: Annotated[
        str, typer.Option("--format", help="Output format: json or table.", case_sensitive=False)
    ] = "json",
    diagnostics: Annotated[
        bool,
        typer.Option(
            "--diagnostics",
            help="Add the nested-boundary and partial-overlap subsets of the LOO comparisons "
            "and the one-char-per-gold stress test.",
        ),
    ] = False,
    strict_bounds: Annotated[
        bool,
        typer.Option(
            "--strict-bounds",
            help="Reject spans that end past the text instead of clipping them "
            "(clipping prints a warning on stderr).",
        ),
    ] = False,
) -> None:
    """Leave-one-annotator-out agreement: each annotator against the others.

    The reference is the strict character majority (> half) or the union of the other
    annotators; macro averages within an item first, then over items.
    """
    fmt = _check_format(fmt)
    warnings: list[str] = []
    items = load_annotated(file, clip=not strict_bounds, warnings_out=warnings)
    for w in warnings:
        typer.echo(f"warning: {w}", err=True)
    _emit(leave_one_annotator_out(items, diagnostics=diagnostics), fmt)
