"""Re-audit and impact as a user runs them (issue 36, item 4), through the commands only:
``auditor ingest``, ``auditor audit``, ``auditor impact``, ``auditor reaudit`` and
``auditor search``, on a SQLite ledger and an index in a temporary folder.

The corpus grows as a real one does, one ingest at a time: a ferry timetable with fares
(v1 2024-03-01; v2, dearer, 2025-01-15), a library's opening hours, a kettle's warranty
terms (two dated versions) and a swimming pool's prices. Twenty claims in fourteen
answers are audited as of 2025-03-01 (four answers carry their own ``as_of``). Then the
ferry gets a third version (v3 2025-05-01: the fare and the bicycle fare go up) and the
run is looked at and re-audited as of 2025-06-01:

- ``impact`` names exactly the claims whose stored deciding evidence (``retrieval.deciding``)
  cites the ferry, as of each claim's own date, each with the immediate successor of the
  version it rested on (``--override-answer-dates``: a claim dated before v2 shows
  v1 -> v2 -> v3);
- ``reaudit --only-impacted`` gives, claim by claim, the labels of a full re-audit and of
  a new audit at that date; it judges again every claim ``impact`` names and the claims
  whose judged passages changed otherwise (a passage they read but their label does not
  rest on), and carries every other claim with its reason;
- answers with their own date keep it, the claims the superseded fares state come out
  ``stale``, and untouched claims keep their verdicts.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from auditor.cli import main
from auditor.freshness import chain_of
from ledger import Ledger, open_ledger

slow = pytest.mark.slow
"""Every test on the world (the embedding model, the reader, the index)."""

T1, T2 = "2025-03-01", "2025-06-01"
V3_PUBLISHED = "2025-05-01"

FERRY_TIMETABLE = (
    "Gullhaven Ferry: timetable and fares for the Skerry Island crossing.\n\n"
    "The ferry to Skerry Island leaves Gullhaven harbour every 40 minutes between 6 am and "
    "10 pm, seven days a week. The crossing takes 25 minutes. On Sundays and public holidays "
    "the first ferry leaves at 8 am instead of 6 am. In stormy weather sailings may be "
    "cancelled at short notice, and the harbour office posts cancellations on its "
    "noticeboard and on the town's website. Printed timetables are available at the harbour "
    "office, which is staffed from 7 am.\n\n"
)


def ferry(adult: int, bicycle: int) -> str:
    """The ferry page with the given adult return fare and bicycle fare (the timetable
    paragraph, a passage of its own, is the same in every version)."""
    return FERRY_TIMETABLE + (
        f"Fares for the crossing are set by the harbour board each year, and the adult return "
        f"ticket costs {adult} euros. Children under 12 travel free, and students pay half "
        f"the adult fare. Bicycles are carried for {bicycle} euros each way. Cars are not "
        "allowed on the ferry.\n\n"
        "Tickets are sold at the harbour kiosk and on board, where only card payment is "
        "accepted. Dogs travel free if they are kept on a lead, and the kiosk sells a "
        "ten-trip card for regular passengers."
    )


LIBRARY = (
    "Eastbrook Public Library: opening hours and borrowing rules for members.\n\n"
    "The library is open Monday to Friday from 9 am to 7 pm and on Saturdays from 10 am to "
    "4 pm. It is closed on Sundays and on public holidays. The reading room on the first floor "
    "has 60 study desks, free wifi and a quiet area for exam preparation, and the children's "
    "corner on the ground floor holds story hours on Wednesday afternoons.\n\n"
    "Members can borrow up to 15 items at a time for three weeks, and loans can be renewed "
    "twice online. Membership is free for residents of Eastbrook. Late returns cost 20 cents "
    "per item per day, and lost cards are replaced for 2 euros."
)


def warranty(term: str) -> str:
    return (
        "Nordlux K7 electric kettle: warranty terms and how to make a claim.\n\n"
        f"The Nordlux K7 electric kettle comes with a {term} warranty from the date of "
        "purchase. The warranty covers defects in materials and workmanship. It does not cover "
        "limescale damage, broken glass or damage caused by misuse, and it is void when the "
        "kettle has been opened or repaired by anyone other than an authorised Nordlux "
        "service centre.\n\n"
        "To make a claim, customers return the kettle with the receipt to the shop where it was "
        "bought. Nordlux repairs or replaces a faulty kettle within 14 days and pays the cost "
        "of shipping."
    )


POOL = (
    "Gullhaven swimming pool: facilities, prices and lessons.\n\n"
    "The indoor pool on Harbour Road has a 25-metre lane pool and a children's pool heated to "
    "30 degrees. Adult entry costs 5 euros and children pay 3 euros. Swimming lessons for "
    "beginners take place on Tuesday and Thursday evenings, and the pool is closed for "
    "cleaning every Monday morning until noon."
)

FIRST_INGEST = [
    {"id": "ferry", "text": ferry(12, 3), "published_at": "2024-03-01"},
    {"id": "library", "text": LIBRARY, "published_at": "2024-06-01"},
    {"id": "warranty", "text": warranty("two-year"), "published_at": "2023-05-01"},
    {"id": "warranty", "text": warranty("three-year"), "published_at": "2024-09-01"},
    {"id": "pool", "text": POOL, "published_at": "2024-02-01"},
]
JANUARY_UPDATE = [{"id": "ferry", "text": ferry(14, 3), "published_at": "2025-01-15"}]
MAY_UPDATE = [{"id": "ferry", "text": ferry(16, 4), "published_at": V3_PUBLISHED}]

FARE_14 = "An adult return ticket for the Skerry Island ferry costs 14 euros."
ANSWERS: list[dict[str, Any]] = [
    {
        "id": "fare-now",
        "question": "How much is the ferry to Skerry Island?",
        "answer": f"{FARE_14} Children under 12 travel free.",
    },
    {
        "id": "fare-old",
        "answer": "An adult return ticket for the Skerry Island ferry costs 12 euros.",
    },
    {
        "id": "ferry-times",
        "answer": "The ferry to Skerry Island leaves Gullhaven harbour every 40 minutes. "
        "The crossing takes 25 minutes.",
    },
    {
        "id": "ferry-bikes",
        "answer": "Bicycles are carried on the Skerry Island ferry for 3 euros each way.",
    },
    # answers with their own date: before v2, between v2 and the run, after v3
    {
        "id": "fare-early",
        "as_of": "2025-01-01",
        "answer": "An adult return ticket for the Skerry Island ferry costs 12 euros.",
    },
    {"id": "fare-dated", "as_of": "2025-03-15", "answer": FARE_14},
    {
        "id": "fare-may",
        "as_of": "2025-05-20",
        "answer": "An adult return ticket for the Skerry Island ferry costs 16 euros.",
    },
    {
        "id": "library",
        "answer": "Eastbrook Public Library is open on Saturdays from 10 am to 4 pm. Members can "
        "borrow up to 15 items at a time. The library is open on Sundays.",
    },
    {
        "id": "library-fee",
        "answer": "Late returns at Eastbrook library cost 50 cents per item per day.",
    },
    {
        "id": "kettle",
        "answer": "The Nordlux K7 kettle has a three-year warranty. The warranty does not cover "
        "limescale damage.",
    },
    {"id": "kettle-old", "answer": "The Nordlux K7 kettle has a two-year warranty."},
    # dated before the warranty's second version (2024-09-01), long before the run
    {
        "id": "kettle-2024",
        "as_of": "2024-06-01",
        "answer": "The Nordlux K7 kettle has a two-year warranty.",
    },
    {
        "id": "pool",
        "answer": "Adult entry to the Gullhaven swimming pool costs 5 euros. The pool has a "
        "10-metre diving tower.",
    },
    {"id": "lighthouse", "answer": "The Skerry Island lighthouse was built in 1872."},
]
OWN_DATES = {a["id"]: a["as_of"] for a in ANSWERS if "as_of" in a}


def cli(argv: list[str]) -> tuple[int, str, str]:
    """``auditor ARGV`` through its real entry point: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        else:
            code = 0
    return code, out.getvalue(), err.getvalue()


