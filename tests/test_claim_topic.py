"""A claim that names nothing ("Adults pay £9 to get in") read as about its answer's topic.

The extractor records the named subject the answer was about (``Claim.topic``),
retrieval searches for the claim together with it, evidence that names it makes the
claim's subject covered (rule 2), and the ledger keeps it (``claim.topic``, migration
0008) so that a re-judge or the freshness watch reads the claim as the audit did.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import create_engine, inspect, text

from auditor import AuditConfig, Auditor
from auditor.labels import LabelPolicy
from auditor.retrieval import EvidenceIndex, ingest
from auditor.retrieval.documents import make_document
from auditor.types import Answer
from ledger import open_ledger
from ledger.schema import HEAD_REVISION, migrations_dir
from tests._ledger_runs import Item, begin_audit, build_run


def test_the_ledger_keeps_a_claims_topic_and_an_older_ledger_migrates(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    items = [
        Item("a1", "Adults pay £9 to get in.", "supported"),
        Item("a1", "Kessock Botanic Garden covers 28 acres.", "supported"),
    ]
    run_id, roles, results = build_run("topic", items)
    first = results[0]
    named = [replace(first.claims[0], topic="Kessock Botanic Garden"), *first.claims[1:]]
    with open_ledger(path) as ledger:
        begin_audit(ledger, run_id, roles)
        ledger.record_answers(run_id, [replace(first, claims=named)])
        topics = [c.topic for c in ledger.claim_results(run_id)]
        assert topics == ["Kessock Botanic Garden", None]
        assert ledger.claim_trail(named[0].claim_id)[0]["claim"]["topic"] == topics[0]
    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    engine = create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.downgrade(config, "0007")
    with engine.connect() as conn:
        assert "topic" not in {c["name"] for c in inspect(conn).get_columns("claim")}
    engine.dispose()
    with open_ledger(path) as ledger:  # upgraded on opening; the run's claims kept
        assert [c.topic for c in ledger.claim_results(run_id)] == [None, None]
        with ledger.engine.connect() as conn:
            rev = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
        assert rev == HEAD_REVISION == "0010"


DOCS = [
    (
        "garden",
        "The Kessock Botanic Garden covers 28 acres on the edge of Ardmore and holds more "
        "than 9,000 plant species. Admission is £9 for adults and free for children under 16.",
    ),
    (
        "ski",
        "Glenarden is a small ski resort in the Cairnmoor hills with 21 pistes served by nine "
        "lifts. A one-day adult lift pass costs £42, and children under six ski free.",
    ),
    ("museum", "The Brightwater Science Museum is free to enter. Its planetarium has 80 seats."),
    ("hut", "The Corrie Dubh Hut sleeps 24 people. A night costs £34 for non-members."),
    ("cider", "The Hollins Cider Festival takes place every August. Tickets cost £15."),
]


@pytest.mark.slow
def test_claims_that_name_nothing_are_judged_as_about_the_answers_topic(
    tmp_path: Path,
) -> None:
    ingest([make_document(d, t) for d, t in DOCS], tmp_path / "index")
    index = EvidenceIndex.open(tmp_path / "index")
    answers = [
        Answer(
            id="garden",
            question="How much is the garden?",
            answer="Here is what I found about Kessock Botanic Garden. Adults pay £9 to get in.",
        ),
        Answer(
            id="ski",
            question="Tell me about Glenarden.",
            answer="Glenarden has 21 pistes. The resort also boasts the longest zip line in "
            "the region.",
        ),
        Answer(
            id="cinema",
            question="Is there a cinema in Penmore?",
            answer="The Regal Cinema in Penmore has three screens. Tickets cost £9.",
        ),
    ]
    with (
        open_ledger(tmp_path / "ledger.db") as ledger,
        Auditor(
            index,
            ledger,
            config=AuditConfig(as_of="2026-06-30", policy=LabelPolicy(label_model=None)),
        ) as auditor,
    ):
        run = auditor.audit(answers)
        got = {(c["text"], c["topic"]): c["label"] for c in run.claims if c["factual"]}
        assert got == {
            ("Adults pay £9 to get in", "Kessock Botanic Garden"): "supported",
            ("Glenarden has 21 pistes", None): "supported",
            # an invented feature of the resort the answer is about: judged, not unknown
            ("The resort also boasts the longest zip line in the region", "Glenarden"): (
                "not_supported"
            ),
            # no document is about the cinema: the festival's "Tickets cost £15" is about
            # something else, so it neither refutes nor supports
            ("The Regal Cinema in Penmore has three screens", None): "unknown",
            ("Tickets cost £9", "The Regal Cinema in Penmore"): "unknown",
        }
        # the garden's page, not the museum's "free", came first for the unnamed claim
        adults = next(c for c in run.claims if c["text"].startswith("Adults"))
        assert adults["evidence"][0]["doc_id"] == "garden"
