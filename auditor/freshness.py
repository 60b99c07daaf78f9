"""Freshness watch: which audited claims a corpus update made stale, re-auditing only them,
and factuality over time.

- :func:`find_impact` lists the claims of earlier runs whose deciding evidence changed
  (a version they rested on was superseded or withdrawn, or a new version of a document
  they cited appeared), from the ledger alone: no judge runs.
- :func:`reaudit` re-audits a run's answers as of a new date as a new run linked to the
  old one: evidence is gathered again for every claim (cheap), and only claims whose
  evidence changed (or that the ledger names as impacted) are judged again; the others'
  votes and verdicts are carried over, each marked with the reason.
- :func:`build_trend` follows a series of runs of the same answers over their as-of
  dates: support precision, stale, contradicted and decidable rates with intervals, and
  the paired change between consecutive runs on their shared claims.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from auditor.bridging import stored_run
from auditor.clock import answer_as_of, default_as_of, parse_datetime, utc
from auditor.config import AuditConfig
from auditor.decision import needs_judging
from auditor.digest import content_digest
from auditor.errors import ConfigError
from auditor.evidence import Evidence, gather_evidence
from auditor.extract.base import Extraction, Extractor
from auditor.graph.flow import AuditComponents, build_audit_graph
from auditor.labels import ClaimSignals, LabelPolicy
from auditor.reader_scores import keep as keep_reader_scores
from auditor.reader_scores import preload as preload_reader_scores
from auditor.reader_scores import stop as stop_reader_scores
from auditor.reader_scores import take as take_reader_scores
from auditor.report.card import Figure, build_report_card, report_config
from auditor.report.claims import claim_records
from auditor.report.compare import Comparison, compare_runs
from auditor.runner import (
    answer_results,
    audit_judges,
    index_component,
    judge_digests,
    run_components,
    stored_vote,
)
from auditor.steps import ClaimAudit
from auditor.types import Answer, Claim, Component, Context, Label, Verdict, Vote
from ledger import Ledger

if TYPE_CHECKING:
    from auditor._auditor import Auditor

AUDIT_KINDS = ("audit", "reaudit")
"""Run kinds that audit answers (calibration runs are not part of a freshness series)."""
TREND_FIGURES = ("support_precision", "stale_rate", "contradicted_rate", "decidable_rate")
"""The report-card figures a trend follows."""
SCORE_TOLERANCE = 1e-4
"""Relevance, coverage and sentence cosines closer than this count as unchanged."""


def _iso(value: datetime | None) -> str | None:
    return None if value is None else utc(value).isoformat()


# ---------------------------------------------------------------------- impact
@dataclass(frozen=True)
class VersionInfo:
    """A document version as an impact report shows it (no text)."""

    doc_id: str
    version: str
    digest: str
    published_at: datetime | None
    valid_from: datetime | None
    valid_to: datetime | None
    created_at: datetime | None

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> VersionInfo:
        return cls(
            doc_id=row["doc_id"],
            version=row["version"],
            digest=row["digest"],
            published_at=row.get("published_at"),
            valid_from=row.get("valid_from"),
            valid_to=row.get("valid_to"),
            created_at=row.get("created_at"),
        )

    @property
    def visible_from(self) -> datetime | None:
        return self.published_at if self.published_at is not None else self.valid_from

    def to_dict(self) -> dict[str, Any]:
        return {
            "doc_id": self.doc_id,
            "version": self.version,
            "digest": self.digest,
            "published_at": _iso(self.published_at),
            "valid_from": _iso(self.valid_from),
            "valid_to": _iso(self.valid_to),
            "ingested_at": _iso(self.created_at),
        }


@dataclass(frozen=True)
class EvidenceChange:
    """One change to the evidence a claim rested on."""

    kind: str
    """``superseded`` (a version it rested on has a newer version), ``new_version`` (a
    newer version of a document it cited only in superseded versions) or ``withdrawn``
    (a version it rested on reached its ``valid_to`` with no newer version)."""
    doc_id: str
    old: VersionInfo
    new: VersionInfo | None
    old_passage: str
    new_passage: str | None
    diff: str | None
    """Character diff of the passage: ``[-removed-]{+added+}`` marks in context."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "doc_id": self.doc_id,
            "old": self.old.to_dict(),
            "new": self.new.to_dict() if self.new else None,
            "old_passage": self.old_passage,
            "new_passage": self.new_passage,
            "diff": self.diff,
        }


@dataclass(frozen=True)
class ImpactedClaim:
    """A claim of a run whose deciding evidence changed."""

    run_id: str
    answer_id: str
    claim_id: str
    text: str
    as_of: datetime | None
    """The date the claim was audited as of."""
    changes: tuple[EvidenceChange, ...]
    label: str | None = None
    """The claim's label in its run."""

    @property
    def reason(self) -> str:
        """One line: what changed."""
        parts = []
        for c in self.changes:
            new = f" -> {c.new.version} ({c.new.digest[:12]})" if c.new else ""
            parts.append(f"{c.kind}: {c.doc_id}@{c.old.version} ({c.old.digest[:12]}){new}")
        return "; ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "answer_id": self.answer_id,
            "claim_id": self.claim_id,
            "text": self.text,
            "label": self.label,
            "as_of": _iso(self.as_of),
            "reason": self.reason,
            "changes": [c.to_dict() for c in self.changes],
        }


