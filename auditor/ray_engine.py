"""The Ray engine: audit batches on Ray actors, embed ingest chunks with Ray Data.

Audits (:class:`RayAuditEngine`): the driver keeps the run (run id, ``begin_run``,
resume, ``finish_run``) and splits the answers still to do into the same batches as
the local engine; a pool of :class:`AuditWorker` actors (:class:`ray.util.ActorPool`)
runs them, each actor building the extractor, index and panel once. On a PostgreSQL
ledger the actors write their answers themselves (the writes are idempotent:
insert-or-ignore on content keys); on SQLite (one writer) they send the rows back and
the driver writes them. Either way the driver reports answers in input order, as they
commit. Ray restarts a killed actor and retries its batch (``max_restarts``); when it
cannot, the run stops with a clean :class:`RayEngineError`, stays ``running`` in the
ledger and is resumed by running the command again.

Ingest (:class:`RayEncoder`): the new chunks' texts (and their sentences) are
embedded by a Ray Data ``map_batches`` over a pool of encoder actors, then the index
is written and swapped as with the local encoder.

Ray is imported only when an engine is used (``pip install 'rag-auditor[ray]'``).
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from numpy.typing import NDArray

from auditor.engine import Engine, require_ray
from auditor.errors import AuditorError

if TYPE_CHECKING:
    from auditor.config import AuditConfig
    from auditor.graph.flow import AuditComponents
    from auditor.judges.base import Judge
    from auditor.judges.panel import Panel
    from auditor.retrieval import EvidenceIndex
    from auditor.stacking.model import Stacker
    from auditor.types import Answer
    from ledger import AnswerResult, Ledger


class RayEngineError(AuditorError):
    """Ray could not run (or finish) the work: no cluster, a worker that died or failed."""


# ---------------------------------------------------------------------- the cluster
def _check_reachable(address: str, timeout_s: float = 3.0) -> None:
    """Fail fast on a ``host:port`` nobody listens on (Ray itself retries for minutes)."""
    if address == "auto" or "://" in address:
        return
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise RayEngineError(f"--ray-address: expected host:port, got {address!r}")
    try:
        with socket.create_connection((host or "127.0.0.1", int(port)), timeout=timeout_s):
            pass
    except OSError as exc:
        raise RayEngineError(
            f"--ray-address {address}: no Ray cluster answers there ({exc.strerror or exc}); "
            "start one with `ray start --head` or leave out --ray-address for a local one"
        ) from None


def quiet_ray_env() -> None:
    """Environment that keeps a Ray cluster started from here quiet and light."""
    for key, value in (
        ("RAY_DEDUP_LOGS", "1"),
        ("RAY_USAGE_STATS_ENABLED", "0"),
        ("RAY_DISABLE_IMPORT_WARNING", "1"),
        ("RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO", "0"),
    ):
        os.environ.setdefault(key, value)


@dataclass(frozen=True)
class RaySession:
    """The Ray in use: :mod:`ray`, and whether :func:`ray_cluster` started (or
    connected) it, and so ends it."""

    ray: Any
    ours: bool


@contextlib.contextmanager
def ray_cluster(engine: Engine) -> Iterator[RaySession]:
    """Connect to ``engine.address``, or start a local cluster with ``engine.workers``
    CPUs; disconnect (and stop the local cluster) at the end.

    A Ray already initialised in this process (tests, notebooks) is used as it is and
    left running (``ours=False``).
    """
    ray = require_ray()
    if engine.address is not None:
        _check_reachable(engine.address)
    if ray.is_initialized():
        yield RaySession(ray, ours=False)
        return
    quiet_ray_env()
    import logging

    options: dict[str, Any] = {
        "logging_level": logging.ERROR,
        "log_to_driver": False,
        "include_dashboard": False,
        "configure_logging": True,
    }
    if engine.address is not None:
        options["address"] = engine.address
    else:
        options.update(num_cpus=engine.workers, _node_ip_address="127.0.0.1")
    try:
        ray.init(**options)
    except Exception as exc:  # Ray raises ConnectionError, RuntimeError, ValueError, ...
        raise RayEngineError(f"cannot start Ray: {type(exc).__name__}: {exc}") from None
    try:
        yield RaySession(ray, ours=True)
    finally:
        ray.shutdown()


def _threads(engine: Engine) -> int:
    """Threads per actor: ``engine.threads``; else, on a local cluster, this machine's
    cores shared out; on another cluster 1 (each actor reserves one CPU there)."""
    if engine.threads is not None:
        return engine.threads
    if engine.address is not None:
        return 1
    return max(1, (os.cpu_count() or 1) // engine.workers)


def _precision_env() -> dict[str, str]:
    """``AUDITOR_PRECISION`` as this process resolves it, for the workers: they compute in
    the driver's precision even on another machine (``auditor.precision``)."""
    from auditor.precision import PRECISION_ENV, resolve_precision

    return {PRECISION_ENV: resolve_precision()}


