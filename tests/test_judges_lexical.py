"""The model-free local judges added for the panel: entity, BM25 alignment, bigram overlap;
and the default panel / shipped stacker pairing."""

from __future__ import annotations

import json

import pytest

from auditor.judges.bm25_alignment import bm25_ratio
from auditor.judges.catalog import build_judge, registered_judges
from auditor.judges.panel import load_panel
from auditor.stacking.model import load_stacker
from auditor.text import entities
from auditor.types import ABSTAIN, JudgePair

EVIDENCE = (
    "Marie Curie won the Nobel Prize in Physics in 1903 together with Pierre Curie. "
    "She later moved to Warsaw to found a laboratory.",
)


def vote(judge: str, claim: str, evidence: tuple[str, ...] = EVIDENCE) -> tuple[float, dict]:
    v = build_judge(judge).judge_sync([JudgePair(claim, evidence)])[0]
    json.loads(v.raw)  # raw output is JSON
    return v.value, dict(v.scores)


def test_entities_ignore_sentence_initial_stop_words_and_months() -> None:
    found = entities("The United Nations met in New York in March. In Paris, Macron spoke.")
    assert {"united", "nations", "new", "york", "paris", "macron"} <= found
    assert not {"the", "in", "march"} & found


def test_entity_consistency() -> None:
    assert vote("entity_consistency", "Marie Curie won the Nobel Prize.")[0] == 0.0
    value, scores = vote("entity_consistency", "Albert Einstein won the Nobel Prize in Oslo.")
    assert value == 1.0 and scores["contradiction"] == 1.0
    assert vote("entity_consistency", "she won a prize in physics.")[0] == ABSTAIN
    assert vote("entity_consistency", "Marie Curie won.", ())[0] == ABSTAIN


def test_a_missing_name_is_not_a_contradiction() -> None:
    cloud = (
        "Lumen Cloud, the managed service run by the foundation's commercial partner "
        "Brightside Data, is available in eleven regions. It launched in 2022.",
    )
    # the evidence never mentions HIPAA: missing support, the vote stays 1, no refutation
    value, scores = vote(
        "entity_consistency", "Lumen Cloud is certified for HIPAA workloads in every region.", cloud
    )
    assert value == 1.0 and scores["contradiction"] == 0.0
    # a name of the same kind in the same slot of the sentence about the same thing refutes
    value, scores = vote("entity_consistency", "Pierre Curie won the Nobel Prize in Physics.")
    assert scores["contradiction"] == 0.0  # Pierre Curie is in the evidence: supported
    value, scores = vote("entity_consistency", "Irene Joliot won the Nobel Prize in Physics.")
    assert value == 1.0 and scores["contradiction"] == 1.0
    # a different kind (acronym vs. name) in that slot does not
    value, scores = vote("entity_consistency", "NASA won the Nobel Prize.")
    assert value == 1.0 and scores["contradiction"] == 0.0
    # another name elsewhere in an unrelated sentence does not either
    value, scores = vote(
        "entity_consistency",
        "Irene Joliot moved to Lyon.",
        ("Marie Curie won the Nobel Prize in Physics in 1903.",),
    )
    assert value == 1.0 and scores["contradiction"] == 0.0


def test_bm25_alignment_ratio_and_votes() -> None:
    same, sentence = bm25_ratio("Marie Curie won the Nobel Prize in Physics in 1903.", EVIDENCE)
    assert same > 0.9 and sentence.startswith("Marie Curie")
    other, _ = bm25_ratio("The stock market crashed after the oil embargo.", EVIDENCE)
    assert other < 0.1
    assert vote("bm25_alignment", "Curie won the Nobel Prize in Physics in 1903.")[0] == 0.0
    assert vote("bm25_alignment", "The stock market crashed after the embargo.")[0] == 1.0
    assert vote("bm25_alignment", "anything", ())[0] == ABSTAIN


def test_bigram_overlap_is_order_sensitive() -> None:
    straight = vote("bigram_overlap", "Marie Curie won the Nobel Prize in Physics.")
    swapped = vote("bigram_overlap", "Physics Prize won Curie Nobel the Marie in.")
    assert straight[0] == 0.0 and swapped[0] == 1.0
    assert straight[1]["support"] > swapped[1]["support"]


def test_judges_have_distinct_digests_per_parameters() -> None:
    a = build_judge("bm25_alignment")
    b = build_judge("bm25_alignment", {"support_at": 0.7})
    assert a.digest != b.digest and a.component().name == "bm25_alignment"


def test_registry_holds_at_least_six_local_judges() -> None:
    names = set(registered_judges())
    local = {
        "content_overlap",
        "embedding_similarity",
        "numeric_consistency",
        "negation_polarity",
        "entity_consistency",
        "bm25_alignment",
        "bigram_overlap",
    }
    assert local <= names and "llm" in names


def test_shipped_stacker_matches_the_default_panel() -> None:
    panel = load_panel(None)
    stacker = load_stacker(None)
    assert stacker.members == panel.member_names
    assert len(panel.members) >= 6
    assert stacker.fitted_on and stacker.info.get("panel_digest") == panel.digest
    proba = stacker.predict_proba([[0.0] * len(stacker.members), [1.0] * len(stacker.members)])
    assert proba[0] < 0.5 < proba[1]


@pytest.mark.parametrize("judge", ["entity_consistency", "bm25_alignment", "bigram_overlap"])
def test_a_judge_never_drops_a_pair(judge: str) -> None:
    pairs = [JudgePair("A.", ()), JudgePair("", ("x",)), JudgePair("Marie Curie won.", EVIDENCE)]
    votes = build_judge(judge).judge_sync(pairs)
    assert len(votes) == 3 and all(v.value in (0.0, 0.5, 1.0) for v in votes)
