"""The ledger facade: every read and write of the SQL ledger goes through :class:`Ledger`.

:class:`Ledger` is one class assembled from a repository per aggregate, each in a
private module of this package and each built on the shared plumbing of
:mod:`ledger._engine` (engine, transactions, conflict retries, batched inserts):

- :mod:`ledger._runs`: component versions, runs, their components and links;
- :mod:`ledger._corpus`: documents, versions, chunks and the evidence citing them;
- :mod:`ledger._claims`: answers, claims, evidence and verdicts, carried claims;
- :mod:`ledger._votes`: judge votes and bridged verdicts (re-judgings);
- :mod:`ledger._reader_scores`: entailment reader scores;
- :mod:`ledger._reviews`: human audits and the review queue's labels;
- :mod:`ledger._reports`: per-run aggregates for reports;
- :mod:`ledger._cache`: the LLM response cache.

Writes are batched (one multi-row INSERT per table) and transactional; shared
rows (components, documents, versions, chunks) are inserted with
ON CONFLICT DO NOTHING, so writing the same thing twice adds nothing. Many writers
may share one PostgreSQL ledger; see :mod:`ledger._engine` for how conflicting
transactions are re-run.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from sqlalchemy.exc import SQLAlchemyError

from ledger._cache import LedgerResponseCache, ResponseCacheRepository
from ledger._claims import ClaimRepository
from ledger._corpus import CorpusRepository
from ledger._engine import (
    DEFAULT_POOL,
    DEFAULT_RETRY_ATTEMPTS,
    DEFAULT_RETRY_BASE_S,
    RETRYABLE_SQLSTATES,
    LedgerCore,
    _Conflict,
    _describe,
    _now,
    _plain,
    _retrying,
    _sqlite_pragmas,
    _sqlstate,
    _table,
    open_engine,
)
from ledger._reader_scores import ReaderScoreRepository, _reader_score_rows
from ledger._reports import ReportRepository
from ledger._reviews import ReviewRepository
from ledger._runs import RunRepository
from ledger._votes import VoteRepository, _vote_model, _vote_row
from ledger.errors import LedgerError
from ledger.schema import ensure_schema
from ledger.url import mask_url

__all__ = [
    "DEFAULT_POOL",
    "DEFAULT_RETRY_ATTEMPTS",
    "DEFAULT_RETRY_BASE_S",
    "RETRYABLE_SQLSTATES",
    "Ledger",
    "LedgerCore",
    "LedgerResponseCache",
    "_Conflict",
    "_describe",
    "_now",
    "_plain",
    "_reader_score_rows",
    "_retrying",
    "_sqlite_pragmas",
    "_sqlstate",
    "_table",
    "_vote_model",
    "_vote_row",
    "open_ledger",
]


class Ledger(
    ClaimRepository,
    VoteRepository,
    ReaderScoreRepository,
    ReviewRepository,
    ReportRepository,
    ResponseCacheRepository,
):
    """A connection to one ledger database (SQLite file or PostgreSQL).

    Every method is implemented in the repository of its aggregate; the public ones
    are named here, so that this class alone lists (and holds) the ledger's API.
    """

    # plumbing (ledger._engine)
    close = LedgerCore.close
    count = LedgerCore.count

    # runs, their components and links (ledger._runs)
    record_components = RunRepository.record_components
    begin_run = RunRepository.begin_run
    finish_run = RunRepository.finish_run
    find_run = RunRepository.find_run
    get_run = RunRepository.get_run
    list_runs = RunRepository.list_runs
    record_run_link = RunRepository.record_run_link
    run_links = RunRepository.run_links

    # documents, versions, chunks and the evidence citing them (ledger._corpus)
    record_corpus = CorpusRepository.record_corpus
    changed_versions = CorpusRepository.changed_versions
    document_versions = CorpusRepository.document_versions
    versions_chunks = CorpusRepository.versions_chunks
    chunk_texts = CorpusRepository.chunk_texts
    citing_evidence = CorpusRepository.citing_evidence

    # answers, claims, evidence, verdicts, carried claims (ledger._claims)
    done_answer_ids = ClaimRepository.done_answer_ids
    record_answer = ClaimRepository.record_answer
    record_answers = ClaimRepository.record_answers
    run_answers = ClaimRepository.run_answers
    earliest_answer_as_of = ClaimRepository.earliest_answer_as_of
    claim_ids = ClaimRepository.claim_ids
    claim_results = ClaimRepository.claim_results
    claim_evidence = ClaimRepository.claim_evidence
    claim_trail = ClaimRepository.claim_trail
    claims_of = ClaimRepository.claims_of
    labels_of_claims = ClaimRepository.labels_of_claims
    record_carried = ClaimRepository.record_carried
    carried_claims = ClaimRepository.carried_claims

    # judge votes and bridged verdicts (ledger._votes)
    record_votes = VoteRepository.record_votes
    record_bridge = VoteRepository.record_bridge
    claim_votes = VoteRepository.claim_votes

    # entailment reader scores (ledger._reader_scores)
    reader_scores = ReaderScoreRepository.reader_scores

    # human audits and the review queue (ledger._reviews)
    record_human_audits = ReviewRepository.record_human_audits
    human_audits = ReviewRepository.human_audits
    claim_labels = ReviewRepository.claim_labels

    # per-run aggregates for reports (ledger._reports)
    verdict_versions = ReportRepository.verdict_versions
    vote_statistics = ReportRepository.vote_statistics
    judged_claims = ReportRepository.judged_claims
    answer_label_counts = ReportRepository.answer_label_counts

    # the LLM response cache (ledger._cache)
    response_cache = ResponseCacheRepository.response_cache


def open_ledger(
    location: str | Path,
    *,
    create: bool = True,
    busy_timeout_s: float = 30.0,
    pool: Mapping[str, int] | None = None,
    retry_attempts: int = DEFAULT_RETRY_ATTEMPTS,
) -> Ledger:
    """Open (and create or upgrade) a ledger: a SQLite file path or a SQLAlchemy URL.

    Refuses, writing nothing, a ledger whose schema is newer than this code, a
    locked or corrupted SQLite file, or (with ``create=False``) a missing file.
    ``busy_timeout_s``: how long SQLite waits for another writer's lock. ``pool``
    overrides :data:`DEFAULT_POOL` (PostgreSQL connection pool: ``pool_size``,
    ``max_overflow``, ``pool_timeout``, ``pool_recycle``); ``retry_attempts``: how
    often a write aborted as a serialisation failure or deadlock is tried.
    """
    if not isinstance(retry_attempts, int) or retry_attempts < 1:
        raise LedgerError(f"retry_attempts: expected a positive integer, got {retry_attempts!r}")
    engine = open_engine(location, create=create, busy_timeout_s=busy_timeout_s, pool=pool)
    shown = mask_url(location)
    ledger = Ledger(engine, str(location))
    ledger.retry_attempts = retry_attempts

    def schema() -> None:
        with ledger._tx() as conn:
            ensure_schema(conn, location=shown)

    try:
        ledger._with_retries(schema)
    except LedgerError:
        engine.dispose()
        raise
    except SQLAlchemyError as exc:
        engine.dispose()
        raise LedgerError(f"{shown}: cannot open ledger: {_describe(exc, location)}") from None
    return ledger
