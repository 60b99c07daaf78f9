"""Load evidence documents (JSONL records, ``.txt``/``.md`` files or folders) as versions.

Loading is pure: it reads files and returns :class:`~auditor.types.DocumentVersion`
records (text, sha256 digest, timestamps); it never writes anything. Version labels
are left empty (``""``) unless the input gives one; :func:`auditor.retrieval.ingest`
assigns ``v1``, ``v2``, ... against what the index already holds.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from auditor.digest import sha256_text
from auditor.errors import InputError
from auditor.jsonl import parse_datetime, read_jsonl, require
from auditor.types import DocumentVersion

TEXT_SUFFIXES = (".txt", ".md", ".markdown")
"""File suffixes loaded as plain-text documents (also when walking a folder)."""
JSONL_SUFFIXES = (".jsonl", ".ndjson")
"""File suffixes loaded as one JSON document record per line."""
DATE_FIELDS = ("published_at", "retrieved_at", "valid_from", "valid_to")
"""The optional ISO-8601 timestamp fields of a document record."""
UNASSIGNED_VERSION = ""
"""Version label of a loaded document whose input gave none (assigned at ingest)."""


def load_documents(
    paths: Sequence[Path | str],
    *,
    published_at: datetime | str | None = None,
    retrieved_at: datetime | str | None = None,
    valid_from: datetime | str | None = None,
    valid_to: datetime | str | None = None,
    source: str | None = None,
) -> list[DocumentVersion]:
    """Read documents from JSONL files, ``.txt``/``.md`` files and folders of them.

    JSONL lines are ``{"id", "text", "source", "title", "version", "published_at",
    "retrieved_at", "valid_from", "valid_to"}`` (``id`` and ``text`` required, dates
    ISO-8601, timezone-less means UTC). A plain-text file's id is its path relative
    to the folder given (its file name when the file itself is given) and its
    source is its path. The date flags (and ``source``) are defaults: they fill
    fields a record leaves out, for JSONL records and text files alike.

    Returns the versions in input order; a record repeating the text of the
    previous record with the same id is dropped (it is the same version).
    Raises :class:`InputError` naming file, line and field on bad input.
    """
    defaults = _validate_defaults(
        published_at=published_at, retrieved_at=retrieved_at, valid_from=valid_from,
        valid_to=valid_to,
    )
    if isinstance(paths, (str, Path)):
        paths = [paths]
    if source is not None and not isinstance(source, str):
        raise InputError(f"expected a string, got {type(source).__name__}", field="source")
    out: list[DocumentVersion] = []
    for raw_path in paths:
        path = Path(raw_path)
        if path.is_dir():
            for file in _walk_text_files(path):
                out.append(_load_text_file(file, file.relative_to(path).as_posix(),
                                           defaults, source))
        elif not path.exists():
            raise InputError("no such file or directory", file=str(path))
        elif path.suffix.lower() in JSONL_SUFFIXES:
            out.extend(_load_jsonl(path, defaults, source))
        elif path.suffix.lower() in TEXT_SUFFIXES:
            out.append(_load_text_file(path, path.name, defaults, source))
        else:
            raise InputError(
                f"unsupported file type {path.suffix or '(none)'!r}; expected "
                f"{', '.join(JSONL_SUFFIXES + TEXT_SUFFIXES)} or a folder",
                file=str(path),
            )
    return _drop_repeats(out)


def make_document(
    doc_id: str,
    text: str,
    *,
    version: str | None = None,
    source: str | None = None,
    title: str | None = None,
    published_at: datetime | str | None = None,
    retrieved_at: datetime | str | None = None,
    valid_from: datetime | str | None = None,
    valid_to: datetime | str | None = None,
) -> DocumentVersion:
    """Build a :class:`DocumentVersion` in code (digest computed; dates may be ISO strings,
    timezone-less means UTC)."""
    if not isinstance(doc_id, str) or not doc_id:
        raise InputError("expected a non-empty string", field="id")
    if not isinstance(text, str) or not text.strip():
        raise InputError("expected non-empty text", field="text")
    dates = {
        name: parse_datetime(value, field=name)
        for name, value in (("published_at", published_at), ("retrieved_at", retrieved_at),
                            ("valid_from", valid_from), ("valid_to", valid_to))
    }
    _check_interval(dates, file=None, line=None)
    return DocumentVersion(
        doc_id=doc_id, version=version or UNASSIGNED_VERSION, text=text,
        digest=sha256_text(text), source=source, title=title, **_dates(dates),
    )


def _validate_defaults(**flags: datetime | str | None) -> dict[str, datetime | None]:
    parsed = {name: parse_datetime(value, field=name) for name, value in flags.items()}
    _check_interval(parsed, file=None, line=None)
    return parsed


def _check_interval(dates: dict[str, datetime | None], *, file: str | None,
                    line: int | None) -> None:
    start, end = dates.get("valid_from"), dates.get("valid_to")
    if start is not None and end is not None and end < start:
        raise InputError(f"valid_to {end.isoformat()} is before valid_from "
                         f"{start.isoformat()}", file=file, line=line, field="valid_to")


def _walk_text_files(root: Path) -> list[Path]:
    found: list[Path] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if not name.startswith(".") and Path(name).suffix.lower() in TEXT_SUFFIXES:
                found.append(Path(folder) / name)
    return found


def _load_text_file(path: Path, doc_id: str, defaults: dict[str, datetime | None],
                    source: str | None) -> DocumentVersion:
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise InputError(f"not valid UTF-8 (byte {exc.start})", file=str(path), line=line,
                         field="text") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.strip():
        raise InputError("empty document", file=str(path), field="text")
    return DocumentVersion(
        doc_id=doc_id, version=UNASSIGNED_VERSION, text=text, digest=sha256_text(text),
        source=source if source is not None else str(path), title=None, **_dates(defaults),
    )


def _load_jsonl(path: Path, defaults: dict[str, datetime | None],
                source: str | None) -> list[DocumentVersion]:
    docs: list[DocumentVersion] = []
    file = str(path)
    for line, record in read_jsonl(path):
        docs.append(_record_to_version(record, defaults, source, file=file, line=line))
    return docs


def _record_to_version(record: dict[str, Any], defaults: dict[str, datetime | None],
                       source: str | None, *, file: str, line: int) -> DocumentVersion:
    doc_id = require(record, "id", (str, int), file=file, line=line)
    if isinstance(doc_id, bool):
        raise InputError("expected a string id", file=file, line=line, field="id")
    doc_id = str(doc_id)
    if not doc_id.strip():
        raise InputError("empty id", file=file, line=line, field="id")
    text = require(record, "text", str, file=file, line=line)
    if not text.strip():
        raise InputError("empty text", file=file, line=line, field="text")
    version = require(record, "version", (str, int), file=file, line=line, optional=True)
    if isinstance(version, bool):
        raise InputError("expected a string version label", file=file, line=line,
                         field="version")
    version = None if version is None else str(version)
    if version is not None and not version.strip():
        raise InputError("empty version label", file=file, line=line, field="version")
    rec_source = require(record, "source", str, file=file, line=line, optional=True)
    title = require(record, "title", str, file=file, line=line, optional=True)
    dates: dict[str, datetime | None] = {}
    for name in DATE_FIELDS:
        value = record.get(name)
        dates[name] = (parse_datetime(value, file=file, line=line, field=name)
                       if value not in (None, "") else defaults[name])
    _check_interval(dates, file=file, line=line)
    return DocumentVersion(
        doc_id=doc_id, version=version or UNASSIGNED_VERSION, text=text,
        digest=sha256_text(text), source=rec_source if rec_source is not None else source,
        title=title, **_dates(dates),
    )


def _drop_repeats(docs: list[DocumentVersion]) -> list[DocumentVersion]:
    """Drop a record whose text equals the previous record of the same id."""
    last: dict[str, str] = {}
    out: list[DocumentVersion] = []
    for doc in docs:
        if last.get(doc.doc_id) == doc.digest:
            continue
        last[doc.doc_id] = doc.digest
        out.append(doc)
    return out


def _dates(values: dict[str, datetime | None]) -> dict[str, Any]:
    """The date keyword arguments of :class:`DocumentVersion` (typed loosely for ``**``)."""
    return {name: values.get(name) for name in DATE_FIELDS}
