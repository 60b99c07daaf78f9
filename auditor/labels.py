"""The labelling step: stacked probability + retrieval outcome + contradiction + time -> label.

Rules, in order (docs/labels.md, "The rules, in order"):

1. a non-factual claim is ``not_factual``;
2. no evidence at all, or none that is relevant: ``unknown``. Evidence is relevant when
   its MiniLM cosine to the claim reaches ``min_relevance`` and it is also anchored in
   the claim: cosine at least ``strong_relevance``, or at least ``min_coverage`` of the
   claim's content words in it (cosine alone lets unrelated text of the same shape in),
   or it names the claim's subject (its first name) with cosine at least
   ``subject_relevance`` (an invented detail about a covered subject must be judged), or
   it says who holds a role the claim names a holder for, about the same thing, with
   cosine at least ``min_relevance`` (another holder's name keeps the cosine low). A
   claim that names nothing itself takes its answer's topic as its subject, and when no
   evidence names that topic (nor is the answer's own context) none is relevant;
3. supported by a superseded version (stacked p < threshold or a clear match as in 7,
   and, unless the claim states its own time, no clear conflict in the votes against it)
   while the current evidence states otherwise in the same slot (a *clear conflict*, see
   5), or matches it clearly better (cosine margin ``stale_margin``) than the current
   version of the same document with a stacked probability lower than against current
   evidence (or the same, when the current version holds a smaller share of the claim's
   content words: a current version judged the same and still holding every word, "has
   640 beds" in a longer sentence, is not outdated by a closer cosine; nor is one
   holding every content word of the claim with the stacked probability below the
   threshold and no member voting "hallucinated"), or while the current evidence never
   states one of its details (see 6): ``stale`` (the update changed what the claim
   states), unless the claim states its own time and that version was valid then
   (``supported``: a true statement about the past);
4. not supported by current evidence but supported by a superseded version:
   ``supported`` when the claim states its own time (``from 2004 to 2005``,
   ``as of 2010``, ``In 2004, ...``) and that version was valid then, else ``stale``
   (applies wherever rules 8-9 would say "not supported");
5. a clear conflict (``scores["conflict"]`` of a judge reaching ``contradiction_at``: a
   number, date or name in the same slot about the same subject that the best-matching
   evidence sentence, the answer's own cited context included, states otherwise; a role
   the evidence gives to someone else): ``contradicted``, *before* support is weighed
   (a stacked probability below the threshold does not outvote it);
6. a detail that the evidence about the claim never states (``scores["missing_detail"]``
   reaching ``missing_detail_at``: a number whose slot no evidence fills, a name absent
   from evidence that names the subject): ``not_supported``;
7. a clear match (a member matched every number of the claim, each counting something,
   in its slot in a sentence about the claim: ``scores["match"]``) that no member reading
   for conflicts (one reporting a ``contradiction`` score) voted against: ``supported``,
   whatever the stacked probability and the abstentions;
8. an undecided panel (more than ``max_abstain_share`` of the members abstained, unless
   at least ``unanimous_members`` voted, every one of them "supported", with the stacked
   probability below the threshold too; or the stacked probability within
   ``undecided_band`` of the threshold): ``unknown``;
9. supported by current evidence (p < threshold): ``supported``; else rule 4, else
   ``contradicted`` when the contradiction signal reaches ``contradiction_at``, else
   ``not_supported``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

from auditor.relevance import SubjectCoverage, any_relevant
from auditor.types import (
    ABSTAIN,
    CONFLICT,
    CONTRADICTION,
    MATCH,
    MISSING_DETAIL,
    Label,
    Vote,
)


@dataclass(frozen=True)
class LabelPolicy:
    """Thresholds of the labelling step (recorded with every run)."""

    threshold: float = 0.5
    min_relevance: float = 0.35
    strong_relevance: float = 0.6
    min_coverage: float = 0.5
    undecided_band: float = 0.0
    max_abstain_share: float = 0.5
    contradiction_at: float = 0.5
    subject_relevance: float = 0.45
    """Evidence that names the claim's subject (:func:`subject_in_evidence`) is relevant
    from this cosine on, however few of the claim's other words it holds: an invented
    detail about a covered subject is ``not_supported``, not ``unknown``."""
    missing_detail_at: float = 0.5
    """A detail the evidence about the claim never states (a number in its slot, a name:
    ``scores["missing_detail"]`` of a non-abstaining judge at least this high) makes the
    claim ``not_supported`` even when the stacked probability says supported or the panel
    is undecided; a value above 1 switches the rule off."""
    unanimous_members: int = 3
    """An undecided panel (more than ``max_abstain_share`` abstained) is still ``supported``
    when at least this many members voted, every one of them "supported", and the stacked
    probability is below the threshold ("the chief executive is Dr Miriam Osei": the
    reader, the name judge and the content-word judge all find it, five lexical members
    have no opinion). Never the other way: a few "hallucinated" votes beside many
    abstentions stay ``unknown``."""
    stale_margin: float = 0.05
    """A claim supported by a superseded version that is this much closer (cosine) to it
    than to the current version of the same document is ``stale`` even when the panel
    finds the current version supporting (the update changed what the claim states)."""
    label_model: str | None = "default"
    """The learned label decision (:mod:`auditor.label_model`) that labels factual claims
    with the rules below as one of its inputs: ``"default"`` for the shipped model
    (``auditor/samples/label_model.json``), a path to one, or None for the rules alone.
    With a model, every factual claim with evidence is judged (the model, not the
    relevance rule, tells ``unknown`` from ``not_supported``)."""

    def __post_init__(self) -> None:
        for name in (
            "threshold",
            "min_relevance",
            "contradiction_at",
            "max_abstain_share",
            "strong_relevance",
            "min_coverage",
            "subject_relevance",
        ):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name}: must be in [0, 1], got {value}")
        if not 0.0 < self.missing_detail_at <= 2.0:
            raise ValueError(f"missing_detail_at: must be in (0, 2], got {self.missing_detail_at}")
        if not 0.0 < self.stale_margin <= 2.0:
            raise ValueError(f"stale_margin: must be in (0, 2], got {self.stale_margin}")
        if self.unanimous_members < 1:
            raise ValueError(f"unanimous_members: must be at least 1, got {self.unanimous_members}")
        if self.label_model is not None and (
            not isinstance(self.label_model, str) or not self.label_model.strip()
        ):
            raise ValueError(f"label_model: a path or 'default', got {self.label_model!r}")
        if not 0.0 <= self.undecided_band < 0.5:
            raise ValueError(f"undecided_band: must be in [0, 0.5), got {self.undecided_band}")


@dataclass(frozen=True)
class ClaimSignals:
    """What the labelling step knows about one claim."""

    factual: bool
    relevance: float | None
    """Best relevance (cosine) of any current evidence; None when there is none."""
    p_current: float | None
    """Stacked P(hallucinated) against current evidence; None when not judged."""
    votes: Sequence[Vote] = ()
    stale_relevance: float | None = None
    p_superseded: float | None = None
    """Stacked P(hallucinated) against superseded evidence only; None when there is none."""
    superseded_votes: Sequence[Vote] = ()
    """Panel votes against superseded evidence: a clear conflict there means no superseded
    version supports the claim, whatever ``p_superseded`` says."""
    superseded_valid_at_claim_time: bool = False
    """The claim states its own time and a superseded version was valid then."""
    states_time: bool = False
    """The claim states its own time (:func:`auditor.text.stated_period`): its years are
    its period."""
    current_scores: Sequence[tuple[float, float]] = ()
    """(cosine, content-word coverage of the claim) per current evidence chunk; when empty,
    ``relevance`` alone decides relevance (coverage taken as complete)."""
    superseded_scores: Sequence[tuple[float, float]] = ()
    """The same for superseded evidence (else ``stale_relevance`` alone)."""
    superseded_margin: float | None = None
    """Cosine of the claim to a superseded version minus to the current version of the same
    document (the largest over documents with both); None when no document has both."""
    subject_covered: bool = False
    """The current evidence names the claim's subject (:func:`subject_in_evidence`)."""
    role_stated: bool = False
    """The current evidence gives a role the claim names a holder for, about the same
    thing, to someone (:func:`role_in_evidence`)."""
    topic_unnamed: bool = False
    """The claim names nothing itself (it has a topic, :attr:`auditor.types.Claim.topic`)
    and no evidence names that topic, nor is any of it the answer's own context: what was
    retrieved is about other things ("Tickets cost £9" in an answer about a cinema the
    documents never mention, against a festival's "Tickets cost £15")."""


