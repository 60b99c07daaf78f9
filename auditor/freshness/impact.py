"""Which audited claims a corpus update made stale.

:func:`find_impact` lists the claims of earlier runs whose deciding evidence changed (a
version they rested on was superseded or withdrawn, or a new version of a document they
cited appeared), from the ledger alone: no judge runs. A document's versions are followed
in the order its chain has in the index (by start date, ``valid_from`` else
``published_at``, as :mod:`auditor.retrieval.versions` orders them), so a change names the
immediate successor of the version a claim rested on and every later version up to the one
current at the date looked at.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from auditor.clock import answer_as_of, default_as_of, utc
from auditor.freshness._common import AUDIT_KINDS, _iso
from ledger import Ledger


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
    """For ``superseded``, the immediate successor of ``old`` in the document's version
    chain; for ``new_version``, the first successor new to the claim's run."""
    old_passage: str
    new_passage: str | None
    diff: str | None
    """Character diff of the passage against ``new``: ``[-removed-]{+added+}`` marks."""
    chain: tuple[VersionInfo, ...] = ()
    """Every successor of ``old`` visible at the date looked at, in chain order: ``new``
    (or, for ``new_version``, the versions before it that the run knew) up to the version
    current then."""

    @property
    def current(self) -> VersionInfo | None:
        """The version of the document current at the date looked at (None: withdrawn)."""
        return self.chain[-1] if self.chain else self.new

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "doc_id": self.doc_id,
            "old": self.old.to_dict(),
            "new": self.new.to_dict() if self.new else None,
            "chain": [v.to_dict() for v in self.chain],
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
            later = c.chain or ((c.new,) if c.new else ())
            new = "".join(f" -> {v.version} ({v.digest[:12]})" for v in later)
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


VersionOrder = Callable[[Sequence[str]], Mapping[str, Sequence[str]]]
"""``order(doc_ids) -> {doc_id: version digests in chain order}``: a document's version
chain as the evidence index keeps it (:meth:`auditor.retrieval.EvidenceIndex.versions`)."""


def index_version_order(versions: Iterable[Any]) -> VersionOrder:
    """The :data:`VersionOrder` of an index's versions (``doc_id`` and ``digest`` of each,
    in the index's version order, as :meth:`~auditor.retrieval.EvidenceIndex.versions`
    lists them). The versions are read when first asked for."""
    chains: dict[str, list[str]] | None = None

    def order(doc_ids: Sequence[str]) -> Mapping[str, Sequence[str]]:
        nonlocal chains
        if chains is None:
            chains = {}
            for v in versions:
                chains.setdefault(str(v.doc_id), []).append(str(v.digest))
        return {d: chains[d] for d in doc_ids if d in chains}

    return order


