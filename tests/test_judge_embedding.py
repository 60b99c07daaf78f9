"""The embedding-similarity judge reads only the evidence sentences that can be the
claim's best match (the real MiniLM encoder; texts reaching it are counted)."""

from __future__ import annotations

from typing import Any

import pytest

from auditor import embedding
from auditor.errors import ConfigError
from auditor.judges.catalog import build_judge
from auditor.types import JudgePair

CLAIM = "The Harbour Line opened its northern branch in 1998."
STATED = "In 1998 the Harbour Line opened a northern branch to the new port."
FILLER = [f"Ward {i} of the hospital network trains nurses every spring." for i in range(40)]


def _encoded(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    real = embedding._run_model

    def counting(texts: list[str], batch_size: int) -> Any:
        seen.extend(texts)
        return real(texts, batch_size)

    monkeypatch.setattr(embedding, "_run_model", counting)
    embedding.clear_cache()
    return seen


def test_only_the_best_covering_sentences_are_encoded(monkeypatch: pytest.MonkeyPatch) -> None:
    evidence = (" ".join([*FILLER[:20], STATED, *FILLER[20:]]),)
    pair = JudgePair(CLAIM, evidence)
    seen = _encoded(monkeypatch)
    few = build_judge("embedding_similarity", {"candidates": 4}).judge_sync([pair])[0]
    assert STATED in seen and len(seen) == 1 + 4  # the claim and four candidates
    seen = _encoded(monkeypatch)
    every = build_judge("embedding_similarity", {"candidates": 0}).judge_sync([pair])[0]
    assert len(seen) == 1 + 41
    # the sentence stating the claim is among the candidates: the same best match
    assert few.value == every.value == 0.0
    assert few.scores["support"] == pytest.approx(every.scores["support"], abs=1e-6)


def test_candidates_change_the_digest_and_must_not_be_negative() -> None:
    assert (
        build_judge("embedding_similarity", {"candidates": 4}).digest
        != build_judge("embedding_similarity").digest
    )
    with pytest.raises(ConfigError, match="candidates"):
        build_judge("embedding_similarity", {"candidates": -1})
