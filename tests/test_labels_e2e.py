"""The labels of claims nobody tuned for, end to end (issue 13, items 4 and 5).

A small corpus of a user's own (a credit union, an aquarium, a bridge, a library whose
opening hours changed, a council, a country, three football clubs, a county archive, a
cricketer) and answers phrased unlike the documents go through :class:`auditor.Auditor`
(rules extractor, evidence index, the default offline panel and shipped stacker, labels)
into a SQLite ledger; labels are read back from the ledger.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from auditor import AuditConfig, Auditor
from auditor.labels import LabelPolicy
from auditor.retrieval import EvidenceIndex, ingest
from auditor.retrieval.documents import make_document
from auditor.types import Answer, Context
from ledger import open_ledger

pytestmark = pytest.mark.slow

AS_OF = datetime(2025, 1, 1, tzinfo=UTC)
RULES = LabelPolicy(label_model=None)
"""These cases test the hand rules of auditor.labels (the learned decision reads them as
one of its inputs; bench/eval_authored.py measures it)."""
DOCS = [
    (
        "riverside",
        "Riverside Credit Union has branches in Millford and Oakdale. Its branches "
        "open from 9 am to 5 pm on weekdays and from 12 to 5 pm on Sundays.",
        None,
    ),
    (
        "riverside-results",
        "Riverside Credit Union said membership was up 8 percent last "
        "year, helped by its new mobile app.",
        None,
    ),
    (
        "aquarium",
        "The Bayside Aquarium opened in 2011. Its main glass tunnel is 50 metres "
        "long and holds sharks and rays.",
        None,
    ),
    (
        "bridge",
        "The Kestrel Bridge opened in 1932 and spans the river Avon at Kestrel. It is "
        "400 metres long and carries four lanes of traffic.",
        None,
    ),
    ("library", "The Elm Street library is open until 8 pm on Thursdays.", "2020-01-01"),
    (
        "library",
        "Since the 2023 budget cuts, the Elm Street library closes at 6 pm on "
        "Thursdays and stays closed on Mondays.",
        "2023-03-01",
    ),
    ("museum", "The Harbour Museum charges an entry fee of 12 euros for adults.", "2019-05-01"),
    (
        "museum",
        "After its renovation the Harbour Museum reopened with free admission for "
        "local residents and a new maritime wing.",
        "2024-02-01",
    ),
    (
        "council",
        "Since May 2024 the Brookvale city council has been chaired by Anna Berg, "
        "who succeeded Peter Holm.",
        None,
    ),
    (
        "freedonia",
        "Freedonia's head of government, Prime Minister Mira Kovac, took office in "
        "2022 after the election.",
        None,
    ),
    (
        "rovers",
        "Head coach Lena Fisk leads the Dunmore Rovers, who finished third in the "
        "league last season.",
        None,
    ),
    (
        "reed",
        "Striker Sam Reed joined the Falcons in 2022 after four seasons with the Dunmore Rovers.",
        None,
    ),
    (
        "harrow",
        "Harrow Vale Rovers is a football club founded in 1889 that plays at Quarry Lane, "
        "a stadium with 8,400 seats. The head coach is Marta Sousa, appointed in June 2023.",
        None,
    ),
    (
        "archives",
        "Westfield County Archives keeps the county's records. Since March 2024 the service "
        "has been headed by Tomas Lindqvist, previously deputy director of the Brackley "
        "archive. Priya Natarajan chairs the board of trustees.",
        None,
    ),
    (
        "cricketer",
        "Dev Patel is an English cricketer. He joined Teal Valley Cricket Club in 2022 "
        "after five seasons with Oakridge CC.",
        None,
    ),
]
DOCS += [
    (
        "university",
        "Halvorsen University was established in 1911 as a teacher training college. "
        "The main campus lies on the northern bank of the river Leden. Tuition is free for "
        "students from the region, while international students pay 9,000 euros a year.",
        None,
    ),
    (
        "observatory",
        "The Corvid Observatory sits at an altitude of 2,300 metres in the Sierra Alta. "
        "The observatory is funded jointly by three universities and employs 64 staff. "
        "Public tours run on Saturdays from April to October.",
        None,
    ),
    (
        "pinewood",
        "Pinewood 4.0 was released on 18 February 2024. It drops support for Python 3.8. "
        "The project is licensed under the Apache 2.0 licence.",
        None,
    ),
    (
        "park",
        "The boathouse cafe in Linden Lake Park is open daily from 9am to 6pm, except on Tuesdays.",
        "2021-03-01",
    ),
    (
        "park",
        "The boathouse cafe in Linden Lake Park is open daily from 9am to 6pm.",
        "2024-04-20",
    ),
]
DOCS += [
    (
        "maritime",
        "The Port Ellery Maritime Museum opened in 1962 in a former customs house. "
        "Its director is Hannah Okoro.",
        "2023-03-10",
    ),
    (
        "maritime",
        "The Port Ellery Maritime Museum opened in 1962 in a former customs house. Hannah "
        "Okoro retired in 2024; the museum is now directed by Samuel Price.",
        "2024-09-01",
    ),
    (
        "rivercats",
        "The Kestrel Bay Rivercats are a professional basketball team that plays in the "
        "National Basketball League. The team is coached by Lena Whitaker, who replaced "
        "Tom Ferris in 2024. The club's owner is the Mbeki family.",
        None,
    ),
    (
        "greenway",
        "The Ashford Greenway is a 14-kilometre walking and cycling path along a disused "
        "railway line. Horses are not permitted on the greenway.",
        None,
    ),
    (
        "stmarys",
        "St Mary's Hospital is the main hospital serving Halden. It has 420 beds. The "
        "hospital employs about 2,100 staff. Its chief executive is Dr Owen Falk.",
        None,
    ),
    (
        "leisure",
        "Halden Leisure Centre has a 25-metre swimming pool with six lanes. A single swim "
        "costs 5.20 pounds for adults.",
        "2024-02-01",
    ),
    (
        "leisure",
        "Halden Leisure Centre has a 25-metre swimming pool with six lanes. An adult swim "
        "now costs 5.80 pounds.",
        "2024-08-01",
    ),
    (
        "riverside-park",
        "Riverside Park is a football stadium in Halden and the home ground of Halden Town "
        "FC. It has a capacity of 9,800. The stadium was opened in 1926. The pitch is "
        "natural grass.",
        None,
    ),
    (
        "oakfield",
        "Oakfield Primary School is a state primary school in Halden. It has about 310 "
        "pupils. The headteacher is Mrs Joanna Kemp. The school was rated good by Ofsted "
        "in 2022.",
        None,
    ),
    (
        "dental",
        "The Elmridge Dental Clinic is on Foundry Street in Elmridge. It has four dentists "
        "and two hygienists. A routine check-up costs 45 pounds.",
        None,
    ),
    (
        "tidewell",
        "Tidewell Buses is a regional bus company based in Carrick Vale. It runs 23 routes "
        "with a fleet of 140 buses. Helen Marsh is the managing director of Tidewell Buses.",
        "2022-04-11",
    ),
    (
        "tidewell",
        "Tidewell Buses is a regional bus company based in Carrick Vale. It runs 23 routes "
        "with a fleet of 140 buses. Owen Castell became managing director of Tidewell Buses "
        "in 2024, succeeding Helen Marsh.",
        "2024-06-01",
    ),
    (
        "merrow",
        "The Merrow Sound ferry links Larnock with the island of Inchmore. The crossing "
        "takes 35 minutes. In summer it sails eight times a day; in winter it sails five "
        "times a day.",
        None,
    ),
    (
        "brookside",
        "Brookside Farm Shop is on Cutler's Lane outside Marley. The shop is open Wednesday "
        "to Sunday from 9 am to 5 pm. A pick-your-own strawberry field opens each June, "
        "charging 4 pounds per kilo.",
        "2023-04-01",
    ),
    (
        "brookside",
        "Brookside Farm Shop is on Cutler's Lane outside Marley. The shop is open Tuesday "
        "to Sunday from 9 am to 5 pm. A pick-your-own strawberry field opens each June, "
        "charging 4 pounds per kilo.",
        "2024-02-14",
    ),
    (
        "kestrel-water",
        "Kestrel Valley Water supplies drinking water to about 85,000 homes in the Kestrel "
        "Valley. Its chief executive is Mark Ellery.",
        None,
    ),
]
COURSE = Context(
    id="c1",
    text="The Red Cross first-aid course is a one-hour session held "
    "every Saturday morning at the community hall.",
)


@pytest.fixture(scope="module")
def labels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[tuple[str, str]]]:
    """(claim text, label) per answer id, from the ledger."""
    root = tmp_path_factory.mktemp("labels-e2e")
    docs = [make_document(d, t, published_at=p) if p else make_document(d, t) for d, t, p in DOCS]
    ingest(docs, root / "index")
    index = EvidenceIndex.open(root / "index")
    texts = {
        "pleasantries": "Great question! Hope this helps! Let me know if you have other questions.",
        "branches": "Riverside Credit Union operates eight branches.",
        "tanks": "The Bayside Aquarium has 50 tanks.",
        "designer": "The Kestrel Bridge was designed by Maria Lopez.",
        "founder": "The Bayside Aquarium was founded by the marine biologist Tom Grady.",
        "library": "The Elm Street library stays open until 8 pm on Thursdays.",
        "museum": "Adults pay 12 euros to enter the Harbour Museum.",
        "chair": "Peter Holm chairs the Brookvale city council.",
        "premier": "The prime minister of Freedonia is Jonas Alder.",
        "coach": "The Dunmore Rovers are coached by Tom Bale.",
        "team": "Sam Reed plays for the Dunmore Rovers.",
        "chair-ok": "Anna Berg chairs the Brookvale city council.",
        "premier-ok": "Mira Kovac is the prime minister of Freedonia.",
        "length-ok": "The Kestrel Bridge is 400 metres long.",
        "coach-page": "The head coach of Harrow Vale Rovers is Marco Bellini.",
        "head-words": "Priya Natarajan is the head of the county archive service.",
        "trustees-words": "The archive's board of trustees is chaired by Tom Baker.",
        "sponsor": "The club's stadium, Quarry Lane, is sponsored by Vale Breweries.",
        "team-pronoun": "Dev Patel plays for Oakridge CC.",
        "rank": "The Dunmore Rovers finished first in the league last season.",
        "bank": "Halvorsen University's campus is on the south bank of the Leden.",
        "tuition-ok": "Students from the region do not pay tuition at Halvorsen University.",
        "licence": "Pinewood is released under the MIT licence.",
        "python": "Pinewood 4.0 still supports Python 3.8.",
        "tours": "Public tours of the Corvid Observatory are offered on Sundays.",
        "funding": "The Corvid Observatory opened in 2004. The telescope was completed in "
        "2014. The observatory has 64 staff. It is funded by a single university.",
        "cafe": "The boathouse cafe in Linden Lake Park is closed on Tuesdays.",
        "director": "Hannah Okoro is the museum's director.",
        "director-ok": "Samuel Price directs the Port Ellery Maritime Museum.",
        "league": "The Rivercats play in the Premier Basketball League.",
        "owner": "The Rivercats are owned by the Whitaker family.",
        "horses": "Horse riders are welcome on the Ashford Greenway.",
        "run-by": "St Mary's Hospital is run by Dr Helen Marsh.",
        "school-head": "The school's head is Mr David Lowe.",
        "rated": "Ofsted rated Oakfield Primary School outstanding in 2022.",
        "employees": "St Mary's Hospital has about 2,100 employees.",
        "run-by-ok": "Dr Owen Falk runs St Mary's Hospital.",
        "stadium-designer": "The stadium was designed by Archibald Leitch.",
        "pitch": "The pitch at Riverside Park is artificial.",
        "capacity-ok": "Riverside Park holds 9,800 spectators.",
        "lanes": "Halden Leisure Centre has 25 lanes.",
        "swim-price": "An adult swim at Halden Leisure Centre costs 5.20 pounds.",
        "release-ok": "Pinewood 4.0 came out in February 2024.",
        "staff-ok": "The Elmridge Dental Clinic is on Foundry Street. Four dentists and two "
        "hygienists work at the clinic.",
        "md-stale": "Tidewell Buses operates 23 routes. The company is led by managing "
        "director Helen Marsh.",
        "sailings-ok": "In summer the Merrow Sound ferry makes eight sailings a day.",
        "sailings": "In summer the Merrow Sound ferry makes six sailings a day.",
        "farm-days": "Here is what I found about Brookside Farm Shop. It is open from "
        "Wednesday to Sunday.",
        "strawberries": "Pick-your-own strawberries at Brookside Farm Shop are free of "
        "charge each June.",
        "water": "Kestrel Valley Water provides drinking water to around eighty-five "
        "thousand homes. The company was named Utility of the Year in 2024.",
    }
    answers = [Answer(id=k, question="", answer=v) for k, v in texts.items()]
    answers += [
        Answer(
            id="course",
            question="How long is the first-aid course?",
            answer="The Red Cross first-aid course is a two-hour session.",
            contexts=(COURSE,),
        ),
        Answer(
            id="course-ok",
            question="How long is the first-aid course?",
            answer="The Red Cross first-aid course is a one-hour session.",
            contexts=(COURSE,),
        ),
    ]
    out: dict[str, list[tuple[str, str]]] = {}
    with (
        open_ledger(root / "ledger.db") as ledger,
        Auditor(index, ledger, config=AuditConfig(as_of=AS_OF, policy=RULES)) as auditor,
    ):
        summary = auditor.audit(answers)
        for row in ledger.claim_results(summary.run_id):
            out.setdefault(row.answer_id, []).append((row.text, row.label or ""))
    return out


def only(labels: dict[str, list[tuple[str, str]]], answer_id: str) -> str:
    rows = labels[answer_id]
    assert len(rows) == 1, rows
    return rows[0][1]


def test_an_answer_of_pleasantries_only_is_all_not_factual(labels: dict) -> None:
    rows = labels["pleasantries"]
    assert len(rows) == 3
    assert {label for _, label in rows} == {"not_factual"}


@pytest.mark.parametrize("answer_id", ["branches", "tanks"])
def test_a_number_in_another_slot_does_not_support(labels: dict, answer_id: str) -> None:
    # "eight branches" is not "up 8 percent"; "50 tanks" is not "50 metres"
    assert only(labels, answer_id) == "not_supported"


@pytest.mark.parametrize("answer_id", ["designer", "founder", "sponsor", "stadium-designer"])
def test_an_invented_detail_about_a_covered_subject_is_not_supported(
    labels: dict, answer_id: str
) -> None:
    assert only(labels, answer_id) == "not_supported"


@pytest.mark.parametrize("answer_id", ["library", "museum"])
def test_superseded_support_with_reworded_current_version_is_stale(
    labels: dict, answer_id: str
) -> None:
    assert only(labels, answer_id) == "stale"


@pytest.mark.parametrize(
    "answer_id",
    [
        "chair",
        "premier",
        "coach",
        "coach-page",
        "trustees-words",
    ],
)
def test_a_role_given_to_someone_else_is_contradicted(labels: dict, answer_id: str) -> None:
    assert only(labels, answer_id) == "contradicted"


@pytest.mark.parametrize("answer_id", ["chair-ok", "premier-ok", "length-ok", "course-ok"])
def test_the_right_holder_or_number_stays_supported(labels: dict, answer_id: str) -> None:
    assert only(labels, answer_id) == "supported"


def test_a_conflict_with_the_cited_context_is_weighed_before_support(labels: dict) -> None:
    assert only(labels, "course") == "contradicted"


def _reader_miss(answer_id: str, label: str) -> object:
    """A case the rules get wrong since the reader's session-18 weights (a strict xfail:
    it fails the run once it passes again). The learned decision is measured on held-out
    domains instead (bench/eval_authored.py)."""
    return pytest.param(
        answer_id,
        marks=pytest.mark.xfail(
            strict=True, reason=f"rules with the new reader label it {label} (docs/stacking.md)"
        ),
    )


@pytest.mark.parametrize(
    "answer_id",
    [_reader_miss("bank", "unknown"), "licence", _reader_miss("python", "supported"), "tours"],
)
def test_an_opposite_or_another_name_in_the_same_slot_is_contradicted(
    labels: dict, answer_id: str
) -> None:
    # south / northern bank; the MIT / the Apache 2.0 licence; "still supports" / "drops
    # support for"; Sundays / Saturdays (the claim's other words but one in the sentence)
    assert only(labels, answer_id) == "contradicted"


def test_a_negation_agreeing_with_its_clause_is_supported(labels: dict) -> None:
    # "do not pay" / "free" in the clause about the region's students (the other clause
    # says international students pay)
    assert only(labels, "tuition-ok") == "supported"


@pytest.mark.parametrize("answer_id", ["league", _reader_miss("horses", "unknown")])
def test_a_renamed_name_another_owner_or_permission_denied_is_contradicted(
    labels: dict, answer_id: str
) -> None:
    # "Premier" / "National Basketball League"; "welcome" / "not permitted"
    assert only(labels, answer_id) == "contradicted"


@pytest.mark.parametrize("answer_id", ["school-head", "pitch"])
def test_a_role_the_page_fills_said_otherwise_is_contradicted(labels: dict, answer_id: str) -> None:
    # "the school's head" / "the headteacher" (a role the page fills is relevant however
    # little else the claim shares with it)
    assert only(labels, answer_id) == "contradicted"


@pytest.mark.parametrize("answer_id", ["run-by-ok", "capacity-ok"])
def test_a_chief_executive_who_runs_it_and_a_capacity_are_supported(
    labels: dict, answer_id: str
) -> None:
    assert only(labels, answer_id) == "supported"


def test_a_conflict_the_old_version_shares_is_no_stale_support(labels: dict) -> None:
    # both versions say "six lanes": the claim was never supported, so it is contradicted;
    # the price the update changed is stale
    assert only(labels, "lanes") == "contradicted"
    assert only(labels, "swim-price") == "stale"


def test_a_number_after_a_name_says_which_one(labels: dict) -> None:
    # "Pinewood 4.0 came out" against "Pinewood 4.0 was released": the release, no count
    assert only(labels, "release-ok") == "supported"


def test_numbers_matched_in_their_slots_support_a_claim_lexical_members_doubt(
    labels: dict,
) -> None:
    # "work at" against "It has": lexical members vote against, the number judge matches "four
    # dentists" and "two hygienists" in their slots and nothing reads a conflict
    rows = labels["staff-ok"]
    assert len(rows) == 3 and {label for _, label in rows} == {"supported"}, rows


def test_a_meta_sentences_topic_and_another_range_of_days_make_a_stale_claim(
    labels: dict,
) -> None:
    # "It" is the farm shop the meta sentence names; "Wednesday to Sunday" is the old
    # version's range, the current one says "Tuesday to Sunday"
    assert [label for _, label in labels["farm-days"]] == ["not_factual", "stale"]


def test_free_of_charge_against_a_charge_is_contradicted(labels: dict) -> None:
    assert only(labels, "strawberries") == "contradicted"


def test_a_number_in_words_supports_and_the_company_is_the_named_one(labels: dict) -> None:
    assert dict(labels["water"]) == {
        "Kestrel Valley Water provides drinking water to around eighty-five thousand homes": (
            "supported"
        ),
        "Kestrel Valley Water was named Utility of the Year in 2024": "not_supported",
    }