def _set_threads(threads: int) -> None:
    """Pin an actor's torch and OpenMP threads (the actors share the machine's cores)."""
    os.environ["OMP_NUM_THREADS"] = str(threads)
    os.environ["MKL_NUM_THREADS"] = str(threads)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from auditor.progress import quiet_third_party

    quiet_third_party()
    import torch

    torch.set_num_threads(threads)


def _failure(exc: BaseException, what: str) -> RayEngineError:
    """A clean error for a failed Ray task or actor (the worker's own domain errors keep
    their message)."""
    ray = require_ray()
    exceptions = ray.exceptions
    if isinstance(exc, exceptions.RayTaskError):
        cause = exc.cause
        if isinstance(cause, AuditorError):
            return RayEngineError(f"{what}: {cause}")
        if cause is not None:
            return RayEngineError(f"{what}: a Ray worker failed: {type(cause).__name__}: {cause}")
    if isinstance(exc, exceptions.RayActorError):
        return RayEngineError(
            f"{what}: a Ray worker died and was not restarted ({_first_line(exc)})"
        )
    return RayEngineError(f"{what}: {type(exc).__name__}: {_first_line(exc)}")


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {_first_line(exc)}"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


# ---------------------------------------------------------------------- audits
@dataclass(frozen=True)
class WorkerSpec:
    """What an :class:`AuditWorker` builds its :class:`~auditor.Auditor` from: the same
    arguments as the driver's (files are loaded again in the worker; objects travel)."""

    index_dir: str
    panel: str | Path | Panel | None
    stacker: str | Path | Stacker | None
    config: AuditConfig
    second_opinion: str | Judge | None
    ledger_url: str | None
    """The PostgreSQL ledger the worker writes to; ``None``: rows go back to the driver."""
    roles: Mapping[str, str]
    """The driver's component digests by role: a worker that builds anything else (an
    index changed under the run) refuses to start."""
    build: Callable[[WorkerSpec], WorkerAuditor]
    """Builds the worker's auditor from this spec (:func:`auditor._auditor.worker_auditor`;
    the engine does not import the auditor that drives it)."""


class WorkerAuditor(Protocol):
    """What a worker needs of the auditor it builds."""

    @property
    def ledger(self) -> Ledger: ...

    @property
    def index(self) -> EvidenceIndex: ...

    def components(self) -> AuditComponents: ...


