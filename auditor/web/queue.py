"""The review queue as pure functions: ordering, filtering, pages, highlighted text.

Nothing here reads the ledger or knows about HTTP: :mod:`auditor.web.views` feeds
these functions with ledger rows, the FastAPI app renders what they return.

Order: flagged claims first (contradicted, not_supported, stale, unknown), the ones
whose stacked probability is nearest the label threshold first (the stack was least
sure), then by label (contradicted, not_supported, stale, unknown, supported,
not_factual), then in answer order. Claims without a stacked probability (unknown
claims with no relevant evidence, non-factual ones) come after those with one.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, Protocol, TypeVar
from urllib.parse import urlsplit

from auditor.decision import recorded_policy
from auditor.report.full import FLAGGED_LABELS
from auditor.types import Label

LABEL_ORDER: tuple[str, ...] = (
    Label.CONTRADICTED.value,
    Label.NOT_SUPPORTED.value,
    Label.STALE.value,
    Label.UNKNOWN.value,
    Label.SUPPORTED.value,
    Label.NOT_FACTUAL.value,
)
"""Label order of the queue (after flagged-first and uncertainty)."""

REVIEW_LABELS: tuple[str, ...] = (
    Label.SUPPORTED.value,
    Label.CONTRADICTED.value,
    Label.NOT_SUPPORTED.value,
    Label.STALE.value,
    Label.UNKNOWN.value,
    Label.NOT_FACTUAL.value,
)
"""The six labels of the review controls, in key order (key 1 = supported, ...)."""


class QueueClaim(Protocol):
    """The fields of a ledger claim result the queue reads."""

    @property
    def claim_id(self) -> str: ...
    @property
    def label(self) -> str | None: ...
    @property
    def p_hallucinated(self) -> float | None: ...


C = TypeVar("C", bound=QueueClaim)


def is_flagged(label: str | None) -> bool:
    """Whether a label needs a reviewer's eye (contradicted, not_supported, stale, unknown)."""
    return label in FLAGGED_LABELS


def queue_key(label: str | None, p: float | None, threshold: float) -> tuple[int, float, int]:
    """Sort key of a claim in the queue (module doc); smaller comes first."""
    # rounded, so that 0.55 and 0.45 are equally near 0.5 and the label order decides
    distance = round(abs(p - threshold), 6) if p is not None and math.isfinite(p) else math.inf
    rank = LABEL_ORDER.index(label) if label in LABEL_ORDER else len(LABEL_ORDER)
    return (0 if is_flagged(label) else 1, distance, rank)


def order_queue(claims: Sequence[C], threshold: float = 0.5) -> list[C]:
    """Claims in queue order (stable: answer order breaks ties)."""
    return sorted(claims, key=lambda c: queue_key(c.label, c.p_hallucinated, threshold))


@dataclass(frozen=True)
class QueueFilter:
    """Which claims the queue shows: ``labels`` (empty: all), ``flagged`` (True: flagged
    only, False: the others only, None: all), ``reviewed`` (True: claims with at least
    one human audit, False: without, None: all)."""

    labels: frozenset[str] = frozenset()
    flagged: bool | None = None
    reviewed: bool | None = None

    def keeps(self, label: str | None, reviewed: bool) -> bool:
        """Whether a claim with ``label`` (and reviewed or not) passes the filter."""
        if self.labels and (label or "unlabelled") not in self.labels:
            return False
        if self.flagged is not None and is_flagged(label) != self.flagged:
            return False
        return self.reviewed is None or reviewed == self.reviewed


def filter_queue(
    claims: Iterable[C], which: QueueFilter, reviewed_ids: set[str] | frozenset[str]
) -> list[C]:
    """The claims that pass ``which`` (``reviewed_ids``: claims with a human audit)."""
    return [c for c in claims if which.keeps(c.label, c.claim_id in reviewed_ids)]


@dataclass(frozen=True)
class Page:
    """One page of a list: its 1-based number, the page count and the item offsets."""

    number: int
    count: int
    per_page: int
    total: int

    @property
    def start(self) -> int:
        return (self.number - 1) * self.per_page

    @property
    def end(self) -> int:
        return min(self.start + self.per_page, self.total)


def page_of(total: int, per_page: int, number: int = 1, *, index: int | None = None) -> Page:
    """The page ``number`` (clamped to the pages there are), or the page that holds item
    ``index`` when it is given."""
    if per_page < 1:
        raise ValueError(f"per_page: must be >= 1, got {per_page}")
    count = max(1, math.ceil(total / per_page))
    if index is not None:
        number = index // per_page + 1
    return Page(number=min(max(1, number), count), count=count, per_page=per_page, total=total)


@dataclass(frozen=True)
class Segment:
    """A run of text with the marks that cover it (for example ``{"claim", "error"}``)."""

    text: str
    marks: frozenset[str]


def segments(text: str, marks: Mapping[str, Sequence[Sequence[int]]]) -> list[Segment]:
    """Cut ``text`` where any marked span starts or ends: each segment carries the names of
    the spans that cover it. Spans are clamped to the text; empty ones are ignored. The
    caller escapes each segment (nothing here produces markup)."""
    cuts = {0, len(text)}
    clamped: dict[str, list[tuple[int, int]]] = {}
    for name, spans in marks.items():
        for span in spans:
            a, b = max(0, int(span[0])), min(len(text), int(span[1]))
            if a < b:
                clamped.setdefault(name, []).append((a, b))
                cuts.update((a, b))
    points = sorted(cuts)
    out: list[Segment] = []
    for a, b in pairwise(points):
        if a == b:
            continue
        covered = frozenset(
            name for name, spans in clamped.items() if any(s <= a and b <= e for s, e in spans)
        )
        if out and out[-1].marks == covered:
            out[-1] = Segment(out[-1].text + text[a:b], covered)
        else:
            out.append(Segment(text[a:b], covered))
    return out


def safe_link(source: str | None) -> str | None:
    """``source`` when it is an http(s) URL with a host (safe to put in an ``href``);
    None otherwise (``javascript:``, ``data:``, file paths, bare ids)."""
    if not source:
        return None
    try:
        parts = urlsplit(source.strip())
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return None
    return source.strip()


def threshold_of(config: Mapping[str, Any]) -> float:
    """The label threshold a run used (its recorded policy,
    :func:`auditor.decision.recorded_policy`; the policy's default when none is recorded)."""
    return recorded_policy(config).threshold
