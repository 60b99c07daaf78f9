"""The judge interface and the registry of judge factories.

A judge takes a batch of (claim, evidence) pairs and returns one :class:`Vote`
per pair: 0 supported, 1 hallucinated/unsupported, 0.5 abstain. Failures are
abstentions with the reason in ``Vote.error``; a judge never drops a pair.
"""

from __future__ import annotations

import asyncio
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from auditor.digest import content_digest
from auditor.registry import Registry
from auditor.types import ABSTAIN, Component, JudgePair, Vote


class Judge(ABC):
    """Base class of every judge: a name, a version and a content digest."""

    name: str = "judge"
    version: str = "1"

    def __init__(self, **params: Any) -> None:
        self.params: dict[str, Any] = dict(params)

    @property
    def digest(self) -> str:
        """Content digest over the judge's class, name, version and parameters."""
        return content_digest(
            {"class": type(self).__qualname__, "name": self.name, "version": self.version,
             "params": self.params}
        )

    def component(self) -> Component:
        """This judge as a versioned component for the ledger."""
        return Component(kind="judge", name=self.name, version=self.version,
                         digest=self.digest, config=self.params)

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
            return [Vote(judge=self.name, value=ABSTAIN, raw="", latency_s=elapsed,
                         error=f"{type(exc).__name__}: {exc}") for _ in pairs]
        elapsed = (time.perf_counter() - start) / max(len(pairs), 1)
        votes = []
        for pair, (value, scores, raw) in zip(pairs, results, strict=True):
            error = "no evidence" if not pair.evidence and value == ABSTAIN else None
            votes.append(Vote(judge=self.name, value=float(value), raw=raw, latency_s=elapsed,
                              error=error, scores=scores))
        return votes


JudgeFactory = Callable[..., Judge]


def register_judge(name: str) -> Callable[[JudgeFactory], JudgeFactory]:
    """Decorator registering a judge factory (a class or function) under ``name``."""
    return _JUDGES.register(name)


def registered_judges() -> list[str]:
    """Names of every registered judge."""
    return _JUDGES.names()


def build_judge(name: str, params: Mapping[str, Any] | None = None) -> Judge:
    """Create a judge by registered name with keyword parameters."""
    return _JUDGES.build(name, params)


def _load_builtin_judges() -> None:
    import auditor.judges.entailment
    import auditor.judges.entity
    import auditor.judges.lexical_bm25
    import auditor.judges.llm
    import auditor.judges.local  # noqa: F401  (registers the built-in judges)


_JUDGES: Registry[Judge] = Registry("judge", _load_builtin_judges)
