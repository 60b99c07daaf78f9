"""Content digests: sha256 over a canonical form, used for every versioned artefact."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray


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


SET_HASH_LANES = 1024
"""Lanes of :func:`set_hash`: 1,024 uint16 (LtHash16, as Facebook's
``folly::LtHash<16, 1024>``): collision resistance rests on the lattice SIS problem,
about 200 bits; a 256-bit additive hash would fall to Wagner's generalised birthday
attack."""
_SET_HASH_BLOCK = 4096


def set_hash(items: Sequence[str]) -> NDArray[np.uint16]:
    """An additive (homomorphic) hash of the multiset ``items``: the lane-wise sum, modulo
    2**16, of each item's SHAKE-256 expansion to :data:`SET_HASH_LANES` little-endian
    uint16 lanes. ``set_hash(a + b) == set_hash(a) + set_hash(b)`` (uint16 wrap-around),
    whatever the order, so the hash of a union is the sum of its parts' hashes."""
    total = np.zeros(SET_HASH_LANES, dtype=np.uint16)
    for lo in range(0, len(items), _SET_HASH_BLOCK):
        block = b"".join(
            hashlib.shake_256(item.encode("utf-8")).digest(2 * SET_HASH_LANES)
            for item in items[lo : lo + _SET_HASH_BLOCK]
        )
        lanes = np.frombuffer(block, dtype="<u2").reshape(-1, SET_HASH_LANES)
        total += lanes.sum(axis=0, dtype=np.uint16)
    return total


def set_hash_digest(lanes: NDArray[np.uint16], tag: str) -> str:
    """Hex sha256 of ``tag`` and a :func:`set_hash` (its lanes as little-endian bytes)."""
    data = np.ascontiguousarray(lanes, dtype="<u2").tobytes()
    return hashlib.sha256(tag.encode("utf-8") + b"\0" + data).hexdigest()
