"""Ledger locations: a file path or a SQLAlchemy URL, and how to show one safely."""

from __future__ import annotations

import re
from pathlib import Path

DEFAULT_DB = ".auditor/ledger.db"

MASK = "***"
"""What a password (or other secret) in a database URL is shown as."""

# scheme://user:password@host... : the password runs to the last '@' before the path
_USERINFO = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.\-]*://[^:/@\s]*:)(?P<secret>[^\s]*)@")
_QUERY_SECRET = re.compile(
    r"(?P<head>[?&](?:password|passwd|pwd|sslpassword|token|secret)=)"
    r"(?P<secret>[^&#\s]*)",
    re.IGNORECASE,
)


_MIN_FREE_SECRET = 3


def normalise_url(location: str | Path) -> str:
    """Turn a file path into a ``sqlite:///`` URL; leave SQLAlchemy URLs as they are."""
    text = str(location)
    if "://" in text:
        return text
    if text == ":memory:":
        return "sqlite://"
    path = Path(text).expanduser()
    return f"sqlite:///{path}"


def mask_url(location: str | Path) -> str:
    """``location`` safe to print: the password of a URL (``user:secret@``) and secret
    query parameters (``?password=``) replaced by ``***``; file paths unchanged."""
    text = str(location)
    if "://" not in text:
        return text
    text = _mask_userinfo(text)
    return _QUERY_SECRET.sub(lambda m: m.group("head") + MASK, text)


def _mask_userinfo(text: str) -> str:
    scheme_end = text.index("://") + 3
    # a password may itself contain '@' or '/': take the last '@' before any '?'
    query = text.find("?", scheme_end)
    limit = len(text) if query < 0 else query
    at = text.rfind("@", scheme_end, limit)
    if at < 0:
        return text
    userinfo = text[scheme_end:at]
    if ":" not in userinfo:
        return text
    user = userinfo.split(":", 1)[0]
    return text[:scheme_end] + f"{user}:{MASK}" + text[at:]


def redact(message: str, *locations: str | Path) -> str:
    """``message`` with every secret of ``locations`` (URL passwords, secret query
    parameters) replaced by ``***``, wherever it appears, plus any URL password the
    message itself carries (a driver error quoting the DSN)."""
    for location in locations:
        for secret in _secrets(str(location)):
            if len(secret) >= _MIN_FREE_SECRET:  # shorter ones: only inside a URL below
                message = message.replace(secret, MASK)
    message = _USERINFO.sub(lambda m: m.group("head") + MASK + "@", message)
    return _QUERY_SECRET.sub(lambda m: m.group("head") + MASK, message)


def _secrets(text: str) -> list[str]:
    if "://" not in text:
        return []
    out: list[str] = []
    scheme_end = text.index("://") + 3
    query = text.find("?", scheme_end)
    at = text.rfind("@", scheme_end, len(text) if query < 0 else query)
    if at >= 0 and ":" in text[scheme_end:at]:
        password = text[scheme_end:at].split(":", 1)[1]
        if password:
            out.append(password)
            from urllib.parse import unquote

            if unquote(password) != password:
                out.append(unquote(password))
    out.extend(m.group("secret") for m in _QUERY_SECRET.finditer(text) if m.group("secret"))
    # longest first, so a secret containing another is replaced whole
    return sorted(set(out), key=len, reverse=True)
