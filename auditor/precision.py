"""Numeric precision of the two models' forward passes (the MiniLM encoder and the
entailment reader).

- ``fp32``: every operation in float32.
- ``bf16``: matrix products in bfloat16 under torch's CPU autocast; layer norms, softmax
  and the outputs stay float32. On CPUs that compute bfloat16 natively (AVX-512 BF16 or
  AMX) this is about twice as fast as fp32; elsewhere it is emulated and slower.
  Reader probabilities move by about 1e-3 (0.003 at most on FaithBench windows), and
  unlike dynamic int8 a pair's result barely depends on its batch mates (1.5e-3 at
  most); encoder vectors keep a cosine of 0.9999 to fp32 (``docs/performance.md``).
- ``auto`` (the default): ``bf16`` where the CPU computes it natively, ``fp32``
  elsewhere, unless the environment variable ``AUDITOR_PRECISION`` is ``fp32`` or
  ``bf16``.

What a judge or localiser is configured with (``auto`` included) enters its digest;
what ``auto`` resolved to enters the digest the reader's pair scores are stored under,
so scores of one precision are never reused for the other.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Iterator

from auditor.errors import ConfigError

PRECISIONS = ("auto", "fp32", "bf16")
PRECISION_ENV = "AUDITOR_PRECISION"
DEFAULT_PRECISION = "auto"


def check_precision(value: object, owner: str) -> str:
    """``value`` when it is one of :data:`PRECISIONS`; a :class:`ConfigError` naming
    ``owner`` and the field otherwise."""
    if value not in PRECISIONS:
        raise ConfigError(
            f"{owner}: precision must be one of {', '.join(PRECISIONS)}, got {value!r}"
        )
    return str(value)


@functools.cache
def native_bf16() -> bool:
    """Whether this CPU computes bfloat16 products natively (AVX-512 BF16 or AMX)."""
    import torch

    checks = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")  # torch's own CPU probes
    return any(bool(getattr(torch.cpu, name, lambda: False)()) for name in checks)


def resolve_precision(spec: str = DEFAULT_PRECISION) -> str:
    """``fp32`` or ``bf16``: ``spec`` itself, or for ``auto`` the environment's
    ``AUDITOR_PRECISION`` when it names one, else ``bf16`` on a CPU with native bfloat16."""
    check_precision(spec, "precision")
    if spec != "auto":
        return spec
    forced = os.environ.get(PRECISION_ENV, "").strip().lower()
    if forced and forced != "auto":
        return check_precision(forced, PRECISION_ENV)
    return "bf16" if native_bf16() else "fp32"


@contextlib.contextmanager
def computing_in(precision: str) -> Iterator[None]:
    """Run the forward passes inside in ``precision`` (resolved: ``fp32`` or ``bf16``)."""
    if precision == "bf16":
        import torch

        with torch.autocast("cpu", dtype=torch.bfloat16):
            yield
    elif precision == "fp32":
        yield
    else:
        raise ValueError(f"precision must be resolved to fp32 or bf16, got {precision!r}")
