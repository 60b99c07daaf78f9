"""On-disk layout of the evidence index, with crash-safe generation swaps.

An index directory holds numbered *generations* and a ``CURRENT`` file naming
the live one::

    DIR/CURRENT              "gen-000003"
    DIR/gen-000003/          manifest.json (lists the segments), order.npy (version
                             order), has_newer.npy (per version row: a newer version
                             of its document exists), valid_to.json (valid_to
                             changed since a segment was written), dense.faiss
                             (hnsw, ivf; ivfpq written before per-segment lists)
    DIR/gen-000003/seg-000001/   versions.jsonl + catalog/ (the version records and
                                 their catalogue), digest.npy (the segment's
                                 corpus-digest part), tables.json, chunks.npy,
                                 chunk_ids.npy, version_offsets.npy,
                                 version_times.npy (binary chunk and version
                                 tables), vectors.npy, sentence_spans.npy,
                                 sentences.npy, lexical/ (BM25 postings);
                                 ivfpq: ivfpq.lists.faiss (the segment's PQ
                                 codes), vectors.f16.npy, and in the segment that
                                 trained it ivfpq.trained.faiss (manifest
                                 ``dense_trained``)                    one per ingest
    DIR/.lock                held (flock) by a running ingest or compact

A new generation is written completely (and fsynced) into ``DIR/.tmp-*``, renamed
to ``DIR/gen-N`` and only then made live by atomically replacing ``CURRENT``. A
crash at any point leaves ``CURRENT`` naming a complete generation; leftovers are
removed by the next ingest. Segments are immutable once written: a new generation
hard-links the live one's segments (copy-on-write without copying) and adds its
own, so growing the index writes only what is new. Format 1 (one set of files at
the generation root, no segments) is still read; the next ingest or compact
rewrites it as format 2.

The binary tables (:mod:`auditor.retrieval.tables`) let an index open without parsing
a record: chunk rows and ids, version record offsets and version dates are arrays,
memory-mapped, and a version record is read when a search returns one of its chunks.
A segment written before them has ``chunks.jsonl`` (one JSON line per chunk) instead,
and a generation written before them has no ``has_newer.npy``: both are still read
(in full, as before); the next rewrite (``compact``, a rebuilding ingest) writes the
tables. The manifest does not change with them, so an index's identity (its digest
in the ledger) is the same in either form.

``sentence_spans.npy`` (int64 rows: chunk row in the segment, start, end in the
version text) and ``sentences.npy`` (their float32 embeddings, same encoder as
``vectors.npy``) hold the sentences of the segment's multi-sentence chunks, split as
the judges split evidence (:func:`auditor.text.sentence_spans`); a
one-sentence chunk has no rows (its sentence is its text, its vector the chunk's).
The manifest's segment entry counts them (``"sentences"``). A segment written before
they were stored has neither file nor count: it still opens, its sentences are
encoded at audit time when needed, and the next rewrite (``compact``, a rebuilding
ingest) adds them.

An ``ivfpq`` index keeps its trained, empty FAISS index (coarse quantizer and PQ
codebooks) once, as ``ivfpq.trained.faiss`` in the segment that trained it (named by
the manifest's ``dense_trained``), and each segment the inverted lists of its own
chunks (``ivfpq.lists.faiss``: PQ codes, ids = chunk rows), so an ingest encodes its
new chunks only (:mod:`auditor.retrieval.dense`); each segment also stores its vectors
as float16 (``vectors.f16.npy``), memory-mapped to re-score candidates. A generation
without ``dense_trained`` keeps one ``dense.faiss`` (``hnsw``, ``ivf``, or an ``ivfpq``
index written before per-segment lists): it is read as before, grows by copying that
file, and ``compact`` rewrites an ``ivfpq`` one per segment.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import uuid
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from auditor.clock import parse_datetime
from auditor.errors import AuditorError
from auditor.types import DocumentVersion

CURRENT = "CURRENT"
MANIFEST = "manifest.json"
VERSIONS = "versions.jsonl"
CHUNKS = "chunks.jsonl"
VECTORS = "vectors.npy"
SENTENCES = "sentences.npy"
SENTENCE_SPANS = "sentence_spans.npy"
DENSE = "dense.faiss"
IVF_TRAINED = "ivfpq.trained.faiss"
"""The trained, empty IVF-PQ index of an ivfpq generation (in one segment)."""
IVF_LISTS = "ivfpq.lists.faiss"
"""A segment's IVF-PQ inverted lists (FAISS ``write_InvertedLists``)."""
VECTORS_F16 = "vectors.f16.npy"
"""A segment's vectors as float16 (ivfpq: read to re-score candidates)."""
LEXICAL = "lexical"
ORDER = "order.npy"
HAS_NEWER = "has_newer.npy"
VALID_TO = "valid_to.json"
CATALOG_JSON = "catalog.json"
"""The catalogue as segments written before the binary one store it (read only)."""
SEG_PREFIX = "seg-"
LOCK = ".lock"
TMP_PREFIX = ".tmp-"
GEN_PREFIX = "gen-"
FORMAT = "auditor-evidence-index"
FORMAT_VERSION = 2
READABLE_FORMATS = (1, 2)


def current_generation(index_dir: Path) -> Path | None:
    """The live generation folder of ``index_dir``, or ``None`` if it holds no index."""
    pointer = index_dir / CURRENT
    if not pointer.is_file():
        return None
    name = pointer.read_text(encoding="utf-8").strip()
    gen = index_dir / name
    if not name.startswith(GEN_PREFIX) or "/" in name or not (gen / MANIFEST).is_file():
        raise AuditorError(
            f"{index_dir}: CURRENT names {name!r}, which is not a complete index generation"
        )
    return gen