@dataclass(frozen=True)
class ImpactReport:
    """The impacted claims of the runs looked at, grouped by run and answer on output."""

    as_of: datetime
    since: datetime | None
    runs: tuple[str, ...]
    claims: tuple[ImpactedClaim, ...]
    changed_versions: int
    """Versions in the ledger that changed within the window looked at."""
    index: Mapping[str, Any] = field(default_factory=dict)
    """The index manifest's generation and corpus digest, with versions it holds that the
    ledger does not know (impact cannot see those), when an index was given."""

    def to_list(self) -> list[dict[str, Any]]:
        """One object per claim (``run_id``, ``answer_id``, ``claim_id``, ``changes``...)."""
        return [c.to_dict() for c in self.claims]

    def grouped(self) -> dict[str, dict[str, list[ImpactedClaim]]]:
        """Run id -> answer id -> impacted claims."""
        out: dict[str, dict[str, list[ImpactedClaim]]] = {}
        for c in self.claims:
            out.setdefault(c.run_id, {}).setdefault(c.answer_id, []).append(c)
        return out


def char_diff(old: str, new: str, *, context: int = 40) -> str:
    """A character diff of two passages: unchanged stretches longer than ``2 * context``
    are elided, removed text is shown as ``[-...-]`` and added text as ``{+...+}``.

    >>> char_diff("every 30 minutes", "every 45 minutes")
    'every [-30-]{+45+} minutes'
    """
    out = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    ops = matcher.get_opcodes()
    for i, (tag, a0, a1, b0, b1) in enumerate(ops):
        if tag == "equal":
            text = old[a0:a1]
            first, last = i == 0, i == len(ops) - 1
            if len(text) > 2 * context and not (first and last):
                head = "" if first else text[:context]
                tail = "" if last else text[-context:]
                text = f"{head}...{tail}"
            out.append(text)
            continue
        if a1 > a0:
            out.append(f"[-{old[a0:a1]}-]")
        if b1 > b0:
            out.append(f"{{+{new[b0:b1]}+}}")
    return "".join(out)


def _best_passage(chunks: Sequence[Mapping[str, Any]], old_text: str) -> str | None:
    """The passage of a new version that corresponds to ``old_text`` (most similar)."""
    if not chunks:
        return None
    return max(
        (str(c["text"]) for c in chunks),
        key=lambda t: difflib.SequenceMatcher(None, old_text, t, autojunk=False).ratio(),
    )


def find_impact(
    ledger: Ledger,
    *,
    runs: Sequence[str] | None = None,
    since: datetime | None = None,
    as_of: datetime | None = None,
    index_manifest: Mapping[str, Any] | None = None,
    index_versions: Iterable[tuple[str, str]] = (),
    override_answer_dates: bool = False,
) -> ImpactReport:
    """The claims of ``runs`` (ids or prefixes; default every audit run) whose deciding
    evidence changed by ``as_of`` (default :func:`auditor.clock.default_as_of`, today
    00:00 UTC), read from the ledger without judging. A claim whose answer has its own
    ``as_of`` is looked at as of that date, not ``as_of`` (what a re-audit does), unless
    ``override_answer_dates``.
    Deciding evidence: the retrieved passages relevant by the run's labelling rule
    (:func:`_deciding`); the answer's own contexts never change.

    A claim audited as of ``T0`` by a run that finished at ``F`` is impacted when, for a
    document its retrieved evidence cites, the ledger holds a version it did not cite that
    is visible at ``as_of`` and new to it (ingested after ``F``, or published after
    ``T0``): ``superseded`` when it rested on a current version of that document,
    ``new_version`` when it cited only superseded ones; or when a current version it
    rested on has ``valid_to`` in ``(T0, as_of]`` and nothing newer: ``withdrawn``.
    With ``since``, only changes ingested, published or ending at or after ``since``.

    Two indexed queries find the versions that changed in the window and the evidence rows
    citing their documents; cost grows with the changes, not with the ledger.
    ``index_manifest``/``index_versions``: the live index (its ``(doc_id, digest)``
    pairs), to report versions it holds that the ledger does not know.
    """
    when = utc(as_of) if as_of is not None else default_as_of()
    since = utc(since) if since is not None else None
    infos = (
        [ledger.get_run(ledger.find_run(r)) for r in runs]
        if runs
        else [r for r in ledger.list_runs() if r.kind in AUDIT_KINDS]
    )
    run_ids = tuple(r.run_id for r in infos)
    index_info = _index_info(ledger, index_manifest, index_versions)
    if not infos:
        return ImpactReport(when, since, (), (), 0, index_info)
    finished = [utc(r.finished_at or r.created_at or when) for r in infos]
    starts = [utc(r.as_of) for r in infos if r.as_of is not None]
    created_since = since or min(finished)
    low = since or (min(starts) if starts else datetime.min.replace(tzinfo=UTC))
    low = min(low, when)
    changed = ledger.changed_versions(created_since=created_since, window=(low, when))
    by_doc: dict[str, list[VersionInfo]] = {}
    for row in changed:
        by_doc.setdefault(row["doc_id"], []).append(VersionInfo.of(row))
    if not by_doc:
        return ImpactReport(when, since, run_ids, (), 0, index_info)
    policies = {
        r.run_id: AuditConfig.from_dict(r.config, source=f"run {r.run_id[:12]}").policy
        for r in infos
    }
    rows = [
        r
        for r in ledger.citing_evidence(sorted(by_doc), run_ids=list(run_ids))
        if _deciding(r, policies[r["run_id"]])
    ]
    known = ledger.document_versions(sorted(by_doc))
    version_of = {
        (v["doc_id"], v["digest"]): VersionInfo.of(v) for vs in known.values() for v in vs
    }
    finished_of = {r.run_id: utc(r.finished_at or r.created_at or when) for r in infos}
    as_of_of = {r.run_id: utc(r.as_of) if r.as_of is not None else None for r in infos}
    claims: list[ImpactedClaim] = []
    grouped: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        grouped.setdefault((r["run_id"], r["claim_id"]), []).append(r)
    claims_by_run: dict[str, list[str]] = {}
    for run_id, claim_id in grouped:
        claims_by_run.setdefault(run_id, []).append(claim_id)
    # a claim's as-of date is its answer's (else its run's): first keep the claims that
    # would be impacted at the earliest possible date (a superset), then look up those
    # claims' dates and texts and decide
    earliest = datetime.min.replace(tzinfo=UTC)
    # an answer's own date may lie after ``when``: the first pass looks at every date
    latest = when if override_answer_dates else datetime.max.replace(tzinfo=UTC)
    found = []
    for run_id, ids in claims_by_run.items():
        candidates = [
            cid
            for cid in ids
            if _claim_changes(
                grouped[(run_id, cid)],
                by_doc,
                version_of,
                earliest,
                finished_of[run_id],
                latest,
                since,
            )
        ]
        info_of = ledger.claims_of(run_id, candidates)
        for claim_id in candidates:
            first = info_of[claim_id]
            t0 = answer_as_of(first["answer_as_of"], as_of_of[run_id])
            looked_at = answer_as_of(first["answer_as_of"], when, override=override_answer_dates)
            assert looked_at is not None
            changes = _claim_changes(
                grouped[(run_id, claim_id)],
                by_doc,
                version_of,
                t0,
                finished_of[run_id],
                looked_at,
                since,
            )
            if changes:
                found.append((run_id, claim_id, first, t0, changes))
    passages = ledger.chunk_texts(
        sorted({old_row["chunk_id"] for *_, changes in found for _, _, old_row, _ in changes})
    )
    new_chunks = ledger.versions_chunks(
        sorted(
            {(new.doc_id, new.digest) for *_, changes in found for _, _, _, new in changes if new}
        )
    )
    diffs: dict[tuple[str, str, str], tuple[str | None, str | None]] = {}
    for run_id, claim_id, first, t0, changes in found:
        built = []
        for kind, doc_id, old_row, new in changes:
            old = version_of[(doc_id, old_row["version_digest"])]
            old_text = passages.get(old_row["chunk_id"], "")
            new_text = diff = None
            if new is not None:  # one diff per (passage, new version), however many cite it
                key = (old_row["chunk_id"], new.doc_id, new.digest)
                if key not in diffs:
                    text = _best_passage(new_chunks.get((new.doc_id, new.digest), []), old_text)
                    diffs[key] = (text, char_diff(old_text, text) if text is not None else None)
                new_text, diff = diffs[key]
            built.append(
                EvidenceChange(
                    kind=kind,
                    doc_id=doc_id,
                    old=old,
                    new=new,
                    old_passage=old_text,
                    new_passage=new_text,
                    diff=diff,
                )
            )
        claims.append(
            ImpactedClaim(
                run_id=run_id,
                answer_id=first["answer_id"],
                claim_id=claim_id,
                text=first["text"],
                as_of=t0,
                changes=tuple(built),
            )
        )
    claims = _with_labels(ledger, claims)
    order = {r: i for i, r in enumerate(run_ids)}
    claims.sort(key=lambda c: (order[c.run_id], c.answer_id, c.claim_id))
    return ImpactReport(
        when, since, run_ids, tuple(claims), sum(len(v) for v in by_doc.values()), index_info
    )


