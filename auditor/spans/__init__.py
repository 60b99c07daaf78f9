"""Span localisation and span metrics (docs/spans.md).

Six metrics over half-open character spans (exact span F1, character F1, character
IoU, DetEval-1D, CLEval-1D, Span Coverage F1), vectorised with numpy; the
leave-one-annotator-out protocol for multi-annotator data; diagnostic subsets; and
:func:`localize_error`, which narrows an unsupported claim to the answer characters
that carry the error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from auditor.spans._canonical import (
    SpanBatch,
    SpanValidationError,
    batch_from_lists,
    canonicalize,
    mask_to_spans,
    spans_to_mask,
)
from auditor.spans.diagnostics import RELATIONS, classify_relations, diagnose, one_char_per_gold

if TYPE_CHECKING:
    from auditor.spans.localize import localize_error
from auditor.spans.loo import (
    REFERENCES,
    AnnotatedItem,
    leave_one_annotator_out,
    load_annotated,
    loo_comparisons,
)
from auditor.spans.metrics import (
    DEFAULT_PARAMS,
    METRICS,
    SpanCounts,
    SpanMetricParams,
    aggregate,
    character_f1,
    character_iou,
    cleval_1d,
    deteval_1d,
    exact_span_f1,
    per_item_scores,
    score_spans,
    span_counts,
    span_coverage_f1,
)

__all__ = [
    "DEFAULT_PARAMS",
    "METRICS",
    "REFERENCES",
    "RELATIONS",
    "AnnotatedItem",
    "SpanBatch",
    "SpanCounts",
    "SpanMetricParams",
    "SpanValidationError",
    "aggregate",
    "batch_from_lists",
    "canonicalize",
    "character_f1",
    "character_iou",
    "classify_relations",
    "cleval_1d",
    "deteval_1d",
    "diagnose",
    "exact_span_f1",
    "leave_one_annotator_out",
    "load_annotated",
    "localize_error",
    "loo_comparisons",
    "mask_to_spans",
    "one_char_per_gold",
    "per_item_scores",
    "score_spans",
    "span_counts",
    "span_coverage_f1",
    "spans_to_mask",
]


def __getattr__(name: str) -> Any:
    # localize_error needs the claim-text helpers (scikit-learn's stop words, scipy):
    # imported on first use so `auditor spans score` starts without them
    if name == "localize_error":
        from auditor.spans.localize import localize_error

        return localize_error
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
