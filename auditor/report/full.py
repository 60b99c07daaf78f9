"""The whole report of a run, assembled from the ledger only (never from memory).

The report card (figures with intervals), the label distribution with intervals,
per-judge vote and abstention statistics, κ and balanced accuracy against human
audits (when there are any), the reliability of the stacked probabilities
against them, support precision of every audit run over time, the verdict
versions (bridged panels) and, optionally, a paired comparison with another run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from auditor.report.agreement import (
    Agreement,
    Reliability,
    human_agreement,
    label_shares,
    reliability,
)
from auditor.report.card import ReportCard, build_report_card, report_config
from auditor.report.compare import Comparison, compare_runs
from auditor.report.evidence import claim_evidence_view
from auditor.report.render import deciding_text, md_escape, to_markdown
from auditor.report.resample import cluster_codes, ratio_interval
from auditor.types import UNSUPPORTED_LABELS, Label
from ledger import ClaimResult, Ledger


@dataclass(frozen=True)
class FullReport:
    """Everything a report shows about one run."""

    card: ReportCard
    label_shares: Mapping[str, tuple[float, tuple[float, float] | None]]
    judges: Sequence[Mapping[str, Any]]
    human: Agreement | None
    reliability: Reliability | None
    history: Sequence[Mapping[str, Any]] = ()
    verdict_versions: Sequence[Mapping[str, Any]] = ()
    comparison: Comparison | None = None
    notes: Sequence[str] = field(default_factory=list)
    flagged: Sequence[Mapping[str, Any]] = ()
    """Contradicted, not-supported, stale and unknown claims with their ids, the answer
    text they flag and the evidence sentence that decided them (or, when none decided
    them, their nearest passages, flagged not relevant)."""

    def to_dict(self) -> dict[str, Any]:
        data = self.card.to_dict()
        data["label_shares"] = {
            k: {"share": v, "ci": list(ci) if ci else None}
            for k, (v, ci) in self.label_shares.items()
        }
        data["judges"] = [dict(j) for j in self.judges]
        data["human_audits"] = self.human.to_dict() if self.human else None
        data["reliability"] = self.reliability.to_dict() if self.reliability else None
        data["history"] = [dict(h) for h in self.history]
        data["verdict_versions"] = [dict(v) for v in self.verdict_versions]
        if self.comparison is not None:
            data["comparison"] = self.comparison.to_dict()
        data["notes"] = list(self.notes)
        data["flagged"] = [dict(f) for f in self.flagged]
        return data


def flagged_claims(
    claims: Sequence[ClaimResult],
    answers: Sequence[Mapping[str, Any]],
    evidence: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
    votes: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
) -> list[dict[str, Any]]:
    """Every claim labelled contradicted, not_supported, stale or unknown, in answer order,
    with its id, the characters of the answer its error spans mark (the claim's span when
    none), the evidence sentence that decided it (``deciding_evidence``, from ``evidence``
    and ``votes`` per claim id; None when no sentence decided it) and, only without one,
    its nearest passages (``nearest_evidence``, each with ``relevant``; empty when
    nothing was retrieved): :func:`auditor.report.evidence.claim_evidence_view`."""
    texts = {a["answer_id"]: a["answer"] for a in answers}
    flagged = []
    for c in claims:
        if c.label not in FLAGGED_LABELS:
            continue
        text = texts.get(c.answer_id, "")
        spans = c.error_spans or c.spans
        decided, nearest = claim_evidence_view(
            c.text,
            c.label,
            c.reason,
            (evidence or {}).get(c.claim_id, ()),
            (votes or {}).get(c.claim_id, ()),
        )
        flagged.append(
            {
                "answer_id": c.answer_id,
                "claim_id": c.claim_id,
                "label": c.label,
                "claim": c.text,
                "p_hallucinated": c.p_hallucinated,
                "reason": c.reason,
                "error_spans": [list(s) for s in spans],
                "error_text": [text[a:b] for a, b in spans],
                "deciding_evidence": decided,
                "nearest_evidence": nearest,
            }
        )
    return flagged


FLAGGED_LABELS = frozenset({*(label.value for label in UNSUPPORTED_LABELS), Label.UNKNOWN.value})
"""Labels a reviewer should look at: the unsupported ones and unknown."""


def judge_statistics(rows: Sequence[Mapping[str, Any]], n_judged: int) -> list[dict[str, Any]]:
    """Vote and abstention shares per judge version from :meth:`Ledger.vote_statistics`."""
    out = []
    for r in rows:
        n = max(int(r["n"]), 1)
        out.append(
            {
                **dict(r),
                "abstain_rate": r["n_abstain"] / n,
                "hallucinated_rate": r["n_hallucinated"] / n,
                "supported_rate": r["n_supported"] / n,
                "error_rate": r["n_error"] / n,
                "coverage": r["n"] / n_judged if n_judged else None,
            }
        )
    return out


def support_history(
    ledger: Ledger, *, n_boot: int = 2000, seed: int = 0, kind: str = "audit"
) -> list[dict[str, Any]]:
    """Support precision (95% cluster-bootstrap interval) of every run of ``kind`` in the
    ledger, oldest first (from per-answer label counts: one grouped query per run)."""
    out = []
    unsupported = {"contradicted", "not_supported", "stale"}
    for run in ledger.list_runs():
        if run.kind != kind:
            continue
        rows = ledger.answer_label_counts(run.run_id)
        answers = np.array([a for a, _, _ in rows], dtype=object)
        n = np.array([k for _, _, k in rows], dtype=np.float64)
        supported = np.array([label == "supported" for _, label, _ in rows]) * n
        decidable = (
            np.array([label == "supported" or label in unsupported for _, label, _ in rows]) * n
        )
        codes, n_clusters = cluster_codes(answers)
        value, ci = ratio_interval(
            supported, decidable, codes, n_clusters, n_boot=n_boot, rng=np.random.default_rng(seed)
        )
        out.append(
            {
                "run_id": run.run_id,
                "created_at": run.created_at,
                "as_of": run.as_of,
                "status": run.status,
                "n_claims": int(n.sum()),
                "support_precision": value,
                "ci": list(ci) if ci else None,
            }
        )
    return out


def build_full_report(
    ledger: Ledger,
    run_id: str,
    *,
    compare_to: str | None = None,
    n_boot: int = 2000,
    seed: int = 0,
    history: bool = True,
) -> FullReport:
    """Assemble the whole report of ``run_id`` (a full id) from ``ledger``."""
    info = ledger.get_run(run_id)
    claims = ledger.claim_results(run_id)
    card = build_report_card(run_id, claims, config=report_config(info), n_boot=n_boot, seed=seed)
    audits = ledger.human_audits(run_id)
    n_judged = ledger.judged_claims(run_id)
    notes = []
    if not audits:
        notes.append(
            "no human audits for this run: kappa, balanced accuracy and the "
            "reliability diagram need some (auditor review add / import)"
        )
    comparison = None
    if compare_to is not None:
        other = ledger.get_run(compare_to)
        comparison = compare_runs(
            run_id,
            claims,
            other.run_id,
            ledger.claim_results(other.run_id),
            n_boot=n_boot,
            seed=seed,
        )
        if comparison.n_shared_claims == 0:
            notes.append("the two runs share no claim: nothing to compare")
    return FullReport(
        card=card,
        label_shares=label_shares(claims, n_boot=n_boot, seed=seed),
        judges=judge_statistics(ledger.vote_statistics(run_id), n_judged),
        human=human_agreement(claims, audits, n_boot=n_boot, seed=seed),
        reliability=reliability(claims, audits),
        history=support_history(ledger, n_boot=n_boot, seed=seed) if history else [],
        verdict_versions=ledger.verdict_versions(run_id),
        comparison=comparison,
        notes=notes,
        flagged=_flagged(ledger, run_id, claims),
    )


def _flagged(ledger: Ledger, run_id: str, claims: Sequence[ClaimResult]) -> list[dict[str, Any]]:
    ids = [c.claim_id for c in claims if c.label in FLAGGED_LABELS]
    if not ids:
        return []
    return flagged_claims(
        claims,
        ledger.run_answers(run_id),
        ledger.claim_evidence(run_id, claim_ids=ids),
        ledger.claim_votes(run_id, claim_ids=ids),
    )


def _ci(ci: Sequence[float] | None) -> str:
    return f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else ""


def _num(x: float | None) -> str:
    return "n/a" if x is None or not np.isfinite(x) else f"{x:.3f}"


def comparison_markdown(c: Comparison) -> list[str]:
    """Markdown lines of a paired comparison."""
    lines = [
        "## Comparison",
        "",
        f"Run B `{c.run_b[:12]}` against run A `{c.run_a[:12]}` on {c.n_shared_claims} "
        f"shared claims in {c.n_shared_answers} shared answers ({c.n_only_a} claims only "
        f"in A, {c.n_only_b} only in B). Differences are B - A with 95% paired "
        f"cluster-bootstrap intervals (B = {c.n_boot}, same resample for both runs).",
        "",
        "| figure | A | B | B - A [95% CI] | better | verdict |",
        "|---|---:|---:|---:|---|---|",
    ]
    for f in c.figures:
        lines.append(
            f"| {f.name} | {_num(f.value_a)} | {_num(f.value_b)} | "
            f"{_num(f.delta)}{_ci(f.ci)} | {f.better} | **{f.verdict}** |"
        )
    lines += [
        "",
        "Label in A -> label in B (shared claims):",
        "",
        "| A \\ B | " + " | ".join(_columns(c.transitions)) + " |",
        "|---|" + "---:|" * len(_columns(c.transitions)),
    ]
    for a, row in c.transitions.items():
        lines.append(
            f"| {a} | " + " | ".join(str(row.get(b, 0)) for b in _columns(c.transitions)) + " |"
        )
    return lines


def _columns(table: Mapping[str, Mapping[str, int]]) -> list[str]:
    return sorted({b for row in table.values() for b in row})


def agreement_markdown(title: str, a: Agreement) -> list[str]:
    """Markdown lines of an agreement (κ, balanced accuracy, confusion table)."""
    lines = [
        f"## {title}",
        "",
        f"{a.n_used} of {a.n_items} claims compared on the binary mapping (supported vs "
        "contradicted/not_supported/stale; unknown and not_factual excluded).",
        "",
        f"- Cohen's kappa: {_num(a.kappa)}{_ci(a.kappa_ci)}",
        f"- balanced accuracy: {_num(a.bacc)}{_ci(a.bacc_ci)}",
        f"- same label (all labels): {_num(a.share_equal)}",
    ]
    for reason, n in sorted(a.excluded.items()):
        lines.append(f"- excluded, {md_escape(reason)}: {n}")
    for key, value in a.extra.items():
        lines.append(f"- {md_escape(key.replace('_', ' '))}: {md_escape(value)}")
    cols = _columns(a.confusion)
    lines += [
        "",
        "| reference \\ compared | " + " | ".join(cols) + " |",
        "|---|" + "---:|" * len(cols),
    ]
    for ref, row in a.confusion.items():
        lines.append(f"| {ref} | " + " | ".join(str(row.get(b, 0)) for b in cols) + " |")
    return lines


def full_to_markdown(report: FullReport) -> str:
    """The whole report as Markdown."""
    lines = [to_markdown(report.card).rstrip(), ""]
    lines += [
        "## Judges",
        "",
        "| judge | digest | votes | supported | hallucinated | "
        "abstain rate | errors | mean latency s |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for j in report.judges:
        lines.append(
            f"| {md_escape(j['judge_name'])} | `{j['judge_digest'][:12]}` | {j['n']} | "
            f"{j['n_supported']} | {j['n_hallucinated']} | {j['abstain_rate']:.1%} | "
            f"{j['n_error']} | {j['mean_latency_s']:.4f} |"
        )
    lines.append("")
    if report.human is not None:
        lines += [*agreement_markdown("Agreement with human audits", report.human), ""]
    if report.reliability is not None:
        lines += [
            f"Reliability of stacked probabilities against human audits: "
            f"{report.reliability.n} claims, ECE {_num(report.reliability.ece)}.",
            "",
        ]
    if len(report.verdict_versions) > 1:
        lines += [
            "## Verdict versions (bridged panels)",
            "",
            "| panel | stacker | claims | own |",
            "|---|---|---:|---|",
        ]
        for v in report.verdict_versions:
            lines.append(
                f"| {md_escape(v['panel_name'] or '')} `{v['panel_digest'][:12]}` | "
                f"`{v['stacker_digest'][:12]}` | {v['n_claims']} | "
                f"{'yes' if v['own'] else 'bridged'} |"
            )
        lines.append("")
    if report.flagged:
        lines += [
            "## Flagged claims",
            "",
            "Contradicted, not supported, stale and unknown claims; review one with "
            "`auditor review add RUN CLAIM_ID --label ... --reviewer ...`. A claim shows "
            "the sentence that decided it; one that no sentence decided shows its nearest "
            "passages, marked as such.",
            "",
            "| claim id | answer | label | p | claim | error text | deciding evidence / nearest "
            "| reason |",
            "|---|---|---|---:|---|---|---|---|",
        ]
        for f in report.flagged:
            marked = " / ".join(f"**{md_escape(t)}**" for t in f["error_text"])
            evidence = deciding_text(f.get("deciding_evidence"), f.get("nearest_evidence", ()))
            lines.append(
                f"| `{md_escape(f['claim_id'][:16])}` | {md_escape(f['answer_id'])} | "
                f"{md_escape(f['label'])} | {_num(f['p_hallucinated'])} | "
                f"{md_escape(f['claim'])} | {marked} | "
                f"{md_escape(evidence)} | "
                f"{md_escape(f['reason'] or '')} |"
            )
        lines.append("")
    if report.comparison is not None:
        lines += [*comparison_markdown(report.comparison), ""]
    if report.notes:
        lines += ["## Notes", ""] + [f"- {md_escape(n)}" for n in report.notes] + [""]
    return "\n".join(lines)


def full_to_json(report: FullReport) -> str:
    """The whole report as pretty JSON."""
    return json.dumps(report.to_dict(), indent=2, sort_keys=True, default=str) + "\n"