def _decided(votes: Sequence[Vote]) -> list[Vote]:
    """The votes that decided: not abstentions, not failures."""
    return [v for v in votes if v.value != ABSTAIN and v.error is None]


def contradiction_signal(votes: Sequence[Vote]) -> float:
    """The strongest contradiction score among non-abstaining votes (0 when none)."""
    return max((float(v.scores.get(CONTRADICTION, 0.0)) for v in _decided(votes)), default=0.0)


def _flagged(votes: Sequence[Vote], key: str, at: float) -> list[str]:
    return sorted(v.judge for v in _decided(votes) if float(v.scores.get(key, 0.0)) >= at)


def clear_conflicts(votes: Sequence[Vote], policy: LabelPolicy | None = None) -> list[str]:
    """Judges that found a clear conflict (``scores["conflict"]``): a number, date or name
    in the same slot about the same subject that the best-matching evidence sentence (the
    answer's own context included) states otherwise, e.g. "a two-hour course" against
    "a one-hour session", or a role the evidence gives to someone else."""
    policy = policy or LabelPolicy()
    return _flagged(votes, CONFLICT, policy.contradiction_at)


def missing_details(votes: Sequence[Vote], policy: LabelPolicy | None = None) -> list[str]:
    """Judges that found a detail of the claim (a number in its slot, a name) that the
    evidence about the claim never states (``scores["missing_detail"]``)."""
    policy = policy or LabelPolicy()
    return _flagged(votes, MISSING_DETAIL, policy.missing_detail_at)


