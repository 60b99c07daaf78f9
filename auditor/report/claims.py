"""Per-answer claim records (labels, evidence, votes) read back from the ledger."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ledger import Ledger


def claim_records(
    ledger: Ledger, run_id: str, *, answer_ids: Sequence[str] | None = None
) -> list[dict[str, Any]]:
    """One record per answer of a run (or of ``answer_ids`` only):
    ``{"id", "run_id", "claims": [...]}``, in input order.

    Each claim carries its spans, label, stacked probability, reason, error spans,
    evidence (document, version, chunk, digest, offsets) and the votes of the run's own
    judges by name (votes of judges bridged in later by ``rejudge`` are not mixed in).
    """
    own = {
        c["digest"]
        for role, c in ledger.get_run(run_id).components.items()
        if role.startswith("judge:") or role == "second_opinion"
    }
    results = ledger.claim_results(run_id, answer_ids=answer_ids)
    chosen = [c.claim_id for c in results] if answer_ids is not None else None
    evidence = ledger.claim_evidence(run_id, claim_ids=chosen)
    votes = ledger.claim_votes(run_id, claim_ids=chosen)
    answers: dict[str, list[dict[str, Any]]] = {}
    for c in results:
        answers.setdefault(c.answer_id, []).append(
            {
                "id": c.claim_id,
                "text": c.text,
                "spans": [list(s) for s in c.spans],
                "factual": c.factual,
                "kind": c.kind,
                "topic": c.topic,
                "label": c.label,
                "p_hallucinated": c.p_hallucinated,
                "reason": c.reason,
                "error_spans": [list(s) for s in c.error_spans],
                "evidence": [
                    {
                        "doc_id": e["doc_id"],
                        "version": e["version"],
                        "chunk_id": e["chunk_id"],
                        "digest": e["version_digest"],
                        "start": e["start"],
                        "end": e["end"],
                        "superseded": e["superseded"],
                        "inline": e["inline"],
                        "relevance": round(e["score"], 4),
                    }
                    for e in evidence.get(c.claim_id, [])
                ],
                "votes": {
                    v["judge_name"]: v["value"]
                    for v in votes.get(c.claim_id, [])
                    if v["judge_digest"] in own
                },
            }
        )
    return [
        {"id": answer_id, "run_id": run_id, "claims": claims}
        for answer_id, claims in answers.items()
    ]
