"""The version catalogue of a segmented index (what an ingest reads instead of every
version) and the corpus digest.

Each segment stores its catalogue in ``catalog/``: per version row, its document id,
label, content digest and file source (``file://`` URI, ``""`` for none), each a string
column (:func:`auditor.retrieval.tables.write_strings`, memory-mapped); the byte offset
of each record in ``versions.jsonl`` is the segment's ``version_offsets.npy``. A
segment written before the binary catalogue has ``catalog.json`` (the same columns
and the offsets, as JSON lists): it is still read, and ``auditor compact`` (or
``--convert``) rewrites it. An ingest loads the columns, finds the rows of the
documents it touches, and reads only those records (seek to the offset).

**Corpus digest.** Definition 2 (``"corpus_digest_version": 2`` in the manifest) is
``sha256("auditor-corpus-digest-v2\0" + L)`` where ``L`` is the additive set hash
(:func:`auditor.digest.set_hash`, LtHash16) of the versions' canonical
``[doc_id, version, digest]`` triples. Each segment stores the set hash of its own
versions (``digest.npy``, computed once when it is written), and ``L`` is the sum of
its segments', so an ingest adds one segment's hash and a compaction or a rebuild of
the same versions gives the same digest. Definition 1 (a manifest without
``corpus_digest_version``) is :func:`auditor.digest.content_digest` of the triples in
version order, recomputed over every version: :func:`corpus_digest` computes either,
so a digest recorded under definition 1 still verifies (:func:`check_corpus_digest`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

import auditor.retrieval.store as store
from auditor.clock import parse_datetime
from auditor.digest import SET_HASH_LANES, canonical_json, content_digest, set_hash, set_hash_digest
from auditor.errors import AuditorError
from auditor.retrieval.tables import read_strings, read_tables, record_offsets, write_strings
from auditor.types import DocumentVersion

CATALOG = "catalog"
STRING_COLUMNS = ("doc_id", "version", "digest", "file_source")
SEGMENT_DIGEST = "digest.npy"
CORPUS_DIGEST_VERSION = 2
"""The corpus digest definition this code writes (recorded in the manifest)."""
CORPUS_DIGEST_VERSIONS = (1, 2)
_CORPUS_DIGEST_TAG = "auditor-corpus-digest-v2"


def write_versions(
    folder: Path, versions: Sequence[DocumentVersion], file_sources: Sequence[str | None]
) -> list[int]:
    """Write ``versions.jsonl``, its catalogue and the segment's digest into the segment
    ``folder``; return the byte offset of each record and, last, the file's size."""
    offsets: list[int] = []
    pos = 0
    with open(folder / store.VERSIONS, "wb") as fh:
        for v in versions:
            line = (json.dumps(store.version_to_record(v), ensure_ascii=False) + "\n").encode()
            offsets.append(pos)
            fh.write(line)
            pos += len(line)
    write_catalog(
        folder,
        [v.doc_id for v in versions],
        [v.version for v in versions],
        [v.digest for v in versions],
        file_sources,
    )
    return [*offsets, pos]


def write_catalog(
    folder: Path,
    doc_ids: Sequence[str],
    versions: Sequence[str],
    digests: Sequence[str],
    file_sources: Sequence[str | None],
) -> None:
    """Write the catalogue columns (:data:`STRING_COLUMNS`) of the segment ``folder`` and
    its digest (the set hash of its versions, :data:`SEGMENT_DIGEST`)."""
    (folder / CATALOG).mkdir()
    for name, values in zip(
        STRING_COLUMNS,
        (doc_ids, versions, digests, [s or "" for s in file_sources]),
        strict=True,
    ):
        write_strings(folder / CATALOG, name, values)
    np.save(folder / SEGMENT_DIGEST, version_set_hash(doc_ids, versions, digests))


def version_set_hash(
    doc_ids: Sequence[str], versions: Sequence[str], digests: Sequence[str]
) -> NDArray[np.uint16]:
    """The set hash of versions: their canonical ``[doc_id, version, digest]`` triples."""
    return set_hash(
        [canonical_json([d, v, g]) for d, v, g in zip(doc_ids, versions, digests, strict=True)]
    )


def corpus_digest_from(lanes: Iterable[NDArray[np.uint16]]) -> str:
    """Definition 2 of the corpus digest, from its segments' set hashes."""
    total = np.zeros(SET_HASH_LANES, dtype=np.uint16)
    for part in lanes:
        total += part
    return set_hash_digest(total, _CORPUS_DIGEST_TAG)


def ordered_digest(doc_ids: Sequence[str], versions: Sequence[str], digests: Sequence[str]) -> str:
    """Definition 1 of the corpus digest: the triples, in version order, as one document."""
    return content_digest([list(t) for t in zip(doc_ids, versions, digests, strict=True)])


