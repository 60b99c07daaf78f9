"""Load evidence documents (JSONL records, ``.txt``/``.md`` files or folders) as versions.

Loading is pure: it reads files and returns :class:`~auditor.types.DocumentVersion`
records (text, sha256 digest, timestamps); it never writes anything. Document text is
normalised to Unicode NFC (the digest and the chunk offsets are those of the NFC
text), so that evidence and claims match whatever composition their sources used. Version labels
are left empty (``""``) unless the input gives one; :func:`auditor.retrieval.ingest`
assigns ``v1``, ``v2``, ... against what the index already holds.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from auditor.clock import parse_datetime
from auditor.digest import sha256_text
from auditor.errors import InputError
from auditor.jsonl import BadLines, check_fields, read_jsonl, require
from auditor.spans.unicode import nfc
from auditor.types import DocumentVersion

TEXT_SUFFIXES = (".txt", ".md", ".markdown")
"""File suffixes loaded as plain-text documents (also when walking a folder)."""
JSONL_SUFFIXES = (".jsonl", ".ndjson")
"""File suffixes loaded as one JSON document record per line."""
DATE_FIELDS = ("published_at", "retrieved_at", "valid_from", "valid_to")
"""The optional ISO-8601 timestamp fields of a document record."""
UNASSIGNED_VERSION = ""
"""Version label of a loaded document whose input gave none (assigned at ingest)."""
RECORD_FIELDS = ("id", "text", "source", "title", "version", *DATE_FIELDS)
"""The fields of a JSONL document record (any other field is an error)."""
FRONT_MATTER_FIELDS = ("id", "source", "title", "version", *DATE_FIELDS)
"""The keys of a text file's front matter (any other key is an error)."""
FILE_SOURCE_PREFIX = "file://"
"""A text file's source is its absolute path as a ``file://`` URI: its identity."""
_FRONT_MATTER = re.compile(
    r"\A---[ \t]*\r?\n(.*?)^(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.DOTALL | re.MULTILINE
)


