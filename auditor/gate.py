"""The release gate: pass or fail a run on its report-card intervals and against a baseline.

A rule ``min FIGURE=V`` passes when the *lower* bound of the figure's 95% interval is
at least V; ``max FIGURE=V`` when the *upper* bound is at most V: a run passes only
when the data show it is good enough, not when its point estimate happens to be. A
figure that is undefined (no decidable claim) fails its rule. Against a baseline
run, each checked figure fails only when the paired difference on the shared claims
is worse with its interval excluding zero (an unresolved change passes); a baseline
that shares no claim with the run fails (nothing could be compared). An incomplete
run fails.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol
from xml.etree import ElementTree as ET

from auditor.errors import InputError
from auditor.report.card import DIRECTION, ReportCard, figure_specs

if TYPE_CHECKING:
    from auditor.report.compare import Comparison
    from ledger import Ledger

Bound = Literal["min", "max"]
BASELINE_FIGURES = ("support_precision", "contradicted_rate", "stale_rate")
"""Figures checked against a baseline when no rule names a figure."""


def figure_names() -> list[str]:
    """Every report-card figure a rule can name."""
    return [name for name, *_ in figure_specs()]


@dataclass(frozen=True)
class GateRule:
    """``min``/``max`` bound on one report-card figure's interval.

    >>> GateRule.parse("support_precision=0.8", "min")
    GateRule(figure='support_precision', bound='min', value=0.8)
    >>> GateRule.parse("support_precison=0.8", "min")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    auditor.errors.InputError: field '--min': unknown figure ... 'support_precision'?)
    """

    figure: str
    bound: Bound
    value: float

    def __post_init__(self) -> None:
        option = f"--{self.bound}"
        names = figure_names()
        if self.figure not in names:
            import difflib

            close = difflib.get_close_matches(self.figure, names, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else f"; figures: {names}"
            raise InputError(f"unknown figure {self.figure!r}{hint}", field=option)
        if self.bound not in ("min", "max"):
            raise InputError(f"bound must be min or max, got {self.bound!r}", field="bound")
        if not (
            isinstance(self.value, int | float)
            and math.isfinite(self.value)
            and 0.0 <= self.value <= 1.0
        ):
            raise InputError(
                f"{self.figure}: the bound must be a number in [0, 1], got {self.value!r}",
                field=option,
            )

    @classmethod
    def parse(cls, text: str, bound: Bound) -> GateRule:
        """A rule from ``FIGURE=VALUE`` (the command line's ``--min``/``--max``)."""
        name, sep, value = text.partition("=")
        if not sep:
            raise InputError(f"expected FIGURE=VALUE, got {text!r}", field=f"--{bound}")
        try:
            number = float(value)
        except ValueError:
            raise InputError(
                f"{name.strip()}: not a number: {value!r}", field=f"--{bound}"
            ) from None
        return cls(name.strip(), bound, number)


@dataclass(frozen=True)
class GateCheck:
    """One check of the gate and its outcome."""

    name: str
    passed: bool
    message: str
    figure: str | None = None
    value: float | None = None
    ci: tuple[float, float] | None = None
    threshold: float | None = None


@dataclass(frozen=True)
class GateResult:
    """Every check of a gate; the gate passes when all of them do."""

    run_id: str
    checks: Sequence[GateCheck]
    baseline: str | None = None
    warnings: Sequence[str] = field(default_factory=tuple)

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    @property
    def failures(self) -> list[GateCheck]:
        return [c for c in self.checks if not c.passed]

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "baseline": self.baseline,
            "passed": self.passed,
            "checks": [asdict(c) for c in self.checks],
            "warnings": list(self.warnings),
        }

    def to_text(self) -> str:
        """One line per check, then the outcome."""
        lines = [
            f"gate for run {self.run_id[:12]}"
            + (f" against baseline {self.baseline[:12]}" if self.baseline else "")
        ]
        lines += [f"  {'PASS' if c.passed else 'FAIL'}  {c.name}: {c.message}" for c in self.checks]
        lines += [f"  note: {w}" for w in self.warnings]
        lines.append(
            "PASSED"
            if self.passed
            else f"FAILED ({len(self.failures)} of {len(self.checks)} checks)"
        )
        return "\n".join(lines) + "\n"

    def to_junit(self) -> str:
        """JUnit XML: one test case per check, for CI systems."""
        suite = ET.Element(
            "testsuite",
            name="auditor gate",
            tests=str(len(self.checks)),
            failures=str(len(self.failures)),
            errors="0",
        )
        for c in self.checks:
            case = ET.SubElement(
                suite, "testcase", name=c.name, classname=f"auditor.gate.run_{self.run_id[:12]}"
            )
            if not c.passed:
                ET.SubElement(case, "failure", message=c.message).text = c.message
        return ET.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"

    def render(self, fmt: str) -> str:
        """``text``, ``json`` or ``junit``."""
        if fmt == "json":
            return json.dumps(self.to_dict(), indent=2) + "\n"
        if fmt == "junit":
            return self.to_junit()
        if fmt == "text":
            return self.to_text()
        raise InputError(f"unsupported format {fmt!r} (text, json, junit)", field="--format")


def _fmt(value: float | None, ci: Sequence[float] | None) -> str:
    if value is None:
        return "undefined"
    return f"{value:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")


