"""rag-auditor: claim-level audit of RAG answers with a verification ledger."""

from auditor._version import __version__

__all__ = ["__version__"]