def find_impact(
    ledger: Ledger,
    *,
    runs: Sequence[str] | None = None,
    since: datetime | None = None,
    as_of: datetime | None = None,
    index_manifest: Mapping[str, Any] | None = None,
    index_versions: Iterable[tuple[str, str]] = (),
    override_answer_dates: bool = False,
    version_order: VersionOrder | None = None,
) -> ImpactReport:
    """The claims of ``runs`` (ids or prefixes; default every audit run) whose deciding
    evidence changed by ``as_of`` (default :func:`auditor.clock.default_as_of`, today
    00:00 UTC), read from the ledger without judging. A claim whose answer has its own
    ``as_of`` is looked at as of that date, not ``as_of`` (what a re-audit does), unless
    ``override_answer_dates``.
    Deciding evidence: the retrieved passages relevant by the run's labelling rule, as
    the label step flagged them (``deciding`` of :meth:`ledger.Ledger.citing_evidence`,
    :func:`auditor.decision.evidence_relevant`); the answer's own contexts never change.

    A claim audited as of ``T0`` by a run that finished at ``F`` is impacted when, for a
    document its deciding evidence cites, the version it rested on has successors in the
    document's version chain that are visible at the date looked at, one of them new to
    it (ingested after ``F``, or published after ``T0``): ``superseded`` when it rested on
    a current version of that document (``new``: the immediate successor), ``new_version``
    when it cited only superseded ones (``new``: the first successor new to it); or when a
    current version it rested on has ``valid_to`` in ``(T0, as_of]`` and nothing newer:
    ``withdrawn``. With ``since``, only changes ingested, published or ending at or after
    ``since``.

    The chain is ``version_order`` (the index's own order, :func:`index_version_order`),
    else the ledger's dates ordered as the index orders them (:func:`chain_of`).

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
    if override_answer_dates:
        # an answer's own date may lie before its run's: looked at as of ``when``, what was
        # published since that date is new to its claims
        own = ledger.earliest_answer_as_of(run_ids)
        if own is not None:
            starts.append(own)
    created_since = since or min(finished)
    low = min(since or (min(starts) if starts else _EARLIEST), when)
    changed = ledger.changed_versions(created_since=created_since, window=(low, when))
    changed_docs = sorted({row["doc_id"] for row in changed})
    if not changed_docs:
        return ImpactReport(when, since, run_ids, (), 0, index_info)
    rows = [r for r in ledger.citing_evidence(changed_docs, run_ids=list(run_ids)) if r["deciding"]]
    known = ledger.document_versions(changed_docs)
    order = version_order(changed_docs) if version_order is not None else {}
    chains = {doc_id: chain_of(known.get(doc_id, []), order.get(doc_id)) for doc_id in known}
    version_of = {(v.doc_id, v.digest): v for chain in chains.values() for v in chain}
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
    # an answer's own date may lie after ``when``: the first pass looks at every date
    latest = when if override_answer_dates else _LATEST
    found = []
    for run_id, ids in claims_by_run.items():
        candidates = [
            cid
            for cid in ids
            if _claim_changes(
                grouped[(run_id, cid)], chains, _EARLIEST, finished_of[run_id], latest, since
            )
        ]
        info_of = ledger.claims_of(run_id, candidates)
        for claim_id in candidates:
            first = info_of[claim_id]
            t0 = answer_as_of(first["answer_as_of"], as_of_of[run_id])
            looked_at = answer_as_of(first["answer_as_of"], when, override=override_answer_dates)
            assert looked_at is not None
            changes = _claim_changes(
                grouped[(run_id, claim_id)], chains, t0, finished_of[run_id], looked_at, since
            )
            if changes:
                found.append((run_id, claim_id, first, t0, changes))
    passages = ledger.chunk_texts(
        sorted({c.row["chunk_id"] for *_, changes in found for c in changes})
    )
    new_chunks = ledger.versions_chunks(
        sorted({(c.new.doc_id, c.new.digest) for *_, changes in found for c in changes if c.new})
    )
    diffs: dict[tuple[str, str, str], tuple[str | None, str | None]] = {}
    for run_id, claim_id, first, t0, changes in found:
        built = []
        for change in changes:
            old_row, new = change.row, change.new
            old = version_of[(change.doc_id, old_row["version_digest"])]
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
                    kind=change.kind,
                    doc_id=change.doc_id,
                    old=old,
                    new=new,
                    old_passage=old_text,
                    new_passage=new_text,
                    diff=diff,
                    chain=change.chain,
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
    order_of_run = {r: i for i, r in enumerate(run_ids)}
    claims.sort(key=lambda c: (order_of_run[c.run_id], c.answer_id, c.claim_id))
    return ImpactReport(when, since, run_ids, tuple(claims), len(changed), index_info)


_EARLIEST = datetime.min.replace(tzinfo=UTC)
_LATEST = datetime.max.replace(tzinfo=UTC)


def chain_of(
    versions: Iterable[Mapping[str, Any]], order: Sequence[str] | None = None
) -> list[VersionInfo]:
    """One document's versions (ledger rows) in chain order: ``order`` (version digests in
    the index's order) when it lists every one of them, else the order the index gives
    them (:mod:`auditor.retrieval.versions`): dated versions by their start
    (``valid_from``, else ``published_at``); an undated version with a ``valid_to`` (placed
    before a dated version, ``--undated-order oldest``) just before the version starting
    then, other undated versions after the dated ones (``--undated-order newest``), in
    ingest order."""
    infos = [VersionInfo.of(v) for v in versions]
    if order is not None:
        position = {digest: i for i, digest in enumerate(order)}
        if all(v.digest in position for v in infos):
            return sorted(infos, key=lambda v: position[v.digest])

    def key(v: VersionInfo) -> tuple[datetime, int, datetime, str]:
        start = v.valid_from if v.valid_from is not None else v.published_at
        ingested = utc(v.created_at) if v.created_at is not None else _EARLIEST
        if start is not None:
            return (utc(start), 1, ingested, v.version)
        if v.valid_to is not None:
            return (utc(v.valid_to), 0, ingested, v.version)
        return (_LATEST, 0, ingested, v.version)

    return sorted(infos, key=key)


@dataclass(frozen=True)
class _Change:
    kind: str
    doc_id: str
    row: Mapping[str, Any]
    """The evidence row of the version the claim rested on."""
    new: VersionInfo | None
    chain: tuple[VersionInfo, ...]


def _claim_changes(
    evidence: Sequence[Mapping[str, Any]],
    chains: Mapping[str, Sequence[VersionInfo]],
    t0: datetime | None,
    finished: datetime,
    when: datetime,
    since: datetime | None,
) -> list[_Change]:
    """The changes to the documents a claim's deciding ``evidence`` rows cite, one per
    changed document."""
    out: list[_Change] = []
    cited: dict[str, list[Mapping[str, Any]]] = {}
    for row in evidence:
        cited.setdefault(row["doc_id"], []).append(row)
    low = max((d for d in (t0, since) if d is not None), default=None)

    def visible(v: VersionInfo) -> bool:
        start = v.visible_from
        return start is None or utc(start) <= when

    def new_to_run(v: VersionInfo) -> bool:
        start = v.visible_from
        ingested_after = (
            v.created_at is not None
            and utc(v.created_at) > finished
            and (since is None or utc(v.created_at) >= since)
        )
        published_after = start is not None and low is not None and utc(start) > low
        return ingested_after or published_after

    for doc_id, doc_rows in cited.items():
        chain = chains.get(doc_id, ())
        position = {v.digest: i for i, v in enumerate(chain)}
        known_rows = [r for r in doc_rows if r["version_digest"] in position]
        if not known_rows:
            continue
        current = [r for r in known_rows if not r["superseded"]]
        # the version it rested on: the latest current one it cited, else the latest cited
        rested = max(current or known_rows, key=lambda r: position[r["version_digest"]])
        later = tuple(v for v in chain[position[rested["version_digest"]] + 1 :] if visible(v))
        fresh = [v for v in later if new_to_run(v)]
        if fresh:
            new = later[0] if current else fresh[0]
            out.append(
                _Change("superseded" if current else "new_version", doc_id, rested, new, later)
            )
            continue
        if later:
            continue  # replaced before the claim's date: nothing new to it
        for row in current:
            rested_on = chain[position[row["version_digest"]]]
            if rested_on.valid_to is None:
                continue
            end = utc(rested_on.valid_to)
            if end <= when and (low is None or end > low):
                out.append(_Change("withdrawn", doc_id, row, None, ()))
                break
    return out


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
