"""The audit graph (DESIGN.md §2):

extract claims -> retrieve evidence -> judge panel -> stack (RAIM) -> label -> localize -> write

Each node reads the state, calls one plain function and returns a partial update.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypedDict, cast

from langgraph.graph import END, START, StateGraph

from auditor.evidence import Evidence, SearchFn, gather_evidence
from auditor.extract.base import Extraction, Extractor
from auditor.judges.panel import Panel
from auditor.labels import LabelPolicy
from auditor.stacking.model import Stacker
from auditor.steps import judge_claims, label_claims, localize_claims, stack_votes
from auditor.types import Answer, Claim, Verdict, Vote


@dataclass(frozen=True)
class AuditComponents:
    """Everything the graph needs; built once per run by the runner."""

    extractor: Extractor
    search: SearchFn
    panel: Panel
    stacker: Stacker
    policy: LabelPolicy
    default_as_of: datetime | None
    k: int = 8


class AuditState(TypedDict, total=False):
    answers: list[Answer]
    extractions: list[Extraction]
    claims: list[Claim]
    evidence: list[Evidence]
    votes: list[list[Vote]]
    stale_votes: list[list[Vote]]
    p_current: list[float | None]
    p_superseded: list[float | None]
    verdicts: list[Verdict]
    written: list[str]


Writer = Callable[[AuditState], list[str]]


def build_audit_graph(components: AuditComponents, writer: Writer | None = None) -> Any:
    """Compile the audit graph; ``writer`` persists a finished batch (the ledger node)."""
    c = components

    def by_id(state: AuditState) -> dict[str, Answer]:
        return {a.id: a for a in state["answers"]}

    def extract(state: AuditState) -> AuditState:
        extractions = c.extractor.extract_detailed(state["answers"])
        return {"extractions": extractions,
                "claims": [claim for e in extractions for claim in e.claims]}

    def retrieve(state: AuditState) -> AuditState:
        return {"evidence": gather_evidence(state["claims"], by_id(state), c.search,
                                            default_as_of=c.default_as_of, k=c.k)}

    def judge(state: AuditState) -> AuditState:
        votes, stale_votes = judge_claims(state["claims"], by_id(state), state["evidence"],
                                          c.panel)
        return {"votes": votes, "stale_votes": stale_votes}

    def stack(state: AuditState) -> AuditState:
        members = c.panel.member_names
        return {"p_current": stack_votes(state["votes"], c.stacker, members),
                "p_superseded": stack_votes(state["stale_votes"], c.stacker, members)}

    def label(state: AuditState) -> AuditState:
        return {"verdicts": label_claims(state["claims"], state["evidence"], state["votes"],
                                         state["p_current"], state["p_superseded"], c.policy)}

    def localize(state: AuditState) -> AuditState:
        return {"verdicts": localize_claims(state["claims"], by_id(state), state["evidence"],
                                            state["verdicts"])}

    def write(state: AuditState) -> AuditState:
        return {"written": writer(state) if writer is not None else []}

    builder = StateGraph(AuditState)
    steps: list[tuple[str, Callable[[AuditState], AuditState]]] = [
        ("extract", extract), ("retrieve", retrieve), ("judge", judge), ("stack", stack),
        ("label", label), ("localize", localize), ("write", write)]
    previous = START
    for name, fn in steps:
        builder.add_node(name, cast(Any, fn))
        builder.add_edge(previous, name)
        previous = name
    builder.add_edge(previous, END)
    return builder.compile()
