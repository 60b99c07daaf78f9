"""Content digests: sha256 over a canonical form, used for every versioned artefact."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def sha256_text(text: str) -> str:
    """Hex sha256 of a UTF-8 string."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sha256_bytes(data: bytes) -> str:
    """Hex sha256 of raw bytes."""
    return hashlib.sha256(data).hexdigest()


def canonical_json(obj: Any) -> str:
    """A canonical JSON form: sorted keys, no whitespace, UTF-8 kept, tuples as lists."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def content_digest(obj: Any) -> str:
    """sha256 of the canonical JSON form of ``obj``."""
    return sha256_text(canonical_json(obj))
