"""Factuality over time.

:func:`build_trend` follows a series of runs of the same answers over their as-of dates:
support precision, stale, contradicted and decidable rates with intervals, and the paired
change between consecutive runs on their shared claims.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import pairwise
from typing import Any

from auditor.clock import utc
from auditor.errors import ConfigError
from auditor.freshness._common import AUDIT_KINDS, _iso
from auditor.report.card import Figure, build_report_card, report_config
from auditor.report.compare import Comparison, compare_runs
from ledger import Ledger

TREND_FIGURES = ("support_precision", "stale_rate", "contradicted_rate", "decidable_rate")
"""The report-card figures a trend follows."""


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