class AuditWorker:
    """A Ray actor auditing batches with components built once (see module doc)."""

    def __init__(self, spec: WorkerSpec, threads: int) -> None:
        self._error: str | None = None
        try:
            self._build(spec, threads)
        except Exception as exc:  # reported by ready(), not as a Ray creation traceback
            self._error = str(exc) if isinstance(exc, AuditorError) else _describe(exc)

    def _build(self, spec: WorkerSpec, threads: int) -> None:
        _set_threads(threads)
        from auditor.graph.flow import AuditState, build_audit_graph
        from auditor.reader_scores import keep, take
        from auditor.records import answer_results
        from auditor.runner import audit_judges, index_component, run_components

        self._auditor = spec.build(spec)
        self._writes = spec.ledger_url is not None
        components = self._auditor.components()
        roles = run_components(components, index_component(self._auditor.index.manifest))
        mine = {role: c.digest for role, c in roles.items()}
        if mine != dict(spec.roles):
            changed = sorted(r for r in {*mine, *spec.roles} if mine.get(r) != spec.roles.get(r))
            raise RayEngineError(
                f"a Ray worker built other components than the driver ({', '.join(changed)}): "
                "was the index or a config file changed during the run?"
            )
        self._batch: dict[str, Any] = {}
        judges = self._judges = audit_judges(components)
        keep(judges)  # the reader scores of each batch ride with its answers

        def collect(state: AuditState) -> list[str]:
            batch = self._batch
            results = answer_results(state, batch["seq_of"], batch["digests"], take(judges))
            self._batch["results"] = results
            return [r.answer_id for r in results]

        self._graph = build_audit_graph(components, collect)

    def ready(self) -> tuple[int, str | None]:
        """This actor's process id, and why it could not build its components (or None)."""
        return os.getpid(), self._error

    def run_batch(
        self,
        run_id: str,
        index: int,
        answers: list[Answer],
        seq_of: dict[str, int],
        digests: dict[str, str],
    ) -> tuple[int, list[AnswerResult] | list[str]]:
        """Audit one batch: its rows (SQLite), or the ids of the answers written (PG)."""
        if self._error is not None:
            raise RayEngineError(f"this Ray worker could not start: {self._error}")
        from auditor.reader_scores import take

        take(self._judges)  # nothing left over from a batch that failed
        self._batch = {"seq_of": seq_of, "digests": digests}
        self._graph.invoke({"answers": answers})
        results: list[AnswerResult] = self._batch.pop("results")
        if not self._writes:
            return index, results
        ledger = self._auditor.ledger
        for result in results:  # a retried batch writes again: insert-or-ignore, no duplicate
            ledger.record_answer(run_id, result)
        return index, [r.answer_id for r in results]


_warm: tuple[Any, list[Any]] | None = None
"""The last pool of actors kept warm in a Ray session this process did not start:
(its key, its actors). One pool at most; another key replaces it."""


def release_workers() -> None:
    """Kill the audit actors kept warm for the next audit (see :class:`RayAuditEngine`)."""
    global _warm
    if _warm is not None:
        _kill(_warm[1])
        _warm = None


def _kill(actors: Sequence[Any]) -> None:
    ray = require_ray()
    for actor in actors:
        with contextlib.suppress(Exception):
            ray.kill(actor, no_restart=True)