def _deciding(row: Mapping[str, Any], policy: LabelPolicy) -> bool:
    """Whether an evidence row could decide its claim: relevant by the labelling rule
    (cosine at least ``min_relevance`` with enough of the claim's content words, or a
    strong cosine); passages below it never make a claim supported or stale."""
    cos = float(row["score"])
    cov = 1.0 if row["coverage"] is None else float(row["coverage"])
    return cos >= policy.min_relevance and (
        cos >= policy.strong_relevance or cov >= policy.min_coverage
    )


def _claim_changes(
    evidence: Sequence[Mapping[str, Any]],
    by_doc: Mapping[str, list[VersionInfo]],
    version_of: Mapping[tuple[str, str], VersionInfo],
    t0: datetime | None,
    finished: datetime,
    when: datetime,
    since: datetime | None,
) -> list[tuple[str, str, Mapping[str, Any], VersionInfo | None]]:
    """``(kind, doc_id, evidence row it rested on, new version)`` per changed document."""
    out: list[tuple[str, str, Mapping[str, Any], VersionInfo | None]] = []
    cited: dict[str, list[Mapping[str, Any]]] = {}
    for row in evidence:
        cited.setdefault(row["doc_id"], []).append(row)
    low = max((d for d in (t0, since) if d is not None), default=None)
    for doc_id, doc_rows in cited.items():
        digests = {r["version_digest"] for r in doc_rows}
        current = [r for r in doc_rows if not r["superseded"]]
        newest: VersionInfo | None = None
        for v in by_doc.get(doc_id, []):
            if v.digest in digests:
                continue
            start = v.visible_from
            if start is not None and utc(start) > when:
                continue  # not visible yet at the date looked at
            ingested_after = (
                v.created_at is not None
                and utc(v.created_at) > finished
                and (since is None or utc(v.created_at) >= since)
            )
            published_after = start is not None and low is not None and utc(start) > low
            if not (ingested_after or published_after):
                continue
            key = (
                utc(start) if start is not None else datetime.min.replace(tzinfo=UTC),
                utc(v.created_at) if v.created_at else datetime.min.replace(tzinfo=UTC),
            )
            if newest is None or key > _version_key(newest):
                newest = v
        if newest is not None:
            rested = current[0] if current else doc_rows[-1]
            out.append(("superseded" if current else "new_version", doc_id, rested, newest))
            continue
        for row in current:
            rested_on = version_of.get((doc_id, row["version_digest"]))
            if rested_on is None or rested_on.valid_to is None:
                continue
            end = utc(rested_on.valid_to)
            if end <= when and (low is None or end > low):
                out.append(("withdrawn", doc_id, row, None))
                break
    return out


