"""Human audits: reviewers' verdicts on claims, appended to the ledger (never edited).

A reviewer gives one of ``supported``, ``contradicted``, ``not_supported``,
``stale``, ``unknown``, ``not_factual`` (or ``hallucinated`` when the kind of
error is not said). Report cards compare the auditor's labels with them
(:mod:`auditor.report.agreement`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from auditor.errors import InputError
from auditor.jsonl import BadLines, read_jsonl, require
from auditor.report.agreement import HUMAN_LABELS
from ledger import Ledger, LedgerError


@dataclass(frozen=True)
class HumanAudit:
    """One reviewer verdict on one claim of one run."""

    run_id: str
    claim_id: str
    reviewer: str
    label: str
    note: str | None = None


def _resolve_claim(
    prefix: str,
    claim_ids: set[str],
    run_id: str,
    *,
    file: str | None = None,
    line: int | None = None,
) -> str:
    matches = [c for c in claim_ids if c.startswith(prefix)] if prefix else []
    if not matches:
        raise InputError(
            f"run {run_id[:12]} has no claim {prefix!r}", file=file, line=line, field="claim_id"
        )
    if len(matches) > 1:
        raise InputError(
            f"claim id prefix {prefix!r} is ambiguous", file=file, line=line, field="claim_id"
        )
    return matches[0]


def _check(label: str, reviewer: str, *, file: str | None = None, line: int | None = None) -> None:
    if label not in HUMAN_LABELS:
        raise InputError(
            f"unknown label {label!r} (one of {', '.join(sorted(HUMAN_LABELS))})",
            file=file,
            line=line,
            field="label",
        )
    if not reviewer.strip():
        raise InputError("must not be empty", file=file, line=line, field="reviewer")


def add_audits(ledger: Ledger, audits: Sequence[HumanAudit]) -> int:
    """Validate and append audits (run ids and claim ids may be unique prefixes);
    nothing is written when any is invalid. Returns how many were new."""
    by_run: dict[str, list[tuple[str, str, str, str | None]]] = {}
    known: dict[str, set[str]] = {}
    for a in audits:
        _check(a.label, a.reviewer)
        run_id = ledger.find_run(a.run_id)
        if run_id not in known:
            known[run_id] = ledger.claim_ids(run_id)
        claim = _resolve_claim(a.claim_id, known[run_id], run_id)
        by_run.setdefault(run_id, []).append((claim, a.reviewer.strip(), a.label, a.note))
    return sum(ledger.record_human_audits(run_id, rows) for run_id, rows in by_run.items())


def read_audits(path: str | Path, *, run: str | None = None) -> list[HumanAudit]:
    """Read audits from JSONL: ``{"run_id"?, "claim_id", "label", "reviewer", "note"?}``
    per line (``run`` is used where a line has no run id). Errors name file, line, field."""
    return [a for _, a in _read(path, run)]


def _read(path: str | Path, run: str | None) -> list[tuple[int, HumanAudit]]:
    """Every line of an audits file, checked; every bad line is named together."""
    out = []
    bad = BadLines(path)
    for line, record in read_jsonl(path, bad=bad):
        with bad.collect():
            run_id = require(record, "run_id", str, file=path, line=line, optional=run is not None)
            claim = require(record, "claim_id", str, file=path, line=line)
            label = require(record, "label", str, file=path, line=line)
            reviewer = require(record, "reviewer", str, file=path, line=line)
            note = require(record, "note", str, file=path, line=line, optional=True)
            _check(label, reviewer, file=str(path), line=line)
            out.append((line, HumanAudit(run_id or str(run), claim, reviewer, label, note)))
    bad.check()
    return out


def import_audits(ledger: Ledger, path: str | Path, *, run: str | None = None) -> int:
    """Validate every line of a JSONL file, then append them all in one go (nothing is
    written when a line is bad). Returns how many were new."""
    audits = _read(path, run)
    checked: dict[str, set[str]] = {}
    bad = BadLines(path)  # a line naming an unknown run or claim: all of them, then none written
    for line, a in audits:
        with bad.collect():
            try:
                run_id = ledger.find_run(a.run_id)
            except LedgerError as exc:
                raise InputError(str(exc), file=str(path), line=line, field="run_id") from None
            if run_id not in checked:
                checked[run_id] = ledger.claim_ids(run_id)
            _resolve_claim(a.claim_id, checked[run_id], run_id, file=str(path), line=line)
    bad.check()
    return add_audits(ledger, [a for _, a in audits])