class RayAuditEngine:
    """Runs an audit's batches on a pool of :class:`AuditWorker` actors (see module doc).

    Use it inside :func:`ray_cluster`; :meth:`start` builds the actors (each loads
    the models once), :meth:`run` is the :class:`~auditor.runner.BatchEngine`.
    With ``keep`` (a Ray session the caller owns: a notebook, tests), :meth:`stop`
    keeps the actors warm for the next audit with the same components and settings
    (:func:`release_workers` ends them); otherwise it kills them.
    """

    def __init__(self, engine: Engine, spec: WorkerSpec, *, keep: bool = False) -> None:
        self.engine = engine
        self.spec = spec
        self.keep = keep
        self.pids: list[int] = []
        self._actors: list[Any] = []
        threads = _threads(engine)
        self._key = (
            repr(sorted(spec.roles.items())),
            repr(sorted(spec.config.to_dict().items())),
            spec.index_dir,
            spec.ledger_url,
            engine.workers,
            threads,
            engine.max_restarts,
        )

    def start(self) -> None:
        """Start the actors (or take the warm ones) and wait until each has built its
        components."""
        global _warm
        ray = require_ray()
        if _warm is not None:
            key, actors = _warm
            _warm = None
            if key == self._key:
                try:
                    states = ray.get([a.ready.remote() for a in actors], timeout=60)
                    self.pids = [pid for pid, _ in states]
                    self._actors = actors
                except Exception:  # a warm actor that died: start afresh
                    _kill(actors)
            else:
                _kill(actors)
        if not self._actors:
            self._create(ray)
        if self.engine.on_workers is not None:
            self.engine.on_workers(list(self.pids))

    def _create(self, ray: Any) -> None:
        threads = _threads(self.engine)
        remote = ray.remote(AuditWorker).options(
            num_cpus=1,
            max_restarts=self.engine.max_restarts,
            max_task_retries=self.engine.max_restarts,
            runtime_env={
                "env_vars": {
                    "OMP_NUM_THREADS": str(threads),
                    "MKL_NUM_THREADS": str(threads),
                    "TOKENIZERS_PARALLELISM": "false",
                    "HF_HUB_OFFLINE": "1",
                    "TRANSFORMERS_OFFLINE": "1",
                    **_precision_env(),
                }
            },
        )
        # the spec travels by value with each actor (so a restarted actor can rebuild)
        self._actors = [remote.remote(self.spec, threads) for _ in range(self.engine.workers)]
        try:
            states = ray.get([a.ready.remote() for a in self._actors])
        except Exception as exc:
            self.stop(failed=True)
            raise _failure(exc, "starting the Ray workers") from None
        self.pids = [pid for pid, _ in states]
        errors = sorted({error for _, error in states if error is not None})
        if errors:
            self.stop(failed=True)
            raise RayEngineError(f"the Ray workers could not start: {'; '.join(errors)}")

    def stop(self, *, failed: bool = False) -> None:
        """Kill the actors (their models go with them), or keep them warm (``keep``,
        unless the run ``failed``)."""
        global _warm
        if self.keep and not failed and self._actors:
            release_workers()
            _warm = (self._key, self._actors)
        else:
            _kill(self._actors)
        self._actors = []

    def run(
        self,
        run_id: str,
        batches: Sequence[Sequence[Answer]],
        seq_of: Mapping[str, int],
        judge_digests: Mapping[str, str],
    ) -> Iterator[AnswerResult | str]:
        """Yield every answer of ``batches`` in input order as its batch finishes."""
        from ray.util import ActorPool

        if not self._actors:
            self.start()
        pool = ActorPool(self._actors)
        seq = dict(seq_of)
        digests = dict(judge_digests)
        work = [(i, list(batch)) for i, batch in enumerate(batches)]
        finished: dict[int, list[Any]] = {}
        next_batch = 0
        done = 0

        def submit(actor: Any, item: tuple[int, list[Answer]]) -> Any:
            index, batch = item
            batch_seq = {a.id: seq[a.id] for a in batch}  # only this batch's travels
            return actor.run_batch.remote(run_id, index, batch, batch_seq, digests)

        results = pool.map_unordered(submit, work)
        while next_batch < len(work):
            try:
                index, rows = next(results)
            except StopIteration:
                break
            except Exception as exc:
                raise _failure(
                    exc,
                    f"run {run_id[:12]} stopped after {done} of {sum(map(len, batches))} "
                    "answers (the run is incomplete; run the command again to resume)",
                ) from None
            finished[index] = rows
            while next_batch in finished:
                for row in finished.pop(next_batch):
                    done += 1
                    yield row
                next_batch += 1
        if next_batch < len(work):  # never silently short
            raise RayEngineError(
                f"run {run_id[:12]}: Ray returned {next_batch} of {len(work)} batches"
            )


def ledger_url_for_workers(ledger: Any) -> str | None:
    """The URL workers write to: a PostgreSQL ledger's; ``None`` for SQLite (one writer,
    the driver)."""
    engine = ledger.engine
    if engine.dialect.name != "postgresql":
        return None
    return str(engine.url.render_as_string(hide_password=False))