def _version_key(v: VersionInfo) -> tuple[datetime, datetime]:
    start = v.visible_from
    return (
        utc(start) if start is not None else datetime.min.replace(tzinfo=UTC),
        utc(v.created_at) if v.created_at else datetime.min.replace(tzinfo=UTC),
    )


def _with_labels(ledger: Ledger, claims: list[ImpactedClaim]) -> list[ImpactedClaim]:
    by_run: dict[str, list[str]] = {}
    for c in claims:
        by_run.setdefault(c.run_id, []).append(c.claim_id)
    labels = {run_id: ledger.labels_of_claims(run_id, ids) for run_id, ids in by_run.items()}
    return [replace(c, label=labels[c.run_id].get(c.claim_id)) for c in claims]


def _index_info(
    ledger: Ledger, manifest: Mapping[str, Any] | None, versions: Iterable[tuple[str, str]]
) -> dict[str, Any]:
    if manifest is None:
        return {}
    pairs = sorted(set(versions))
    known = ledger.document_versions(sorted({d for d, _ in pairs}))
    have = {(v["doc_id"], v["digest"]) for vs in known.values() for v in vs}
    missing = [f"{d}@{g[:12]}" for d, g in pairs if (d, g) not in have]
    return {
        "generation": manifest.get("generation"),
        "corpus_digest": manifest.get("corpus_digest"),
        "versions": manifest.get("versions"),
        "versions_not_in_ledger": missing,
    }


# ---------------------------------------------------------------------- reaudit
@dataclass(frozen=True)
class ReauditResult:
    """What :func:`reaudit` did."""

    run_id: str
    parent_run_id: str
    as_of: datetime
    only_impacted: bool
    reused: bool
    n_claims: int
    n_rejudged: int
    """Claims that went through the judges again in this call."""
    n_carried: int
    """Claims whose votes and verdict were carried over (recorded in the ledger)."""
    rejudged: Mapping[str, str] = field(default_factory=dict)
    """Claim id -> why it was judged again."""
    answers: list[dict[str, Any]] = field(default_factory=list)
    """The new run's answers as ``auditor audit`` prints them, each claim with
    ``carried`` (``{"from_run_id", "reason"}`` or None)."""

    @property
    def share_rejudged(self) -> float:
        return self.n_rejudged / self.n_claims if self.n_claims else 0.0


class _StoredClaims(Extractor):
    """Stands for the extractor of the re-audited run (its claims are reused as stored)."""

    def __init__(self, component: Component) -> None:
        self._component = component
        self.name = component.name
        self.version = component.version

    @property
    def digest(self) -> str:
        return self._component.digest

    @property
    def component(self) -> Component:
        return self._component

    def extract_detailed(self, answers: Sequence[Answer]) -> list[Extraction]:
        raise RuntimeError("a re-audit reuses the run's stored claims; it never extracts")


def _component(info: Mapping[str, Any]) -> Component:
    return Component(
        kind=str(info["kind"]),
        name=str(info["name"]),
        version=str(info["version"]),
        digest=str(info["digest"]),
        config=dict(info.get("config") or {}),
    )


def _hits_key(items: Sequence[Any]) -> tuple[Any, ...]:
    return tuple(
        (h.chunk.chunk_id, h.document.doc_id, h.document.digest, bool(h.superseded), bool(h.inline))
        for h in items
    )


def _close(a: Mapping[str, float], b: Mapping[str, float], keys: Iterable[str]) -> bool:
    for key in keys:
        x, y = a.get(key), b.get(key)
        if (x is None) != (y is None):
            return False
        if x is not None and y is not None and abs(x - y) > SCORE_TOLERANCE:
            return False
    return True


def _same_scores(old: Evidence, new: Evidence, hits: Sequence[Any]) -> bool:
    keys = [h.chunk.chunk_id for h in hits]
    return (
        _close(old.relevance, new.relevance, keys)
        and _close(old.coverage, new.coverage, keys)
        and _close(old.sentence_relevance, new.sentence_relevance, keys)
    )


def _superseded_relevant(ev: Evidence, policy: LabelPolicy) -> bool:
    """Whether the superseded passages enter the label (:func:`auditor.decision.needs_judging`
    on them alone: relevant by the rules, or any with the learned decision, which reads the
    votes against superseded evidence of every claim)."""
    return needs_judging(
        ClaimSignals(
            factual=True,
            relevance=None,
            p_current=None,
            stale_relevance=ev.best_superseded,
            superseded_scores=ev.scores(ev.superseded),
        ),
        policy,
    )


def _describe(old: Sequence[Any], new: Sequence[Any]) -> str:
    before = {(h.chunk.chunk_id, h.superseded): h for h in old}
    after = {(h.chunk.chunk_id, h.superseded): h for h in new}

    def name(h: Any, superseded: bool) -> str:
        return f"{h.document.doc_id}@{h.document.version}" + (" (superseded)" if superseded else "")

    gone = sorted({name(h, s) for (c, s), h in before.items() if (c, s) not in after})
    came = sorted({name(h, s) for (c, s), h in after.items() if (c, s) not in before})
    parts = ([f"no longer {', '.join(gone)}"] if gone else []) + (
        [f"now {', '.join(came)}"] if came else []
    )
    return "; ".join(parts) or "order, version dates or relevance changed"


