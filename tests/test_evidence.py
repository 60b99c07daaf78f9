"""Evidence gathering in time: as-of per answer, inline contexts, dated vs undated supersession."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from auditor.digest import sha256_text
from auditor.evidence import Evidence, dated_supersession, gather_evidence, inline_evidence
from auditor.types import Answer, Chunk, Claim, Context, DocumentVersion, Hit

OLD = "The Harbor Line ferry departs every 30 minutes."
NEW = "The Harbor Line ferry departs every 45 minutes."


def utc(year: int, month: int = 1, day: int = 1) -> datetime:
    return datetime(year, month, day, tzinfo=UTC)


def hit(
    doc_id: str,
    text: str,
    *,
    rank: int,
    superseded: bool = False,
    published_at: datetime | None = None,
    valid_to: datetime | None = None,
) -> Hit:
    digest = sha256_text(text)
    doc = DocumentVersion(
        doc_id=doc_id,
        version=digest[:4],
        text=text,
        digest=digest,
        published_at=published_at,
        valid_to=valid_to,
        superseded=superseded,
    )
    chunk = Chunk(
        chunk_id=f"{doc_id}:{digest[:8]}",
        doc_id=doc_id,
        version=doc.version,
        digest=digest,
        start=0,
        end=len(text),
        text=text,
    )
    return Hit(chunk=chunk, document=doc, score=1.0 / (rank + 1), rank=rank, superseded=superseded)


def claim(answer_id: str, text: str) -> Claim:
    return Claim(
        id=f"c-{answer_id}", answer_id=answer_id, text=text, spans=((0, len(text)),), factual=True
    )


class FakeSearch:
    """Returns fixed hits and records the as-of date of every call."""

    def __init__(self, hits: list[Hit]) -> None:
        self.hits = hits
        self.calls: list[tuple[int, datetime | None]] = []

    def __call__(self, queries: Sequence[str], k: int, as_of: datetime | None) -> list[list[Hit]]:
        self.calls.append((len(queries), as_of))
        return [list(self.hits) for _ in queries]


def test_each_answer_is_searched_as_of_its_own_date() -> None:
    search = FakeSearch([hit("ferry", NEW, rank=0, published_at=utc(2023))])
    answers = {
        "a": Answer("a", "", OLD),
        "b": Answer("b", "", OLD, as_of=utc(2021)),
        "c": Answer("c", "", OLD),
    }
    claims = [claim("a", OLD), claim("b", OLD), claim("c", OLD)]
    evidence = gather_evidence(claims, answers, search, default_as_of=utc(2024))
    assert sorted(search.calls, key=str) == sorted([(2, utc(2024)), (1, utc(2021))], key=str)
    assert [e.as_of for e in evidence] == [utc(2024), utc(2021), utc(2024)]


def test_inline_contexts_published_after_as_of_are_left_out() -> None:
    answer = Answer(
        "a",
        "",
        OLD,
        contexts=(
            Context("early", OLD, published_at=utc(2020)),
            Context("late", NEW, published_at=utc(2025)),
            Context("undated", NEW),
        ),
    )
    kept = [h.document.doc_id for h in inline_evidence(answer, utc(2024))]
    assert kept == ["inline:a:early", "inline:a:undated"]
    assert len(inline_evidence(answer)) == 3  # no as-of: everything
    evidence = gather_evidence(
        [claim("a", OLD)], {"a": answer}, FakeSearch([]), default_as_of=utc(2024)
    )[0]
    assert [h.document.doc_id for h in evidence.current] == kept
    assert evidence.dropped_inline == 1 and all(h.inline for h in evidence.current)


def test_only_a_dated_supersession_goes_to_superseded() -> None:
    dated = hit("ferry", OLD, rank=1, superseded=True, published_at=utc(2020), valid_to=utc(2023))
    undated = hit("museum", "The museum opens at 9.", rank=2, superseded=True)
    current = hit("ferry", NEW, rank=0, published_at=utc(2023))
    evidence = gather_evidence(
        [claim("a", OLD)],
        {"a": Answer("a", "", OLD)},
        FakeSearch([current, dated, undated]),
        default_as_of=utc(2024),
    )[0]
    assert evidence.current == (current,)
    assert evidence.superseded == (dated,)
    assert evidence.undated_superseded == (undated,)
    assert dated_supersession(dated, utc(2024)) and not dated_supersession(dated, utc(2022))
    assert not dated_supersession(undated, utc(2024))
    # superseded at a known date but itself undated: still not grounds for stale
    no_start = hit("ferry", OLD, rank=1, superseded=True, valid_to=utc(2023))
    assert not dated_supersession(no_start, utc(2024))


def test_superseded_margin_compares_versions_of_the_same_document() -> None:
    old = hit("ferry", OLD, rank=1, superseded=True, published_at=utc(2020), valid_to=utc(2023))
    new = hit("ferry", NEW, rank=0, published_at=utc(2023))
    other = hit("bridge", "The toll is 4 euros.", rank=2)
    relevance = {old.chunk.chunk_id: 0.95, new.chunk.chunk_id: 0.85, other.chunk.chunk_id: 0.2}
    evidence = Evidence(current=(new, other), superseded=(old,), relevance=relevance)
    assert evidence.superseded_margin == pytest.approx(0.10)
    assert evidence.best_current == pytest.approx(0.85)
    alone = Evidence(current=(other,), superseded=(old,), relevance=relevance)
    assert alone.superseded_margin is None


def test_relevance_is_the_cosine_and_ranks_the_right_version_higher() -> None:
    old = hit("ferry", OLD, rank=1, superseded=True, published_at=utc(2020), valid_to=utc(2023))
    new = hit("ferry", NEW, rank=0, published_at=utc(2023))
    off = hit("bridge", "Parliament debated the agricultural budget for hours.", rank=2)
    evidence = gather_evidence(
        [claim("a", OLD)],
        {"a": Answer("a", "", OLD)},
        FakeSearch([new, old, off]),
        default_as_of=utc(2024),
    )[0]
    rel = evidence.relevance
    assert rel[old.chunk.chunk_id] == pytest.approx(1.0, abs=1e-4)
    assert rel[old.chunk.chunk_id] > rel[new.chunk.chunk_id] > rel[off.chunk.chunk_id]
    assert evidence.superseded_margin is not None and evidence.superseded_margin > 0


def test_the_margin_compares_sentences_so_unchanged_facts_are_not_closer_to_the_old_version() -> (
    None
):
    old = hit(
        "fares",
        "A single fare costs 2.50 dollars. Children under six travel free.",
        rank=1,
        superseded=True,
        published_at=utc(2022),
        valid_to=utc(2025),
    )
    new = hit(
        "fares",
        "A single fare costs 2.75 dollars from January 2025. Children under six "
        "travel free. A monthly pass costs 88 dollars.",
        rank=0,
        published_at=utc(2025),
    )
    same = "Children under six travel free."
    changed = "A single fare costs 2.50 dollars."
    answers = {"a": Answer("a", "", same), "b": Answer("b", "", changed)}
    ev_same, ev_changed = gather_evidence(
        [claim("a", same), claim("b", changed)],
        answers,
        FakeSearch([new, old]),
        default_as_of=utc(2026),
    )
    # whole chunks differ, but the sentence the unchanged claim rests on is in both
    assert ev_same.superseded_margin == pytest.approx(0.0, abs=1e-4)
    assert ev_same.relevance[old.chunk.chunk_id] != pytest.approx(
        ev_same.relevance[new.chunk.chunk_id], abs=1e-3
    )
    assert ev_changed.superseded_margin is not None and ev_changed.superseded_margin > 0.05


def test_a_claim_restating_one_sentence_of_a_long_chunk_is_close_to_it() -> None:
    page = hit(
        "archives",
        "Westfield County Archives keeps the county's records. Since March 2024 the service "
        "has been headed by Tomas Lindqvist, previously deputy director of the Brackley "
        "archive. Priya Natarajan chairs the board of trustees.",
        rank=0,
    )
    text = "The archive's board of trustees is chaired by Tom Baker."
    evidence = gather_evidence(
        [claim("a", text)], {"a": Answer("a", "", text)}, FakeSearch([page]), default_as_of=None
    )[0]
    chunk_cosine = evidence.relevance[page.chunk.chunk_id]
    sentence_cosine = evidence.sentence_relevance[page.chunk.chunk_id]
    assert sentence_cosine > chunk_cosine + 0.1  # the chunk's other sentences dilute it
    assert evidence.cosine(page) == sentence_cosine == evidence.best_current
    assert evidence.scores(evidence.current)[0][0] == sentence_cosine


def test_old_versions_of_the_documents_cited_as_current_come_first() -> None:
    def old(doc_id: str, text: str, rank: int) -> Hit:
        return hit(
            doc_id, text, rank=rank, superseded=True, published_at=utc(2020), valid_to=utc(2023)
        )

    current = hit("hut", "Non-members pay £34 a night.", rank=2, published_at=utc(2023))
    others = [old("mill", "A desk costs £210.", 0), old("choir", "Membership is £180.", 1)]
    hut_old = old("hut", "Non-members pay £30 a night.", 3)
    evidence = gather_evidence(
        [claim("a", "Non-members pay £30 per night")],
        {"a": Answer("a", "", "Non-members pay £30 per night")},
        FakeSearch([*others, current, hut_old]),
        default_as_of=utc(2024),
        n_superseded=2,
    )[0]
    assert evidence.current == (current,)
    # the hut's old version first, then the others in retrieval order
    assert evidence.superseded == (hut_old, others[0])


class QuerySearch(FakeSearch):
    """Records the queries too."""

    def __init__(self, hits: list[Hit]) -> None:
        super().__init__(hits)
        self.queries: list[str] = []

    def __call__(self, queries: Sequence[str], k: int, as_of: datetime | None) -> list[list[Hit]]:
        self.queries.extend(queries)
        return super().__call__(queries, k, as_of)


def test_a_claim_that_names_nothing_is_searched_with_the_answers_topic() -> None:
    page = hit(
        "garden",
        "The Kessock Botanic Garden covers 28 acres. Admission is £9 for adults.",
        rank=0,
    )
    text = "Adults pay £9 to get in"
    unnamed = replace(claim("a", text), topic="Kessock Botanic Garden")
    search = QuerySearch([page])
    with_topic, without = gather_evidence(
        [unnamed, replace(claim("b", text), id="c-b")],
        {"a": Answer("a", "", text), "b": Answer("b", "", text)},
        search,
        default_as_of=None,
    )
    assert search.queries == [f"{text} (Kessock Botanic Garden)", text]
    # read as about the garden, the claim is closer to the garden's whole page; its
    # closest sentence, which does not name the garden, is as close as before
    chunk_id = page.chunk.chunk_id
    assert with_topic.relevance[chunk_id] > without.relevance[chunk_id] + 0.05
    assert with_topic.sentence_relevance[chunk_id] == pytest.approx(
        without.sentence_relevance[chunk_id]
    )