# ---------------------------------------------------------------------- ingest
class _EmbedBatch:
    """A Ray Data actor: the MiniLM encoder, loaded once per actor."""

    def __init__(self, threads: int, batch_size: int) -> None:
        _set_threads(threads)
        from auditor import embedding

        self._encode = embedding.encode
        self._batch_size = batch_size
        embedding.load_encoder()

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        texts = [str(t) for t in batch["text"]]
        vectors = self._encode(texts, batch_size=self._batch_size, cache=False)
        return {"i": np.asarray(batch["i"], dtype=np.int64), "vector": list(vectors)}


class RayEncoder:
    """An ``encoder`` for :func:`auditor.retrieval.ingest` that embeds with Ray Data:
    ``from_items(...).map_batches(<MiniLM actor>, concurrency=workers)``.

    Each call runs in :func:`ray_cluster` (a local cluster is started for it unless
    Ray is already running). ``block_size`` tells ingest to hand over all new texts at
    once (one cluster and actor pool per ingest, not per block); ``progress(done,
    total)`` follows the embedded texts. The vectors are the local encoder's to float32
    rounding (another process, other batches).
    """

    block_size = 1 << 62

    def __init__(
        self,
        engine: Engine,
        *,
        batch_size: int = 64,
        progress: Callable[[int, int], None] | None = None,
    ) -> None:
        self.engine = engine
        self.batch_size = batch_size
        self.progress = progress

    def __call__(self, texts: list[str]) -> NDArray[np.float32]:
        from auditor.embedding import EMBEDDING_DIM

        if not texts:
            return np.zeros((0, EMBEDDING_DIM), dtype=np.float32)
        with ray_cluster(self.engine) as session, warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # Ray Data's own
            return self._embed(session.ray, texts)

    def _embed(self, ray: Any, texts: list[str]) -> NDArray[np.float32]:
        import logging

        from auditor.embedding import EMBEDDING_DIM

        for name in ("ray.data", "ray.data._internal"):
            logging.getLogger(name).setLevel(logging.ERROR)
        ctx = ray.data.DataContext.get_current()
        for flag in ("enable_progress_bars", "enable_operator_progress_bars"):
            if hasattr(ctx, flag):
                setattr(ctx, flag, False)
        # texts arrive longest first: contiguous blocks batch texts of similar length
        n_batches = -(-len(texts) // self.batch_size)
        blocks = min(len(texts), max(self.engine.workers, min(n_batches, 4 * self.engine.workers)))
        dataset = ray.data.from_items(
            [{"i": i, "text": t} for i, t in enumerate(texts)], override_num_blocks=blocks
        ).map_batches(
            _EmbedBatch,
            fn_constructor_kwargs={"threads": _threads(self.engine), "batch_size": self.batch_size},
            compute=ray.data.ActorPoolStrategy(size=min(self.engine.workers, blocks)),
            batch_size=self.batch_size,
            num_cpus=1,
            batch_format="numpy",
            runtime_env={"env_vars": _precision_env()},
        )
        out = np.empty((len(texts), EMBEDDING_DIM), dtype=np.float32)
        seen = np.zeros(len(texts), dtype=bool)
        done = 0
        started = time.perf_counter()
        try:
            for batch in dataset.iter_batches(batch_size=None, batch_format="numpy"):
                rows = np.asarray(batch["i"], dtype=np.int64)
                out[rows] = np.stack(list(batch["vector"])).astype(np.float32)
                seen[rows] = True
                done += len(rows)
                if self.progress is not None and done < len(texts):  # ingest reports the end
                    self.progress(done, len(texts))
        except AuditorError:
            raise
        except Exception as exc:
            raise _failure(exc, "embedding with Ray Data") from None
        if not seen.all():  # never an index with unembedded chunks
            raise RayEngineError(
                f"Ray Data embedded {int(seen.sum())} of {len(texts)} texts "
                f"in {time.perf_counter() - started:.0f} s"
            )
        return out
