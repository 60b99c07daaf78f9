"""Freshness watch end to end on a small dated corpus written for it: the real index, the
rules extractor, the default offline panel and shipped stacker, a SQLite ledger.

The corpus is audited as of 2025-01-01; then an update is ingested (recorded in the
ledger, as ``auditor ingest`` does) and the answers are audited again as of 2025-06-01:
- a fact-changing update (ferry every 30 -> 45 minutes) makes the supported claim stale
  and nothing else changes;
- a rewording-only update (museum) leaves every label as it was;
- a withdrawn document (``valid_to`` 2025-04-01, no newer version) makes its claim
  ``unknown`` when nothing else supports it, while a claim another document also
  supports (the bridge toll) stays supported.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from auditor import AuditConfig, Auditor
from auditor.freshness import build_trend, char_diff, find_impact, reaudit, trend_html
from auditor.retrieval import IngestResult, ingest
from auditor.retrieval.documents import make_document
from auditor.types import Answer, DocumentVersion
from ledger import Ledger, open_ledger

pytestmark = pytest.mark.slow

T1, T2 = "2025-01-01", "2025-06-01"

FERRY = "The Harbor Line ferry departs from Pier 4 every 30 minutes on weekdays."
FERRY_NEW = "The Harbor Line ferry departs from Pier 4 every 45 minutes on weekdays."
MUSEUM = "The Orchard Valley museum opens at 9 o'clock with free entry for children."
MUSEUM_REWORDED = "The Orchard Valley museum opens at 9 o'clock, and children get in free."
TIMETABLE = (
    "The Gull Point lighthouse is open to visitors on Sundays. The Kestrel Bridge toll "
    "for cars is 4 euros."
)
OTHERS = [
    ("bridge", "The Kestrel Bridge toll for cars is 4 euros since the toll reform."),
    ("library", "The Willow Street library lends up to twelve books per member."),
    ("stadium", "The Northgate stadium seats 42,000 spectators after its renovation."),
    ("tram", "Tram line 7 connects the central station with the university campus."),
    ("market", "The farmers market on Linden Square takes place every Saturday morning."),
    ("pool", "The municipal swimming pool on Elm Road is heated to 27 degrees."),
    ("zoo", "The Riverside zoo keeps two snow leopards in its mountain enclosure."),
    ("choir", "The Maplewood youth choir rehearses in the old chapel on Thursdays."),
    ("bakery", "Brennan's bakery bakes rye bread with a sourdough starter from 1950."),
    ("airport", "The regional airport handles about 900,000 passengers a year."),
    ("park", "Hillcrest park has a rose garden with more than 300 varieties."),
    ("school", "The Ashford primary school teaches Spanish from the third grade."),
    ("hospital", "St. Agnes hospital opened a new maternity ward with 40 beds."),
    ("cinema", "The Palace cinema shows silent films with live piano on Mondays."),
    ("castle", "Ravensworth castle was rebuilt in sandstone after the fire of 1623."),
    ("river", "The Tamber river freezes over in most winters near the old mill."),
    ("orchestra", "The city orchestra performs Brahms symphonies in the spring season."),
    ("vineyard", "The Sunhill vineyard grows Riesling grapes on steep slate terraces."),
]

ANSWERS = {
    "ferry": "The Harbor Line ferry departs from Pier 4 every 30 minutes on weekdays.",
    "museum": "The Orchard Valley museum opens at 9 o'clock.",
    "sundays": "The Gull Point lighthouse is open to visitors on Sundays.",
    "bridge": "The Kestrel Bridge toll for cars is 4 euros.",
    "library": "The Willow Street library lends up to twelve books per member.",
    "stadium": "The Northgate stadium seats 42,000 spectators.",
}


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def base_corpus(*, withdrawn: bool) -> list[DocumentVersion]:
    docs = [
        make_document("ferry", FERRY, published_at="2024-01-01"),
        make_document("museum", MUSEUM, published_at="2024-01-01"),
        make_document(
            "timetable",
            TIMETABLE,
            published_at="2024-01-01",
            valid_to="2025-04-01" if withdrawn else None,
        ),
    ]
    return docs + [make_document(d, t, published_at="2024-01-01") for d, t in OTHERS]


def answers() -> list[Answer]:
    return [Answer(id=k, question="", answer=v) for k, v in ANSWERS.items()]


def recorder(ledger: Ledger) -> Callable[[IngestResult], None]:
    """What ``auditor ingest`` does: every version and chunk of the ingest into the ledger."""

    def record(result: IngestResult) -> None:
        versions = {
            (v.doc_id, v.version): v
            for v in (*result.unchanged, *result.superseded_versions, *result.added_versions)
        }
        ledger.record_corpus(list(versions.values()), list(result.chunks))

    return record


@dataclass
class World:
    index: Path
    ledger: Ledger
    run_id: str
    labels: dict[str, str]
    """Answer id -> the label of its one claim as of T1."""


def labels_of(ledger: Ledger, run_id: str) -> dict[str, str]:
    rows = ledger.claim_results(run_id)
    assert len(rows) == len(ANSWERS), "one claim per answer"
    return {r.answer_id: r.label or "" for r in rows}


def claim_of(ledger: Ledger, run_id: str) -> dict[str, str]:
    return {r.answer_id: r.claim_id for r in ledger.claim_results(run_id)}


@pytest.fixture
def make_world(tmp_path: Path) -> Callable[..., World]:
    opened: list[Ledger] = []

    def build(updates: list[DocumentVersion], *, withdrawn: bool = False) -> World:
        ledger = open_ledger(tmp_path / "ledger.db")
        opened.append(ledger)
        index = tmp_path / "index"
        ingest(base_corpus(withdrawn=withdrawn), index, on_commit=recorder(ledger))
        with Auditor(index, ledger, config=AuditConfig(as_of=T1)) as auditor:
            run = auditor.audit(answers())
        if updates:
            ingest(updates, index, on_commit=recorder(ledger))
        return World(index, ledger, run.run_id, labels_of(ledger, run.run_id))

    yield build
    for ledger in opened:
        ledger.close()


def full_audit(world: World, as_of: str) -> dict[str, str]:
    with Auditor(world.index, world.ledger, config=AuditConfig(as_of=as_of)) as auditor:
        run = auditor.audit(answers())
    return labels_of(world.ledger, run.run_id)


def supported_at_t1(world: World) -> None:
    assert world.labels == dict.fromkeys(ANSWERS, "supported"), world.labels


def test_a_fact_changing_update_makes_the_claim_stale_and_nothing_else_changes(
    make_world: Callable[..., World],
) -> None:
    world = make_world([make_document("ferry", FERRY_NEW, published_at="2025-03-01")])
    supported_at_t1(world)
    impact = find_impact(world.ledger, as_of=utc(T2))
    assert [(c.answer_id, [ch.kind for ch in c.changes]) for c in impact.claims] == [
        ("ferry", ["superseded"])
    ]
    change = impact.claims[0].changes[0]
    assert change.old.digest != change.new.digest  # type: ignore[union-attr]
    assert "every [-30-]{+45+} minutes" in (change.diff or "")
    assert (change.old.version, change.new.version) == ("v1", "v2")  # type: ignore[union-attr]
    # --since: changes published or ingested from that date on; --run: those runs only
    assert (
        len(
            find_impact(
                world.ledger, as_of=utc(T2), since=utc("2025-02-01"), runs=[world.run_id[:8]]
            ).claims
        )
        == 1
    )
    assert find_impact(world.ledger, as_of=utc(T2), since=utc("2099-01-01")).claims == ()
    # not yet visible before the update's publication date
    assert find_impact(world.ledger, as_of=utc("2025-02-01")).claims == ()
    with Auditor(world.index, world.ledger) as auditor:
        result = reaudit(auditor, world.run_id, as_of=T2, only_impacted=True)
    after = labels_of(world.ledger, result.run_id)
    assert after == {**world.labels, "ferry": "stale"}
    assert after == full_audit(world, T2)
    claims = claim_of(world.ledger, world.run_id)
    assert claims["ferry"] in result.rejudged


def test_impact_reads_the_deciding_flag_the_audit_stored_and_old_rows_the_same_rule(
    make_world: Callable[..., World],
) -> None:
    from sqlalchemy import text

    world = make_world([make_document("ferry", FERRY_NEW, published_at="2025-03-01")])
    before = find_impact(world.ledger, as_of=utc(T2)).to_list()
    assert [c["answer_id"] for c in before] == ["ferry"]
    with world.ledger.engine.begin() as conn:  # rows as a ledger from before 0009 holds them
        assert conn.execute(text("UPDATE retrieval SET deciding = NULL")).rowcount > 0
    assert find_impact(world.ledger, as_of=utc(T2)).to_list() == before
    with world.ledger.engine.begin() as conn:  # the stored flag, not the numbers, decides
        conn.execute(text("UPDATE retrieval SET deciding = :no"), {"no": False})
    assert find_impact(world.ledger, as_of=utc(T2)).claims == ()


def test_a_rewording_only_update_leaves_every_label_as_it_was(
    make_world: Callable[..., World],
) -> None:
    world = make_world([make_document("museum", MUSEUM_REWORDED, published_at="2025-03-01")])
    supported_at_t1(world)
    impact = find_impact(world.ledger, as_of=utc(T2))
    assert [c.answer_id for c in impact.claims] == ["museum"]  # seen, judged again ...
    with Auditor(world.index, world.ledger) as auditor:
        result = reaudit(auditor, world.run_id, as_of=T2, only_impacted=True)
    assert claim_of(world.ledger, world.run_id)["museum"] in result.rejudged
    after = labels_of(world.ledger, result.run_id)
    assert after == world.labels  # ... and nothing changed
    assert after == full_audit(world, T2)


def test_a_withdrawn_document_makes_claims_only_it_supported_unknown(
    make_world: Callable[..., World],
) -> None:
    world = make_world([], withdrawn=True)
    supported_at_t1(world)
    impact = find_impact(world.ledger, as_of=utc(T2))
    kinds = {c.answer_id: [ch.kind for ch in c.changes] for c in impact.claims}
    assert kinds == {"sundays": ["withdrawn"], "bridge": ["withdrawn"]}
    with Auditor(world.index, world.ledger) as auditor:
        result = reaudit(auditor, world.run_id, as_of=T2, only_impacted=True)
    after = labels_of(world.ledger, result.run_id)
    # the bridge's own page still supports its toll; nothing supports the Sunday opening
    assert after == {**world.labels, "sundays": "unknown"}
    assert after == full_audit(world, T2)
    # before the withdrawal date nothing is impacted
    assert find_impact(world.ledger, as_of=utc("2025-03-01")).claims == ()


def test_reaudit_only_impacted_equals_a_full_reaudit_and_carries_the_rest(
    make_world: Callable[..., World],
) -> None:
    world = make_world(
        [
            make_document("ferry", FERRY_NEW, published_at="2025-03-01"),
            make_document("museum", MUSEUM_REWORDED, published_at="2025-03-01"),
        ],
        withdrawn=True,
    )
    with Auditor(world.index, world.ledger) as auditor:
        partial = reaudit(auditor, world.run_id, as_of=T2, only_impacted=True)
        full = reaudit(auditor, world.run_id, as_of=T2, only_impacted=False)
        again = reaudit(auditor, world.run_id, as_of=T2, only_impacted=True)
    ledger = world.ledger
    assert (
        labels_of(ledger, partial.run_id) == labels_of(ledger, full.run_id) == full_audit(world, T2)
    )
    assert full.n_carried == 0 and full.n_rejudged == len(ANSWERS)
    assert 0 < partial.n_rejudged < len(ANSWERS)
    assert partial.n_carried + partial.n_rejudged == len(ANSWERS)
    # every claim the ledger names as impacted was judged again
    impacted = {c.claim_id for c in find_impact(ledger, runs=[world.run_id], as_of=utc(T2)).claims}
    assert impacted and impacted <= set(partial.rejudged)
    # carried claims: marked with the reason, same verdict and votes as the old run
    carried = ledger.carried_claims(partial.run_id)
    assert len(carried) == partial.n_carried and not set(carried) & set(partial.rejudged)
    old = {c.claim_id: c for c in ledger.claim_results(world.run_id)}
    new = {c.claim_id: c for c in ledger.claim_results(partial.run_id)}
    old_votes, new_votes = (ledger.claim_votes(world.run_id), ledger.claim_votes(partial.run_id))
    old_stale, new_stale = (
        ledger.claim_votes(run, superseded=True) for run in (world.run_id, partial.run_id)
    )
    for claim_id, mark in carried.items():
        assert mark["from_run_id"] == world.run_id
        # the same passages, or others that decide nothing changed
        assert "same" in mark["reason"] or "decide nothing" in mark["reason"], mark["reason"]
        assert (new[claim_id].label, new[claim_id].p_hallucinated) == (
            old[claim_id].label,
            old[claim_id].p_hallucinated,
        )
        assert [(v["judge_name"], v["value"]) for v in new_votes.get(claim_id, [])] == [
            (v["judge_name"], v["value"]) for v in old_votes.get(claim_id, [])
        ]
        assert [(v["judge_name"], v["value"]) for v in new_stale.get(claim_id, [])] == [
            (v["judge_name"], v["value"]) for v in old_stale.get(claim_id, [])
        ]
    # the printed records say which claims were carried
    printed = {c["id"]: c["carried"] for a in partial.answers for c in a["claims"]}
    assert {k for k, v in printed.items() if v} == set(carried)
    # linked to the old run; the same re-audit again writes nothing
    links = {(x["run_id"], x["parent_run_id"], x["relation"]) for x in ledger.run_links()}
    assert (partial.run_id, world.run_id, "reaudit") in links
    assert again.reused and again.run_id == partial.run_id
    assert ledger.get_run(partial.run_id).kind == "reaudit"

    trend = build_trend(ledger, runs=[partial.run_id, world.run_id], n_boot=200)
    assert [p.run_id for p in trend.points] == [world.run_id, partial.run_id]  # by as-of
    first, second = trend.points
    assert first.figures["stale_rate"].value == 0.0
    assert second.figures["stale_rate"].value == pytest.approx(1 / len(ANSWERS))
    assert all(
        p.figures[n].ci is not None for p in trend.points for n in ("stale_rate", "decidable_rate")
    )
    step = trend.steps[0]
    assert step.n_shared_claims == len(ANSWERS)
    assert step.figure("support_precision").verdict in ("worse", "unresolved")
    assert step.transitions["supported"]["stale"] == 1
    html = trend_html(trend)
    assert (
        html.count("data:image/png;base64,") == 1
        and "http" not in html.split("<body>")[1].replace("https://", "").split("data:")[0]
    )


def test_a_carried_claim_keeps_its_votes_on_superseded_evidence(
    make_world: Callable[..., World],
) -> None:
    world = make_world([make_document("ferry", FERRY_NEW, published_at="2025-03-01")])
    with Auditor(world.index, world.ledger) as auditor:
        first = reaudit(auditor, world.run_id, as_of=T2, only_impacted=True)
        second = reaudit(auditor, first.run_id, as_of="2025-07-01", only_impacted=True)
    ledger = world.ledger
    ferry = claim_of(ledger, first.run_id)["ferry"]
    assert ferry in ledger.carried_claims(second.run_id)
    # judged in the first re-audit against the old ferry timetable; carried, not judged again
    stale = [ledger.claim_votes(r.run_id, superseded=True).get(ferry, []) for r in (first, second)]
    assert stale[0], "the first re-audit judged the ferry claim against its superseded version"
    assert [(v["judge_digest"], v["value"], v["raw"]) for v in stale[1]] == [
        (v["judge_digest"], v["value"], v["raw"]) for v in stale[0]
    ]


def test_the_commands(
    make_world: Callable[..., World], run_cli: Callable[..., tuple], tmp_path: Path
) -> None:
    world = make_world([make_document("ferry", FERRY_NEW, published_at="2025-03-01")])
    db = world.ledger.location
    code, out, err = run_cli(["impact", "--db", db, "--as-of", T2, "--format", "json"])
    assert code == 0, err
    listed = json.loads(out)
    assert [(c["run_id"], c["answer_id"]) for c in listed] == [(world.run_id, "ferry")]
    assert listed[0]["claim_id"] == claim_of(world.ledger, world.run_id)["ferry"]
    code, out, err = run_cli(["impact", "--db", db, "--as-of", T2, "--index", str(world.index)])
    assert code == 0, err
    assert "1 impacted claims" in out and "[-30-]{+45+}" in out
    code, out, err = run_cli(
        [
            "reaudit",
            world.run_id[:10],
            "--db",
            db,
            "--index",
            str(world.index),
            "--as-of",
            T2,
            "--only-impacted",
        ]
    )
    assert code == 0, err
    records = [json.loads(line) for line in out.splitlines()]
    assert [r["id"] for r in records] == list(ANSWERS)
    labels = {r["id"]: r["claims"][0]["label"] for r in records}
    assert labels == {**world.labels, "ferry": "stale"}
    assert "judged again" in err
    page = tmp_path / "trend.html"
    code, out, err = run_cli(
        ["trend", "--db", db, "--format", "html", "--out", str(page), "--bootstrap", "100"]
    )
    assert code == 0, err
    assert page.read_text().startswith("<!DOCTYPE html>")
    code, out, err = run_cli(["trend", "--db", db, "--format", "json", "--bootstrap", "100"])
    assert code == 0, err
    data = json.loads(out)
    assert len(data["runs"]) == 2 and data["changes"][0]["shared_claims"] == len(ANSWERS)
    code, out, err = run_cli(["trend", "--db", db, "--bootstrap", "100"])
    assert code == 0 and "stale_rate" in out


def test_char_diff_marks_removed_and_added_text() -> None:
    assert char_diff("every 30 minutes", "every 45 minutes") == "every [-30-]{+45+} minutes"
    assert char_diff("same", "same") == "same"
    long = "x" * 200
    shown = char_diff(long + " 30 " + long, long + " 45 " + long, context=10)
    assert shown == "...xxxxxxxxx [-30-]{+45+} xxxxxxxxx..."  # 10 characters each side


def test_a_reaudit_reads_no_reader_pair_its_parent_run_read(
    make_world: Callable[..., World],
) -> None:
    """Started afresh (empty reader cache, as in a new process), a full re-audit reads only
    the entailment pairs its parent run did not store, and stores every pair it asked."""
    from auditor.entailment.model import load_model
    from auditor.judges.catalog import build_judge

    world = make_world([make_document("ferry", FERRY_NEW, published_at="2025-03-01")])
    model = load_model()
    digest = build_judge("entailment").reader_identity[0]  # fp32 or bf16, as resolved here

    def keys(run_id: str) -> set[tuple[str, int]]:
        rows = world.ledger.reader_scores(run_id, weights_digest=digest, quantized=False)
        return {(r.pair_digest, r.max_length) for r in rows}

    with Auditor(world.index, world.ledger) as auditor:
        model.clear_scores()
        before = model.forward_pairs
        full = reaudit(auditor, world.run_id, as_of=T2, only_impacted=False)
    parent, child = keys(world.run_id), keys(full.run_id)
    assert parent & child  # pairs both runs asked: read once, by the parent
    assert model.forward_pairs - before == len(child - parent)