def subject_in_evidence(claim: str, evidence: Sequence[str]) -> bool:
    """True when one evidence text names the claim's subject (the tokens of its first name:
    "The Kestrel Bridge was designed by ..." -> "Kestrel Bridge"); see
    :attr:`ClaimSignals.subject_covered`."""
    from auditor.text import subject_in_evidence as covered

    return covered(claim, evidence)


def role_in_evidence(claim: str, evidence: Sequence[str]) -> bool:
    """True when the evidence says who holds a role the claim names a holder for, about
    the same thing ("The school's head is David Lowe" against "The headteacher is Joanna
    Kemp" in the school's page); see :attr:`ClaimSignals.role_stated`."""
    from auditor.text import role_stated

    return role_stated(claim, evidence)


def _relevant(
    best: float | None,
    scores: Sequence[tuple[float, float]],
    policy: LabelPolicy,
    subject: bool = False,
    role: bool = False,
) -> bool:
    """Rule 2 for one kind of evidence: :func:`auditor.relevance.any_relevant`."""
    return any_relevant(best, scores, policy, SubjectCoverage(subject, role))


def _coverage(scores: Sequence[tuple[float, float]]) -> float:
    """The largest share of the claim's content words one evidence text holds (1.0 when no
    shares were measured, so the cosine margin alone decides)."""
    return max((cov for _, cov in scores), default=1.0)


def _unanimous_support(votes: Sequence[Vote], p: float, policy: LabelPolicy) -> bool:
    """At least ``unanimous_members`` members voted, every one of them supported, and
    ``p`` is below the threshold too. Only support is decided this way: members that
    abstain mostly find nothing about the claim, and a few lexical members voting
    "hallucinated" beside them is what unrelated evidence of the same shape looks like."""
    decided = [v.value for v in _decided(votes)]
    return (
        len(decided) >= policy.unanimous_members
        and all(value < 0.5 for value in decided)
        and p < policy.threshold
    )


def _matched_support(votes: Sequence[Vote], policy: LabelPolicy) -> bool:
    """A member matched every number of the claim in its slot (``scores["match"]``), and no
    member that reads for conflicts (one reporting a ``contradiction`` score: the slot
    judges, the reader) voted against it or reached ``contradiction_at``, abstaining or
    not. The lexical members' dissent is left aside, as for a unanimous minority: beside a
    clear match it is what a paraphrase ("can hold 18,400 fans" against "holds 18,400
    spectators") looks like."""
    readers = [v for v in votes if v.error is None and CONTRADICTION in v.scores]
    return any(v.scores.get(MATCH, 0.0) >= 1.0 for v in _decided(votes)) and not any(
        v.value > 0.5 or v.scores[CONTRADICTION] >= policy.contradiction_at for v in readers
    )