def evaluate_gate(
    card: ReportCard, rules: Iterable[GateRule], comparison: Comparison | None = None
) -> GateResult:
    """Check ``card`` against ``rules`` and, with ``comparison`` (baseline = run A, this
    run = run B), check that no gated figure got worse (see the module doc)."""
    rules = list(rules)
    checks = []
    status = card.config.get("status")
    if status not in (None, "complete"):
        checks.append(GateCheck("run complete", False, f"the run is {status}"))
    for rule in rules:
        fig = card.figure(rule.figure)
        ci = (fig.ci[0], fig.ci[1]) if fig.ci else None
        bound = None if ci is None else (ci[0] if rule.bound == "min" else ci[1])
        ok = bound is not None and (
            bound >= rule.value if rule.bound == "min" else bound <= rule.value
        )
        side = "lower" if rule.bound == "min" else "upper"
        sign = ">=" if rule.bound == "min" else "<="
        message = (
            f"{_fmt(fig.value, ci)}: {side} bound "
            + (f"{bound:.3f}" if bound is not None else "undefined")
            + f" must be {sign} {rule.value:g}"
        )
        checks.append(
            GateCheck(
                f"{rule.bound} {rule.figure}", ok, message, rule.figure, fig.value, ci, rule.value
            )
        )
    notes = list(card.warnings)
    if comparison is not None:
        named = [f for f in dict.fromkeys(r.figure for r in rules) if DIRECTION.get(f, 0)]
        skipped = [r.figure for r in rules if not DIRECTION.get(r.figure, 0)]
        if skipped:
            notes.append(
                f"not compared with the baseline (neither direction is better): "
                f"{', '.join(dict.fromkeys(skipped))}"
            )
        if not named:
            named = list(BASELINE_FIGURES)
        if comparison.n_shared_claims == 0:
            checks.append(
                GateCheck(
                    "baseline shared claims",
                    False,
                    "the run and the baseline share no claim (claims are matched by answer id, "
                    "span and text): nothing can be compared",
                )
            )
        for name in named:
            delta = comparison.figure(name)
            worse = delta.verdict == "worse"
            ci_text = f" [{delta.ci[0]:+.3f}, {delta.ci[1]:+.3f}]" if delta.ci else ""
            change = "undefined" if delta.delta is None else f"{delta.delta:+.3f}{ci_text}"
            checks.append(
                GateCheck(
                    f"baseline {name}",
                    not worse,
                    f"{_fmt(delta.value_a, None)} -> {_fmt(delta.value_b, None)}, paired change "
                    f"{change} on {comparison.n_shared_claims} shared claims ({delta.verdict}; "
                    f"{delta.better} is better)",
                    name,
                    delta.delta,
                    delta.ci,
                )
            )
    if not checks:
        raise InputError("nothing to check: give --min/--max rules or a --baseline")
    return GateResult(card.run_id, checks, comparison.run_a if comparison else None, tuple(notes))


def gate_run(
    ledger: Ledger,
    run: str,
    *,
    rules: Iterable[GateRule] = (),
    baseline: str | None = None,
    n_boot: int = 2000,
    seed: int = 0,
) -> GateResult:
    """:func:`evaluate_gate` on a run of ``ledger`` (ids or unique prefixes)."""
    from auditor.report.card import build_report_card, report_config
    from auditor.report.compare import compare_runs

    run_id = ledger.find_run(run)
    info = ledger.get_run(run_id)
    claims = ledger.claim_results(run_id)
    card = build_report_card(run_id, claims, config=report_config(info), n_boot=n_boot, seed=seed)
    comparison = None
    if baseline is not None:
        base_id = ledger.find_run(baseline)
        comparison = compare_runs(
            base_id, ledger.claim_results(base_id), run_id, claims, n_boot=n_boot, seed=seed
        )
    return evaluate_gate(card, rules, comparison)


class HasRunId(Protocol):
    """A run's outcome (:class:`auditor.AuditRun`): what the gate needs of it."""

    @property
    def run_id(self) -> str: ...


def assert_audit(
    run: HasRunId | str,
    *,
    db: str | Ledger | None = None,
    min: Mapping[str, float] | None = None,
    max: Mapping[str, float] | None = None,
    baseline: str | None = None,
    n_boot: int = 2000,
    seed: int = 0,
) -> GateResult:
    """For teams that gate with pytest: fail (``AssertionError`` with the gate's report)
    unless the run passes. ``db``: the ledger (default ``$AUDITOR_DB`` or
    ``.auditor/ledger.db``).

    >>> from auditor import assert_audit
    >>> assert_audit("0123", db=":memory:", min={"support_precision": 0.9})
    Traceback (most recent call last):
    ...
    ledger.errors.LedgerError: ...: no run with id '0123'
    """
    from auditor.locations import ledger_location
    from ledger import Ledger as LedgerType
    from ledger import open_ledger

    rules = [GateRule(k, "min", v) for k, v in (min or {}).items()] + [
        GateRule(k, "max", v) for k, v in (max or {}).items()
    ]
    run_ref = run if isinstance(run, str) else run.run_id
    if isinstance(db, LedgerType):
        result = gate_run(db, run_ref, rules=rules, baseline=baseline, n_boot=n_boot, seed=seed)
    else:
        with open_ledger(ledger_location(db), create=db == ":memory:") as ledger:
            result = gate_run(
                ledger, run_ref, rules=rules, baseline=baseline, n_boot=n_boot, seed=seed
            )
    if not result.passed:
        raise AssertionError(result.to_text())
    return result