def evidence_change(old: Evidence, new: Evidence, policy: LabelPolicy | None = None) -> str | None:
    """Why a claim must be judged again given its old and new evidence (None: its label
    would come out the same, so its verdict can be carried over).

    The current evidence must be the same passages, versions, digests and flags, with
    relevance, coverage and sentence cosines within :data:`SCORE_TOLERANCE` (the panel's
    votes and the labelling rules read them). The superseded evidence must be the same
    too, unless no superseded passage is relevant by ``policy`` before or after: the
    labelling rules use the votes against superseded evidence only when one is relevant
    (without ``policy`` it must always be the same)."""
    if _hits_key(old.current) != _hits_key(new.current) or not _same_scores(old, new, new.current):
        return "evidence changed: " + _describe(old.current, new.current)
    dates = [
        tuple(
            (_iso(h.document.published_at), _iso(h.document.valid_from), _iso(h.document.valid_to))
            for h in ev.superseded
        )
        for ev in (old, new)
    ]
    same_old = (
        _hits_key(old.superseded) == _hits_key(new.superseded)
        and dates[0] == dates[1]
        and _same_scores(old, new, new.superseded)
    )
    if same_old:
        return None
    if policy is not None and not (
        _superseded_relevant(old, policy) or _superseded_relevant(new, policy)
    ):
        return None
    return "superseded evidence changed: " + _describe(old.superseded, new.superseded)


def _contexts(audits: Sequence[ClaimAudit]) -> dict[str, tuple[Context, ...]]:
    """The answers' own contexts, rebuilt from their stored inline evidence (inline
    contexts published after the run's as-of date were never stored and stay unknown)."""
    out: dict[str, dict[str, Context]] = {}
    for audit in audits:
        for hit in audit.evidence.current:
            if not hit.inline:
                continue
            prefix = f"inline:{audit.claim.answer_id}:"
            ctx_id = hit.document.doc_id.removeprefix(prefix)
            out.setdefault(audit.claim.answer_id, {}).setdefault(
                ctx_id,
                Context(
                    id=ctx_id,
                    text=hit.chunk.text,
                    source=hit.document.source,
                    published_at=hit.document.published_at,
                ),
            )
    return {a: tuple(c.values()) for a, c in out.items()}


