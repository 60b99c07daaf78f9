"""The judge interface: :class:`Judge`, :class:`LocalJudge` and :func:`band`.

A judge takes a batch of (claim, evidence) pairs and returns one :class:`Vote`
per pair: 0 supported, 1 hallucinated/unsupported, 0.5 abstain. Failures are
abstentions with the reason in ``Vote.error``; a judge never drops a pair.

This module imports no judge: the built-in judges, the registry and
:func:`~auditor.judges.catalog.build_judge` are in :mod:`auditor.judges.catalog`.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar

from auditor.digest import content_digest
from auditor.types import ABSTAIN, Component, JudgePair, Vote


class Judge(ABC):
    """Base class of every judge: a name, a version and a content digest.

    The contract (checked for every registered judge by ``tests/test_judge_contract.py``):
    a judge's parameters are its constructor's arguments, kept as attributes of the same
    names (as scikit-learn estimators do); :meth:`get_params` reads them back and the
    digest covers them, so two judges with equal parameters have equal digests. Keyword
    arguments given to ``Judge.__init__`` that are not constructor arguments are the
    judge's *identity* (a weights or prompt digest): they change votes, so they enter the
    digest too. ``volatile_params`` names constructor arguments that cannot change a vote
    (timeouts, caches, concurrency) and stay out of the digest.
    """

    name: str = "judge"
    version: str = "1"
    volatile_params: frozenset[str] = frozenset()
    class_path: ClassVar[str | None] = None
    """The ``module.Class`` path the digest names the class by when it is not where the
    class lives now: a judge moved to another module keeps the path its digest was first
    computed with, so its digest, the run ids and the stored votes keyed on it stay the
    same. Read from the class itself, never inherited (a subclass is another judge)."""

    def __init__(self, **identity: Any) -> None:
        self._identity: dict[str, Any] = dict(identity)

    def get_params(self) -> dict[str, Any]:
        """The constructor's arguments with their current values (volatile ones excluded),
        read from the attributes of the same names (or, for a judge that keeps one only
        in :meth:`identity`, from there)."""
        out: dict[str, Any] = {}
        for p in inspect.signature(type(self).__init__).parameters.values():
            if p.name == "self" or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                continue
            if p.name in self.volatile_params:
                continue
            if hasattr(self, p.name):
                out[p.name] = getattr(self, p.name)
            elif p.name in getattr(self, "_identity", {}):
                out[p.name] = self._identity[p.name]
            else:
                raise TypeError(
                    f"judge {type(self).__name__}: parameter {p.name!r} is "
                    f"neither an attribute nor part of its identity"
                )
        return out

    def identity(self) -> dict[str, Any]:
        """What else decides the votes besides the parameters (e.g. a weights digest)."""
        params = self.get_params()
        return {k: v for k, v in getattr(self, "_identity", {}).items() if k not in params}

    @property
    def params(self) -> dict[str, Any]:
        """Parameters and identity: everything the digest covers."""
        return {**self.get_params(), **self.identity()}

    @property
    def digest(self) -> str:
        """Content digest over the judge's class (its :attr:`class_path`, else its module and
        qualified name), name, version, parameters and identity."""
        cls = type(self)
        return content_digest(
            {
                "class": vars(cls).get("class_path") or f"{cls.__module__}.{cls.__qualname__}",
                "name": self.name,
                "version": self.version,
                "params": self.params,
            }
        )

    def component(self) -> Component:
        """This judge as a versioned component for the ledger."""
        return Component(
            kind="judge",
            name=self.name,
            version=self.version,
            digest=self.digest,
            config=self.params,
        )

    @abstractmethod
    async def judge(self, pairs: Sequence[JudgePair]) -> list[Vote]:
        """One vote per pair, in order."""

    def judge_sync(self, pairs: Sequence[JudgePair]) -> list[Vote]:
        """Blocking convenience wrapper around :meth:`judge`."""
        return asyncio.run(self.judge(pairs))


class LocalJudge(Judge):
    """A judge computed in-process: implement :meth:`score`, one pair at a time, or
    override :meth:`score_batch` for vectorised work."""

    def score(self, pair: JudgePair) -> tuple[float, dict[str, float], str]:
        """Return ``(vote, scores, raw)`` for one pair."""
        raise NotImplementedError

    def score_batch(self, pairs: Sequence[JudgePair]) -> list[tuple[float, dict[str, float], str]]:
        return [self.score(pair) for pair in pairs]

    async def judge(self, pairs: Sequence[JudgePair]) -> list[Vote]:
        return self.judge_local(pairs)

    def judge_local(self, pairs: Sequence[JudgePair]) -> list[Vote]:
        """Score a batch synchronously; an exception turns every vote into an abstention."""
        start = time.perf_counter()
        try:
            results = self.score_batch(pairs)
        except Exception as exc:  # recorded, never dropped
            elapsed = (time.perf_counter() - start) / max(len(pairs), 1)
            return [
                Vote(
                    judge=self.name,
                    value=ABSTAIN,
                    raw="",
                    latency_s=elapsed,
                    error=f"{type(exc).__name__}: {exc}",
                )
                for _ in pairs
            ]
        elapsed = (time.perf_counter() - start) / max(len(pairs), 1)
        votes = []
        for pair, (value, scores, raw) in zip(pairs, results, strict=True):
            error = "no evidence" if not pair.evidence and value == ABSTAIN else None
            votes.append(
                Vote(
                    judge=self.name,
                    value=float(value),
                    raw=raw,
                    latency_s=elapsed,
                    error=error,
                    scores=scores,
                )
            )
        return votes


def band(value: float, support_at: float, reject_below: float) -> float:
    """The vote of a support score: 0 (supported) at or above ``support_at``, 1 below
    ``reject_below``, an abstention in between."""
    if value >= support_at:
        return 0.0
    if value < reject_below:
        return 1.0
    return ABSTAIN
