"""Commands: ``auditor ingest`` (documents -> evidence index + ledger), ``auditor search``
and ``auditor compact`` (merge the index's segments, or ``--convert`` an older index's
JSON tables to the binary form)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from auditor.cli import app
from auditor.cli._common import (
    DEFAULT_DB,
    DEFAULT_INDEX,
    DbOption,
    FormatOption,
    IndexOption,
    QuietOption,
    ShowProgressOption,
)
from auditor.errors import AuditorError, InputError
from auditor.types import Hit

_DATE_HELP = "ISO-8601; timezone-less means UTC. Default for records and files that give none."


_INGEST_HELP = (
    "Add documents to the evidence index and the ledger, as one unit.\n\n"
    "Unchanged documents add nothing; new text for a known id adds a version. A "
    "document's versions are ordered by their dates (valid_from, else published_at), "
    "never by ingest order: an older version ingested later is inserted into the "
    "history. A .txt/.md file's id is its path relative to --root (default: the folder "
    "given, or the file's folder), after --id-prefix; front matter (--- YAML ---) sets "
    "its fields. On any error neither the index nor the ledger changes."
)


@app.command(no_args_is_help=True, help=_INGEST_HELP)
def ingest(
    paths: Annotated[
        list[Path],
        typer.Argument(
            help="JSONL document files ({id, text, source, title, version, published_at, "
            "retrieved_at, valid_from, valid_to}), .txt/.md files, or folders of them.",
            show_default=False,
        ),
    ],
    index: IndexOption = Path(DEFAULT_INDEX),
    db: DbOption = DEFAULT_DB,
    index_type: Annotated[
        str | None,
        typer.Option(
            "--index-type",
            help="Dense index: flat (exact), hnsw, ivf or ivfpq (approximate, large "
            "corpora; ivfpq needs 10000 chunks to train and stays flat until then). "
            "Default: keep the existing index's type, flat for a new index.",
        ),
    ] = None,
    published_at: Annotated[
        str | None, typer.Option(help=f"Publication date. {_DATE_HELP}")
    ] = None,
    retrieved_at: Annotated[str | None, typer.Option(help=f"Retrieval date. {_DATE_HELP}")] = None,
    valid_from: Annotated[str | None, typer.Option(help=f"Start of validity. {_DATE_HELP}")] = None,
    valid_to: Annotated[str | None, typer.Option(help=f"End of validity. {_DATE_HELP}")] = None,
    root: Annotated[
        Path | None,
        typer.Option(
            "--root",
            help="Folder that .txt/.md ids are relative to (every file must lie "
            "under it). Default: each folder given (a file's own folder).",
        ),
    ] = None,
    id_prefix: Annotated[
        str | None,
        typer.Option("--id-prefix", help="Prefix for the ids of .txt/.md files (e.g. teamB/)."),
    ] = None,
    undated_order: Annotated[
        str,
        typer.Option(
            "--undated-order",
            help="Where an undated version of a dated document goes: error "
            "(refuse), newest or oldest.",
        ),
    ] = "error",
    quiet: QuietOption = False,
    show_progress: ShowProgressOption = False,
    engine: Annotated[
        str,
        typer.Option(
            help="Where new chunks are embedded: local (this process) or ray (Ray Data, "
            "a pool of --workers encoder actors); the index is swapped the same way."
        ),
    ] = "local",
    workers: Annotated[int, typer.Option(help="Ray encoder actors (--engine ray).")] = 1,
    ray_address: Annotated[
        str | None,
        typer.Option("--ray-address", help="An existing Ray cluster (host:port or auto)."),
    ] = None,
) -> None:
    """Add documents to the evidence index and the ledger, as one unit (see the help)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from auditor.cli._common import refuse_memory_ledger
    from auditor.progress import Progress, progress_enabled
    from auditor.retrieval import IngestResult, load_documents
    from auditor.retrieval import ingest as ingest_documents
    from ledger.url import mask_url

    refuse_memory_ledger(db, "ingest")  # the index would outlive the ledger it pairs with
    from auditor.engine import Engine

    how = Engine(kind=engine, workers=workers, address=ray_address)
    if how.kind == "ray":
        from auditor.engine import require_ray

        require_ray()  # before reading any document
    docs = load_documents(
        paths,
        published_at=published_at,
        retrieved_at=retrieved_at,
        valid_from=valid_from,
        valid_to=valid_to,
        root=root,
        id_prefix=id_prefix,
    )
    if not docs:
        raise InputError("no documents found in the given paths")
    from ledger import LedgerError, open_ledger

    def record(result: IngestResult) -> None:
        # the ledger is opened only once the new index generation is fully built
        versions = {
            (v.doc_id, v.version): v
            for v in (
                *result.unchanged,
                *result.retimed_versions,
                *result.superseded_versions,
                *result.added_versions,
            )
        }
        with open_ledger(db) as ledger:
            ledger.record_corpus(list(versions.values()), list(result.chunks))

    bar = Progress(
        "ingest: embedding",
        unit="texts",
        enabled=progress_enabled(quiet=quiet, force=show_progress),
    )
    try:
        with bar:
            encoder = None
            if how.kind == "ray":  # Ray starts only when there is something to embed
                from auditor.ray_engine import RayEncoder

                encoder = RayEncoder(how, progress=bar.callback())
            result = ingest_documents(
                docs,
                index,
                index_type=index_type,
                on_commit=record,
                undated_order=undated_order,
                progress=bar.callback(),
                encoder=encoder,
            )
    except LedgerError as exc:
        raise AuditorError(str(exc)) from None
    for note in result.notes:
        typer.echo(f"note: {note}", err=True)
    manifest = result.manifest
    retimed = (
        f", {len(result.retimed_versions)} older versions re-dated"
        if result.retimed_versions
        else ""
    )
    typer.echo(
        f"{len(result.added_versions)} versions added, {len(result.superseded_versions)} "
        f"superseded{retimed}, {len(result.unchanged)} unchanged, {len(result.chunks)} chunks; "
        f"index {index} now holds {manifest.get('documents', 0)} documents, "
        f"{manifest.get('versions', 0)} versions, {manifest.get('chunks', 0)} chunks "
        f"({manifest.get('index_type', '?')}, {len(manifest.get('segments', []))} segments); "
        f"ledger {mask_url(db)}"
    )
    _note_missing_sentences(manifest, index)
    _note_missing_tables(manifest, index)
    if len(manifest.get("segments", [])) >= COMPACT_HINT_SEGMENTS:
        typer.echo(
            f"note: the index has {len(manifest['segments'])} segments; "
            f"`auditor compact --index {index}` merges them",
            err=True,
        )


