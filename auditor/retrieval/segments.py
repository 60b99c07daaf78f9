"""The version catalogue of a segmented index: what an ingest reads instead of every version.

Each segment stores ``catalog.json``: per version row, its document id, label,
content digest, file source (``file://`` URI or ``null``) and the byte offset of its
record in the segment's ``versions.jsonl``. The columns of all segments together are
a small fraction of the versions file (no text, no dates to parse), so an ingest
loads them, finds the rows of the documents it touches, and reads only those
records (seek to the offset). Everything that depends on the whole corpus (the
version order, the corpus digest, the document count) is computed from the columns
with list and array operations, not from :class:`~auditor.types.DocumentVersion`
objects.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

import auditor.retrieval.store as store
from auditor.clock import parse_datetime
from auditor.digest import sha256_text
from auditor.errors import AuditorError
from auditor.types import DocumentVersion

CATALOG = "catalog.json"
COLUMNS = ("doc_id", "version", "digest", "file_source", "offset")


def write_versions(
    folder: Path, versions: Sequence[DocumentVersion], file_sources: Sequence[str | None]
) -> list[int]:
    """Write ``versions.jsonl`` and its ``catalog.json`` into the segment ``folder``;
    return the byte offset of each record and, last, the file's size."""
    offsets: list[int] = []
    pos = 0
    with open(folder / store.VERSIONS, "wb") as fh:
        for v in versions:
            line = (json.dumps(store.version_to_record(v), ensure_ascii=False) + "\n").encode()
            offsets.append(pos)
            fh.write(line)
            pos += len(line)
    catalog = {
        "doc_id": [v.doc_id for v in versions],
        "version": [v.version for v in versions],
        "digest": [v.digest for v in versions],
        "file_source": list(file_sources),
        "offset": offsets,
    }
    (folder / CATALOG).write_text(json.dumps(catalog, ensure_ascii=False), encoding="utf-8")
    return [*offsets, pos]


@dataclass
class Catalog:
    """The version columns of a whole generation (rows in storage order)."""

    gen: Path
    segments: list[str]
    doc_id: list[str]
    version: list[str]
    digest: list[str]
    file_source: list[str | None]
    offset: list[int]
    segment_of_row: NDArray[np.int32]
    order: NDArray[np.int64]
    """Storage rows in version order."""
    valid_to: dict[str, str | None]
    """``valid_to`` of rows whose value changed after their segment was written."""

    def __len__(self) -> int:
        return len(self.doc_id)

    @classmethod
    def read(cls, gen: Path, manifest: dict[str, Any]) -> Catalog | None:
        """The catalogue of ``gen``; ``None`` when a segment has none (a full read is needed)."""
        if int(manifest.get("format_version", 1)) < 2:
            return None
        names = [s["name"] for s in manifest.get("segments", [])]
        columns: dict[str, list[Any]] = {c: [] for c in COLUMNS}
        seg_rows: list[int] = []
        for name in names:
            path = gen / name / CATALOG
            if not path.is_file():
                return None
            part = store.read_json(path)
            n = len(part["doc_id"])
            if any(len(part[c]) != n for c in COLUMNS):
                raise AuditorError(f"{path}: catalogue columns disagree (damaged index)")
            for c in COLUMNS:
                columns[c].extend(part[c])
            seg_rows.append(n)
        order = np.load(gen / store.ORDER).astype(np.int64)
        if len(order) != len(columns["doc_id"]) or len(order) != manifest["versions"]:
            raise AuditorError(f"{gen}: catalogue and manifest disagree (damaged index)")
        return cls(
            gen,
            names,
            columns["doc_id"],
            columns["version"],
            columns["digest"],
            columns["file_source"],
            columns["offset"],
            np.repeat(np.arange(len(names), dtype=np.int32), seg_rows),
            order,
            dict(store.read_json(gen / store.VALID_TO)),
        )

    def rows_of(self, doc_ids: set[str], file_sources: set[str]) -> list[int]:
        """Rows of the documents ``doc_ids`` and of versions loaded from ``file_sources``."""
        return [
            r
            for r, (d, s) in enumerate(zip(self.doc_id, self.file_source, strict=True))
            if d in doc_ids or (s is not None and s in file_sources)
        ]

    def records(self, rows: Iterable[int]) -> dict[int, DocumentVersion]:
        """The stored versions at ``rows`` (their current ``valid_to``; superseded unset)."""
        out: dict[int, DocumentVersion] = {}
        by_segment: dict[int, list[int]] = {}
        for r in rows:
            by_segment.setdefault(int(self.segment_of_row[r]), []).append(r)
        for seg, seg_rows in by_segment.items():
            with open(self.gen / self.segments[seg] / store.VERSIONS, "rb") as fh:
                for r in sorted(seg_rows, key=lambda r: self.offset[r]):
                    fh.seek(self.offset[r])
                    v = store.record_to_version(json.loads(fh.readline()))
                    if (v.doc_id, v.digest) != (self.doc_id[r], self.digest[r]):
                        raise AuditorError(
                            f"{self.gen / self.segments[seg]}: catalogue row {r} does not "
                            "match its version record (damaged index)"
                        )
                    if str(r) in self.valid_to:
                        v = replace(v, valid_to=parse_datetime(self.valid_to[str(r)]))
                    out[r] = v
        return out

    def corpus_digest(self, order: NDArray[np.int64]) -> str:
        """:func:`auditor.digest.content_digest` of ``[doc_id, version, digest]`` in ``order``."""
        rows = order.tolist()
        triples = [[self.doc_id[r], self.version[r], self.digest[r]] for r in rows]
        return sha256_text(
            json.dumps(triples, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        )

    def extend(
        self, versions: Sequence[DocumentVersion], file_sources: Sequence[str | None]
    ) -> None:
        """Append rows for ``versions`` (a new segment's; offsets are not needed after)."""
        self.doc_id.extend(v.doc_id for v in versions)
        self.version.extend(v.version for v in versions)
        self.digest.extend(v.digest for v in versions)
        self.file_source.extend(file_sources)
        self.offset.extend([-1] * len(versions))
