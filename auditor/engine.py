"""Where an audit runs: in this process (``local``) or on a Ray cluster (``ray``).

The engine never changes what is audited: the run id, every label and every ledger
row are the same whichever engine runs the batches (the engine is not part of the
run's configuration or id). :mod:`auditor.ray_engine` holds the Ray side; this module
is pure and imports nothing heavy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from auditor.errors import ConfigError

ENGINES = ("local", "ray")

AUDIT_BATCH_ANSWERS = 64
"""Answers per batch of an audit (one pass of the graph, one transaction, one write of
their output lines). The entailment reader reads a batch's pairs together, so larger
batches pad less and run the network at its speed: 64 audits about 1.3x faster than
16 on WiCE answers (``docs/performance.md``)."""
"""The engine names ``--engine`` accepts."""

RAY_INSTALL_HINT = (
    "the ray engine needs Ray: pip install 'rag-auditor[ray]' (or pip install 'ray[data]')"
)


@dataclass(frozen=True)
class Engine:
    """How to run an audit's batches.

    ``kind``: ``local`` (this process) or ``ray`` (Ray actors, each loading the
    extractor, index and panel once). ``workers``: Ray actors; without ``address`` a
    local Ray cluster with that many CPUs is started and stopped at the end.
    ``address``: an existing Ray cluster (``host:port``, ``auto`` or ``ray://...``).
    ``threads``: torch/OpenMP threads per actor (default: on a local cluster this
    machine's cores divided by ``workers``, at least 1; on another cluster 1).
    ``max_restarts``: how often Ray restarts a killed actor and retries its batch
    before the run stops with an error (re-running the command resumes it).
    ``on_workers``: called with the actors' process ids once they are ready
    (monitoring, tests).
    """

    kind: str = "local"
    workers: int = 1
    address: str | None = None
    threads: int | None = None
    max_restarts: int = 2
    on_workers: Callable[[Sequence[int]], Any] | None = None

    def __post_init__(self) -> None:
        if self.kind not in ENGINES:
            raise ConfigError(f"engine: expected one of {', '.join(ENGINES)}, got {self.kind!r}")
        _check_int("workers", self.workers, 1)
        if self.threads is not None:
            _check_int("threads", self.threads, 1)
        _check_int("max_restarts", self.max_restarts, 0)
        if self.address is not None and (
            not isinstance(self.address, str) or not self.address.strip()
        ):
            raise ConfigError(f"ray address: expected host:port, got {self.address!r}")
        if self.kind == "local" and (self.address is not None or self.workers != 1):
            raise ConfigError(
                "workers and a Ray address (--workers, --ray-address) need the ray engine "
                "(--engine ray)"
            )

    @classmethod
    def of(cls, engine: Engine | str | None) -> Engine:
        """``engine`` as an :class:`Engine` (a name gives its defaults; ``None`` is local)."""
        if engine is None:
            return cls()
        if isinstance(engine, Engine):
            return engine
        if isinstance(engine, str):
            return cls(kind=engine)
        raise ConfigError(f"engine: expected 'local', 'ray' or an Engine, got {engine!r}")


def _check_int(name: str, value: Any, minimum: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise ConfigError(f"{name}: expected an integer >= {minimum}, got {value!r}")


def require_ray() -> Any:
    """Import and return :mod:`ray`, or raise :class:`ConfigError` saying how to install it."""
    try:
        import ray
    except ImportError:
        raise ConfigError(RAY_INSTALL_HINT) from None
    return ray
