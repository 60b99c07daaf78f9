"""As-of semantics of document versions, vectorised over the whole corpus.

A version is *visible* at date ``T`` when it was published at or before ``T``
(``published_at``, or ``valid_from`` when there is no ``published_at``); a version
with neither date is undated and always visible. A visible version is
*superseded* at ``T`` when its validity ended (``valid_to <= T``) or a newer
version of the same document is visible at ``T``. Without an as-of date every
version is visible and superseded means "has a newer version".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np
from numpy.typing import NDArray

from auditor.clock import utc
from auditor.types import DocumentVersion


@dataclass(frozen=True)
class VersionTimes:
    """Per-version timestamps as POSIX seconds (``-inf``/``+inf`` for missing)."""

    visible_from: NDArray[np.float64]
    """Publication (or validity start) time; ``-inf`` when undated."""
    valid_to: NDArray[np.float64]
    """End of validity; ``+inf`` when open."""
    newer_visible_from: NDArray[np.float64]
    """Earliest ``visible_from`` among newer versions of the same document; ``+inf``: none."""
    has_newer: NDArray[np.bool_]
    """A newer version of the same document exists in the corpus."""


def visible_start(doc: DocumentVersion) -> datetime | None:
    """The date from which ``doc`` is visible: ``published_at``, else ``valid_from``."""
    return doc.published_at if doc.published_at is not None else doc.valid_from


def version_times(versions: Sequence[DocumentVersion]) -> VersionTimes:
    """Timestamps of ``versions`` (in version order within each document)."""
    n = len(versions)
    visible, valid_to = version_stamps(versions)
    newer = np.full(n, np.inf, dtype=np.float64)
    has_newer = np.zeros(n, dtype=bool)
    earliest_later: dict[str, float] = {}
    for i in range(n - 1, -1, -1):  # one pass at load time, not per query
        doc_id = versions[i].doc_id
        if doc_id in earliest_later:
            newer[i] = earliest_later[doc_id]
            has_newer[i] = True
            earliest_later[doc_id] = min(earliest_later[doc_id], float(visible[i]))
        else:
            earliest_later[doc_id] = float(visible[i])
    return VersionTimes(visible, valid_to, newer, has_newer)


def version_stamps(
    versions: Sequence[DocumentVersion],
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(visible_from, valid_to)`` of each version as :func:`version_times` computes them
    (POSIX seconds; ``-inf`` undated, ``+inf`` open): what a segment stores so that an
    index opens without reading its version records."""
    visible = np.array([_ts(visible_start(v), -np.inf) for v in versions], dtype=np.float64)
    valid_to = np.array([_ts(v.valid_to, np.inf) for v in versions], dtype=np.float64)
    return visible, valid_to


def valid_to_stamp(value: datetime | None) -> float:
    """One ``valid_to`` as :func:`version_stamps` writes it."""
    return _ts(value, np.inf)


def times_from_stamps(
    visible: NDArray[np.float64],
    valid_to: NDArray[np.float64],
    has_newer: NDArray[np.bool_],
    order: NDArray[np.int64],
) -> VersionTimes:
    """:func:`version_times` from stored columns, indexed by storage row.

    ``visible`` and ``valid_to`` are per storage row, ``has_newer`` says per storage row
    whether a later version of the same document exists, and ``order`` lists the rows in
    version order, where each document's versions are contiguous (the index keeps them
    so): the earliest start among a version's newer versions is then found by walking
    each document's block backwards, with no document id needed.
    """
    n = len(order)
    vis = visible[order]
    newer_pos = np.full(n, np.inf, dtype=np.float64)
    for p in np.flatnonzero(has_newer[order])[::-1].tolist():
        if p + 1 < n:
            newer_pos[p] = min(float(vis[p + 1]), float(newer_pos[p + 1]))
    newer = np.empty(n, dtype=np.float64)
    newer[order] = newer_pos
    return VersionTimes(
        np.asarray(visible, dtype=np.float64),
        np.asarray(valid_to, dtype=np.float64),
        newer,
        np.asarray(has_newer, dtype=np.bool_),
    )


def as_of_masks(
    times: VersionTimes, as_of: datetime | None
) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """``(visible, superseded)`` boolean arrays over versions at ``as_of``."""
    if as_of is None:
        return np.ones(len(times.visible_from), dtype=bool), times.has_newer.copy()
    t = _ts(as_of, np.nan)
    visible = times.visible_from <= t
    superseded = visible & ((times.valid_to <= t) | (times.newer_visible_from <= t))
    return visible, superseded


def _ts(value: datetime | None, missing: float) -> float:
    return missing if value is None else utc(value).timestamp()