def has_relevant_evidence(signals: ClaimSignals, policy: LabelPolicy | None = None) -> bool:
    """True when any current or superseded evidence is relevant to the claim (rule 2): a
    claim without it is ``unknown`` whatever the panel says, so it is not judged."""
    policy = policy or LabelPolicy()
    if signals.topic_unnamed:
        return False
    return _relevant(
        signals.relevance,
        signals.current_scores,
        policy,
        signals.subject_covered,
        signals.role_stated,
    ) or _relevant(signals.stale_relevance, signals.superseded_scores, policy)


@dataclass
class _Facts:
    """What the label rules read of one claim, each computed once and only when a rule
    asks (later rules may rely on what earlier ones ruled out: past rule ``not_judged``,
    ``p`` is set)."""

    signals: ClaimSignals
    policy: LabelPolicy

    @cached_property
    def current_ok(self) -> bool:
        s = self.signals
        return _relevant(
            s.relevance, s.current_scores, self.policy, s.subject_covered, s.role_stated
        )

    @cached_property
    def stale_ok(self) -> bool:
        s = self.signals
        return _relevant(s.stale_relevance, s.superseded_scores, self.policy)

    @property
    def past(self) -> bool:
        return self.signals.superseded_valid_at_claim_time

    @cached_property
    def stale_support(self) -> bool:
        """A superseded version supports the claim: stacked p below the threshold or a
        clear match there, and (unless the claim states its own time) no clear conflict
        in the votes against it."""
        s, policy = self.signals, self.policy
        return (
            self.stale_ok
            and s.p_superseded is not None
            and (s.p_superseded < policy.threshold or _matched_support(s.superseded_votes, policy))
            and (s.states_time or not clear_conflicts(s.superseded_votes, policy))
        )

    @property
    def p(self) -> float:
        assert self.signals.p_current is not None, "rule not_judged comes first"
        return self.signals.p_current

    @property
    def p_old(self) -> float:
        assert self.signals.p_superseded is not None, "read only where stale_support holds"
        return self.signals.p_superseded

    @cached_property
    def conflicts(self) -> list[str]:
        return clear_conflicts(self.signals.votes, self.policy)

    @cached_property
    def missing(self) -> list[str]:
        return missing_details(self.signals.votes, self.policy)

    @cached_property
    def abstained(self) -> int:
        return sum(v.value == ABSTAIN for v in self.signals.votes)


Verdict = tuple[Label, str]


@dataclass(frozen=True)
class LabelRule:
    """One rule of the label decision: a name, what it says (its reason, for the docs
    and ``auditor`` output), and the test that returns a label and a one-line reason
    when the rule applies to a claim (None: the next rule decides)."""

    name: str
    says: str
    applies: Callable[[_Facts], Verdict | None]


def _not_factual(f: _Facts) -> Verdict | None:
    return None if f.signals.factual else (Label.NOT_FACTUAL, "not a factual claim")


def _topic_unnamed(f: _Facts) -> Verdict | None:
    if not f.signals.topic_unnamed:
        return None
    return Label.UNKNOWN, (
        "no relevant evidence: none names what the claim is about (its answer's topic)"
    )


def _no_relevant_evidence(f: _Facts) -> Verdict | None:
    if f.current_ok or f.stale_ok:
        return None
    s, policy = f.signals, f.policy
    best = max((r for r in (s.relevance, s.stale_relevance) if r is not None), default=None)
    shown = "none" if best is None else f"{best:.2f}"
    return Label.UNKNOWN, (
        f"no relevant evidence (best cosine {shown}; needs "
        f">= {policy.min_relevance:.2f} with {policy.min_coverage:.0%} "
        f"of the claim's content words, or >= "
        f"{policy.strong_relevance:.2f})"
    )


def _only_superseded_relevant(f: _Facts) -> Verdict | None:
    if f.current_ok:
        return None
    if f.stale_support and f.past:
        return Label.SUPPORTED, "supported by the version valid at the time the claim states"
    if f.stale_support:
        return Label.STALE, "supported only by superseded evidence"
    return Label.UNKNOWN, "no relevant current evidence"


def _not_judged(f: _Facts) -> Verdict | None:
    if f.signals.p_current is None or not f.signals.votes:
        return Label.UNKNOWN, "not judged"
    return None