def ok(argv: list[str]) -> tuple[str, str]:
    code, out, err = cli(argv)
    assert code == 0, f"auditor {' '.join(argv)} exited {code}:\n{err}"
    return out, err


def jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def claims_of(out: str) -> dict[str, dict[str, Any]]:
    """Claim id -> the claim as ``audit``/``reaudit`` print it (with its answer id)."""
    return {
        c["id"]: {**c, "answer_id": record["id"]}
        for record in map(json.loads, out.splitlines())
        for c in record["claims"]
    }


def labels(claims: dict[str, dict[str, Any]]) -> dict[str, str]:
    return {cid: c["label"] for cid, c in claims.items()}


@dataclass
class World:
    db: str
    index: str
    run_id: str
    t1: dict[str, dict[str, Any]]
    """The audit as of T1, claim id -> claim."""
    impact: list[dict[str, Any]]
    impact_override: list[dict[str, Any]]
    partial: dict[str, dict[str, Any]]
    partial_summary: str
    full: dict[str, dict[str, Any]]
    fresh: dict[str, dict[str, Any]]
    """A new audit of the same answers as of T2."""
    ledger: Ledger
    partial_run: str

    def claim(self, answer_id: str, start: str = "") -> str:
        [cid] = [
            cid
            for cid, c in self.t1.items()
            if c["answer_id"] == answer_id and c["text"].startswith(start)
        ]
        return cid


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    tmp = tmp_path_factory.mktemp("reaudit-user")
    db, index = str(tmp / "ledger.db"), str(tmp / "index")
    place = ["--index", index, "--db", db]
    for name, rows in (("corpus.jsonl", FIRST_INGEST), ("january.jsonl", JANUARY_UPDATE)):
        ok(["ingest", str(jsonl(tmp / name, rows)), *place])
    answers = str(jsonl(tmp / "answers.jsonl", ANSWERS))
    out, _ = ok(["audit", answers, *place, "--as-of", T1])
    t1 = claims_of(out)
    run_id = _run_of(out)
    ok(["ingest", str(jsonl(tmp / "may.jsonl", MAY_UPDATE)), *place])
    impact = ["impact", "--db", db, "--as-of", T2, "--format", "json"]
    named = json.loads(ok(impact)[0])
    named_override = json.loads(ok([*impact, "--override-answer-dates"])[0])
    reaudit = ["reaudit", run_id[:12], *place, "--as-of", T2]
    out, err = ok([*reaudit, "--only-impacted"])
    partial = claims_of(out)
    full = claims_of(ok(reaudit)[0])
    fresh = claims_of(ok(["audit", answers, *place, "--as-of", T2])[0])
    partial_run = _run_of(out)
    ledger = open_ledger(db, create=False)
    yield World(
        db, index, run_id, t1, named, named_override, partial, err, full, fresh, ledger, partial_run
    )
    ledger.close()