def load_documents(
    paths: Sequence[Path | str],
    *,
    published_at: datetime | str | None = None,
    retrieved_at: datetime | str | None = None,
    valid_from: datetime | str | None = None,
    valid_to: datetime | str | None = None,
    source: str | None = None,
    root: Path | str | None = None,
    id_prefix: str | None = None,
) -> list[DocumentVersion]:
    """Read documents from JSONL files, ``.txt``/``.md`` files and folders of them.

    JSONL lines are ``{"id", "text", "source", "title", "version", "published_at",
    "retrieved_at", "valid_from", "valid_to"}`` (``id`` and ``text`` required, dates
    ISO-8601, timezone-less means UTC); any other field is an error naming it and
    the closest known one.

    A text file's id is ``id_prefix`` + its path relative to ``root`` when given
    (every file must lie under it), else relative to the folder given (its file name
    when the file itself is given); its source is its absolute path as a ``file://``
    URI, which is how a later ingest recognises the same file (see
    :func:`auditor.retrieval.ingest`). Front matter at the start of a text file
    (``---`` YAML lines ``---``) sets ``id``, ``title``, ``source``, ``version`` and
    the dates, and is removed from the text; an unknown key is an error. Two files
    given the same id, or one file reached under two ids, are an error.

    The date flags (and ``source``) are defaults: they fill fields a record leaves
    out, for JSONL records and text files alike.

    Returns the versions in input order; a record repeating the text of the
    previous record with the same id is dropped (it is the same version).
    Raises :class:`InputError` naming file, line and field on bad input; a JSONL file
    with several bad lines names each (:class:`auditor.jsonl.InputErrors`).
    """
    defaults = _validate_defaults(
        published_at=published_at,
        retrieved_at=retrieved_at,
        valid_from=valid_from,
        valid_to=valid_to,
    )
    if isinstance(paths, (str, Path)):
        paths = [paths]
    if source is not None and not isinstance(source, str):
        raise InputError(f"expected a string, got {type(source).__name__}", field="source")
    if id_prefix is not None and (not isinstance(id_prefix, str) or not id_prefix.strip()):
        raise InputError("expected a non-empty string", field="id_prefix")
    root_dir = _check_root(root)
    out: list[DocumentVersion] = []
    file_ids: dict[str, tuple[str, str]] = {}  # id -> (source, path as given)
    file_of: dict[str, tuple[str, str]] = {}  # source -> (id, path as given)

    def add_file(file: Path, base: Path) -> None:
        doc = _load_text_file(file, _file_id(file, root_dir or base, id_prefix), defaults, source)
        key = doc.source or ""
        if doc.doc_id in file_ids and file_ids[doc.doc_id][0] != key:
            raise InputError(
                f"document id {doc.doc_id!r} is also the id of "
                f"{file_ids[doc.doc_id][1]}; give --root (ids relative to a "
                "common folder) or --id-prefix",
                file=str(file),
                field="id",
            )
        if source is None and key in file_of and file_of[key][0] != doc.doc_id:
            raise InputError(
                f"the same file is given twice, as {file_of[key][0]!r} and {doc.doc_id!r}",
                file=str(file),
                field="id",
            )
        file_ids.setdefault(doc.doc_id, (key, str(file)))
        file_of.setdefault(key, (doc.doc_id, str(file)))
        out.append(doc)

    for raw_path in paths:
        path = Path(raw_path)
        if path.is_dir():
            for file in _walk_text_files(path):
                add_file(file, path)
        elif not path.exists():
            raise InputError("no such file or directory", file=str(path))
        elif path.suffix.lower() in JSONL_SUFFIXES:
            out.extend(_load_jsonl(path, defaults, source))
        elif path.suffix.lower() in TEXT_SUFFIXES:
            add_file(path, path.parent)
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
    text = nfc(text)
    dates = {
        name: parse_datetime(value, field=name)
        for name, value in (
            ("published_at", published_at),
            ("retrieved_at", retrieved_at),
            ("valid_from", valid_from),
            ("valid_to", valid_to),
        )
    }
    _check_interval(dates, file=None, line=None)
    return DocumentVersion(
        doc_id=doc_id,
        version=version or UNASSIGNED_VERSION,
        text=text,
        digest=sha256_text(text),
        source=source,
        title=title,
        **_dates(dates),
    )


def _validate_defaults(**flags: datetime | str | None) -> dict[str, datetime | None]:
    parsed = {name: parse_datetime(value, field=name) for name, value in flags.items()}
    _check_interval(parsed, file=None, line=None)
    return parsed


def _check_interval(
    dates: dict[str, datetime | None], *, file: str | None, line: int | None
) -> None:
    start, end = dates.get("valid_from"), dates.get("valid_to")
    if start is not None and end is not None and end < start:
        raise InputError(
            f"valid_to {end.isoformat()} is before valid_from {start.isoformat()}",
            file=file,
            line=line,
            field="valid_to",
        )


def _walk_text_files(root: Path) -> list[Path]:
    found: list[Path] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if not name.startswith(".") and Path(name).suffix.lower() in TEXT_SUFFIXES:
                found.append(Path(folder) / name)
    return found


def _check_root(root: Path | str | None) -> Path | None:
    if root is None:
        return None
    path = Path(root)
    if not path.is_dir():
        raise InputError("not a folder", file=str(path), field="root")
    return path.resolve()


def _file_id(file: Path, base: Path, id_prefix: str | None) -> str:
    """``id_prefix`` + the path of ``file`` relative to ``base`` (POSIX separators)."""
    try:
        rel = file.resolve().relative_to(base.resolve())
    except ValueError:
        raise InputError(
            f"not under the root folder {base}", file=str(file), field="root"
        ) from None
    return (id_prefix or "") + rel.as_posix()