def _old_version_contradicted(f: _Facts) -> Verdict | None:
    if not (f.stale_support and f.conflicts):
        return None
    if f.past:
        return Label.SUPPORTED, (
            f"supported by the version valid at the time the claim "
            f"states (p={f.p_old:.2f}); the current "
            f"version states otherwise"
        )
    return Label.STALE, (
        f"supported by a superseded version (p={f.p_old:.2f}) "
        f"that the current version contradicts ({', '.join(f.conflicts)})"
    )


def _closer_to_old(f: _Facts) -> Verdict | None:
    s, policy, p = f.signals, f.policy, f.p
    # a current version holding every content word of the claim, judged supporting by
    # every member that decided, still states it ("Loganair still flies to Aberdeen"),
    # however close the old one
    current_states_it = (
        p < policy.threshold
        and any(cov >= 1.0 for _, cov in s.current_scores)
        and all(v.value == 0.0 for v in _decided(s.votes))
    )
    closer = (
        f.stale_support
        and not current_states_it
        and s.superseded_margin is not None
        and s.superseded_margin >= policy.stale_margin
        and s.p_superseded is not None
        and (
            s.p_superseded < p
            or (
                s.p_superseded == p and _coverage(s.current_scores) < _coverage(s.superseded_scores)
            )
        )
    )
    if not closer or f.past:
        return None
    assert s.superseded_margin is not None
    return Label.STALE, (
        f"matches a superseded version better than its current version "
        f"(cosine +{s.superseded_margin:.2f}, "
        f"p={f.p_old:.2f}; current p={p:.2f})"
    )


def _clear_conflict(f: _Facts) -> Verdict | None:
    if not f.conflicts:
        return None
    return Label.CONTRADICTED, (
        f"contradicted by current evidence: a clear conflict in "
        f"the same slot (p={f.p:.2f}; from {', '.join(f.conflicts)})"
    )


def _no_longer_stated(f: _Facts) -> Verdict | None:
    # "no longer states it" needs the old version to have stated it ("Around 35
    # stallholders" against "Around 35 stalls" in both versions is no update)
    if not (
        f.missing and f.stale_support and not missing_details(f.signals.superseded_votes, f.policy)
    ):
        return None
    if f.past:
        return Label.SUPPORTED, (
            f"supported by the version valid at the time the claim states (p={f.p_old:.2f})"
        )
    return Label.STALE, (
        f"supported by a superseded version (p={f.p_old:.2f})"
        f"; the current version no longer states it "
        f"({', '.join(f.missing)})"
    )


def _missing_detail(f: _Facts) -> Verdict | None:
    if not f.missing:
        return None
    return Label.NOT_SUPPORTED, (
        f"the evidence about the claim never states its detail "
        f"(p={f.p:.2f}; from {', '.join(f.missing)})"
    )


def _clear_match(f: _Facts) -> Verdict | None:
    if not _matched_support(f.signals.votes, f.policy):
        return None
    return Label.SUPPORTED, (
        f"every number of the claim stated in its slot by the evidence about it, "
        f"no member reading a conflict (p={f.p:.2f}; {f.abstained} of "
        f"{len(f.signals.votes)} members abstained)"
    )


def _undecided(f: _Facts) -> Verdict | None:
    s, policy, p = f.signals, f.policy, f.p
    if f.abstained > policy.max_abstain_share * len(s.votes) and not _unanimous_support(
        s.votes, p, policy
    ):
        return Label.UNKNOWN, f"panel undecided: {f.abstained} of {len(s.votes)} members abstained"
    if p == policy.threshold:  # e.g. a non-admissible stacker's fallback member abstained
        return Label.UNKNOWN, f"panel undecided: p={p:.2f} is at the threshold"
    if abs(p - policy.threshold) < policy.undecided_band:
        return Label.UNKNOWN, f"panel undecided: p={p:.2f}"
    return None


def _supported(f: _Facts) -> Verdict | None:
    if f.p < f.policy.threshold:
        return Label.SUPPORTED, f"supported by current evidence (p={f.p:.2f})"
    return None


