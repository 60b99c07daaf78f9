"""The one run executor: every way the auditor writes verdicts goes through
:func:`execute_run`.

A run has four steps:

1. **begin**: the :class:`RunSink` says which answers are already recorded (a resumed
   run) or that the run is complete (nothing to do);
2. **per batch**: a :data:`Producer` runs each batch of the remaining answers through the
   audit graph and yields the batch's :class:`~ledger.AnswerResult` records
   (:func:`auditor.records.answer_results`, handed to it as ``results_of``), or, when an
   engine's worker wrote them itself, :class:`Recorded` ids;
3. **record**: the sink writes each yielded group in one transaction; the hooks
   (``on_commit``, ``on_answer``, ``progress``) run after it commits;
4. **finish**: every answer must have been yielded once; then the sink finishes the run.

What differs between an audit (:func:`auditor.runner.execute_audit`, in this process or
on Ray), a re-audit (:func:`auditor.freshness.reaudit`), a re-judge
(:func:`auditor.bridging.rejudge`) and a calibration run
(:func:`auditor.runner.record_calibration`) is only the producer and the sink. The
entailment reader's pair scores are kept for the whole run and ride with the batch
that asked for them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from auditor.graph.flow import AuditState
from auditor.reader_scores import StoredKey
from auditor.reader_scores import keep as keep_reader_scores
from auditor.reader_scores import stop as stop_reader_scores
from auditor.reader_scores import take as take_reader_scores
from auditor.records import answer_results
from auditor.types import Answer, Component
from ledger import AnswerResult, Ledger

Progress = Callable[[int, int], None]
ResultsOf = Callable[[AuditState], list[AnswerResult]]
"""A finished batch state -> one ledger record per answer (with the reader scores the
batch asked for)."""


@dataclass(frozen=True)
class Recorded:
    """Answers an engine's worker already wrote to the ledger itself."""

    answer_ids: tuple[str, ...]


Producer = Callable[
    [Sequence[Sequence[Answer]], Mapping[str, int], ResultsOf],
    Iterator["Sequence[AnswerResult] | Recorded"],
]
"""``produce(batches, seq_of, results_of)``: runs the batches (each answer once, in input
order) and yields, per transaction, the records to write or the ids already written."""


@dataclass(frozen=True)
class RunSummary:
    """What a run did."""

    run_id: str
    reused: bool
    """True when the run already existed and was complete: nothing was written."""
    answers_written: int
    answers_total: int


class RunSink(Protocol):
    """Where a run's records go (the begin, record and finish steps)."""

    run_id: str

    def begin(self) -> frozenset[str] | None:
        """The answer ids already recorded, or None when the run is complete."""
        ...

    def record(self, results: Sequence[AnswerResult]) -> None:
        """Write one group of answers in one transaction."""
        ...

    def finish(self) -> None:
        """Mark the run finished (every answer was recorded)."""
        ...


@dataclass
class NewRun:
    """A run of its own in the ledger (an audit, a re-audit, a calibration): begun
    (content-addressed, resumable), its answers written, then finished.

    ``before_record`` runs in front of each group's write (a re-audit marks the carried
    claims first, so a resumed run writes them again), ``after_record`` after it (a
    calibration stores each item's gold label), ``after_finish`` once at the end."""

    ledger: Ledger
    run_id: str
    kind: str
    input_digest: str
    as_of: datetime | None
    config: Mapping[str, Any]
    components: Mapping[str, Component]
    n_answers: int
    before_record: Callable[[Sequence[AnswerResult]], None] | None = None
    after_record: Callable[[Sequence[AnswerResult]], None] | None = None
    after_finish: Callable[[], None] | None = None

    def begin(self) -> frozenset[str] | None:
        info = self.ledger.begin_run(
            self.run_id,
            kind=self.kind,
            input_digest=self.input_digest,
            as_of=self.as_of,
            config=dict(self.config),
            components=dict(self.components),
            n_answers=self.n_answers,
        )
        if info.status == "complete":
            return None
        return frozenset(self.ledger.done_answer_ids(self.run_id))

    def record(self, results: Sequence[AnswerResult]) -> None:
        if self.before_record is not None:
            self.before_record(results)
        self.ledger.record_answers(self.run_id, results)  # one transaction
        if self.after_record is not None:
            self.after_record(results)

    def finish(self) -> None:
        self.ledger.finish_run(self.run_id)
        if self.after_finish is not None:
            self.after_finish()


def execute_run(
    answers: Sequence[Answer],
    sink: RunSink,
    produce: Producer,
    *,
    judges: Sequence[object] = (),
    judge_digests: Mapping[str, str] | None = None,
    batch_size: int,
    stored_scores: frozenset[StoredKey] = frozenset(),
    progress: Progress | None = None,
    on_answer: Callable[[str, str], None] | None = None,
    on_commit: Callable[[str, list[str]], None] | None = None,
) -> RunSummary:
    """Run ``answers`` through ``produce`` into ``sink`` (see the module doc).

    ``judges``/``judge_digests``: the run's judges (the entailment reader among them
    keeps its pair scores for the run; ``stored_scores`` are those the ledger already
    holds) and their digests by name, for ``results_of``. After each group commits:
    ``on_commit(run_id, answer_ids)`` once, then ``on_answer(run_id, answer_id)`` and
    ``progress(done, total)`` for each of its answers."""
    run_id = sink.run_id
    done = sink.begin()
    if done is None:
        return RunSummary(run_id, True, 0, len(answers))
    todo = [(seq, a) for seq, a in enumerate(answers) if a.id not in done]
    seq_of = {a.id: seq for seq, a in todo}
    digests = dict(judge_digests or {})
    batches = [
        [a for _, a in todo[start : start + batch_size]]
        for start in range(0, len(todo), batch_size)
    ]

    def results_of(state: AuditState) -> list[AnswerResult]:
        return answer_results(
            state, seq_of, digests, take_reader_scores(judges, skip=stored_scores)
        )

    written = 0
    if progress:
        progress(len(done), len(answers))

    def committed(answer_ids: list[str]) -> None:
        nonlocal written
        if on_commit and answer_ids:
            on_commit(run_id, answer_ids)
        for answer_id in answer_ids:
            written += 1
            if on_answer:
                on_answer(run_id, answer_id)
            if progress:
                progress(len(done) + written, len(answers))

    take_reader_scores(judges)  # nothing left over from another run of these judges
    keep_reader_scores(judges)
    for group in produce(batches, seq_of, results_of):
        if isinstance(group, Recorded):
            committed(list(group.answer_ids))
        elif group:
            sink.record(group)
            committed([r.answer_id for r in group])
    stop_reader_scores(judges)  # (a batch that raised leaves its scores to the next run)
    if written != len(todo):  # a producer that lost answers must not finish the run
        raise RuntimeError(f"run {run_id[:12]}: {written} of {len(todo)} answers were written")
    sink.finish()
    return RunSummary(run_id, False, written, len(answers))