def _run_of(out: str) -> str:
    [run_id] = {json.loads(line)["run_id"] for line in out.splitlines()}
    return str(run_id)


# ------------------------------------------------------------------------------ impact
def _deciding_ferry_claims(world: World) -> set[str]:
    """The claims whose stored deciding evidence cites any version of the ferry page,
    read straight from the ledger (not through ``impact``)."""
    rows = world.ledger.claim_evidence(world.run_id)
    return {
        cid
        for cid, evidence in rows.items()
        if any(r["deciding"] and r["doc_id"] == "ferry" and not r["inline"] for r in evidence)
    }


@slow
def test_impact_names_exactly_the_claims_whose_deciding_evidence_cites_the_changed_page(
    world: World,
) -> None:
    cites = _deciding_ferry_claims(world)
    # an answer's own date wins: v3 (published 2025-05-01) is not there yet at 2025-01-01
    # or 2025-03-15, so those answers' claims are not impacted
    before_v3 = {
        cid for cid, c in world.t1.items() if OWN_DATES.get(c["answer_id"], T2) < V3_PUBLISHED
    }
    named = {c["claim_id"] for c in world.impact}
    assert named == cites - before_v3
    assert {world.claim("fare-now", "An adult"), world.claim("fare-may")} <= named
    assert world.claim("fare-dated") not in named and world.claim("fare-early") not in named
    # a claim about the library that only reads the ferry page among passages it does not
    # rest on is not named
    assert world.claim("library", "Members") not in named
    for c in world.impact:
        [change] = c["changes"]
        assert change["kind"] == "superseded" and change["doc_id"] == "ferry"
        # the immediate successor of the version it rested on, and nothing skipped
        assert (change["old"]["version"], change["new"]["version"]) == ("v2", "v3")
        assert [v["version"] for v in change["chain"]] == ["v3"]
        assert c["label"] == world.t1[c["claim_id"]]["label"]
    [fare] = [c for c in world.impact if c["claim_id"] == world.claim("fare-now", "An adult")]
    assert "ticket costs 1[-4-]{+6+} euros" in fare["changes"][0]["diff"]


