"""Re-auditing only the claims a corpus update made stale.

:func:`reaudit` re-audits a run's answers as of a new date as a new run linked to the old
one: evidence is gathered again for every claim (cheap), and only claims whose evidence
changed (or that the ledger names as impacted) are judged again; the others' votes and
verdicts are carried over, each marked with the reason.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from auditor.bridging import stored_run
from auditor.clock import parse_datetime
from auditor.config import AuditConfig
from auditor.decision import deciding_flags, signals_subject
from auditor.digest import content_digest
from auditor.errors import ConfigError
from auditor.evidence import Evidence, gather_evidence
from auditor.executor import NewRun, ResultsOf, execute_run
from auditor.extract.base import Extraction, Extractor
from auditor.freshness._common import AUDIT_KINDS, _date, _iso
from auditor.freshness.impact import find_impact, index_version_order
from auditor.graph.flow import AuditComponents, AuditState, build_audit_graph
from auditor.labels import LabelPolicy
from auditor.reader_scores import preload as preload_reader_scores
from auditor.records import stored_vote
from auditor.report.claims import claim_records
from auditor.runner import audit_judges, index_component, judge_digests, run_components
from auditor.steps import ClaimAudit
from auditor.types import Answer, Claim, Component, Context, Label, Verdict, Vote
from ledger import AnswerResult, Ledger

if TYPE_CHECKING:
    from auditor._auditor import Auditor

SCORE_TOLERANCE = 1e-4
"""Relevance, coverage and sentence cosines closer than this count as unchanged."""


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


def _passages(hits: Sequence[Any], *, dated: bool) -> tuple[tuple[Any, ...], ...]:
    """What the judges and the label step read of each passage, in order: its document,
    text and inline flag, and (``dated``: superseded passages) its version's dates. Not its
    chunk id or version digest: a newer version with the same passage reads the same."""
    out = []
    for h in hits:
        key: tuple[Any, ...] = (h.document.doc_id, h.chunk.text, bool(h.inline))
        if dated:
            doc = h.document
            key += (_iso(doc.published_at), _iso(doc.valid_from), _iso(doc.valid_to))
        out.append(key)
    return tuple(out)


def _close(a: float | None, b: float | None) -> bool:
    if (a is None) != (b is None):
        return False
    return a is None or b is None or abs(a - b) <= SCORE_TOLERANCE


def _same_scores(
    old: Evidence, new: Evidence, old_hits: Sequence[Any], new_hits: Sequence[Any]
) -> bool:
    """Relevance, coverage and sentence cosine of each passage, position by position."""
    for a, b in zip(old_hits, new_hits, strict=True):
        x, y = a.chunk.chunk_id, b.chunk.chunk_id
        if not (
            _close(old.relevance.get(x), new.relevance.get(y))
            and _close(old.coverage.get(x), new.coverage.get(y))
            and _close(old.sentence_relevance.get(x), new.sentence_relevance.get(y))
        ):
            return False
    return True


def _same(old: Evidence, new: Evidence, *, superseded: bool, dated: bool = True) -> bool:
    a, b = (old.superseded, new.superseded) if superseded else (old.current, new.current)
    dated = superseded and dated
    return _passages(a, dated=dated) == _passages(b, dated=dated) and _same_scores(old, new, a, b)


def _deciding(ev: Evidence, flags: Sequence[bool], *, superseded: bool) -> list[Any]:
    """The current (or superseded) passages of ``ev`` that decide the claim's label, by
    its :func:`auditor.decision.deciding_flags` (current pieces first)."""
    n = len(ev.current)
    hits, part = (ev.superseded, flags[n:]) if superseded else (ev.current, flags[:n])
    return [h for h, deciding in zip(hits, part, strict=True) if deciding]


def _describe(
    old: Sequence[Any], new: Sequence[Any], *, dated: bool = False, superseded: bool = False
) -> str:
    """The passages that left and came, by what the judges read of them (a newer version
    of a passage with the same text is neither)."""

    def name(h: Any) -> str:
        return f"{h.document.doc_id}@{h.document.version}" + (" (superseded)" if superseded else "")

    keys_old, keys_new = _passages(old, dated=dated), _passages(new, dated=dated)
    left = Counter(keys_old) - Counter(keys_new)
    added = Counter(keys_new) - Counter(keys_old)
    gone = sorted({name(h) for k, h in zip(keys_old, old, strict=True) if left[k]})
    came = sorted({name(h) for k, h in zip(keys_new, new, strict=True) if added[k]})
    parts = ([f"no longer {', '.join(gone)}"] if gone else []) + (
        [f"now {', '.join(came)}"] if came else []
    )
    return "; ".join(parts) or "the same passages in another order, or with other relevance"


def evidence_change(old: Evidence, new: Evidence, policy: LabelPolicy, claim: Claim) -> str | None:
    """Why a claim must be judged again given its old and new evidence (None: its deciding
    evidence is the same, so its verdict is carried over).

    The deciding evidence is the passages relevant by the one rule
    (:func:`auditor.decision.deciding_flags`, what ``impact`` names claims by), current and
    superseded: the same passages by document, text and inline flag, in the same order,
    with relevance, coverage and sentence cosines within :data:`SCORE_TOLERANCE` (a passage
    of a newer version whose text is unchanged reads the same), the superseded ones with
    their versions' dates when the claim states its own period
    (:func:`auditor.steps.valid_at_claim_time`), and the same subject coverage. Passages
    that decide nothing may change: the judges read them too, so a carried claim keeps
    votes against passages it no longer reads, and its reason says so."""
    before, after = ClaimAudit(claim, old).signals(), ClaimAudit(claim, new).signals()
    flags = deciding_flags(before, policy), deciding_flags(after, policy)

    def same(superseded: bool, dated: bool) -> bool:
        a = _deciding(old, flags[0], superseded=superseded)
        b = _deciding(new, flags[1], superseded=superseded)
        return _passages(a, dated=dated) == _passages(b, dated=dated) and _same_scores(
            old, new, a, b
        )

    if signals_subject(before) != signals_subject(after) or not same(False, dated=False):
        return "evidence changed: " + _describe(old.current, new.current)
    # a superseded version's dates are read only for a claim about its own period
    dated = before.states_time
    if not same(True, dated=dated):
        return "superseded evidence changed: " + _describe(
            old.superseded, new.superseded, dated=dated, superseded=True
        )
    return None


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
            origin=a.origin,
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
    n_claims = len(stored.audits)
    carried: dict[str, tuple[str, str, str]] = {}
    """Claim id -> its carried mark (claim id, parent run, reason), for the ledger."""
    rejudged: dict[str, str] = {}

    def produce(
        batches: Sequence[Sequence[Answer]], seq_of: Mapping[str, int], results_of: ResultsOf
    ) -> Iterator[Sequence[AnswerResult]]:
        impacted = (
            {
                c.claim_id: c.reason
                for c in find_impact(
                    ledger,
                    runs=[parent],
                    as_of=when,
                    override_answer_dates=override_answer_dates,
                    # the chains as the index keeps them, read only when a document changed
                    version_order=lambda docs: index_version_order(auditor.index.versions())(docs),
                ).claims
            }
            if only_impacted
            else {}
        )
        # what a carried claim keeps (a full re-audit carries nothing)
        claim_ids = [a.claim.id for a in stored.audits] if only_impacted else []
        carry_votes, carry_stale = (
            _stored_votes(ledger, parent, info.components, claim_ids, superseded=s)
            if claim_ids
            else {}
            for s in (False, True)
        )
        verdicts = {c.claim_id: c for c in ledger.claim_results(parent)} if claim_ids else {}
        audits_of: dict[str, list[ClaimAudit]] = {}
        for audit in stored.audits:
            audits_of.setdefault(audit.claim.answer_id, []).append(audit)
        graph = build_audit_graph(components, entry="judge")
        extractor = components.extractor.component
        for batch in batches:
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
            for audit, evidence in zip(old, fresh, strict=True):
                cid = audit.claim.id
                why = (
                    evidence_change(audit.evidence, evidence, config.policy, audit.claim)
                    if only_impacted
                    else "full re-audit"
                )
                if cid in impacted and (why is None or not why.startswith("full")):
                    # named by impact: judged again, whatever else changed
                    why = f"impacted: {impacted[cid]}" + ("" if why is None else f"; {why}")
                if why is None:
                    merged.append(
                        _carried(
                            audit.claim,
                            evidence,
                            verdicts[cid],
                            carry_votes.get(cid, ()),
                            info.components,
                            carry_stale.get(cid, ()),
                            policy=config.policy,
                        )
                    )
                    carried[cid] = (cid, parent, _carried_reason(parent, audit, evidence))
                else:
                    rejudged[cid] = why
                    merged.append(None)
                    judge_now.append(ClaimAudit(audit.claim, evidence))
            judged = iter(
                graph.invoke({"answers": list(batch), "audits": judge_now})["audits"]
                if judge_now
                else []
            )
            audits = [a if a is not None else next(judged) for a in merged]
            state: AuditState = {
                "answers": list(batch),
                "audits": audits,
                "extractions": [
                    Extraction(a.id, tuple(x.claim for x in audits_of.get(a.id, [])), extractor)
                    for a in batch
                ],
            }
            yield results_of(state)

    def mark_carried(results: Sequence[AnswerResult]) -> None:
        # the marks first, in the answers' transaction's stead: a resumed run re-writes them
        marks = [carried[c.claim_id] for r in results for c in r.claims if c.claim_id in carried]
        if marks:
            ledger.record_carried(run_id, marks)

    def link() -> None:
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

    sink = NewRun(
        ledger,
        run_id,
        kind="reaudit",
        input_digest=info.input_digest,
        as_of=when,
        config=config.to_dict(),
        components=roles,
        n_answers=len(answers),
        before_record=mark_carried,
        after_finish=link,
    )
    # the reader reads no pair the parent run already read (unchanged passages of a
    # re-judged claim), and keeps what this run asks for, stored with its answers
    judges = audit_judges(components)
    preload_reader_scores(ledger, parent, judges)
    summary = execute_run(
        answers,
        sink,
        produce,
        judges=judges,
        judge_digests=judge_digests(components, roles),
        batch_size=batch_size,
    )
    return _result(ledger, run_id, parent, when, only_impacted, summary.reused, n_claims, rejudged)


def _carried_reason(parent: str, audit: ClaimAudit, evidence: Evidence) -> str:
    renewed = sum(
        a.document.digest != b.document.digest
        for a, b in zip(
            (*audit.evidence.current, *audit.evidence.superseded),
            (*evidence.current, *evidence.superseded),
            strict=False,
        )
    )
    newer = f" ({renewed} of them now in a newer version, same text)" if renewed else ""
    when = f"at {_date(evidence.as_of)} are those run {parent[:12]} judged (as of "
    when += f"{_date(audit.evidence.as_of)})"
    moved = [
        part
        for part, superseded in (("current", False), ("superseded", True))
        if not _same(audit.evidence, evidence, superseded=superseded)
    ]
    if not moved:
        return (
            f"the passages its judges and label read {when}: the same "
            f"{len(evidence.current)} current passages (document, text, relevance){newer} and "
            f"the same superseded ones; impact names none of its deciding evidence"
        )
    return (
        f"the passages its label rests on {when}; other {' and '.join(moved)} passages it "
        f"reads changed and decide nothing, so its votes against them are carried too; "
        f"impact names none of its deciding evidence"
    )


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
    *,
    policy: LabelPolicy,
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
    audit = ClaimAudit(
        claim,
        evidence,
        votes=panel_votes,
        stale_votes=in_member_order(stale_votes),
        second_opinion=so,
        p_current=result.p_hallucinated,
        verdict=verdict,
    )
    # the deciding flags of its evidence at the new date, by the one rule
    return replace(audit, deciding=deciding_flags(audit.signals(), policy))


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
