"""Ledger locations: a file path or a SQLAlchemy URL."""

from __future__ import annotations

from pathlib import Path

DEFAULT_DB = ".auditor/ledger.db"


def normalise_url(location: str | Path) -> str:
    """Turn a file path into a ``sqlite:///`` URL; leave SQLAlchemy URLs as they are."""
    text = str(location)
    if "://" in text:
        return text
    if text == ":memory:":
        return "sqlite://"
    path = Path(text).expanduser()
    return f"sqlite:///{path}"
