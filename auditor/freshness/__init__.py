"""Freshness watch: which audited claims a corpus update made stale, re-auditing only them,
and factuality over time.

- :func:`find_impact` lists the claims of earlier runs whose deciding evidence changed
  (a version they rested on was superseded or withdrawn, or a new version of a document
  they cited appeared), from the ledger alone: no judge runs.
- :func:`reaudit` re-audits a run's answers as of a new date as a new run linked to the
  old one: evidence is gathered again for every claim (cheap), and only claims whose
  evidence changed (or that the ledger names as impacted) are judged again; the others'
  votes and verdicts are carried over, each marked with the reason.
- :func:`build_trend` follows a series of runs of the same answers over their as-of
  dates: support precision, stale, contradicted and decidable rates with intervals, and
  the paired change between consecutive runs on their shared claims.

One module per part: :mod:`~auditor.freshness.impact`, :mod:`~auditor.freshness.reaudit`,
:mod:`~auditor.freshness.trend`; a trend is drawn by :mod:`auditor.report.trend_render`
(``trend_html`` here). The names below are re-exported here: ``from auditor.freshness import X``.
"""

from auditor.freshness._common import AUDIT_KINDS
from auditor.freshness.impact import (
    EvidenceChange,
    ImpactedClaim,
    ImpactReport,
    VersionInfo,
    VersionOrder,
    chain_of,
    char_diff,
    find_impact,
    index_version_order,
)
from auditor.freshness.reaudit import SCORE_TOLERANCE, ReauditResult, evidence_change, reaudit
from auditor.freshness.trend import TREND_FIGURES, Trend, TrendPoint, build_trend, series_runs
from auditor.report.trend_render import trend_page as trend_html

__all__ = [
    "AUDIT_KINDS",
    "SCORE_TOLERANCE",
    "TREND_FIGURES",
    "EvidenceChange",
    "ImpactReport",
    "ImpactedClaim",
    "ReauditResult",
    "Trend",
    "TrendPoint",
    "VersionInfo",
    "VersionOrder",
    "build_trend",
    "chain_of",
    "char_diff",
    "evidence_change",
    "find_impact",
    "index_version_order",
    "reaudit",
    "series_runs",
    "trend_html",
]