def reaudit(
    auditor: Auditor,
    run: str,
    *,
    as_of: datetime | str,
    only_impacted: bool = True,
    batch_size: int = 64,
    override_answer_dates: bool = False,
) -> ReauditResult:
    """Re-audit the answers of ``run`` (id or prefix) as of ``as_of`` into a new run
    (kind ``reaudit``) linked to it.

    ``as_of`` is required (there is no default date for a re-audit) and applies to the
    answers without their own ``as_of``: an answer's own date wins, as in an audit, unless
    ``override_answer_dates`` re-audits every answer as of ``as_of``.

    Evidence is gathered again for every claim at ``as_of`` with the run's configuration
    (mode, k, passage counts, policy). With ``only_impacted``, a claim is judged again only
    when its evidence differs from what the run stored (or :func:`find_impact` names it);
    every other claim's votes and verdict are carried over and marked in the ledger with
    the reason. Without it, every claim is judged again (a full re-audit). The auditor's
    panel and stacker must be the run's own (carried verdicts were made by them).
    Content-addressed and resumable like :meth:`auditor.Auditor.audit`.
    """
    when = parse_datetime(as_of, field="as_of")
    if when is None:
        raise ConfigError("as_of: a re-audit needs a date")
    ledger = auditor.ledger
    parent = ledger.find_run(run)
    info = ledger.get_run(parent)
    if info.kind not in AUDIT_KINDS:
        raise ConfigError(
            f"run {parent[:12]} is a {info.kind} run; only audit runs can be re-audited"
        )
    own = {role: str(c["digest"]) for role, c in info.components.items()}
    mine = {"panel": auditor.panel.digest, "stacker": auditor.stacker.digest}
    for role, digest in mine.items():
        if own.get(role) != digest:
            raise ConfigError(
                f"run {parent[:12]} was judged by {role} {own.get(role, '?')[:12]}, the "
                f"auditor has {digest[:12]}: re-audit with the run's own {role} (--{role})"
            )
    so_digest = auditor.second_opinion.digest if auditor.second_opinion else None
    if own.get("second_opinion") != so_digest:
        raise ConfigError(
            f"run {parent[:12]} second opinion {own.get('second_opinion')} "
            f"differs from the auditor's {so_digest}; use the run's own"
        )
    stored = stored_run(ledger, parent)
    config = replace(stored.config, as_of=when)
    contexts = _contexts(stored.audits)
    answers = [
        Answer(
            id=a.id,
            question=a.question,
            answer=a.answer,
            contexts=contexts.get(a.id, ()),
            as_of=None if override_answer_dates else a.as_of,  # the answer's own date wins
        )
        for a in stored.answers.values()
    ]
    components = AuditComponents(
        extractor=_StoredClaims(_component(info.components["extractor"])),
        search=_search_for(auditor, config),
        panel=auditor.panel,
        stacker=auditor.stacker,
        config=config,
        second_opinion=auditor.second_opinion,
    )
    roles = run_components(components, index_component(auditor.index.manifest))
    run_id = content_digest(
        {
            "reaudit_of": parent,
            "as_of": when.isoformat(),
            "only_impacted": only_impacted,
            "answer_dates": "overridden" if override_answer_dates else "own",
            "config": config.to_dict(),
            "components": {r: c.digest for r, c in sorted(roles.items())},
        }
    )
    begun = ledger.begin_run(
        run_id,
        kind="reaudit",
        input_digest=info.input_digest,
        as_of=when,
        config=config.to_dict(),
        components=roles,
        n_answers=len(answers),
    )
    n_claims = len(stored.audits)
    if begun.status == "complete":
        return _result(ledger, run_id, parent, when, only_impacted, True, n_claims, {})
    impacted = (
        {
            c.claim_id: c.reason
            for c in find_impact(
                ledger, runs=[parent], as_of=when, override_answer_dates=override_answer_dates
            ).claims
        }
        if only_impacted
        else {}
    )
    carry_votes, carry_stale = (
        _stored_votes(
            ledger, parent, info.components, [a.claim.id for a in stored.audits], superseded=s
        )
        for s in (False, True)
    )
    verdicts = {c.claim_id: c for c in ledger.claim_results(parent)}
    digests = judge_digests(components, roles)
    done = ledger.done_answer_ids(run_id)
    seq_of = {a.id: i for i, a in enumerate(answers)}
    audits_of: dict[str, list[ClaimAudit]] = {}
    for audit in stored.audits:
        audits_of.setdefault(audit.claim.answer_id, []).append(audit)
    graph = build_audit_graph(components, entry="judge")
    extractor = components.extractor.component
    # the reader reads no pair the parent run already read (unchanged passages of a
    # re-judged claim), and keeps what this run asks for, stored with its answers
    judges = audit_judges(components)
    preload_reader_scores(ledger, parent, judges)
    take_reader_scores(judges)
    keep_reader_scores(judges)
    rejudged: dict[str, str] = {}
    todo = [a for a in answers if a.id not in done]
    for start in range(0, len(todo), batch_size):
        batch = todo[start : start + batch_size]
        old = [audit for a in batch for audit in audits_of.get(a.id, [])]
        fresh = gather_evidence(
            [a.claim for a in old],
            {a.id: a for a in batch},
            components.search,
            default_as_of=when,
            k=config.k,
            n_current=config.n_current,
            n_superseded=config.n_superseded,
        )
        merged: list[ClaimAudit | None] = []
        judge_now: list[ClaimAudit] = []
        carried: dict[str, tuple[str, str, str]] = {}
        for audit, evidence in zip(old, fresh, strict=True):
            cid = audit.claim.id
            why = (
                evidence_change(audit.evidence, evidence, config.policy)
                if only_impacted
                else "full re-audit"
            )
            if why is None and cid in impacted:
                why = f"impacted: {impacted[cid]}"
            if why is None:
                merged.append(
                    _carried(
                        audit.claim,
                        evidence,
                        verdicts[cid],
                        carry_votes.get(cid, ()),
                        info.components,
                        carry_stale.get(cid, ()),
                    )
                )
                carried[cid] = (
                    cid,
                    parent,
                    (
                        f"the evidence its label rests on at {_date(evidence.as_of)} is what "
                        f"run {parent[:12]} judged (as of {_date(audit.evidence.as_of)}): the "
                        f"same {len(evidence.current)} current passages, versions and digests; "
                        f"superseded passages the same or none relevant"
                    ),
                )
            else:
                rejudged[cid] = why
                merged.append(None)
                judge_now.append(ClaimAudit(audit.claim, evidence))
        judged = iter(
            graph.invoke({"answers": batch, "audits": judge_now})["audits"] if judge_now else []
        )
        audits = [a if a is not None else next(judged) for a in merged]
        state = {
            "answers": batch,
            "audits": audits,
            "extractions": [
                Extraction(a.id, tuple(x.claim for x in audits_of.get(a.id, [])), extractor)
                for a in batch
            ],
        }
        results = answer_results(
            state,  # type: ignore[arg-type]
            seq_of,
            digests,
            take_reader_scores(judges),
        )
        for result in results:
            marks = [carried[c.claim_id] for c in result.claims if c.claim_id in carried]
            if marks:  # the marks first: a resumed run re-writes them (idempotent)
                ledger.record_carried(run_id, marks)
            ledger.record_answer(run_id, result)
    stop_reader_scores(judges)
    ledger.finish_run(run_id)
    n_carried = len(ledger.carried_claims(run_id))
    ledger.record_run_link(
        run_id,
        parent,
        relation="reaudit",
        details={
            "as_of": when.isoformat(),
            "only_impacted": only_impacted,
            "override_answer_dates": override_answer_dates,
            "n_claims": n_claims,
            "n_rejudged": n_claims - n_carried,
            "n_carried": n_carried,
        },
    )
    return _result(ledger, run_id, parent, when, only_impacted, False, n_claims, rejudged)


def _date(value: datetime | None) -> str:
    return "undated" if value is None else utc(value).date().isoformat()


def _search_for(auditor: Auditor, config: AuditConfig) -> Any:
    index, mode = auditor.index, config.mode

    def search(queries: Sequence[str], n: int, when: datetime | None) -> list[list[Any]]:
        return index.search(queries, n, mode=mode, as_of=when)

    return search


def _stored_votes(
    ledger: Ledger,
    run_id: str,
    components: Mapping[str, Mapping[str, Any]],
    claim_ids: Sequence[str],
    *,
    superseded: bool = False,
) -> dict[str, tuple[Vote, ...]]:
    """The run's own judges' votes per claim (bridged votes of other versions left out),
    against the claims' current evidence or, with ``superseded``, their superseded one."""
    own = {
        str(c["digest"])
        for role, c in components.items()
        if role.startswith("judge:") or role == "second_opinion"
    }
    out: dict[str, tuple[Vote, ...]] = {}
    stored = ledger.claim_votes(run_id, claim_ids=list(claim_ids), superseded=superseded)
    for cid, rows in stored.items():
        out[cid] = tuple(stored_vote(r) for r in rows if r["judge_digest"] in own)
    return out


