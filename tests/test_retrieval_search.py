"""Search: dense, lexical, hybrid; as-of cutoff and superseded hits; batched queries."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from pathlib import Path

import pytest

from auditor.errors import AuditorError
from auditor.retrieval import EvidenceIndex, ingest, make_document

pytestmark = pytest.mark.slow  # loads the MiniLM encoder


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> EvidenceIndex:
    ix = tmp_path_factory.mktemp("search") / "ix"
    ingest(
        [
            make_document(
                "ceo",
                "Alice Martin is the chief executive of Acme Corp.",
                published_at="2019-01-01",
            ),
            make_document("river", "The Danube flows through Vienna and Budapest."),
            make_document(
                "vaccine",
                "The vaccine trial enrolled 4,000 volunteers in 2021.",
                published_at="2021-05-01",
            ),
            make_document(
                "paris", "Paris hosted the Summer Olympic Games in 2024.", valid_from="2024-08-11"
            ),
        ],
        ix,
    )
    ingest(
        [
            make_document(
                "ceo",
                "Bob Jones became chief executive of Acme Corp, replacing Alice Martin.",
                published_at="2022-06-01",
            )
        ],
        ix,
    )
    return EvidenceIndex.open(ix)


@pytest.mark.parametrize("mode", ["dense", "lexical", "hybrid"])
def test_each_mode_finds_the_relevant_document(index: EvidenceIndex, mode: str) -> None:
    hits = index.search(
        ["Which river flows through Vienna?", "How many volunteers did the vaccine trial enrol?"],
        k=2,
        mode=mode,
    )
    assert len(hits) == 2
    assert hits[0][0].chunk.doc_id == "river" and hits[1][0].chunk.doc_id == "vaccine"
    for per_query in hits:
        assert [h.rank for h in per_query] == list(range(len(per_query)))
        assert all(a.score >= b.score for a, b in itertools.pairwise(per_query))
        for h in per_query:
            assert h.document.text[h.chunk.start : h.chunk.end] == h.chunk.text


def test_without_as_of_old_versions_are_returned_marked_superseded(index: EvidenceIndex) -> None:
    hits = index.search(["Who is the chief executive of Acme Corp?"], k=2, mode="dense")[0]
    by_version = {h.chunk.version: h for h in hits if h.chunk.doc_id == "ceo"}
    assert set(by_version) == {"v1", "v2"}
    assert by_version["v1"].superseded and not by_version["v2"].superseded


@pytest.mark.parametrize("mode", ["dense", "lexical", "hybrid"])
def test_as_of_hides_future_versions_and_marks_superseded(index: EvidenceIndex, mode: str) -> None:
    query = ["Who is the chief executive of Acme Corp?"]
    at_2020 = index.search(query, k=10, mode=mode, as_of=datetime(2020, 1, 1, tzinfo=UTC))[0]
    visible = {(h.chunk.doc_id, h.chunk.version) for h in at_2020}
    assert ("ceo", "v1") in visible and ("ceo", "v2") not in visible
    assert ("vaccine", "v1") not in visible and ("paris", "v1") not in visible
    assert not any(h.superseded for h in at_2020)
    at_2023 = index.search(query, k=10, mode=mode, as_of=datetime(2023, 1, 1))[0]
    flags = {h.chunk.version: h.superseded for h in at_2023 if h.chunk.doc_id == "ceo"}
    assert flags == {"v1": True, "v2": False}
    assert ("paris", "v1") not in {(h.chunk.doc_id, h.chunk.version) for h in at_2023}


def test_as_of_before_everything_keeps_undated(index: EvidenceIndex) -> None:
    hits = index.search(["Danube Vienna"], k=5, as_of=datetime(1990, 1, 1))[0]
    assert {h.chunk.doc_id for h in hits} == {"river"}


def test_k_larger_than_corpus_and_empty_batch(index: EvidenceIndex) -> None:
    hits = index.search(["Acme"], k=50, mode="dense")[0]
    assert len(hits) == len(index) == 5
    assert index.search([], k=3) == []


def test_search_validates_arguments(index: EvidenceIndex) -> None:
    with pytest.raises(AuditorError, match="queries"):
        index.search("a bare string", k=3)
    with pytest.raises(AuditorError, match="mode"):
        index.search(["q"], mode="semantic")
    with pytest.raises(AuditorError, match="k"):
        index.search(["q"], k=0)


def test_empty_index(tmp_path: Path) -> None:
    ingest([], tmp_path / "ix")
    idx = EvidenceIndex.open(tmp_path / "ix")
    assert idx.search(["anything"], k=3) == [[]]
