"""The LangGraph audit flow: thin nodes wiring the plain domain functions."""

from auditor.graph.flow import AuditComponents, AuditState, build_audit_graph

__all__ = ["AuditComponents", "AuditState", "build_audit_graph"]
