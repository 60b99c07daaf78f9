"""Features of a score stacker: what the judges know, not only how they voted.

Per member, in member order: ``member:vote`` (0, 0.5 or 1), ``member:abstain`` (1 when
the member abstained or failed) and one ``member:<score>`` column per named score the
member reports (``support``, ``contradiction``, ``conflict``, ``missing_detail``,
``entailment``, ``neutral``, ...). A score is 0 where the member abstained, failed or did
not report it, so the abstention indicator carries the "no information" case and the
score columns stay comparable. Scores are clipped to [-10, 10].
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from auditor.types import ABSTAIN, Vote

CLIP = 10.0


def feature_names(
    scores: Sequence[Sequence[Mapping[str, float]]], members: Sequence[str]
) -> tuple[str, ...]:
    """The feature names for ``members`` given per-item, per-member scores: the vote and
    abstention columns of every member, then every score name some item reports."""
    keys: list[set[str]] = [set() for _ in members]
    for row in scores:
        if len(row) != len(members):
            raise ValueError(f"scores: expected {len(members)} members per item, got {len(row)}")
        for j, named in enumerate(row):
            keys[j].update(k for k, v in named.items() if _finite(v))
    names: list[str] = []
    for member, found in zip(members, keys, strict=True):
        names += [f"{member}:vote", f"{member}:abstain"]
        names += [f"{member}:{key}" for key in sorted(found)]
    return tuple(names)


def features_from_outputs(
    votes: ArrayLike,
    scores: Sequence[Sequence[Mapping[str, float]]],
    members: Sequence[str],
    features: Sequence[str],
) -> NDArray[np.float64]:
    """The ``(n, len(features))`` matrix from a vote matrix and per-item member scores.

    Raises ValueError when a feature names a member outside ``members`` or the shapes
    disagree."""
    matrix = np.asarray(votes, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[1] != len(members):
        raise ValueError(f"votes: expected shape (n, {len(members)}), got {matrix.shape}")
    if len(scores) != matrix.shape[0]:
        raise ValueError(f"scores: expected {matrix.shape[0]} items, got {len(scores)}")
    column = {m: j for j, m in enumerate(members)}
    parsed = []
    for name in features:
        member, _, key = name.partition(":")
        if member not in column or not key:
            raise ValueError(f"features: {name!r} does not name a member and a score")
        parsed.append((column[member], key))
    out = np.zeros((matrix.shape[0], len(parsed)))
    for i, row in enumerate(scores):
        for f, (j, key) in enumerate(parsed):
            vote = matrix[i, j]
            abstained = vote == ABSTAIN
            if key == "vote":
                out[i, f] = vote
            elif key == "abstain":
                out[i, f] = float(abstained)
            elif not abstained:
                value = row[j].get(key) if j < len(row) else None
                if value is not None and _finite(value):
                    out[i, f] = min(max(float(value), -CLIP), CLIP)
    return out


def score_features(
    rows: Sequence[Sequence[Vote]], members: Sequence[str], features: Sequence[str]
) -> NDArray[np.float64]:
    """The feature matrix of panel votes (one row of member votes per claim); a failed
    vote counts as an abstention."""
    votes = np.array(
        [[ABSTAIN if v.error is not None else v.value for v in row] for row in rows],
        dtype=np.float64,
    ).reshape(len(rows), len(members))
    scores = [[{} if v.error is not None else dict(v.scores) for v in row] for row in rows]
    return features_from_outputs(votes, scores, members, features)


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
