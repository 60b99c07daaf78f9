"""Run one registered judge on claim-evidence pairs read from JSONL (``auditor judge``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from auditor.errors import InputError
from auditor.jsonl import read_jsonl, require
from auditor.judges.catalog import build_judge
from auditor.types import JudgePair


def read_judge_pairs(path: str | Path) -> list[tuple[str, JudgePair]]:
    """Read ``{"id", "claim", "evidence": "..." or ["...", ...], "question"?}`` lines;
    errors name the file, line and field; ids must be unique."""
    file = str(path)
    pairs: list[tuple[str, JudgePair]] = []
    seen: dict[str, int] = {}
    for line, record in read_jsonl(path):
        ident = str(require(record, "id", (str, int), file=file, line=line))
        if ident in seen:
            raise InputError(
                f"duplicate id {ident!r} (first on line {seen[ident]})",
                file=file,
                line=line,
                field="id",
            )
        seen[ident] = line
        claim = require(record, "claim", str, file=file, line=line)
        evidence = require(record, "evidence", (str, list), file=file, line=line)
        if isinstance(evidence, str):
            evidence = [evidence]
        if not all(isinstance(e, str) for e in evidence):
            raise InputError(
                "expected a string or a list of strings", file=file, line=line, field="evidence"
            )
        question = require(record, "question", str, file=file, line=line, optional=True)
        pairs.append((ident, JudgePair(claim=claim, evidence=tuple(evidence), question=question)))
    return pairs


def judge_pairs(
    name: str, pairs: list[tuple[str, JudgePair]], params: Mapping[str, Any] | None = None
) -> list[dict[str, Any]]:
    """One output record ``{"id", "vote", "scores", "raw", "error"}`` per input pair, in order."""
    judge = build_judge(name, params)
    votes = judge.judge_sync([pair for _, pair in pairs])
    return [
        {
            "id": ident,
            "vote": vote.value,
            "scores": dict(vote.scores),
            "raw": vote.raw,
            "error": vote.error,
        }
        for (ident, _), vote in zip(pairs, votes, strict=True)
    ]
