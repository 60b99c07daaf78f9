"""The entailment reader's pair scores of a run, kept in the ledger across processes.

The reader (:class:`auditor.entailment.model.EntailmentModel`) keeps the probabilities of
every (evidence window or sentence, claim sentence) pair it has read in its process. An
audit also stores the scores its judging asked for with the run (table ``reader_score``,
written in the same transaction as the run's answers); a re-judge or re-audit of the run
offers them back to its judges before they read, so a changed entailment judge with the
same weights (other vote thresholds, say) in a new process runs no forward pass for
the pairs the run already read. Scores are keyed by the weights' sha256 and whether
they ran quantised: other weights never see them.

Judges take part through :class:`ReaderScoreKeeper` (the ``entailment`` judge is one);
any other judge is left alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol, runtime_checkable

from auditor.entailment.model import PairScore, join_pair_key, split_pair_key
from ledger import Ledger, ReaderScoreRecord

StoredKey = tuple[str, bool, str, int]
"""``(weights digest, quantised, pair digest, max_length)``: one ``reader_score`` row."""


@runtime_checkable
class ReaderScoreKeeper(Protocol):
    """A judge whose reader scores can be kept with a run and offered back to it."""

    @property
    def reader_identity(self) -> tuple[str, bool]:
        """``(weights sha256, quantised)`` of the reader the judge reads with."""
        ...

    def keep_reader_scores(self, on: bool = True) -> None:
        """Start (or, with ``on=False``, stop) keeping the scores of the pairs asked."""
        ...

    def take_reader_scores(self) -> list[PairScore]:
        """The scores kept since the last call."""
        ...

    def offer_reader_scores(self, scores: Sequence[PairScore]) -> None:
        """Scores to put into the reader's cache before the judge next reads."""
        ...


def keepers(judges: Iterable[object]) -> list[ReaderScoreKeeper]:
    """The judges among ``judges`` that read with the entailment reader."""
    return [j for j in judges if isinstance(j, ReaderScoreKeeper)]


def keep(judges: Iterable[object]) -> None:
    """Make every reader judge among ``judges`` keep the scores it asks for."""
    for judge in keepers(judges):
        judge.keep_reader_scores()


def stop(judges: Iterable[object]) -> None:
    """Make every reader judge among ``judges`` stop keeping scores (and forget them)."""
    for judge in keepers(judges):
        judge.keep_reader_scores(False)


def take(
    judges: Iterable[object], *, skip: frozenset[StoredKey] = frozenset()
) -> list[ReaderScoreRecord]:
    """The scores the reader judges among ``judges`` asked for since the last call, as
    ledger records (one per weights and pair; those in ``skip``, already stored, left
    out), in the order asked."""
    out: dict[StoredKey, ReaderScoreRecord] = {}
    for judge in keepers(judges):
        weights, quantized = judge.reader_identity
        for key, (e, n, c) in judge.take_reader_scores():
            pair, max_length = split_pair_key(key)
            stored = (weights, quantized, pair, max_length)
            if stored not in skip and stored not in out:
                out[stored] = ReaderScoreRecord(weights, quantized, pair, max_length, e, n, c)
    return list(out.values())


def preload(ledger: Ledger, run_id: str, judges: Iterable[object]) -> frozenset[StoredKey]:
    """Offer the reader scores stored with ``run_id`` to every reader judge among
    ``judges`` (each gets those of its own weights; nothing is read from the ledger for
    a panel without one). Returns the keys offered (the rows the run already has)."""
    offered: set[StoredKey] = set()
    found: dict[tuple[str, bool], list[PairScore]] = {}
    for judge in keepers(judges):
        identity = judge.reader_identity
        if identity not in found:
            rows = ledger.reader_scores(run_id, weights_digest=identity[0], quantized=identity[1])
            found[identity] = [
                (
                    join_pair_key(r.pair_digest, r.max_length),
                    (r.entailment, r.neutral, r.contradiction),
                )
                for r in rows
            ]
            offered.update((identity[0], identity[1], r.pair_digest, r.max_length) for r in rows)
        judge.offer_reader_scores(found[identity])
    return frozenset(offered)
