"""Version chains: where a new version of a document goes (by date, never by ingest
order), how ``valid_to`` and supersession follow from its neighbours, and the file
identity checks that keep two files from sharing one document's history."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from pathlib import Path

from auditor.clock import utc
from auditor.errors import InputError
from auditor.retrieval.asof import visible_start
from auditor.types import DocumentVersion

UNDATED_ORDERS = ("error", "newest", "oldest")
"""How an undated version is placed among dated versions of the same document:
``error`` (refuse), ``newest`` (after every dated version) or ``oldest`` (before them)."""


def _start(doc: DocumentVersion) -> datetime | None:
    """When a version took effect: ``valid_from``, else ``published_at`` (``None``: undated)."""
    return doc.valid_from if doc.valid_from is not None else doc.published_at


def _order_key(doc: DocumentVersion, undated_order: str) -> float:
    start = _start(doc)
    if start is None:
        return float("-inf") if undated_order == "oldest" else float("inf")
    return utc(start).timestamp()


def _position(chain: list[DocumentVersion], new: DocumentVersion, undated_order: str) -> int:
    """Where ``new`` goes in its document's date-ordered ``chain`` (never by ingest order).

    Dated versions are ordered by their start (``valid_from``, else ``published_at``);
    two dated versions with the same start and different text cannot be ordered and
    are refused. An undated version among dated ones is refused unless
    ``undated_order`` says where undated versions go; undated versions keep their
    ingest order among themselves (there is nothing else to order them by).
    """
    new_start = _start(new)
    dated = [v for v in chain if _start(v) is not None]
    undated = [v for v in chain if _start(v) is None]
    if undated_order == "error" and (
        (new_start is None and dated) or (new_start is not None and undated)
    ):
        other = dated[0] if new_start is None else undated[0]
        which = (
            "this version is undated but version "
            f"{other.version!r} is dated ({_start(other).isoformat()})"  # type: ignore[union-attr]
            if new_start is None
            else f"this version is dated but version {other.version!r} is undated"
        )
        raise InputError(
            f"document {new.doc_id!r}: {which}, so their order is unknown; give every "
            "version a published_at or valid_from, or say where undated versions go "
            "(--undated-order newest|oldest)",
            field="published_at",
        )
    if new_start is not None:
        for v in dated:
            if _start(v) == new_start:
                raise InputError(
                    f"document {new.doc_id!r}: version {v.version!r} has the same date "
                    f"({new_start.isoformat()}) and different text, so which one is current "
                    "is unknown; give them distinct published_at or valid_from dates",
                    field="published_at",
                )
    key = _order_key(new, undated_order)
    if new_start is None and undated_order == "oldest":
        # after the undated versions already at the start, before the first dated one
        return next((i for i, v in enumerate(chain) if _start(v) is not None), len(chain))
    return next((i for i, v in enumerate(chain) if _order_key(v, undated_order) > key), len(chain))


def _reconcile(
    existing: list[DocumentVersion], docs: list[DocumentVersion], undated_order: str = "error"
) -> tuple[
    list[DocumentVersion],
    list[DocumentVersion],
    list[DocumentVersion],
    list[DocumentVersion],
    list[DocumentVersion],
]:
    """Merge input docs into the version list by date.

    Returns ``(all, added, superseded, unchanged, retimed)``: every version with each
    document's versions contiguous and in date order; the new versions; the versions
    this ingest made non-current (existing or new); versions repeated unchanged; and
    existing, already superseded versions whose ``valid_to`` followed a version
    inserted after them.
    """
    _check_file_identity(existing, docs)
    chains: dict[str, list[DocumentVersion]] = {}
    for v in existing:
        chains.setdefault(v.doc_id, []).append(v)
    latest_before = {doc_id: chain[-1] for doc_id, chain in chains.items()}
    original = {(v.doc_id, v.version): v for v in existing}
    added_keys: list[tuple[str, str]] = []
    unchanged: list[DocumentVersion] = []
    for doc in docs:
        chain = chains.setdefault(doc.doc_id, [])
        same = next((v for v in chain if v.digest == doc.digest), None)
        if same is not None:  # any known version with this text: re-ingesting changes nothing
            if (same.doc_id, same.version) in original:
                unchanged.append(same)
            continue
        labels = {v.version for v in chain}
        label = doc.version
        if label and label in labels:
            raise InputError(
                f"document {doc.doc_id!r}: version {label!r} already exists with different text",
                field="version",
            )
        if not label:
            n = len(chain) + 1
            while f"v{n}" in labels:
                n += 1
            label = f"v{n}"
        new = replace(doc, version=label, superseded=False)
        pos = _position(chain, new, undated_order)
        chain.insert(pos, new)
        _retime(chain, pos)
        added_keys.append((new.doc_id, new.version))
    versions = [v for chain in chains.values() for v in chain]
    by_key = {(v.doc_id, v.version): v for v in versions}
    added = [by_key[k] for k in added_keys]
    superseded: list[DocumentVersion] = []
    retimed: list[DocumentVersion] = []
    for chain in chains.values():
        for v in chain[:-1]:
            key = (v.doc_id, v.version)
            old = original.get(key)
            if old is None or latest_before.get(v.doc_id) is old:
                superseded.append(v)  # new and not the latest, or was the latest before
            elif old != v:
                retimed.append(v)
    return versions, added, superseded, unchanged, retimed


def _file_source(doc: DocumentVersion) -> str | None:
    """The ``file://`` identity of a version loaded from a text file, else ``None``.

    Indexes written before file sources were URIs stored the path as given; such a
    path that names an existing file counts as that file.
    """
    src = doc.source
    if not src:
        return None
    if src.startswith("file://"):
        return src
    if "://" not in src:
        path = Path(src)
        if path.suffix.lower() in (".txt", ".md", ".markdown") and path.is_file():
            return "file://" + path.resolve().as_posix()
    return None


def _check_file_identity(existing: list[DocumentVersion], docs: list[DocumentVersion]) -> None:
    """Refuse a text file that would silently replace another file's document, or be
    stored a second time under another id.

    A file's id comes from its path below a root; two different files can get the
    same id (``teamA/notes.md`` and ``teamB/notes.md`` both ingested from their own
    folder are ``notes.md``), and one file reached through two roots gets two ids.
    Both would corrupt the version history, so both are errors.
    """
    id_sources: dict[str, str] = {}
    source_ids: dict[str, str] = {}
    for v in existing:
        src = _file_source(v)
        if src is not None:
            id_sources.setdefault(v.doc_id, src)
            source_ids.setdefault(src, v.doc_id)
    for doc in docs:
        src = _file_source(doc)
        if src is None or not src.startswith("file://"):
            continue
        known = id_sources.get(doc.doc_id)
        if known is not None and known != src:
            raise InputError(
                f"document id {doc.doc_id!r} already belongs to another file ({known}); "
                f"{src} would silently become a new version of it. Ingest with --root "
                "set to a common folder (ids are paths relative to it) or --id-prefix",
                field="id",
            )
        other = source_ids.get(src)
        if other is not None and other != doc.doc_id:
            raise InputError(
                f"{src} is already stored as document {other!r}; ingesting it as "
                f"{doc.doc_id!r} would store it twice. Use the same root (or --id-prefix) "
                "as when it was first ingested",
                field="id",
            )


def _retime(chain: list[DocumentVersion], pos: int) -> None:
    """Set ``valid_to`` around the version just inserted at ``pos``, and mark supersession.

    A ``valid_to`` given with the input is kept. A derived one (open, or equal to the
    start of the version that followed) follows the new neighbour: the previous
    version now ends where the inserted one starts, and the inserted one ends where
    its successor starts.
    """
    new = chain[pos]
    nxt = chain[pos + 1] if pos + 1 < len(chain) else None
    if nxt is not None:
        chain[pos] = new = _supersede(new, nxt, follows=None)
    if pos > 0:
        chain[pos - 1] = _supersede(
            chain[pos - 1], new, follows=None if nxt is None else _start(nxt)
        )


def _supersede(
    old: DocumentVersion, new: DocumentVersion, *, follows: datetime | None
) -> DocumentVersion:
    """``old`` superseded by ``new``: an open ``valid_to`` (or one equal to ``follows``,
    the start of the version that used to follow ``old``) becomes ``new``'s start."""
    new_start = _start(new)
    old_start = visible_start(old)
    valid_to = old.valid_to
    derived = valid_to is None or (follows is not None and valid_to == follows)
    if derived and new_start is not None and (old_start is None or new_start >= old_start):
        valid_to = new_start
    return replace(old, valid_to=valid_to, superseded=True)