def _carried(
    claim: Claim,
    evidence: Evidence,
    result: Any,
    votes: Sequence[Vote],
    components: Mapping[str, Mapping[str, Any]],
    stale_votes: Sequence[Vote] = (),
) -> ClaimAudit:
    """A claim audit with the stored votes (against current and superseded evidence) and
    verdict (nothing judged)."""
    second = components.get("second_opinion", {}).get("name")
    members = [str(c["name"]) for role, c in components.items() if role.startswith("judge:")]

    def in_member_order(chosen: Sequence[Vote]) -> tuple[Vote, ...]:
        return tuple(
            sorted(chosen, key=lambda v: members.index(v.judge) if v.judge in members else 0)
        )

    panel_votes = in_member_order([v for v in votes if v.judge != second])
    so = next((v for v in votes if v.judge == second), None)
    if result.label is None:
        raise ConfigError(f"claim {claim.id[:12]} has no verdict in its run; cannot carry it")
    verdict = Verdict(
        claim_id=claim.id,
        label=Label(result.label),
        p_hallucinated=result.p_hallucinated,
        reason=result.reason or "",
        error_spans=tuple((int(a), int(b)) for a, b in result.error_spans),
    )
    return ClaimAudit(
        claim,
        evidence,
        votes=panel_votes,
        stale_votes=in_member_order(stale_votes),
        second_opinion=so,
        p_current=result.p_hallucinated,
        verdict=verdict,
    )


def _result(
    ledger: Ledger,
    run_id: str,
    parent: str,
    when: datetime,
    only_impacted: bool,
    reused: bool,
    n_claims: int,
    rejudged: Mapping[str, str],
) -> ReauditResult:
    carried = ledger.carried_claims(run_id)
    answers = claim_records(ledger, run_id)
    for record in answers:
        for claim in record["claims"]:
            claim["carried"] = carried.get(claim["id"])
    return ReauditResult(
        run_id=run_id,
        parent_run_id=parent,
        as_of=when,
        only_impacted=only_impacted,
        reused=reused,
        n_claims=n_claims,
        n_rejudged=0 if reused else len(rejudged),
        n_carried=len(carried),
        rejudged=dict(rejudged),
        answers=answers,
    )


# ---------------------------------------------------------------------- trend
@dataclass(frozen=True)
class TrendPoint:
    """One run of the series: its as-of date and figures with intervals."""

    run_id: str
    kind: str
    as_of: datetime | None
    n_answers: int
    n_claims: int
    figures: Mapping[str, Figure]

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "kind": self.kind,
            "as_of": _iso(self.as_of),
            "n_answers": self.n_answers,
            "n_claims": self.n_claims,
            "figures": {k: f.to_dict() for k, f in self.figures.items()},
        }


@dataclass(frozen=True)
class Trend:
    """Figures of a series of runs over their as-of dates, and consecutive paired changes."""

    points: tuple[TrendPoint, ...]
    steps: tuple[Comparison, ...]
    """Run i+1 against run i on their shared claims (``delta = later - earlier``)."""
    n_boot: int = 2000
    seed: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "figures": list(TREND_FIGURES),
            "runs": [p.to_dict() for p in self.points],
            "changes": [
                {
                    "from": s.run_a,
                    "to": s.run_b,
                    "shared_claims": s.n_shared_claims,
                    "shared_answers": s.n_shared_answers,
                    "figures": {n: s.figure(n).to_dict() for n in TREND_FIGURES},
                    "transitions": {a: dict(b) for a, b in s.transitions.items()},
                }
                for s in self.steps
            ],
            "bootstrap": {
                "n_boot": self.n_boot,
                "seed": self.seed,
                "level": 0.95,
                "cluster": "answer",
                "paired": "consecutive runs, shared claims",
            },
        }


def series_runs(
    ledger: Ledger, *, runs: Sequence[str] | None = None, since: datetime | None = None
) -> list[str]:
    """The runs of a trend, oldest as-of first: ``runs`` as given, else the audit runs with
    an as-of date at or after ``since`` that form one series (runs of the same answers,
    or linked by a re-audit). Several series: a :class:`ConfigError` naming them."""
    if runs:
        infos = [ledger.get_run(ledger.find_run(r)) for r in runs]
    else:
        infos = [
            r
            for r in ledger.list_runs()
            if r.kind in AUDIT_KINDS
            and r.status == "complete"
            and (since is None or (r.as_of is not None and utc(r.as_of) >= utc(since)))
        ]
        groups = _series(ledger, infos)
        if len(groups) > 1:
            names = "; ".join(" ".join(r[:12] for r in g) for g in groups)
            raise ConfigError(
                f"the runs form {len(groups)} separate series ({names}); choose one with --runs"
            )
        chosen = set(groups[0]) if groups else set()
        infos = [r for r in infos if r.run_id in chosen]
    if not infos:
        raise ConfigError("no audit runs to follow (check --runs or --since)")
    never = datetime.min.replace(tzinfo=UTC)
    infos.sort(
        key=lambda r: (
            utc(r.as_of) if r.as_of else never,
            utc(r.created_at) if r.created_at else never,
        )
    )
    return [r.run_id for r in infos]