def _superseded_support(f: _Facts) -> Verdict | None:
    if not f.stale_support:
        return None
    if f.past:
        return Label.SUPPORTED, (
            f"supported by the version valid at the time the claim states "
            f"(p={f.p_old:.2f}; current p={f.p:.2f})"
        )
    return Label.STALE, (
        f"not supported by current evidence (p={f.p:.2f}) but supported by "
        f"a superseded version (p={f.p_old:.2f})"
    )


def _contradiction_signal(f: _Facts) -> Verdict | None:
    contradiction = contradiction_signal(f.signals.votes)
    if contradiction < f.policy.contradiction_at:
        return None
    fired = _flagged(f.signals.votes, CONTRADICTION, f.policy.contradiction_at)
    return Label.CONTRADICTED, (
        f"contradicted by current evidence (p={f.p:.2f}; "
        f"contradiction {contradiction:.2f} from {', '.join(fired)})"
    )


def _not_supported(f: _Facts) -> Verdict | None:
    return Label.NOT_SUPPORTED, f"not supported by current evidence (p={f.p:.2f})"


LABEL_RULES: tuple[LabelRule, ...] = (
    LabelRule("not_factual", "a claim that states no checkable fact is not_factual", _not_factual),
    LabelRule(
        "topic_unnamed",
        "a claim that names nothing, whose answer's topic no evidence names, is unknown",
        _topic_unnamed,
    ),
    LabelRule(
        "no_relevant_evidence",
        "no current or superseded evidence relevant by the one relevance rule: unknown",
        _no_relevant_evidence,
    ),
    LabelRule(
        "only_superseded_relevant",
        "only superseded evidence is relevant: stale when it supports the claim (supported "
        "when the claim states its own time and that version was valid then), else unknown",
        _only_superseded_relevant,
    ),
    LabelRule("not_judged", "relevant evidence but no stacked vote: unknown", _not_judged),
    LabelRule(
        "old_version_contradicted",
        "a superseded version supports the claim and the current one states otherwise in "
        "the same slot: stale (supported for a claim about that version's time)",
        _old_version_contradicted,
    ),
    LabelRule(
        "closer_to_old",
        "the claim matches a superseded version clearly better than the current one of the "
        "same document (cosine margin stale_margin, lower stacked p): stale",
        _closer_to_old,
    ),
    LabelRule(
        "clear_conflict",
        "a judge found a number, date, name or role in the same slot stated otherwise: "
        "contradicted, before support is weighed",
        _clear_conflict,
    ),
    LabelRule(
        "no_longer_stated",
        "a detail the current evidence never states but a superseded version did: stale",
        _no_longer_stated,
    ),
    LabelRule(
        "missing_detail",
        "a detail of the claim the evidence about it never states: not_supported",
        _missing_detail,
    ),
    LabelRule(
        "clear_match",
        "every number of the claim matched in its slot, no member reading a conflict: "
        "supported, whatever the stacked p and abstentions",
        _clear_match,
    ),
    LabelRule(
        "undecided",
        "most members abstained (unless a unanimous minority supports it), or the stacked "
        "p sits at the threshold or within undecided_band of it: unknown",
        _undecided,
    ),
    LabelRule("supported", "stacked p below the threshold: supported", _supported),
    LabelRule(
        "superseded_support",
        "not supported by current evidence but by a superseded version: stale (supported "
        "for a claim about that version's time)",
        _superseded_support,
    ),
    LabelRule(
        "contradiction_signal",
        "a member's contradiction score reaches contradiction_at: contradicted",
        _contradiction_signal,
    ),
    LabelRule("not_supported", "anything else: not_supported", _not_supported),
)
"""The label rules, in the order they are tried (the module docstring numbers them as
docs/labels.md does); the first that applies decides."""


def deciding_rule(
    signals: ClaimSignals, policy: LabelPolicy | None = None
) -> tuple[LabelRule, Verdict]:
    """The first of :data:`LABEL_RULES` that applies to a claim, with its label and
    one-line reason."""
    facts = _Facts(signals, policy or LabelPolicy())
    for rule in LABEL_RULES:
        decided = rule.applies(facts)
        if decided is not None:
            return rule, decided
    raise AssertionError("the last rule always applies")


def decide_label(signals: ClaimSignals, policy: LabelPolicy | None = None) -> Verdict:
    """The label of one claim and a one-line reason (:func:`deciding_rule`)."""
    return deciding_rule(signals, policy)[1]
