"""Report cards (from the ledger) and their renderings."""

from auditor.report.card import Figure, ReportCard, build_report_card

__all__ = ["Figure", "ReportCard", "build_report_card"]
