"""What the parts of the freshness watch share: the run kinds a series is made of and
how dates are written."""

from __future__ import annotations

from datetime import datetime

from auditor.clock import utc

AUDIT_KINDS = ("audit", "reaudit")
"""Run kinds that audit answers (calibration runs are not part of a freshness series)."""


def _iso(value: datetime | None) -> str | None:
    return None if value is None else utc(value).isoformat()


def _date(value: datetime | None) -> str:
    return "undated" if value is None else utc(value).date().isoformat()
