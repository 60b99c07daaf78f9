"""What the pages and the JSON API show, read from the ledger through :class:`ledger.Ledger`.

As thin as the CLI: runs, claims, evidence, votes and audits come from the ledger's
own queries; figures and agreement from :mod:`auditor.report`; reviews are written by
:func:`auditor.human_audit.add_audits` (the rows of ``auditor review add``). Nothing
here knows about HTTP: errors are :class:`WebError` with the field they are about.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from auditor.errors import InputError
from auditor.human_audit import HumanAudit, add_audits
from auditor.report.agreement import human_agreement, reviewer_agreement
from auditor.report.evidence import claim_evidence_view
from auditor.report.full import support_history
from auditor.web.queue import (
    Page,
    QueueFilter,
    filter_queue,
    is_flagged,
    order_queue,
    page_of,
    safe_link,
    segments,
    threshold_of,
)
from ledger import ClaimResult, Ledger, LedgerError, RunInfo


class WebError(Exception):
    """A request the application cannot serve: HTTP ``status``, the ``field`` it is about
    (``run``, ``claim``, ``label``, ``reviewer``, ``body``, ...) and a message that never
    holds a stack trace or the ledger's location."""

    def __init__(self, status: int, field: str | None, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.field = field
        self.message = message

    def to_dict(self) -> dict[str, Any]:
        return {"error": {"status": self.status, "field": self.field, "message": self.message}}


def _iso(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value


def resolve_run(ledger: Ledger, run: str) -> RunInfo:
    """The run whose id is ``run`` or starts with it (404 when none, 400 when several)."""
    if not run or len(run) > 128 or not run.isascii() or not run.isalnum():
        raise WebError(404, "run", f"no run with id {run[:80]!r}")
    try:
        run_id = ledger.find_run(run)
    except LedgerError as exc:
        if "ambiguous" in str(exc):
            raise WebError(400, "run", f"run id prefix {run!r} is ambiguous") from None
        raise WebError(404, "run", f"no run with id {run!r}") from None
    return ledger.get_run(run_id)


def resolve_claim(claim: str, claim_ids: set[str], run_id: str) -> str:
    """The claim of the run whose id is ``claim`` or starts with it."""
    matches = [c for c in claim_ids if c.startswith(claim)] if claim else []
    if not matches:
        raise WebError(404, "claim", f"run {run_id[:12]} has no claim {claim[:80]!r}")
    if len(matches) > 1:
        raise WebError(400, "claim", f"claim id prefix {claim!r} is ambiguous")
    return matches[0]


# ---------------------------------------------------------------------------- claim rows
@dataclass(frozen=True)
class Row:
    """A claim of a run as the queue orders and filters it."""

    claim_id: str
    answer_id: str
    label: str | None
    p_hallucinated: float | None


class ClaimRows:
    """Every claim of a run with its label and stacked probability
    (:meth:`ledger.Ledger.claim_labels`), kept in memory for complete runs: their claims
    and their own verdicts never change (re-judging adds other verdict versions), so the
    queue of a large run reads one row per claim once, not on every page."""

    def __init__(self, ledger: Ledger, keep: int = 8) -> None:
        self.ledger = ledger
        self.keep = keep
        self._rows: OrderedDict[str, list[Row]] = OrderedDict()
        self._lock = threading.Lock()

    def clear(self) -> None:
        """Forget every kept run (the next page of each reads its rows again)."""
        with self._lock:
            self._rows.clear()

    def get(self, run: RunInfo) -> list[Row]:
        """The run's claim rows in answer order."""
        with self._lock:
            if run.run_id in self._rows:
                self._rows.move_to_end(run.run_id)
                return self._rows[run.run_id]
        rows = [Row(*r) for r in self.ledger.claim_labels(run.run_id)]
        if run.status == "complete":
            with self._lock:
                self._rows[run.run_id] = rows
                while len(self._rows) > self.keep:
                    self._rows.popitem(last=False)
        return rows


def _results(ledger: Ledger, run_id: str, chosen: Sequence[Row]) -> list[ClaimResult]:
    """The ledger's claim results of ``chosen`` (read for their answers only), in order."""
    if not chosen:
        return []
    answer_ids = sorted({r.answer_id for r in chosen})
    found = {c.claim_id: c for c in ledger.claim_results(run_id, answer_ids=answer_ids)}
    return [found[r.claim_id] for r in chosen]


# ---------------------------------------------------------------------------- runs
def run_summaries(ledger: Ledger, *, n_boot: int = 2000, seed: int = 0) -> list[dict[str, Any]]:
    """Every run, newest first: dates, answer and claim counts, labels, support precision
    with its 95% cluster-bootstrap interval (audit runs), flagged and reviewed claims."""
    history = {h["run_id"]: h for h in support_history(ledger, n_boot=n_boot, seed=seed)}
    out = []
    for run in ledger.list_runs():
        labels: dict[str, int] = {}
        for _, label, n in ledger.answer_label_counts(run.run_id):
            key = label or "unlabelled"
            labels[key] = labels.get(key, 0) + n
        n_claims = sum(labels.values())
        audits = ledger.human_audits(run.run_id)
        reviewed = len({a["claim_id"] for a in audits})
        h = history.get(run.run_id, {})
        out.append(
            {
                "run_id": run.run_id,
                "kind": run.kind,
                "status": run.status,
                "created_at": _iso(run.created_at),
                "as_of": _iso(run.as_of),
                "n_answers": run.n_answers,
                "n_answers_done": run.n_answers_done,
                "n_claims": n_claims,
                "labels": labels,
                "n_flagged": sum(n for k, n in labels.items() if is_flagged(k)),
                "support_precision": h.get("support_precision"),
                "ci": h.get("ci"),
                "n_audits": len(audits),
                "n_reviewed_claims": reviewed,
                "reviewed_share": reviewed / n_claims if n_claims else None,
            }
        )
    return out[::-1]


def support_points(summaries: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The runs with a support precision, oldest first, for the history plot."""
    return [
        {
            "run_id": s["run_id"],
            "created_at": s["created_at"],
            "support_precision": s["support_precision"],
            "ci": s["ci"],
        }
        for s in reversed(summaries)
        if s["support_precision"] is not None
    ]


# ---------------------------------------------------------------------------- claims
def _audit_dict(a: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "id": a["id"],
        "run_id": a["run_id"],
        "claim_id": a["claim_id"],
        "reviewer": a["reviewer"],
        "label": a["label"],
        "note": a["note"],
        "created_at": _iso(a["created_at"]),
    }


def _evidence_dict(
    e: Mapping[str, Any], decisive: Mapping[str, Any] | None, with_segments: bool
) -> dict[str, Any]:
    mark = (
        decisive is not None
        and decisive.get("chunk_id") == e["chunk_id"]
        and decisive.get("rank") == e["rank"]
    )
    item = {
        "rank": e["rank"],
        "doc_id": e["doc_id"],
        "version": e["version"],
        "digest": e["version_digest"],
        "chunk_id": e["chunk_id"],
        "start": e["start"],
        "end": e["end"],
        "text": e["text"],
        "relevance": e["score"],
        "coverage": e.get("coverage"),
        "deciding": bool(e.get("deciding", True)),
        "superseded": bool(e["superseded"]),
        "inline": bool(e["inline"]),
        "source": e["source"],
        "link": safe_link(e["source"]),
        "published_at": _iso(e["published_at"]),
        "valid_from": _iso(e["valid_from"]),
        "valid_to": _iso(e["valid_to"]),
        "decisive": (
            {"start": decisive["start"], "end": decisive["end"]}
            if mark and decisive is not None
            else None
        ),
    }
    if with_segments:
        spans = [(decisive["start"], decisive["end"])] if mark and decisive is not None else []
        item["segments"] = segments(str(e["text"]), {"decisive": spans})
    return item


def claim_details(
    ledger: Ledger,
    run_id: str,
    claims: Sequence[ClaimResult],
    audits: Sequence[Mapping[str, Any]],
    *,
    with_segments: bool = False,
) -> list[dict[str, Any]]:
    """Everything a reviewer sees of ``claims`` (one page): the answer with the claim's
    characters and error spans, the question, the evidence passages (each flagged
    ``deciding`` or not) with the deciding sentence marked or, when no sentence decided
    the claim, its nearest passages (``nearest_evidence``), every vote with its raw
    output, the stacked probability, the rule that decided the label, and every human
    audit. Three ledger queries for the whole page."""
    ids = [c.claim_id for c in claims]
    evidence = ledger.claim_evidence(run_id, claim_ids=ids) if ids else {}
    votes = ledger.claim_votes(run_id, claim_ids=ids) if ids else {}
    answers = {a["answer_id"]: a for a in ledger.run_answers(run_id)} if ids else {}
    by_claim: dict[str, list[dict[str, Any]]] = {}
    for a in audits:
        by_claim.setdefault(a["claim_id"], []).append(_audit_dict(a))
    out = []
    for c in claims:
        answer = answers.get(c.answer_id, {})
        passages = evidence.get(c.claim_id, [])
        claim_votes = votes.get(c.claim_id, [])
        decided, nearest = claim_evidence_view(c.text, c.label, c.reason, passages, claim_votes)
        item: dict[str, Any] = {
            "id": c.claim_id,
            "run_id": run_id,
            "answer_id": c.answer_id,
            "text": c.text,
            "label": c.label,
            "p_hallucinated": c.p_hallucinated,
            "reason": c.reason,
            "factual": c.factual,
            "kind": c.kind,
            "flagged": is_flagged(c.label),
            "spans": [list(s) for s in c.spans],
            "error_spans": [list(s) for s in c.error_spans],
            "question": answer.get("question"),
            "answer": answer.get("answer", ""),
            "evidence": [_evidence_dict(e, decided, with_segments) for e in passages],
            "deciding_evidence": decided,
            "nearest_evidence": nearest,
            "votes": [
                {
                    "judge": v["judge_name"],
                    "judge_digest": v["judge_digest"],
                    "value": v["value"],
                    "scores": v["scores"],
                    "raw": v["raw"],
                    "error": v["error"],
                    "latency_s": v["latency_s"],
                }
                for v in claim_votes
            ],
            "audits": by_claim.get(c.claim_id, []),
            "reviewed": c.claim_id in by_claim,
        }
        if with_segments:
            item["answer_segments"] = segments(
                str(item["answer"]), {"claim": c.spans, "error": c.error_spans}
            )
        out.append(item)
    return out


def queue_page(
    ledger: Ledger,
    run: RunInfo,
    which: QueueFilter,
    *,
    page: int = 1,
    per_page: int = 20,
    focus: str | None = None,
    with_segments: bool = True,
    rows: ClaimRows | None = None,
) -> dict[str, Any]:
    """One page of a run's review queue (:mod:`auditor.web.queue` order and filters).

    ``focus``: a claim id (or prefix) whose page is shown instead of ``page``; when the
    filter hides it, the filter is dropped. Returns the claims of the page
    (:func:`claim_details`), the :class:`~auditor.web.queue.Page`, the filter in force,
    label counts and how many claims of the run were reviewed. Ordering and filtering
    read one light row per claim (``rows`` keeps them for complete runs); evidence,
    votes and texts are read for the page's claims only."""
    claims = (rows or ClaimRows(ledger)).get(run)
    audits = ledger.human_audits(run.run_id)
    reviewed = {a["claim_id"] for a in audits}
    ordered = order_queue(claims, threshold_of(run.config))
    focus_id = None
    if focus:
        focus_id = resolve_claim(focus, {c.claim_id for c in claims}, run.run_id)
    shown = filter_queue(ordered, which, reviewed)
    index = None
    if focus_id is not None:
        ids = [c.claim_id for c in shown]
        if focus_id not in ids:
            which = QueueFilter()
            shown = ordered
            ids = [c.claim_id for c in shown]
        index = ids.index(focus_id)
    at: Page = page_of(len(shown), per_page, page, index=index)
    chosen = _results(ledger, run.run_id, shown[at.start : at.end])
    labels: dict[str, int] = {}
    for c in claims:
        labels[c.label or "unlabelled"] = labels.get(c.label or "unlabelled", 0) + 1
    return {
        "run": run,
        "claims": claim_details(ledger, run.run_id, chosen, audits, with_segments=with_segments),
        "page": at,
        "filter": which,
        "focus": focus_id,
        "label_counts": labels,
        "n_claims": len(claims),
        "n_reviewed": len(reviewed),
        "n_flagged": sum(1 for c in claims if is_flagged(c.label)),
        "n_flagged_reviewed": sum(
            1 for c in claims if is_flagged(c.label) and c.claim_id in reviewed
        ),
    }


def claims_list(
    ledger: Ledger,
    run: RunInfo,
    which: QueueFilter,
    *,
    offset: int = 0,
    limit: int = 100,
    rows: ClaimRows | None = None,
) -> tuple[list[dict[str, Any]], int]:
    """The claims of a run in queue order that pass ``which``, from ``offset`` (at most
    ``limit``), with the number that pass in all."""
    claims = (rows or ClaimRows(ledger)).get(run)
    audits = ledger.human_audits(run.run_id)
    reviewed = {a["claim_id"] for a in audits}
    shown = filter_queue(order_queue(claims, threshold_of(run.config)), which, reviewed)
    chosen = _results(ledger, run.run_id, shown[offset : offset + limit])
    return claim_details(ledger, run.run_id, chosen, audits), len(shown)


def claim_detail(
    ledger: Ledger, run: RunInfo, claim: str, *, rows: ClaimRows | None = None
) -> dict[str, Any]:
    """One claim of a run with everything :func:`claim_details` gives."""
    claims = {c.claim_id: c for c in (rows or ClaimRows(ledger)).get(run)}
    claim_id = resolve_claim(claim, set(claims), run.run_id)
    audits = [a for a in ledger.human_audits(run.run_id) if a["claim_id"] == claim_id]
    return claim_details(
        ledger, run.run_id, _results(ledger, run.run_id, [claims[claim_id]]), audits
    )[0]


# ---------------------------------------------------------------------------- reviews
_REVIEW_FIELDS = ("label", "reviewer", "note")


def parse_review(payload: Any) -> tuple[str, str, str | None]:
    """``(label, reviewer, note)`` from a review body ``{"label", "reviewer", "note"?}``;
    :class:`WebError` naming the field otherwise (the label itself is checked on write)."""
    if not isinstance(payload, dict):
        raise WebError(400, "body", 'must be a JSON object {"label", "reviewer", "note"?}')
    unknown = sorted(set(payload) - set(_REVIEW_FIELDS))
    if unknown:
        raise WebError(422, str(unknown[0])[:80], "unknown field (label, reviewer, note)")
    for name in ("label", "reviewer"):
        if name not in payload:
            raise WebError(422, name, "is required")
        if not isinstance(payload[name], str):
            raise WebError(422, name, "must be a string")
    note = payload.get("note")
    if note is not None and not isinstance(note, str):
        raise WebError(422, "note", "must be a string or null")
    if len(payload["reviewer"]) > 200:
        raise WebError(422, "reviewer", "must be at most 200 characters")
    return payload["label"], payload["reviewer"], (note.strip() or None) if note else None


def add_review(
    ledger: Ledger, run: RunInfo, claim: str, payload: Any
) -> tuple[bool, dict[str, Any]]:
    """Append a reviewer's verdict on a claim through :func:`auditor.human_audit.add_audits`
    (the rows ``auditor review add`` writes; append-only). Returns ``(added, audit)``:
    ``added`` is False when the same reviewer already gave the same label and note (the
    ledger keeps one such row). Nothing is written when anything is invalid."""
    label, reviewer, note = parse_review(payload)
    claim_id = resolve_claim(claim, ledger.claim_ids(run.run_id), run.run_id)
    try:
        added = add_audits(ledger, [HumanAudit(run.run_id, claim_id, reviewer, label, note)])
    except InputError as exc:
        message = str(exc).split(": ", 1)[-1] if exc.field else str(exc)
        raise WebError(422, exc.field, message) from None
    stored = [
        a
        for a in ledger.human_audits(run.run_id)
        if a["claim_id"] == claim_id
        and a["reviewer"] == reviewer.strip()
        and a["label"] == label
        and a["note"] == note
    ]
    return bool(added), _audit_dict(max(stored, key=lambda a: a["id"]))


# ---------------------------------------------------------------------------- agreement
def agreement(ledger: Ledger, run: RunInfo, *, n_boot: int = 2000, seed: int = 0) -> dict[str, Any]:
    """Judge against human (κ, balanced accuracy with intervals, confusion table) and
    reviewer against reviewer (κ on the claims two reviewers labelled), from the ledger."""
    claims = ledger.claim_results(run.run_id)
    audits = ledger.human_audits(run.run_id)
    human = human_agreement(claims, audits, n_boot=n_boot, seed=seed)
    pairs = reviewer_agreement(claims, audits, n_boot=n_boot, seed=seed)
    return {
        "run_id": run.run_id,
        "n_audits": len(audits),
        "reviewers": sorted({a["reviewer"] for a in audits}),
        "judge_vs_human": human,
        "reviewer_pairs": pairs,
    }


def agreement_json(data: Mapping[str, Any]) -> dict[str, Any]:
    """:func:`agreement` as JSON-ready data."""
    human = data["judge_vs_human"]
    return {
        "run_id": data["run_id"],
        "n_audits": data["n_audits"],
        "reviewers": data["reviewers"],
        "judge_vs_human": human.to_dict() if human is not None else None,
        "reviewer_pairs": [
            {
                "reviewers": p["reviewers"],
                "n_shared_claims": p["n_shared_claims"],
                **p["agreement"].to_dict(),
            }
            for p in data["reviewer_pairs"]
        ],
    }


def jsonable(value: Any) -> Any:
    """Datetimes as ISO strings, tuples as lists, segments dropped (API payloads)."""
    if isinstance(value, Mapping):
        return {
            k: jsonable(v) for k, v in value.items() if k not in ("segments", "answer_segments")
        }
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return _iso(value)
