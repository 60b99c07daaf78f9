"""rag-auditor: claim-level audit of RAG answers with a verification ledger.

The public API (everything else is internal and may change)::

    from auditor import Auditor, AuditConfig, audit_answers

- :class:`Auditor` audits answers into a ledger, re-judges runs, builds reports;
- :func:`audit_answers` audits once without a ledger file;
- :func:`check` / :class:`Checker` label one answer live, before it is shown;
- :class:`AuditConfig` is the typed run configuration (recorded with every run);
- :func:`evaluate_gate` / :func:`assert_audit` pass or fail a run for a release;
- :func:`import_answers` reads answers from traces and evaluation data sets.

Heavy modules (models, FAISS, SQL) load on first use, not on ``import auditor``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from auditor._version import __version__

if TYPE_CHECKING:
    from auditor._auditor import Auditor, AuditRun, audit_answers
    from auditor.answers import load_answers
    from auditor.checker import CheckedClaim, Checker, CheckResult, check
    from auditor.config import AuditConfig, load_policy
    from auditor.gate import GateResult, GateRule, assert_audit, evaluate_gate
    from auditor.importers import import_answers
    from auditor.labels import LabelPolicy
    from auditor.types import Answer, Claim, Context, Label, Verdict, Vote

_EXPORTS = {
    "Auditor": "auditor._auditor",
    "AuditRun": "auditor._auditor",
    "audit_answers": "auditor._auditor",
    "check": "auditor.checker",
    "Checker": "auditor.checker",
    "CheckResult": "auditor.checker",
    "CheckedClaim": "auditor.checker",
    "AuditConfig": "auditor.config",
    "load_policy": "auditor.config",
    "LabelPolicy": "auditor.labels",
    "load_answers": "auditor.answers",
    "import_answers": "auditor.importers",
    "GateRule": "auditor.gate",
    "GateResult": "auditor.gate",
    "evaluate_gate": "auditor.gate",
    "assert_audit": "auditor.gate",
    "Answer": "auditor.types",
    "Claim": "auditor.types",
    "Context": "auditor.types",
    "Label": "auditor.types",
    "Verdict": "auditor.types",
    "Vote": "auditor.types",
}

__all__ = [
    "Answer",
    "AuditConfig",
    "AuditRun",
    "Auditor",
    "CheckResult",
    "CheckedClaim",
    "Checker",
    "Claim",
    "Context",
    "GateResult",
    "GateRule",
    "Label",
    "LabelPolicy",
    "Verdict",
    "Vote",
    "__version__",
    "assert_audit",
    "audit_answers",
    "check",
    "evaluate_gate",
    "import_answers",
    "load_answers",
    "load_policy",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'auditor' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