def _series(ledger: Ledger, infos: Sequence[Any]) -> list[list[str]]:
    parent = {r.run_id: r.run_id for r in infos}

    def root(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def join(a: str, b: str) -> None:
        if a in parent and b in parent:
            parent[root(a)] = root(b)

    by_input: dict[str, str] = {}
    for r in infos:
        if r.input_digest in by_input:
            join(r.run_id, by_input[r.input_digest])
        by_input.setdefault(r.input_digest, r.run_id)
    for link in ledger.run_links():
        join(link["run_id"], link["parent_run_id"])
    groups: dict[str, list[str]] = {}
    for r in infos:
        groups.setdefault(root(r.run_id), []).append(r.run_id)
    return list(groups.values())


def build_trend(
    ledger: Ledger,
    *,
    runs: Sequence[str] | None = None,
    since: datetime | None = None,
    n_boot: int = 2000,
    seed: int = 0,
) -> Trend:
    """Support precision, stale, contradicted and decidable rates of a series of runs
    (:func:`series_runs`), each with its 95% cluster-bootstrap interval, and the paired
    change of each figure between consecutive runs on their shared claims
    (:func:`auditor.report.compare.compare_runs`: improved / worse / unresolved)."""
    ids = series_runs(ledger, runs=runs, since=since)
    points = []
    claims = {}
    for run_id in ids:
        info = ledger.get_run(run_id)
        claims[run_id] = ledger.claim_results(run_id)
        card = build_report_card(
            run_id, claims[run_id], config=report_config(info), n_boot=n_boot, seed=seed
        )
        points.append(
            TrendPoint(
                run_id=run_id,
                kind=info.kind,
                as_of=info.as_of,
                n_answers=card.n_answers,
                n_claims=card.n_claims,
                figures={n: card.figure(n) for n in TREND_FIGURES},
            )
        )
    steps = tuple(
        compare_runs(a, claims[a], b, claims[b], n_boot=n_boot, seed=seed) for a, b in pairwise(ids)
    )
    return Trend(points=tuple(points), steps=steps, n_boot=n_boot, seed=seed)


def _fmt(f: Figure | None) -> str:
    if f is None or f.value is None:
        return "-"
    ci = f" [{f.ci[0]:.2f}, {f.ci[1]:.2f}]" if f.ci else ""
    return f"{f.value:.3f}{ci}"


def trend_rows(trend: Trend) -> tuple[list[list[str]], list[list[str]]]:
    """Plain table rows: one per run (figures with intervals) and one per consecutive
    change and figure (delta with its paired interval and the verdict)."""
    runs = [
        [
            p.run_id[:12],
            p.kind,
            _date(p.as_of),
            str(p.n_claims),
            *(_fmt(p.figures[n]) for n in TREND_FIGURES),
        ]
        for p in trend.points
    ]
    changes = []
    for s in trend.steps:
        for n in TREND_FIGURES:
            d = s.figure(n)
            delta = "-" if d.delta is None else f"{d.delta:+.3f}"
            ci = f"[{d.ci[0]:+.3f}, {d.ci[1]:+.3f}]" if d.ci else "-"
            changes.append(
                [
                    f"{s.run_a[:12]} -> {s.run_b[:12]}",
                    str(s.n_shared_claims),
                    n,
                    delta,
                    ci,
                    d.verdict,
                ]
            )
    return runs, changes


def trend_html(trend: Trend) -> str:
    """The trend as one self-contained HTML file: a plot of the four figures over the
    as-of dates with their intervals (inline PNG), the table of runs and the changes."""
    from html import escape

    from auditor.report.html import _CSS, _errors, _png, _pyplot

    runs, changes = trend_rows(trend)
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 4))
    xs = list(range(len(trend.points)))
    for name in TREND_FIGURES:
        pts = [
            (x, p.figures[name])
            for x, p in zip(xs, trend.points, strict=True)
            if p.figures[name].value is not None
        ]
        if not pts:
            continue
        values = [float(f.value) for _, f in pts]  # type: ignore[arg-type]
        ax.errorbar(
            [x for x, _ in pts],
            values,
            yerr=_errors(values, [f.ci for _, f in pts]),
            marker="o",
            capsize=4,
            label=name.replace("_", " "),
        )
    ax.set_xticks(xs, [_date(p.as_of) for p in trend.points], rotation=20)
    ax.set_ylim(-0.02, 1.02)
    ax.set_ylabel("share")
    ax.set_xlabel("as of")
    ax.set_title("Factuality over time (95% cluster-bootstrap intervals)")
    ax.legend(fontsize=8)
    plot = _png(fig)

    def table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
        th = "".join(f"<th>{escape(h)}</th>" for h in head)
        body = "".join(
            "<tr>"
            + "".join(
                f'<td class="{escape(c) if c in ("improved", "worse", "unresolved") else ""}">'
                f"{escape(c)}</td>"
                for c in row
            )
            + "</tr>"
            for row in rows
        )
        return f"<table><tr>{th}</tr>{body}</table>"

    return (
        '<!DOCTYPE html><html><head><meta charset="utf-8"><title>Factuality trend'
        f"</title><style>{_CSS}</style></head><body><h1>Factuality over time</h1>"
        f"{plot}<h2>Runs</h2>"
        + table(["run", "kind", "as of", "claims", *TREND_FIGURES], runs)
        + "<h2>Paired change between consecutive runs (shared claims)</h2>"
        + table(["runs", "shared claims", "figure", "delta", "95% interval", "verdict"], changes)
        + f'<p class="note">Intervals: 95% cluster bootstrap over answers, B = '
        f"{trend.n_boot}, seed {trend.seed}; changes are paired on the claims both "
        "runs share.</p></body></html>\n"
    )