def _note_missing_sentences(manifest: dict[str, Any], index: Path) -> None:
    """Tell the user when segments written by an older version lack sentence vectors."""
    from auditor.retrieval.reader import segments_without_sentences

    missing = segments_without_sentences(manifest) if manifest else 0
    if missing:
        typer.echo(
            f"note: {missing} segment(s) of the index were written before evidence "
            "sentence embeddings were stored at ingest, so audits encode their sentences; "
            f"`auditor compact --index {index}` stores them once",
            err=True,
        )


def _note_missing_tables(manifest: dict[str, Any], index: Path) -> None:
    """Tell the user when segments written by an older version lack the binary tables."""
    from auditor.retrieval.reader import segments_without_tables

    missing = segments_without_tables(index, manifest) if manifest else 0
    if missing:
        typer.echo(
            f"note: {missing} segment(s) of the index keep tables in the JSON form an "
            "older version wrote, so opening or growing the index parses them; "
            f"`auditor compact --convert --index {index}` converts them once",
            err=True,
        )


COMPACT_HINT_SEGMENTS = 32
"""From this many segments, ``auditor ingest`` suggests ``auditor compact``."""


@app.command(no_args_is_help=False)
def compact(
    index: IndexOption = Path(DEFAULT_INDEX),
    index_type: Annotated[
        str | None,
        typer.Option(
            "--index-type",
            help="Rebuild the dense index as flat, hnsw, ivf or ivfpq. Default: keep "
            "its type (a pending ivfpq is trained when the index is large enough).",
        ),
    ] = None,
    convert: Annotated[
        bool,
        typer.Option(
            "--convert",
            help="Do not merge: only rewrite the tables an older version stored as "
            "JSON in the binary form (segments, manifest and results unchanged).",
        ),
    ] = False,
) -> None:
    """Merge the index's segments into one (content, digests and results unchanged).

    Each ingest adds a segment; compacting re-reads fewer files at open and re-trains
    an approximate (ivf, ivfpq) index on the whole corpus. An index written before
    evidence sentence embeddings were stored at ingest gets them (encoded once), and
    tables an older version stored as JSON are written in the binary form. With
    --convert only those tables are rewritten (no merge, no encoder). The ledger is not
    touched.
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from auditor.retrieval import store
    from auditor.retrieval.compaction import compact as compact_index
    from auditor.retrieval.compaction import convert as convert_index

    if convert:
        if index_type is not None:
            raise AuditorError("--convert does not rebuild the dense index; drop --index-type")
        _, converted = convert_index(index)
        typer.echo(f"index {index}: {converted} segment(s) converted to the binary tables")
        return
    before = store.read_json(store.require_generation(index) / store.MANIFEST)
    manifest, notes = compact_index(index, index_type=index_type)
    for note in notes:
        typer.echo(f"note: {note}", err=True)
    typer.echo(
        f"index {index}: {len(before.get('segments', [])) or 1} segments merged into 1; "
        f"{manifest['chunks']} chunks ({manifest['index_type']}), generation "
        f"{manifest['generation']}, corpus {str(manifest['corpus_digest'])[:12]}"
    )


@app.command(no_args_is_help=True)
def search(
    queries: Annotated[
        Path,
        typer.Option(
            "--queries",
            help='JSONL file of queries: one {"id", "text"} object a line.',
            show_default=False,
        ),
    ],
    index: IndexOption = Path(DEFAULT_INDEX),
    k: Annotated[int, typer.Option("--k", min=1, help="Hits per query.")] = 5,
    as_of: Annotated[
        str | None,
        typer.Option(
            "--as-of",
            help="Only versions published by this date (ISO-8601, timezone-less = "
            "UTC; default: today, 00:00 UTC); hits superseded at that date say so.",
        ),
    ] = None,
    mode: Annotated[str, typer.Option(help="dense, lexical or hybrid (rank fusion).")] = "hybrid",
    fmt: FormatOption = "jsonl",
) -> None:
    """Retrieve evidence for each query; one JSON line per query on stdout, best hits first."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from auditor.clock import as_of_or_default
    from auditor.jsonl import BadLines, check_fields, read_jsonl, require, write_jsonl
    from auditor.retrieval import MODES, EvidenceIndex

    if fmt.lower() != "jsonl":
        raise AuditorError(f"--format: only jsonl is supported for search, got {fmt!r}")
    if mode not in MODES:
        raise AuditorError(f"--mode: expected one of {', '.join(MODES)}, got {mode!r}")
    cutoff = as_of_or_default(as_of, field="--as-of")
    ids: list[Any] = []
    texts: list[str] = []
    bad = BadLines(queries)  # every bad line, before any result is written
    for line, record in read_jsonl(queries, bad=bad):
        with bad.collect():
            check_fields(record, ("id", "text"), file=queries, line=line)
            qid = require(record, "id", (str, int), file=queries, line=line)
            text = require(record, "text", str, file=queries, line=line)
            if not text.strip():
                raise InputError("empty query text", file=str(queries), line=line, field="text")
            ids.append(qid)
            texts.append(text)
    bad.check()
    if not texts:
        raise InputError("no queries (the file is empty)", file=str(queries))
    idx = EvidenceIndex.open(index)
    results = idx.search(texts, k, mode=mode, as_of=cutoff)
    write_jsonl(
        (
            {"id": qid, "hits": [hit_record(h) for h in hits]}
            for qid, hits in zip(ids, results, strict=True)
        ),
        sys.stdout,
    )


def hit_record(hit: Hit) -> dict[str, Any]:
    """The JSON form of a :class:`auditor.types.Hit` in ``auditor search`` output."""
    doc = hit.document
    return {
        "doc_id": doc.doc_id,
        "version": doc.version,
        "chunk_id": hit.chunk.chunk_id,
        "score": round(float(hit.score), 6),
        "start": hit.chunk.start,
        "end": hit.chunk.end,
        "text": hit.chunk.text,
        "published_at": _iso(doc.published_at),
        "valid_from": _iso(doc.valid_from),
        "valid_to": _iso(doc.valid_to),
        "digest": doc.digest,
        "superseded": hit.superseded,
    }


def _iso(value: Any) -> str | None:
    return None if value is None else value.isoformat()
