"""Batch shapes for the two models (the MiniLM encoder and the entailment reader): each
text or pair is padded to a width that depends on its own token count alone, and a
batch holds inputs of one width.

Why: a forward pass's result for one input depends on the width it is padded to (the
sums over the padded axis are blocked differently), not on the other rows of its batch.
In fp32 that is a difference of about 1e-7; in bf16 (:mod:`auditor.precision`) a change
that small can round a product to the next bfloat16 value, and the probabilities move by
up to 4e-3. With the width fixed by the input itself, a text's vector and a pair's
probabilities are the same bit for bit whatever else is read with it: alone or in a
batch, in this process or a Ray worker, at ingest or at audit time.
"""

from __future__ import annotations

import numpy as np


def padded_width(tokens: int) -> int:
    """The width an input of ``tokens`` tokens is padded to: the next multiple of 8 up to
    64 tokens, of 16 up to 128, of 32 above (at most about 12 % padding past 64)."""
    if tokens <= 0:
        raise ValueError(f"tokens must be positive, got {tokens}")
    step = 8 if tokens <= 64 else 16 if tokens <= 128 else 32
    return -(-tokens // step) * step


def width_batches(lengths: np.ndarray, batch_size: int) -> list[tuple[np.ndarray, int]]:
    """Indices of ``lengths`` (token counts) in batches of at most ``batch_size`` inputs
    of one :func:`padded_width`, with that width; shortest first, input order kept
    within a width."""
    if batch_size <= 0:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    lengths = np.asarray(lengths, dtype=np.int64)
    if lengths.size == 0:
        return []
    widths = np.array([padded_width(int(n)) for n in lengths])
    order = np.argsort(widths, kind="stable")
    sorted_widths = widths[order]
    starts = np.flatnonzero(np.r_[True, sorted_widths[1:] != sorted_widths[:-1]])
    ends = np.r_[starts[1:], len(order)]
    return [
        (order[s : min(s + batch_size, end)], int(sorted_widths[start]))
        for start, end in zip(starts, ends, strict=True)
        for s in range(start, end, batch_size)
    ]