@slow
def test_impact_follows_the_version_chain_without_skipping_a_successor(world: World) -> None:
    """Looked at as of 2025-06-01, an answer dated 2025-01-01 rested on v1: its change is
    v1 -> v2 (the immediate successor, published 2025-01-15, before the run) -> v3."""
    named = {c["claim_id"]: c for c in world.impact_override}
    # every claim resting on the ferry page, and the one dated before the warranty's
    # second version (published before the run: only an answer's own earlier date makes
    # it new to that claim)
    kettle = world.claim("kettle-2024")
    assert set(named) == _deciding_ferry_claims(world) | {kettle}
    [change] = named[kettle]["changes"]
    assert (change["doc_id"], change["old"]["version"], change["new"]["version"]) == (
        "warranty",
        "v1",
        "v2",
    )
    early = named[world.claim("fare-early")]
    [change] = early["changes"]
    assert (change["old"]["version"], change["new"]["version"]) == ("v1", "v2")
    assert [v["version"] for v in change["chain"]] == ["v2", "v3"]
    assert "costs 1[-2-]{+4+} euros" in change["diff"]
    assert named[world.claim("fare-dated")]["changes"][0]["new"]["version"] == "v3"
    # the table names the whole chain; with --index it orders it as the index does, and
    # says the same
    out, _ = ok(
        [
            "impact",
            "--db",
            world.db,
            "--as-of",
            T2,
            "--override-answer-dates",
            "--index",
            world.index,
        ]
    )
    assert re.search(r"superseded: ferry@v1 sha256 \w+ .*-> v2 sha256 \w+ .*-> v3 sha256", out)
    indexed, _ = ok(
        [
            "impact",
            "--db",
            world.db,
            "--as-of",
            T2,
            "--override-answer-dates",
            "--format",
            "json",
            "--index",
            world.index,
            "--run",
            world.run_id,
        ]
    )
    assert json.loads(indexed) == world.impact_override


@slow
def test_the_first_version_keeps_its_end_date_when_a_third_is_ingested(world: World) -> None:
    """v1's end (2025-01-15, set when v2 came in a later ingest) survives the ingest of v3;
    without it v1 is an undated supersession, never judged and never grounds for stale."""
    queries = jsonl(Path(world.db).parent / "q.jsonl", [{"id": "q", "text": FARE_14}])
    out, _ = ok(
        ["search", "--index", world.index, "--queries", str(queries), "--as-of", T2, "--k", "8"]
    )
    ends = {
        (h["doc_id"], h["version"]): h["valid_to"]
        for line in out.splitlines()
        for h in json.loads(line)["hits"]
    }
    assert ends[("ferry", "v1")] == "2025-01-15T00:00:00+00:00"
    assert ends[("ferry", "v2")] == "2025-05-01T00:00:00+00:00"
    assert ends[("ferry", "v3")] is None


