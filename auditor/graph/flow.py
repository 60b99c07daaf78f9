"""The audit graph: thin LangGraph nodes over :mod:`auditor.steps`, with real routing.

::

    extract -> retrieve -> judge -> stack -> [second_opinion] -> label -> localize -> write
       |          |                                  ^            ^
       +----------+------ nothing to judge ----------+------------+

- non-factual claims skip retrieval and judging (``label`` makes them ``not_factual``);
- claims with no relevant evidence skip judging (``label`` makes them ``unknown``);
- claims the stack leaves uncertain (probability within ``second_opinion_band`` of the
  threshold) go to the second-opinion judge when one is configured.

Each node works on the claims its route selects and returns the updated records.
A re-judge enters at ``judge`` with stored claims and evidence (``entry="judge"``),
so it labels through exactly the same nodes as the original run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from auditor.config import AuditConfig
from auditor.errors import ConfigError
from auditor.evidence import SearchFn, gather_evidence
from auditor.extract.base import Extraction, Extractor
from auditor.judges.base import Judge
from auditor.judges.panel import Panel
from auditor.stacking.model import Stacker
from auditor.steps import (
    ClaimAudit,
    KnownVotes,
    is_uncertain,
    judge_audits,
    label_audits,
    localize_audits,
    needs_judging,
    second_opinions,
    stack_audits,
)
from auditor.types import Answer

if TYPE_CHECKING:
    from auditor.spans.reader import Localizer


@dataclass(frozen=True)
class AuditComponents:
    """Everything the graph needs; built once per run."""

    extractor: Extractor
    search: SearchFn
    panel: Panel
    stacker: Stacker
    config: AuditConfig
    second_opinion: Judge | None = None
    localizer: Localizer | None = None
    """Error spans of contradicted / not_supported claims. With ``config.localizer ==
    "reader"`` and None given, the default :class:`~auditor.spans.reader.ReaderLocalizer`
    on the panel's entailment weights (``config.reader_calls`` calls per claim at most);
    with ``"lexical"`` it must stay None."""
    known_votes: KnownVotes | None = None
    """Votes already cast on the claims (a re-judge of stored evidence): the judge step
    does not cast them again."""

    def __post_init__(self) -> None:
        if self.config.localizer == "lexical":
            if self.localizer is not None:
                raise ConfigError(
                    "localizer: a localiser was given but the configuration says "
                    "localizer='lexical'"
                )
        elif self.localizer is None:
            object.__setattr__(self, "localizer", default_localizer(self.config, self.panel))


def panel_weights(panel: Panel) -> str | None:
    """The weights folder of the panel's ``entailment`` member (None: the shipped ones)."""
    return panel_reader(panel)[0]


def panel_reader(panel: Panel) -> tuple[str | None, bool, str]:
    """The weights folder (None: the shipped ones), int8-or-not and precision (as
    configured, ``auto`` unresolved) of the panel's ``entailment`` member; the judge's
    defaults when it has none."""
    from auditor.entailment.model import QUANTIZE_BY_DEFAULT
    from auditor.precision import DEFAULT_PRECISION

    for member in panel.members:
        if member.name == "entailment":
            weights = getattr(member, "weights", None)
            return (
                (str(weights) if weights else None),
                getattr(member, "quantize", QUANTIZE_BY_DEFAULT),
                getattr(member, "precision", DEFAULT_PRECISION),
            )
    return None, QUANTIZE_BY_DEFAULT, DEFAULT_PRECISION


def default_localizer(config: AuditConfig, panel: Panel) -> Localizer:
    """The reader localiser of an audit: the panel's entailment reader (weights,
    quantisation and precision; the judge's defaults when it has no entailment member),
    ``config.reader_calls`` calls per claim at most."""
    from auditor.spans.reader import ReaderLocalizer

    weights, quantize, precision = panel_reader(panel)
    return ReaderLocalizer(
        weights_dir=weights,
        max_calls=config.reader_calls,
        quantize=quantize,
        precision=precision,
    )


class AuditState(TypedDict, total=False):
    """The graph's state for one batch of answers (``extractions`` may be given with the
    answers: the ``extract`` node then uses them instead of extracting again)."""

    answers: list[Answer]
    extractions: list[Extraction]
    audits: list[ClaimAudit]
    written: list[str]


Writer = Callable[[AuditState], list[str]]
Node = Literal[
    "extract", "retrieve", "judge", "stack", "second_opinion", "label", "localize", "write"
]


def _answers(state: AuditState) -> dict[str, Answer]:
    return {a.id: a for a in state["answers"]}


