"""Binary chunk and version tables of an index segment, read without parsing records.

A segment written by this code stores, next to ``versions.jsonl`` (the version
records, with their text) and its catalogue (:mod:`auditor.retrieval.segments`):

=====================  ==========================================================
``tables.json``        ``{"format": "auditor-segment-tables", "version": 1,
                       "versions": V, "chunks": C}``: the marker (and the counts)
``chunks.npy``         int64 ``(C, 3)``: version row (storage row in the
                       generation), start, end of each chunk in its version text
``chunk_ids.npy``      uint8 ``(C, 16)``: each chunk id (32 hex characters,
                       :func:`auditor.retrieval.chunking.chunk_id`) as 16 bytes
``version_offsets.npy``  int64 ``(V + 1,)``: byte offset of each record in
                       ``versions.jsonl``, and the file's size
``version_times.npy``  float64 ``(V, 2)``: each version's visible-from and
                       ``valid_to`` as written (POSIX seconds, ``-inf`` undated,
                       ``+inf`` open; :func:`auditor.retrieval.asof.version_stamps`)
=====================  ==========================================================

Opening an index memory-maps these arrays: the as-of masks need only the times, a
search only the rows it returns, and a version record is read (one seek) when a hit
or a caller asks for it. A segment without ``tables.json`` (written before these
tables existed) stores its chunks as ``chunks.jsonl`` and is read in full as before.

Variable-width text columns (the version catalogue, :mod:`auditor.retrieval.segments`;
the BM25 vocabulary, :mod:`auditor.retrieval.lexical`) use one layout,
:func:`write_strings` / :func:`read_strings`: ``NAME.npy`` (uint8, the values' UTF-8
bytes end to end) and ``NAME.offsets.npy`` (int64 ``(n + 1,)``, where each value starts,
then the total), both memory-mapped; a value is decoded when it is asked for.
"""

from __future__ import annotations

import itertools
import json
import re
from abc import abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any, overload

import numpy as np
from numpy.typing import NDArray

import auditor.retrieval.store as store
from auditor.errors import AuditorError
from auditor.types import DocumentVersion

TABLES = "tables.json"
CHUNK_TABLE = "chunks.npy"
CHUNK_IDS = "chunk_ids.npy"
VERSION_OFFSETS = "version_offsets.npy"
VERSION_TIMES = "version_times.npy"
TABLES_FORMAT = "auditor-segment-tables"
TABLES_VERSION = 1
READABLE_TABLES = (1,)
ID_BYTES = 16
OFFSETS_SUFFIX = ".offsets.npy"

_HEX_ID = re.compile(r"[0-9a-f]{32}")


def ids_to_bytes(ids: Sequence[str]) -> NDArray[np.uint8] | None:
    """Chunk ids as a ``(n, 16)`` byte array, or ``None`` when one is not 32 lowercase
    hex characters (its segment then keeps ``chunks.jsonl``)."""
    if isinstance(ids, ChunkIds):
        return ids.raw()
    if not all(isinstance(i, str) and _HEX_ID.fullmatch(i) for i in ids):
        return None
    return np.frombuffer(bytes.fromhex("".join(ids)), dtype=np.uint8).reshape(-1, ID_BYTES).copy()