# ----------------------------------------------------------------------------- reaudit
@slow
def test_only_impacted_gives_the_labels_of_a_full_reaudit_and_of_a_new_audit(
    world: World,
) -> None:
    assert set(world.partial) == set(world.full) == set(world.fresh) == set(world.t1)
    assert labels(world.partial) == labels(world.full) == labels(world.fresh)
    assert all(c["carried"] is None for c in world.full.values())


def _read(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """What the judges and the label read of a claim's stored evidence, in rank order:
    document, passage text, flags and relevance (not chunk ids or version digests)."""
    return [
        (
            r["doc_id"],
            r["text"],
            bool(r["superseded"]),
            bool(r["inline"]),
            round(float(r["score"]), 4),
            None if r["coverage"] is None else round(float(r["coverage"]), 4),
            None if r["sentence_relevance"] is None else round(float(r["sentence_relevance"]), 4),
        )
        for r in rows
    ]


@slow
def test_only_impacted_judges_only_the_claims_impact_names(world: World) -> None:
    """Judged again: exactly the claims impact names. A claim whose judged passages read
    differently at the new date, though impact does not name it (the ferry's new version
    moved into passages it reads without resting on them), is carried: its deciding
    passages are what the run judged, and the reason says the others changed."""
    partial_run = world.partial_run
    before = world.ledger.claim_evidence(world.run_id)
    after = world.ledger.claim_evidence(partial_run)
    named = {c["claim_id"] for c in world.impact}
    moved = {cid for cid in world.t1 if _read(before.get(cid, [])) != _read(after.get(cid, []))}
    judged = {cid for cid, c in world.partial.items() if c["carried"] is None}
    assert judged == named
    assert moved - named, "the corpus moves passages no label rests on"
    for cid in moved - named:
        rested, now = (
            Counter(x for x, r in zip(_read(rows), rows, strict=True) if r["deciding"])
            for rows in (before[cid], after[cid])
        )
        assert rested == now, world.t1[cid]["text"]
        assert "decide nothing" in world.partial[cid]["carried"]["reason"]
    [link] = [x for x in world.ledger.run_links() if x["run_id"] == partial_run]
    details = link["details"]
    assert details["n_rejudged"] == len(judged) and details["n_carried"] == len(world.t1) - len(
        judged
    )
    assert f"{len(judged)} judged again, {len(world.t1) - len(judged)} carried" in (
        world.partial_summary
    )
    assert len(judged) < len(world.t1)


@slow
def test_claims_not_named_whose_passages_did_not_change_are_carried_with_the_reason(
    world: World,
) -> None:
    carried = {cid: c for cid, c in world.partial.items() if c["carried"] is not None}
    assert carried
    named = {c["claim_id"] for c in world.impact}
    assert not set(carried) & named
    before = world.ledger.claim_evidence(world.run_id)
    after = world.ledger.claim_evidence(world.partial_run)
    unmoved = {cid for cid in carried if _read(before.get(cid, [])) == _read(after.get(cid, []))}
    assert unmoved
    for cid, c in carried.items():
        mark = c["carried"]
        assert mark["from_run_id"] == world.run_id and "judged" in mark["reason"]
        # passages that moved decide nothing (a superseded version's new end date too)
        assert cid in unmoved or "decide nothing" in mark["reason"], mark["reason"]
        assert "same" in mark["reason"] or "decide nothing" in mark["reason"], mark["reason"]
        first = world.t1[cid]
        assert (c["label"], c["p_hallucinated"]) == (first["label"], first["p_hallucinated"])


@slow
def test_untouched_claims_keep_their_verdicts(world: World) -> None:
    named = {c["claim_id"] for c in world.impact}
    for cid, c in world.partial.items():
        if cid not in named:
            assert c["label"] == world.t1[cid]["label"], c["text"]


@slow
def test_answers_with_their_own_date_keep_it(world: World) -> None:
    named = {c["claim_id"] for c in world.impact}
    for answer_id in ("fare-early", "fare-dated", "kettle-2024"):
        cid = world.claim(answer_id)
        claim = world.partial[cid]
        assert cid not in named, answer_id  # nothing changed as of its own date
        assert claim["label"] == world.t1[cid]["label"] == world.full[cid]["label"]
        assert claim["label"] == "supported", answer_id
    for answer_id in ("fare-early", "fare-dated"):  # the same passages as of its own date
        mark = world.partial[world.claim(answer_id)]["carried"]
        assert mark is not None and f"as of {OWN_DATES[answer_id]}" in mark["reason"]
    # (the 2024 kettle answer reads another passage it does not rest on as of 2024-06-01:
    # the index's lexical statistics are corpus-wide, so the ingest of v3 reordered two
    # weak passages even at that date; it is judged again, and comes out the same)
    # dated after v3's publication: judged again as of its own date, where 16 euros is the fare
    may = world.claim("fare-may")
    assert world.t1[may]["label"] == "contradicted"  # v3 was not in the index yet
    assert may in named and world.partial[may]["carried"] is None
    assert world.partial[may]["label"] == world.full[may]["label"] == "supported"
    answers = {a["answer_id"]: a["as_of"] for a in world.ledger.run_answers(world.partial_run)}
    for answer_id, day in OWN_DATES.items():
        assert answers[answer_id].date().isoformat() == day


@slow
def test_claims_the_superseded_fares_state_are_stale(world: World) -> None:
    """14 euros (v2) and 3 euros for a bicycle (v1, v2) were the fares until v3 (16 and 4
    euros): supported at T1, stale at T2. 12 euros (v1 only) is stale at both dates."""
    for answer_id, start, before in (
        ("fare-now", "An adult", "supported"),
        ("ferry-bikes", "", "supported"),
        ("fare-old", "", "stale"),
    ):
        cid = world.claim(answer_id, start)
        assert world.t1[cid]["label"] == before, answer_id
        assert world.partial[cid]["label"] == "stale", (answer_id, world.partial[cid]["reason"])
        assert world.full[cid]["label"] == "stale"
    # what v3 did not change stays supported
    for answer_id, start in (("ferry-times", "The ferry"), ("ferry-times", "The crossing")):
        assert world.partial[world.claim(answer_id, start)]["label"] == "supported"


# ------------------------------------------------------------------------- the chain
def _row(version: str, ingested: str, **dates: str) -> dict[str, Any]:
    def day(name: str) -> datetime | None:
        return datetime.fromisoformat(dates[name]).replace(tzinfo=UTC) if name in dates else None

    return {
        "doc_id": "doc",
        "version": version,
        "digest": version * 16,
        "published_at": day("published_at"),
        "valid_from": day("valid_from"),
        "valid_to": day("valid_to"),
        "created_at": datetime.fromisoformat(ingested).replace(tzinfo=UTC),
    }


def test_a_chain_is_ordered_as_the_index_orders_it() -> None:
    """By start (``valid_from``, else ``published_at``), not by publication date or ingest
    order; an undated version goes where ``--undated-order`` put it; the index's own
    order wins when given."""
    announced = _row("v2", "2025-01-02", published_at="2025-01-01", valid_from="2025-04-01")
    plain = _row("v3", "2025-03-02", published_at="2025-03-01")
    first = _row("v1", "2024-01-02", published_at="2024-01-01")
    assert [v.version for v in chain_of([announced, plain, first])] == ["v1", "v3", "v2"]
    newest = _row("u", "2025-06-01")  # undated, appended (--undated-order newest)
    assert [v.version for v in chain_of([newest, plain, first])] == ["v1", "v3", "u"]
    oldest = _row("u", "2025-06-01", valid_to="2024-01-01")  # before v1 (oldest)
    assert [v.version for v in chain_of([first, oldest])] == ["u", "v1"]
    given = [plain["digest"], first["digest"]]
    assert [v.version for v in chain_of([first, plain], given)] == ["v3", "v1"]
    # a version the given order does not know: the dates decide
    assert [v.version for v in chain_of([first, plain, announced], given)] == ["v1", "v3", "v2"]
