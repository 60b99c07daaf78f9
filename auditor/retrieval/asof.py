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
from datetime import UTC, datetime

import numpy as np
from numpy.typing import NDArray

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
    visible = np.array([_ts(visible_start(v), -np.inf) for v in versions], dtype=np.float64)
    valid_to = np.array([_ts(v.valid_to, np.inf) for v in versions], dtype=np.float64)
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


def as_of_masks(
    times: VersionTimes, as_of: datetime | None
) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """``(visible, superseded)`` boolean arrays over versions at ``as_of``."""
    if as_of is None:
        return np.ones(len(times.visible_from), dtype=bool), times.has_newer.copy()
    t = _ts(normalise_as_of(as_of), np.nan)
    visible = times.visible_from <= t
    superseded = visible & ((times.valid_to <= t) | (times.newer_visible_from <= t))
    return visible, superseded


def normalise_as_of(as_of: datetime | None) -> datetime | None:
    """``as_of`` in UTC (a timezone-less date means UTC)."""
    if as_of is None:
        return None
    if not isinstance(as_of, datetime):
        raise TypeError(f"as_of: expected a datetime, got {type(as_of).__name__}")
    if as_of.tzinfo is None:
        as_of = as_of.replace(tzinfo=UTC)
    return as_of.astimezone(UTC)


def _ts(value: datetime | None, missing: float) -> float:
    return missing if value is None else normalise_as_of(value).timestamp()  # type: ignore[union-attr]
