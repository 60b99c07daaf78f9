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
import operator
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import msgspec
import typer

from auditor.cli import app
from auditor.errors import InputError
from auditor.jsonl import BadLines, read_jsonl, require
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
    """id -> (line, text or None, raw spans); errors name file, line and field, every
    bad line of the file together (:class:`auditor.jsonl.InputErrors`).

    Checks one line at a time (the reference path: :func:`_SpanFile.read` falls back to
    it to name the bad lines).
    """
    out: dict[str, tuple[int, str | None, list[Any]]] = {}
    fname = str(path)
    bad = BadLines(path)
    for line, rec in read_jsonl(path, bad=bad):
        with bad.collect():
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
    bad.check()
    return out


class _SpanLine(msgspec.Struct, gc=False):
    """One line of a span file as the fast reader takes it, typed (an id that is a
    string or an integer, spans that are pairs of integers, text a string or null;
    other fields ignored). A line that does not fit goes to :func:`_read_span_file`."""

    id: str | int
    spans: list[tuple[int, int]]
    text: str | None = None


_decode_line = msgspec.json.Decoder(_SpanLine).decode


def _read_lines(path: Path) -> list[_SpanLine] | None:
    """The lines of a span file, decoded and type-checked in C one line at a time
    (msgspec), blank lines skipped; ``None`` when any line is not exactly one
    such object (malformed JSON, a field of another type, NaN, a byte-order mark, a
    whitespace-only line...): the caller then reads the file with the line reader,
    which names the line or accepts what only it takes."""
    try:
        raw = path.read_bytes()
    except OSError:
        list(read_jsonl(path))  # raises the error naming the file
        raise
    lines = raw.split(b"\n")
    if any(map(bytes.isspace, lines)):  # a blank line that is not empty: rare
        return None
    try:
        decoded = list(map(_decode_line, filter(None, lines)))
    except msgspec.DecodeError:  # malformed JSON, or a ValidationError (wrong type)
        return None
    return decoded


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
        path: Path,
        lines: list[int] | None,
        ids: list[str],
        texts: list[str | None],
        spans: list[Any],
        batch: SpanBatch,
    ) -> None:
        self.path, self._lines = path, lines
        self.ids, self.texts, self.spans, self.batch = ids, texts, spans, batch

    @functools.cached_property
    def lines(self) -> list[int]:
        """Line number of each record, for error messages (the fast reader's records are
        the file's non-empty lines: numbered from the file only when an error needs it)."""
        if self._lines is not None:
            return self._lines
        raw = self.path.read_bytes().split(b"\n")
        return list(itertools.compress(itertools.count(1), raw))

    @functools.cached_property
    def row(self) -> dict[str, int]:
        """Position of each id (built only when the two files' orders differ)."""
        return {k: i for i, k in enumerate(self.ids)}

    @classmethod
    def read(cls, path: Path) -> _SpanFile:
        """Parse and validate the whole file at once: typed decoding in C, one vectorised
        check of all the spans (numpy).

        Anything unusual (a line that is not a typed span object, a duplicate id, a bad
        span) sends the file through :func:`_read_span_file`, which names every bad
        line (file, line, field) or, for what only it accepts, gives the result.
        """
        with _gc_paused():
            return cls._read(path)

    @classmethod
    def _read(cls, path: Path) -> _SpanFile:
        records = _read_lines(path)
        batch: SpanBatch | None = None
        if records is not None:
            # column by column, each one pass in C (a Python loop over lines costs more);
            # str() of a string is that string
            ids = list(map(str, map(_get_id, records)))
            if len(set(ids)) == len(ids):
                texts: list[str | None] = list(map(_get_text, records))
                spans: list[Any] = list(map(_get_spans, records))
                batch = _checked_batch(spans, texts)
        if batch is None:
            slow = _read_span_file(path)  # raises naming the file, line and field
            keys = list(slow)  # valid after all (e.g. a boolean id): the reference result
            return cls(
                path,
                [slow[k][0] for k in keys],
                keys,
                [slow[k][1] for k in keys],
                [slow[k][2] for k in keys],
                batch_from_lists([slow[k][2] for k in keys], name="spans"),
            )
        return cls(path, None, ids, texts, spans, batch)


_get_id = operator.attrgetter("id")
_get_text = operator.attrgetter("text")
_get_spans = operator.attrgetter("spans")


def _checked_batch(spans: list[list[tuple[int, int]]], texts: list[str | None]) -> SpanBatch | None:
    """The canonical batch of a whole file's spans (already typed: pairs of integers) when
    every span is non-negative, not reversed and inside its text (what
    :func:`batch_from_lists` checks), else ``None``."""
    import numpy as np

    n_items = len(spans)
    counts = np.fromiter(map(len, spans), dtype=np.int64, count=n_items)
    n_spans = int(counts.sum())
    try:  # both ends of every span, in order, in one pass
        flat = np.fromiter(
            itertools.chain.from_iterable(itertools.chain.from_iterable(spans)),
            dtype=np.int64,
            count=2 * n_spans,
        )
    except OverflowError:  # an offset beyond 64 bits
        return None
    starts, ends = flat[0::2], flat[1::2]
    item = np.repeat(np.arange(n_items, dtype=np.int64), counts)
    try:
        limit = np.fromiter(map(len, texts), dtype=np.int64, count=n_items)  # type: ignore[arg-type]
    except TypeError:  # some lines without text (len(None))
        limit = np.array([_NO_TEXT if t is None else len(t) for t in texts], dtype=np.int64)
    if (starts < 0).any() or (ends < starts).any() or (ends > limit[item]).any():
        return None
    return SpanBatch.from_arrays(item, starts, ends, n_items)


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