def _apply(
    audits: Sequence[ClaimAudit],
    chosen: Sequence[int],
    step: Callable[[list[ClaimAudit]], list[ClaimAudit]],
) -> list[ClaimAudit]:
    """``audits`` with ``step`` applied to the chosen positions only."""
    out = list(audits)
    for i, updated in zip(chosen, step([audits[i] for i in chosen]), strict=True):
        out[i] = updated
    return out


def build_audit_graph(
    components: AuditComponents,
    writer: Writer | None = None,
    *,
    entry: Literal["extract", "judge"] = "extract",
) -> CompiledStateGraph[AuditState, None, AuditState, AuditState]:
    """Compile the audit graph; ``writer`` persists a finished batch (the ledger node).

    ``entry="judge"`` starts from ``audits`` that already carry claims and evidence.
    """
    c = components
    policy = c.config.policy

    def to_judge(state: AuditState) -> list[int]:
        return [i for i, a in enumerate(state["audits"]) if needs_judging(a, policy)]

    def uncertain(state: AuditState) -> list[int]:
        return [
            i
            for i, a in enumerate(state["audits"])
            if is_uncertain(a, policy, c.config.second_opinion_band)
        ]

    def extract(state: AuditState) -> AuditState:
        if "extractions" in state:  # extracted ahead by the caller (execute_audit)
            extractions = state["extractions"]
            if [e.answer_id for e in extractions] != [a.id for a in state["answers"]]:
                raise ValueError("extractions given to the audit graph do not match its answers")
        else:
            extractions = c.extractor.extract_detailed(state["answers"])
        return {
            "extractions": extractions,
            "audits": [ClaimAudit(claim) for e in extractions for claim in e.claims],
        }

    def after_extract(state: AuditState) -> Node:
        return "retrieve" if any(a.claim.factual for a in state["audits"]) else "label"

    def retrieve(state: AuditState) -> AuditState:
        audits = state["audits"]
        evidence = gather_evidence(
            [a.claim for a in audits],
            _answers(state),
            c.search,
            default_as_of=c.config.as_of,
            k=c.config.k,
            n_current=c.config.n_current,
            n_superseded=c.config.n_superseded,
        )
        return {"audits": [ClaimAudit(a.claim, e) for a, e in zip(audits, evidence, strict=True)]}

    def after_retrieve(state: AuditState) -> Node:
        return "judge" if to_judge(state) else "label"

    def judge(state: AuditState) -> AuditState:
        answers = _answers(state)
        return {
            "audits": _apply(
                state["audits"],
                to_judge(state),
                lambda chosen: judge_audits(chosen, answers, c.panel, c.known_votes),
            )
        }

    def stack(state: AuditState) -> AuditState:
        return {"audits": stack_audits(state["audits"], c.stacker, c.panel.member_names)}

    def after_stack(state: AuditState) -> Node:
        return "second_opinion" if c.second_opinion and uncertain(state) else "label"

    def second_opinion(state: AuditState) -> AuditState:
        assert c.second_opinion is not None
        judge_ = c.second_opinion
        answers = _answers(state)
        return {
            "audits": _apply(
                state["audits"],
                uncertain(state),
                lambda chosen: second_opinions(chosen, answers, judge_),
            )
        }

    def label(state: AuditState) -> AuditState:
        return {"audits": label_audits(state["audits"], policy)}

    def localize(state: AuditState) -> AuditState:
        return {"audits": localize_audits(state["audits"], _answers(state), c.localizer)}

    def write(state: AuditState) -> AuditState:
        return {"written": writer(state) if writer is not None else []}

    builder = StateGraph(AuditState)
    for name, fn in (
        ("extract", extract),
        ("retrieve", retrieve),
        ("judge", judge),
        ("stack", stack),
        ("second_opinion", second_opinion),
        ("label", label),
        ("localize", localize),
        ("write", write),
    ):
        builder.add_node(name, fn)
    if entry == "extract":
        builder.add_edge(START, "extract")
        builder.add_conditional_edges("extract", after_extract, ["retrieve", "label"])
        builder.add_conditional_edges("retrieve", after_retrieve, ["judge", "label"])
    else:
        builder.add_conditional_edges(START, after_retrieve, ["judge", "label"])
    builder.add_edge("judge", "stack")
    builder.add_conditional_edges("stack", after_stack, ["second_opinion", "label"])
    builder.add_edge("second_opinion", "label")
    builder.add_edge("label", "localize")
    builder.add_edge("localize", "write")
    builder.add_edge("write", END)
    return builder.compile()