def write_strings(folder: Path, name: str, values: Sequence[str]) -> None:
    """Write ``values`` as the string column ``name`` of ``folder`` (``NAME.npy``: the
    UTF-8 bytes end to end, ``NAME.offsets.npy``: where each value starts, then the total)."""
    encoded = [v.encode("utf-8") for v in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    np.save(folder / f"{name}.npy", np.frombuffer(b"".join(encoded), dtype=np.uint8))
    np.save(folder / f"{name}{OFFSETS_SUFFIX}", offsets)


def read_strings(folder: Path, name: str, n: int | None = None) -> StringColumn:
    """The string column ``name`` of ``folder`` (memory-mapped; ``n``: the expected length).
    A missing, truncated or inconsistent file is an :class:`AuditorError` naming it."""
    offsets_path = folder / f"{name}{OFFSETS_SUFFIX}"
    try:
        offsets = np.load(offsets_path, mmap_mode="r")
    except (OSError, ValueError) as exc:
        raise AuditorError(
            f"{offsets_path}: cannot read index table ({exc}; damaged index)"
        ) from None
    if offsets.ndim != 1 or offsets.dtype != np.int64 or len(offsets) < 1:
        raise AuditorError(f"{offsets_path}: not a string offsets table (damaged index)")
    count = len(offsets) - 1
    if n is not None and count != n:
        raise AuditorError(f"{offsets_path}: {count} values, expected {n} (damaged index)")
    data = load_table(folder / f"{name}.npy", (int(offsets[-1]),), np.uint8)
    return StringColumn(data, offsets)


class _Strings(Sequence[str]):
    """A sequence of strings decoded one at a time: indexing (negative, slices) here,
    the decoding of one in-range row in :meth:`_get`."""

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> list[str]: ...
    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        return self._get(i)

    @abstractmethod
    def _get(self, i: int) -> str: ...


class StringColumn(_Strings):
    """A column of strings stored as UTF-8 bytes and offsets (see :func:`write_strings`)."""

    def __init__(self, data: NDArray[np.uint8], offsets: NDArray[np.int64]) -> None:
        self._data = data
        self._offsets = offsets

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def _get(self, i: int) -> str:
        lo, hi = int(self._offsets[i]), int(self._offsets[i + 1])
        return bytes(self._data[lo:hi]).decode("utf-8")

    def __iter__(self) -> Iterator[str]:
        return iter(self.tolist())

    def tolist(self) -> list[str]:
        """Every value, decoded at once (one decode and slicing when the text is ASCII)."""
        bounds = np.asarray(self._offsets, dtype=np.int64).tolist()
        raw = bytes(self._data)
        text = raw.decode("utf-8")
        pairs = list(itertools.pairwise(bounds))
        if len(text) == len(raw):  # ASCII: character offsets are the byte offsets
            return [text[lo:hi] for lo, hi in pairs]
        return [raw[lo:hi].decode("utf-8") for lo, hi in pairs]


class ChunkIds(_Strings):
    """Chunk ids of a generation by chunk row: byte rows (memory-mapped per segment) or
    strings (segments read from ``chunks.jsonl``), turned into strings when asked."""

    def __init__(self) -> None:
        self._parts: list[NDArray[np.uint8] | list[str]] = []
        self._starts: list[int] = [0]

    def add(self, part: NDArray[np.uint8] | list[str]) -> None:
        """Append a segment's ids."""
        self._parts.append(part)
        self._starts.append(self._starts[-1] + len(part))

    def __len__(self) -> int:
        return self._starts[-1]

    def _get(self, i: int) -> str:
        p = int(np.searchsorted(self._starts, i, side="right")) - 1
        part = self._parts[p]
        got = part[i - self._starts[p]]
        return got if isinstance(got, str) else bytes(got).hex()

    def __iter__(self) -> Iterator[str]:
        for part in self._parts:
            if isinstance(part, list):
                yield from part
            else:
                yield from bytes(np.ascontiguousarray(part)).hex(" ", ID_BYTES).split()

    def raw(self) -> NDArray[np.uint8] | None:
        """Every id as a ``(n, 16)`` byte array (``None``: an id is not 32 hex characters)."""
        out: list[NDArray[np.uint8]] = []
        for part in self._parts:
            if isinstance(part, list):
                got = ids_to_bytes(part)
                if got is None:
                    return None
                out.append(got)
            else:
                out.append(np.asarray(part, dtype=np.uint8))
        if not out:
            return np.zeros((0, ID_BYTES), dtype=np.uint8)
        return np.concatenate(out)


@dataclass
class SegmentTables:
    """The binary tables of one segment (arrays memory-mapped)."""

    folder: Path
    chunks: NDArray[np.int64]
    chunk_ids: NDArray[np.uint8]
    version_offsets: NDArray[np.int64]
    version_times: NDArray[np.float64]


def write_tables(
    folder: Path,
    chunk_ids: NDArray[np.uint8],
    chunk_version: NDArray[np.int64],
    starts: NDArray[np.int64],
    ends: NDArray[np.int64],
    version_offsets: Sequence[int],
    visible: NDArray[np.float64],
    valid_to: NDArray[np.float64],
) -> None:
    """Write the binary tables of a segment whose ``versions.jsonl`` is written."""
    n_chunks, n_versions = len(chunk_ids), len(visible)
    np.save(
        folder / CHUNK_TABLE,
        np.stack([chunk_version, starts, ends], axis=1).astype(np.int64).reshape(n_chunks, 3),
    )
    np.save(folder / CHUNK_IDS, np.ascontiguousarray(chunk_ids, dtype=np.uint8))
    np.save(folder / VERSION_OFFSETS, np.asarray(version_offsets, dtype=np.int64))
    np.save(
        folder / VERSION_TIMES,
        np.stack([visible, valid_to], axis=1).astype(np.float64).reshape(n_versions, 2),
    )
    store.write_json(
        folder / TABLES,
        {
            "format": TABLES_FORMAT,
            "version": TABLES_VERSION,
            "versions": n_versions,
            "chunks": n_chunks,
        },
    )


def record_offsets(folder: Path) -> list[int]:
    """The byte offset of each record in the segment's ``versions.jsonl``, then its size
    (scanned: for a segment without ``version_offsets.npy``)."""
    with open(folder / store.VERSIONS, "rb") as fh:
        return np.cumsum([0, *(len(line) for line in fh)], dtype=np.int64).tolist()


def read_tables(folder: Path) -> SegmentTables | None:
    """The binary tables of the segment ``folder``, or ``None`` when it has none (a
    segment written before they existed: read ``chunks.jsonl``). A damaged or
    truncated table is an :class:`AuditorError` naming the file."""
    marker = folder / TABLES
    if not marker.is_file():
        return None
    meta = store.read_json(marker)
    if not isinstance(meta, dict) or meta.get("format") != TABLES_FORMAT:
        raise AuditorError(f"{marker}: not a segment table marker (damaged index)")
    if meta.get("version") not in READABLE_TABLES:
        raise AuditorError(
            f"{marker}: segment table version {meta.get('version')!r} is not supported "
            f"(expected one of {READABLE_TABLES}); this index was written by a newer auditor"
        )
    n_versions, n_chunks = meta.get("versions"), meta.get("chunks")
    if not isinstance(n_versions, int) or not isinstance(n_chunks, int):
        raise AuditorError(f"{marker}: 'versions' and 'chunks' must be integers (damaged index)")
    chunks = load_table(folder / CHUNK_TABLE, (n_chunks, 3), np.int64)
    ids = load_table(folder / CHUNK_IDS, (n_chunks, ID_BYTES), np.uint8)
    offsets = load_table(folder / VERSION_OFFSETS, (n_versions + 1,), np.int64)
    times = load_table(folder / VERSION_TIMES, (n_versions, 2), np.float64)
    records = folder / store.VERSIONS
    try:
        size = records.stat().st_size
    except OSError as exc:
        raise AuditorError(f"{records}: cannot read version records ({exc})") from None
    if int(offsets[-1]) != size or (n_versions and int(offsets[0]) != 0):
        raise AuditorError(
            f"{records}: {size} bytes, but {folder / VERSION_OFFSETS} says "
            f"{int(offsets[-1])} (truncated or damaged index)"
        )
    return SegmentTables(folder, chunks, ids, offsets, times)


def load_table(path: Path, shape: tuple[int, ...] | None, dtype: type[np.generic]) -> NDArray[Any]:
    """The array ``path``, memory-mapped, checked to be ``dtype`` and (unless ``None``)
    ``shape``; an :class:`AuditorError` naming the file otherwise."""
    try:
        arr = np.load(path, mmap_mode="r")
    except (OSError, ValueError) as exc:
        raise AuditorError(f"{path}: cannot read index table ({exc}; damaged index)") from None
    if (shape is not None and arr.shape != shape) or arr.dtype != np.dtype(dtype):
        raise AuditorError(
            f"{path}: expected {np.dtype(dtype).name} {shape or ''}, found {arr.dtype.name} "
            f"{arr.shape} (damaged index)"
        )
    return arr


class VersionTable(Sequence[DocumentVersion]):
    """Every version of a generation by storage row, each read when first asked for.

    Segments with binary tables keep their records in ``versions.jsonl`` and read one
    by seeking to its offset; segments without are parsed when added. ``valid_to``
    changed since a segment was written and ``superseded`` (a newer version exists)
    are set on the versions handed out.
    """

    def __init__(self) -> None:
        self._parts: list[tuple[Path, NDArray[np.int64] | None, list[DocumentVersion] | None]] = []
        self._starts: list[int] = [0]
        self.valid_to: dict[int, datetime | None] = {}
        """``valid_to`` of rows whose value changed after their segment was written."""
        self._superseded: NDArray[np.bool_] | None = None
        self._cache: dict[int, DocumentVersion] = {}

    def set_superseded(self, has_newer: NDArray[np.bool_]) -> None:
        """Mark the versions handed out from now on: ``superseded`` = ``has_newer[row]``."""
        self._superseded = has_newer
        self._cache.clear()

    def add_records(self, folder: Path, offsets: NDArray[np.int64]) -> None:
        """Append a segment whose records are read on demand (``offsets``: its table)."""
        self._parts.append((folder / store.VERSIONS, offsets, None))
        self._starts.append(self._starts[-1] + len(offsets) - 1)

    def add_loaded(self, folder: Path, versions: list[DocumentVersion]) -> None:
        """Append a segment whose versions were parsed."""
        self._parts.append((folder / store.VERSIONS, None, versions))
        self._starts.append(self._starts[-1] + len(versions))

    def loaded(self) -> bool:
        """True when every segment's versions were parsed (no binary tables)."""
        return all(p[2] is not None for p in self._parts)

    def __len__(self) -> int:
        return self._starts[-1]

    @overload
    def __getitem__(self, i: int) -> DocumentVersion: ...
    @overload
    def __getitem__(self, i: slice) -> list[DocumentVersion]: ...
    def __getitem__(self, i: int | slice) -> DocumentVersion | list[DocumentVersion]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        i = int(i)
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        got = self._cache.get(i)
        if got is None:
            got = self._cache[i] = self._finish(i, self._stored(i))
        return got

    def __iter__(self) -> Iterator[DocumentVersion]:
        self.load_all()
        return (self._cache[i] for i in range(len(self)))

    def load_all(self) -> None:
        """Read every record not read yet (one pass per file, for rebuilds)."""
        if len(self._cache) == len(self):
            return
        for p, (path, offsets, versions) in enumerate(self._parts):
            lo = self._starts[p]
            if versions is None:
                assert offsets is not None
                versions = _read_all(path, offsets)
            for j, v in enumerate(versions):
                if lo + j not in self._cache:
                    self._cache[lo + j] = self._finish(lo + j, v)

    def _stored(self, i: int) -> DocumentVersion:
        p = int(np.searchsorted(self._starts, i, side="right")) - 1
        path, offsets, versions = self._parts[p]
        j = i - self._starts[p]
        if versions is not None:
            return versions[j]
        assert offsets is not None
        lo, hi = int(offsets[j]), int(offsets[j + 1])
        try:
            with open(path, "rb") as fh:
                fh.seek(lo)
                data = fh.read(hi - lo)
            return _record(path, j, data)
        except OSError as exc:
            raise AuditorError(f"{path}: cannot read version record {j} ({exc})") from None

    def _finish(self, i: int, v: DocumentVersion) -> DocumentVersion:
        if i in self.valid_to:
            v = replace(v, valid_to=self.valid_to[i])
        if self._superseded is not None and v.superseded != bool(self._superseded[i]):
            v = replace(v, superseded=bool(self._superseded[i]))
        return v


def _record(path: Path, row: int, data: bytes) -> DocumentVersion:
    try:
        return store.record_to_version(json.loads(data))
    except (ValueError, KeyError, TypeError) as exc:
        raise AuditorError(
            f"{path}: version record {row} is unreadable ({exc}; damaged index)"
        ) from None


def _read_all(path: Path, offsets: NDArray[np.int64]) -> list[DocumentVersion]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise AuditorError(f"{path}: cannot read version records ({exc})") from None
    bounds = np.asarray(offsets, dtype=np.int64).tolist()
    return [_record(path, j, data[bounds[j] : bounds[j + 1]]) for j in range(len(bounds) - 1)]


def chunk_table_rows(
    tables: SegmentTables,
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """The version row, start and end columns of a segment's chunk table."""
    c = tables.chunks
    return (
        np.asarray(c[:, 0], dtype=np.int64),
        np.asarray(c[:, 1], dtype=np.int64),
        np.asarray(c[:, 2], dtype=np.int64),
    )