def _read_columns(folder: Path) -> dict[str, list[Any]] | None:
    """The catalogue columns of a segment with their record ``offset`` (binary, else
    ``catalog.json``), or ``None`` when it has neither."""
    if (folder / CATALOG).is_dir():
        tables = read_tables(folder)
        offsets = (
            record_offsets(folder)
            if tables is None
            else np.asarray(tables.version_offsets, dtype=np.int64).tolist()
        )
        n = len(offsets) - 1
        out: dict[str, list[Any]] = {
            c: read_strings(folder / CATALOG, c, n).tolist() for c in STRING_COLUMNS
        }
        out["file_source"] = [s or None for s in out["file_source"]]
        out["offset"] = offsets[:-1]
        return out
    path = folder / store.CATALOG_JSON
    if not path.is_file():
        return None
    part = store.read_json(path)
    n = len(part["doc_id"])
    if any(len(part[c]) != n for c in (*STRING_COLUMNS, "offset")):
        raise AuditorError(f"{path}: catalogue columns disagree (damaged index)")
    return part


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
        columns: dict[str, list[Any]] = {c: [] for c in (*STRING_COLUMNS, "offset")}
        seg_rows: list[int] = []
        for name in names:
            part = _read_columns(gen / name)
            if part is None:
                return None
            for c in columns:
                columns[c].extend(part[c])
            seg_rows.append(len(part["doc_id"]))
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

    def segment_hash(self, seg: int) -> NDArray[np.uint16]:
        """The set hash of segment ``seg``'s versions: its ``digest.npy``, or computed from
        its rows (a segment written before segment digests were stored)."""
        folder = self.gen / self.segments[seg]
        if (folder / SEGMENT_DIGEST).is_file():
            return read_segment_hash(folder)
        rows = np.flatnonzero(self.segment_of_row == seg).tolist()
        return version_set_hash(
            [self.doc_id[r] for r in rows],
            [self.version[r] for r in rows],
            [self.digest[r] for r in rows],
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


def read_segment_hash(folder: Path) -> NDArray[np.uint16]:
    """The set hash a segment stored when it was written (``digest.npy``)."""
    path = folder / SEGMENT_DIGEST
    try:
        lanes = np.load(path)
    except (OSError, ValueError) as exc:
        raise AuditorError(f"{path}: cannot read segment digest ({exc}; damaged index)") from None
    if lanes.shape != (SET_HASH_LANES,) or lanes.dtype != np.uint16:
        raise AuditorError(f"{path}: not a segment digest (damaged index)")
    return np.asarray(lanes, dtype=np.uint16)


def corpus_digest(gen: Path, manifest: Mapping[str, Any], version: int) -> str:
    """The corpus digest of the generation ``gen`` under definition ``version`` (1 or 2,
    see the module docstring), recomputed from its files."""
    from auditor.retrieval.reader import read_versions

    if version not in CORPUS_DIGEST_VERSIONS:
        raise AuditorError(
            f"corpus digest definition {version!r} is not known (expected one of "
            f"{CORPUS_DIGEST_VERSIONS}); it was recorded by a newer auditor"
        )
    catalog = Catalog.read(gen, dict(manifest))
    if catalog is None:  # a format-1 generation, or segments without a catalogue
        ordered = read_versions(gen, dict(manifest))
        cols = (
            [v.doc_id for v in ordered],
            [v.version for v in ordered],
            [v.digest for v in ordered],
        )
        return (
            ordered_digest(*cols) if version == 1 else corpus_digest_from([version_set_hash(*cols)])
        )
    if version == 2:
        return corpus_digest_from(catalog.segment_hash(i) for i in range(len(catalog.segments)))
    rows = catalog.order.tolist()
    return ordered_digest(
        [catalog.doc_id[r] for r in rows],
        [catalog.version[r] for r in rows],
        [catalog.digest[r] for r in rows],
    )


def digest_version(manifest: Mapping[str, Any]) -> int:
    """The corpus digest definition a manifest (or a run's recorded index config) used:
    its ``corpus_digest_version``, 1 when absent (written before definitions were recorded)."""
    return int(manifest.get("corpus_digest_version", 1))


def check_corpus_digest(index_dir: Path, recorded: Mapping[str, Any]) -> None:
    """Check that the live index of ``index_dir`` holds the corpus ``recorded`` (an index
    manifest, or the index component config a run recorded in the ledger): its
    ``corpus_digest`` is recomputed under the definition it was recorded with, so a run
    recorded under definition 1 still verifies. Raises :class:`AuditorError` on a mismatch."""
    gen = store.require_generation(Path(index_dir))
    manifest = store.read_json(gen / store.MANIFEST)
    version = digest_version(recorded)
    got = corpus_digest(gen, manifest, version)
    if got != recorded.get("corpus_digest"):
        raise AuditorError(
            f"{index_dir}: the corpus digest (definition {version}) is {got[:12]}..., but "
            f"{str(recorded.get('corpus_digest'))[:12]}... was recorded: the index holds "
            "other versions than the run used"
        )