def require_generation(index_dir: Path) -> Path:
    """Like :func:`current_generation` but a missing index is an error."""
    index_dir = Path(index_dir)
    if not index_dir.exists():
        raise AuditorError(f"{index_dir}: no such evidence index (run `auditor ingest` first)")
    gen = current_generation(index_dir)
    if gen is None:
        raise AuditorError(f"{index_dir}: not an evidence index (no {CURRENT} file)")
    return gen


def check_writable_dir(index_dir: Path) -> None:
    """Refuse to turn a folder holding unrelated files into an index."""
    if index_dir.exists() and not index_dir.is_dir():
        raise AuditorError(f"{index_dir}: exists and is not a directory")
    if not index_dir.exists() or (index_dir / CURRENT).exists():
        return
    foreign = [
        p.name
        for p in index_dir.iterdir()
        if not (p.name == LOCK or p.name.startswith((TMP_PREFIX, GEN_PREFIX)))
    ]
    if foreign:
        raise AuditorError(
            f"{index_dir}: not an evidence index and not empty "
            f"(holds {', '.join(sorted(foreign)[:3])}); choose another --index"
        )


@contextlib.contextmanager
def ingest_lock(index_dir: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``index_dir`` (one ingest at a time)."""
    index_dir.mkdir(parents=True, exist_ok=True)
    handle = open(index_dir / LOCK, "a+b")  # noqa: SIM115 - closed in finally
    try:
        try:
            import fcntl

            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        except ImportError:  # pragma: no cover - non-POSIX
            pass
        yield
    finally:
        handle.close()


def new_temp_dir(index_dir: Path) -> Path:
    """A fresh folder inside ``index_dir`` to build a generation in."""
    path = index_dir / f"{TMP_PREFIX}{uuid.uuid4().hex}"
    path.mkdir(parents=True)
    return path


def next_generation_name(index_dir: Path) -> str:
    """``gen-N`` with N one above every generation folder present."""
    numbers = [
        int(p.name[len(GEN_PREFIX) :])
        for p in index_dir.glob(f"{GEN_PREFIX}*")
        if p.name[len(GEN_PREFIX) :].isdigit()
    ]
    return f"{GEN_PREFIX}{max(numbers, default=0) + 1:06d}"


def publish(index_dir: Path, temp_dir: Path) -> Path:
    """Make the fully written ``temp_dir`` the live generation (atomic swap)."""
    fsync_tree(temp_dir)
    gen = index_dir / next_generation_name(index_dir)
    os.replace(temp_dir, gen)
    fsync_dir(index_dir)
    pointer_tmp = index_dir / f"{TMP_PREFIX}{CURRENT}-{uuid.uuid4().hex}"
    with open(pointer_tmp, "w", encoding="utf-8") as fh:
        fh.write(gen.name + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(pointer_tmp, index_dir / CURRENT)
    fsync_dir(index_dir)
    return gen


def link_tree(src: Path, dst: Path) -> None:
    """Recreate the folder ``src`` at ``dst`` with hard links to its files (copies
    where the file system refuses links). The files must never be modified in place."""
    for folder, _dirs, files in os.walk(src):
        target = dst / Path(folder).relative_to(src)
        target.mkdir(parents=True, exist_ok=True)
        for name in files:
            try:
                os.link(Path(folder) / name, target / name)
            except OSError:
                shutil.copy2(Path(folder) / name, target / name)


def remove_leftovers(index_dir: Path, keep: set[str]) -> None:
    """Remove temp folders and generations not in ``keep`` (call under the lock)."""
    for path in index_dir.iterdir():
        if path.name in keep or path.name in (CURRENT, LOCK):
            continue
        if path.name.startswith((TMP_PREFIX, GEN_PREFIX)):
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)


def fsync_dir(path: Path) -> None:
    """fsync a directory entry (no-op where unsupported)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def fsync_tree(root: Path) -> None:
    """fsync every file and folder under ``root``."""
    for folder, _dirs, files in os.walk(root):
        for name in files:
            with open(Path(folder) / name, "rb") as fh:
                os.fsync(fh.fileno())
        fsync_dir(Path(folder))


def write_json(path: Path, obj: Any) -> None:
    """Write ``obj`` as indented JSON."""
    path.write_text(
        json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8"
    )


def read_json(path: Path) -> Any:
    """Read a JSON file, with a clear error when it is damaged."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise AuditorError(f"{path}: unreadable index file ({exc})") from None


def version_to_record(doc: DocumentVersion) -> dict[str, Any]:
    """A JSON-ready record of a document version."""
    return {
        "id": doc.doc_id,
        "version": doc.version,
        "text": doc.text,
        "digest": doc.digest,
        "source": doc.source,
        "title": doc.title,
        "superseded": doc.superseded,
        **{
            name: _iso(getattr(doc, name))
            for name in ("published_at", "retrieved_at", "valid_from", "valid_to")
        },
    }


def record_to_version(record: dict[str, Any]) -> DocumentVersion:
    """The inverse of :func:`version_to_record`."""
    return DocumentVersion(
        doc_id=record["id"],
        version=record["version"],
        text=record["text"],
        digest=record["digest"],
        source=record.get("source"),
        title=record.get("title"),
        superseded=bool(record.get("superseded", False)),
        **{
            name: parse_datetime(record.get(name))
            for name in ("published_at", "retrieved_at", "valid_from", "valid_to")
        },
    )


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()