def _load_text_file(
    path: Path, doc_id: str, defaults: dict[str, datetime | None], source: str | None
) -> DocumentVersion:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", file=str(path)) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise InputError(
            f"not valid UTF-8 (byte {exc.start})", file=str(path), line=line, field="text"
        ) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    meta, text = _front_matter(text, file=str(path))
    text = nfc(text)
    if not text.strip():
        raise InputError("empty document", file=str(path), field="text")
    dates: dict[str, datetime | None] = {}
    for name in DATE_FIELDS:
        value = meta.get(name)
        dates[name] = (
            parse_datetime(value, file=str(path), field=name)
            if value not in (None, "")
            else defaults[name]
        )
    _check_interval(dates, file=str(path), line=None)
    file_source = FILE_SOURCE_PREFIX + path.resolve().as_posix()
    return DocumentVersion(
        doc_id=meta.get("id") or doc_id,
        version=meta.get("version") or UNASSIGNED_VERSION,
        text=text,
        digest=sha256_text(text),
        source=meta.get("source") or (source if source is not None else file_source),
        title=meta.get("title"),
        **_dates(dates),
    )


def _front_matter(text: str, *, file: str) -> tuple[dict[str, Any], str]:
    """Split YAML front matter (``---`` ... ``---`` at the very start) from ``text``.

    Returns the checked fields (strings; dates as datetimes) and the text after it.
    Text that does not start with a ``---`` line has no front matter.
    """
    match = _FRONT_MATTER.match(text)
    if match is None:
        return {}, text
    import yaml

    try:
        data = yaml.safe_load(match.group(1))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = None if mark is None else mark.line + 2
        raise InputError(
            f"front matter is not valid YAML: {getattr(exc, 'problem', exc)}", file=file, line=line
        ) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise InputError(
            f"front matter must be a mapping of fields, got {type(data).__name__}",
            file=file,
            line=2,
        )
    check_fields(data, FRONT_MATTER_FIELDS, file=file, line=None)
    meta: dict[str, Any] = {}
    for name, value in data.items():
        if value is None:
            continue
        if name in DATE_FIELDS:
            meta[name] = value  # a string, YAML date or datetime: read by parse_datetime
        elif isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip():
            meta[name] = str(value)
        else:
            raise InputError(f"expected a non-empty string, got {value!r}", file=file, field=name)
    return meta, text[match.end() :]


def _load_jsonl(
    path: Path, defaults: dict[str, datetime | None], source: str | None
) -> list[DocumentVersion]:
    docs: list[DocumentVersion] = []
    file = str(path)
    bad = BadLines(path)  # every bad line of the file is named, none is half-read
    for line, record in read_jsonl(path, bad=bad):
        with bad.collect():
            docs.append(_record_to_version(record, defaults, source, file=file, line=line))
    bad.check()
    return docs


def _record_to_version(
    record: dict[str, Any],
    defaults: dict[str, datetime | None],
    source: str | None,
    *,
    file: str,
    line: int,
) -> DocumentVersion:
    check_fields(record, RECORD_FIELDS, file=file, line=line)
    doc_id = require(record, "id", (str, int), file=file, line=line)
    if isinstance(doc_id, bool):
        raise InputError("expected a string id", file=file, line=line, field="id")
    doc_id = str(doc_id)
    if not doc_id.strip():
        raise InputError("empty id", file=file, line=line, field="id")
    text = nfc(require(record, "text", str, file=file, line=line))
    if not text.strip():
        raise InputError("empty text", file=file, line=line, field="text")
    version = require(record, "version", (str, int), file=file, line=line, optional=True)
    if isinstance(version, bool):
        raise InputError("expected a string version label", file=file, line=line, field="version")
    version = None if version is None else str(version)
    if version is not None and not version.strip():
        raise InputError("empty version label", file=file, line=line, field="version")
    rec_source = require(record, "source", str, file=file, line=line, optional=True)
    title = require(record, "title", str, file=file, line=line, optional=True)
    dates: dict[str, datetime | None] = {}
    for name in DATE_FIELDS:
        value = record.get(name)
        dates[name] = (
            parse_datetime(value, file=file, line=line, field=name)
            if value not in (None, "")
            else defaults[name]
        )
    _check_interval(dates, file=file, line=line)
    return DocumentVersion(
        doc_id=doc_id,
        version=version or UNASSIGNED_VERSION,
        text=text,
        digest=sha256_text(text),
        source=rec_source if rec_source is not None else source,
        title=title,
        **_dates(dates),
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
