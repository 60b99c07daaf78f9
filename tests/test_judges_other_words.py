"""Claims phrased unlike their evidence (session-14 rules): a name renamed within (same
last word, other words of its own), who owns a thing, a role given with a possessive ("the
museum's director"), holders sharing only a surname, "runs"/"leads" against any role that
leads it, permission said in other words, "only X" against "no ... apart from X", a rating
with its object, staff and employees, a version number, a capacity, the opposite word
where the claim's would stand, a subject in lower-case words, and "Its <noun>" leaving the
referent to what "Its" stood for."""

from __future__ import annotations

import pytest

from auditor.extract import build_extractor
from auditor.text import (
    claim_subject,
    quantities,
    role_conflicts,
    role_facts,
    role_stated,
    roles_confirmed,
    subject_in_evidence,
)
from auditor.types import ABSTAIN, Answer
from tests.test_judges_slots import judge

TEAM = (
    "The Kestrel Bay Rivercats are a professional basketball team that plays in the "
    "National Basketball League. Their home arena is the Harbourside Centre, which seats "
    "5,200 spectators. The team is coached by Lena Whitaker, who replaced Tom Ferris in "
    "2024. The club's owner is the Mbeki family."
)
MUSEUM = (
    "The Port Ellery Maritime Museum opened in 1962 in a former customs house. Its "
    "collection includes the lifeboat Grace Darling II. Hannah Okoro retired in 2024; the "
    "museum is now directed by Samuel Price."
)
GREENWAY = (
    "The Ashford Greenway is a 14-kilometre walking and cycling path along a disused "
    "railway line. Horses are not permitted on the greenway."
)


@pytest.mark.parametrize(
    "claim,page,renamed",
    [
        (
            "The Rivercats play in the Premier Basketball League.",
            TEAM,
            "basketball league national",
        ),
        ("The Rivercats are coached by Anna Whitaker.", TEAM, "lena whitaker"),
    ],
)
def test_a_name_renamed_within_is_a_clear_conflict(claim: str, page: str, renamed: str) -> None:
    value, scores, raw = judge("entity_consistency", claim, page)
    assert renamed in raw["conflicts"]
    assert value == 1.0 and scores["conflict"] == 1.0


@pytest.mark.parametrize(
    "claim,page",
    [
        # the evidence names it shorter or longer: no other name
        ("The Kestrel Bay Rivercats won the league.", "The Rivercats won the league in 2019."),
        ("Its collection includes the lifeboat Grace Darling II.", MUSEUM),
        ("The museum's collection includes the lifeboat Grace Darling.", MUSEUM),
        # the same last word in a sentence about something else
        (
            "The Rivercats play in the Premier Basketball League.",
            "The Premier Hockey League was founded in 1990. The National Basketball League "
            "has twelve teams.",
        ),
    ],
)
def test_a_shortened_or_unrelated_name_is_no_renaming(claim: str, page: str) -> None:
    _, scores, raw = judge("entity_consistency", claim, page)
    assert raw["conflicts"] == [] and "conflict" not in scores


def test_a_holder_sharing_only_a_surname_is_another_holder() -> None:
    # every word of "Tom Whitaker" is in the page ("Tom Ferris", "Lena Whitaker")
    value, scores, raw = judge(
        "entity_consistency", "The Rivercats are coached by Tom Whitaker.", TEAM
    )
    assert value == 1.0
    assert raw["role_conflicts"] == ["coach: lena whitaker"] and scores["conflict"] == 1.0
    _, scores, raw = judge("entity_consistency", "The Rivercats are coached by Whitaker.", TEAM)
    assert raw["role_conflicts"] == [] and "conflict" not in scores


def test_who_owns_it_is_a_role() -> None:
    assert [(f.role, f.holder) for f in role_facts("The club's owner is the Mbeki family.")] == [
        ("by:oper", frozenset({"mbeki"}))
    ]
    _, scores, raw = judge("entity_consistency", "The team is owned by the Whitaker family.", TEAM)
    assert raw["role_conflicts"] == ["by:oper: mbeki"] and scores["conflict"] == 1.0
    _, scores, raw = judge("entity_consistency", "The team is owned by the Mbeki family.", TEAM)
    assert raw["role_conflicts"] == [] and "conflict" not in scores


def test_a_role_after_a_possessive() -> None:
    # "the museum's director": the holder stands before "is"
    facts = role_facts("Hannah Okoro is the museum's director.")
    assert [(f.role, f.holder) for f in facts] == [("director", frozenset({"hannah", "okoro"}))]
    _, scores, raw = judge("entity_consistency", "Hannah Okoro is the museum's director.", MUSEUM)
    assert raw["role_conflicts"] == ["director: price samuel"] and scores["conflict"] == 1.0
    _, scores, raw = judge("entity_consistency", "Samuel Price is the museum's director.", MUSEUM)
    assert raw["role_conflicts"] == [] and "conflict" not in scores


def test_permission_said_in_other_words() -> None:
    # "welcome" is "permitted": the sentence is about the claim, and says the opposite
    value, scores, raw = judge(
        "negation_polarity", "Horse riders are welcome on the greenway.", GREENWAY
    )
    assert value == 1.0 and scores["contradiction"] == 1.0 and raw["negation_flip"]
    value, _, _ = judge("negation_polarity", "Horses are not allowed on the greenway.", GREENWAY)
    assert value == 0.0
    # one claim word ("riders") the sentence does not hold: a flip, not a clear conflict
    _, scores, _ = judge("negation_polarity", "Horse riders are welcome on the greenway.", GREENWAY)
    assert "conflict" not in scores


def claim_texts(answer: str) -> list[str]:
    return [
        c.text for c in build_extractor("rules").extract(Answer(id="a", question="", answer=answer))
    ]


def test_its_noun_leaves_the_referent_to_what_its_stood_for() -> None:
    text = (
        "The Lumen Observatory stands on Mount Corran. Its main telescope has a 2.4-metre "
        "mirror. It was built in 1988 with money from three universities."
    )
    claims = claim_texts(text)
    assert "The Lumen Observatory was built in 1988 with money from three universities" in claims
    assert "The Lumen Observatory's main telescope has a 2.4-metre mirror" in claims
    # a possessive of another number is not what the next "It" stands for
    text = (
        "The Rivercats play basketball. Their home arena is the Harbourside Centre. "
        "It seats 5,200 fans."
    )
    claims = claim_texts(text)
    assert "The Harbourside Centre seats 5,200 fans" in claims


HOSPITAL = (
    "St Mary's Hospital is the main hospital serving Halden. It has 420 beds. The hospital "
    "employs about 2,100 staff. Its chief executive is Dr Owen Falk."
)
SCHOOL = (
    "Oakfield Primary School is a state primary school in Halden. It has about 310 pupils. "
    "The headteacher is Mrs Joanna Kemp. The school was rated good by Ofsted in 2022."
)
SERRANIA = (
    "Serrania is an island kingdom. King Aurelio II is head of state. The government is led "
    "by Prime Minister Elena Vasquez of the Green Alliance."
)
ASHBY = (
    "Ashby Borough Council has 42 councillors. The leader of the council is Dev Malhotra of "
    "the Labour group. The council's chief executive is Karen Doyle."
)
FERRY = (
    "The Wey Ferry carries foot passengers across the river. The service is operated by "
    "Riverlink Boats. Its managing director is Sam Lee."
)


@pytest.mark.parametrize(
    "claim,page,conflict",
    [
        # who runs or leads it, against the role that leads it
        ("Marco Ruiz leads St Mary's Hospital.", HOSPITAL, ["leader: falk owen"]),
        ("St Mary's Hospital is run by Dr Helen Marsh.", HOSPITAL, ["leader: falk owen"]),
        ("The school's head is Mr David Lowe.", SCHOOL, ["leader: joanna kemp"]),
        # who leads the government, not the head of state (the holder's party is whose
        # the holder is, not what the role is about)
        (
            "Marco Ruiz leads the government of Serrania.",
            SERRANIA,
            ["leader: elena minister prime vasquez"],
        ),
        # an explicit leader decides before any other leading role the claim's holder has
        ("Karen Doyle leads Ashby Borough Council.", ASHBY, ["leader: dev malhotra"]),
        # "run by" an organisation, against the page's operator ("the service" is the ferry)
        ("The ferry is run by Halden Council.", FERRY, ["by:oper: boats riverlink"]),
        # having led it is no conflict with who leads it now
        ("St Mary's Hospital was led by Marco Ruiz.", HOSPITAL, []),
    ],
)
def test_who_runs_or_leads_it_against_the_role_that_leads_it(
    claim: str, page: str, conflict: list[str]
) -> None:
    assert role_conflicts(claim, [page]) == conflict


@pytest.mark.parametrize(
    "claim,page",
    [
        ("Dr Owen Falk runs St Mary's Hospital.", HOSPITAL),
        ("St Mary's Hospital is run by Dr Owen Falk.", HOSPITAL),
        ("Mrs Joanna Kemp is the head of the school.", SCHOOL),
        ("Elena Vasquez leads the government of Serrania.", SERRANIA),
        ("Dev Malhotra leads Ashby Borough Council.", ASHBY),
        ("The ferry is run by Riverlink Boats.", FERRY),
    ],
)
def test_the_holder_of_a_role_that_leads_it_runs_it(claim: str, page: str) -> None:
    assert role_conflicts(claim, [page]) == [] and roles_confirmed(claim, [page])


def test_a_role_the_evidence_fills_makes_it_relevant() -> None:
    # what the claim says of the school's head is what the page says of its headteacher
    assert role_stated("The school's head is Mr David Lowe.", [SCHOOL])
    assert not role_stated("The school's head is Mr David Lowe.", [HOSPITAL])
    assert not role_stated("The school has 310 pupils.", [SCHOOL])


@pytest.mark.parametrize(
    "claim,vote",
    [
        ("The library depends only on Pillow.", 0.0),
        ("The library has runtime dependencies.", 1.0),
    ],
)
def test_only_x_is_no_x_apart_from_x(claim: str, vote: float) -> None:
    page = "quillpdf is an open-source Python library. It has no runtime dependencies"
    page += " apart from Pillow." if vote == 0.0 else "."
    value, _, _ = judge("negation_polarity", claim, page)
    assert value == vote


def test_a_rating_with_its_object() -> None:
    value, scores, raw = judge(
        "negation_polarity", "Ofsted rated the school outstanding in 2022.", SCHOOL
    )
    assert value == 1.0 and scores["conflict"] == 1.0 and raw["antonyms"] == ["outstand"]
    value, _, _ = judge("negation_polarity", "Ofsted rated the school good in 2022.", SCHOOL)
    assert value == 0.0


def test_staff_employees_and_versions_fill_their_slots() -> None:
    assert [(q.value, q.unit) for q in quantities("has about 2,100 employees")] == [
        (2100.0, "staff")
    ]
    assert [(q.value, q.unit) for q in quantities("Version 2.0 needs Python 3.9")] == [
        (2.0, "version"),
        (3.9, "#python"),
    ]
    # a number after a capitalised word names which one, unless the word says how many
    assert [(q.value, q.unit) for q in quantities("Route 7 runs to Marsh End.")] == [
        (7.0, "#route")
    ]
    assert [(q.value, q.unit) for q in quantities("About 1,200 attendees")] == [(1200.0, "person")]
    page = "Route 7 runs between Halden bus station and Marsh End."
    value, _, _ = judge("numeric_consistency", "Route 7 links Halden bus station.", page)
    assert value == 0.0
    value, scores, _ = judge("numeric_consistency", "Route 8 links Halden bus station.", page)
    assert value == 1.0 and scores["conflict"] == 1.0
    value, _, _ = judge("numeric_consistency", "The hospital has about 2,100 employees.", HOSPITAL)
    assert value == 0.0
    value, scores, _ = judge(
        "numeric_consistency", "The hospital has about 2,400 employees.", HOSPITAL
    )
    assert value == 1.0 and scores["contradiction"] == 1.0
    page = "Version 2.0 requires Python 3.9 or later."
    value, _, _ = judge("numeric_consistency", "Version 2.0 needs Python 3.9 or newer.", page)
    assert value == 0.0


STADIUM = (
    "Riverside Park is a football stadium in Halden and the home ground of Halden Town FC. "
    "It has a capacity of 9,800. The stadium was opened in 1926. The pitch is natural grass."
)


def test_the_opposite_word_where_the_claims_would_stand() -> None:
    # two content words, one of them said as its opposite: the sentence is about the claim
    value, scores, raw = judge("negation_polarity", "The pitch is artificial.", STADIUM)
    assert value == 1.0 and scores["conflict"] == 1.0 and raw["antonyms"] == ["artifici"]
    value, _, _ = judge("negation_polarity", "The pitch is natural grass.", STADIUM)
    assert value == 0.0
    # an opposite alone does not make a sentence about the claim
    value, _, _ = judge("negation_polarity", "The roof is artificial.", STADIUM)
    assert value == ABSTAIN


def test_a_capacity_is_the_people_it_holds() -> None:
    assert [(q.value, q.unit) for q in quantities("It has a capacity of 9,800.")] == [
        (9800.0, "person")
    ]
    # a thousands separator is no year
    assert [(q.value, q.unit) for q in quantities("a capacity of 1,500")] == [(1500.0, "person")]
    value, _, _ = judge("numeric_consistency", "Riverside Park holds 9,800 spectators.", STADIUM)
    assert value == 0.0


@pytest.mark.parametrize(
    "claim,subject",
    [
        ("The stadium was designed by Archibald Leitch.", {"stadium"}),
        ("The zoo's penguin pool was designed by Berthold Lubetkin.", {"zoo", "penguin", "pool"}),
        ("The Kestrel Bridge was designed by Maria Lopez.", {"kestrel", "bridge"}),
        ("The Rivercats play in the Premier Basketball League.", {"rivercats"}),
    ],
)
def test_a_subject_in_lower_case_words(claim: str, subject: set[str]) -> None:
    assert claim_subject(claim) == subject


def test_an_agent_the_page_about_a_lower_case_subject_never_names_is_missing() -> None:
    claim = "The stadium was designed by Archibald Leitch."
    assert subject_in_evidence(claim, [STADIUM])
    value, scores, _ = judge("entity_consistency", claim, STADIUM)
    assert value == 1.0 and scores["missing_detail"] == 1.0
    # a subject the page does not hold is not covered
    assert not subject_in_evidence("The zoo's penguin pool was designed by Lubetkin.", [STADIUM])


GALLERY = (
    "The Kestrel Art Gallery holds around 3,000 works. Entry is free, but special "
    "exhibitions cost 12 pounds. It was founded in 1889 by the shipowner Henry Lister."
)


def test_a_price_in_another_clause_of_a_sentence_that_calls_it_free() -> None:
    value, scores, raw = judge(
        "numeric_consistency", "Entry to the gallery costs 12 pounds.", GALLERY
    )
    assert value == 1.0 and scores["conflict"] == 1.0 and raw["conflicts"] == ["12 pound vs free"]
    value, _, _ = judge("numeric_consistency", "Special exhibitions cost 12 pounds.", GALLERY)
    assert value == 0.0
    # a sentence with no contrast to split: "free" may be said of someone else in it
    page = "Adult tickets cost 18 pounds and children under three enter free."
    value, _, _ = judge("numeric_consistency", "Adult admission costs 18 pounds.", page)
    assert value == 0.0


def test_the_name_before_a_passive_role_is_what_it_is_about() -> None:
    # "was founded in 1889" names no founder: no conflict with Henry Lister
    assert role_facts("The Kestrel Art Gallery was founded in 1889.") == []
    _, scores, raw = judge(
        "entity_consistency", "The Kestrel Art Gallery was founded in 1889.", GALLERY
    )
    assert raw["role_conflicts"] == [] and "conflict" not in scores
    assert [(f.role, f.holder) for f in role_facts("Henry Lister was the founder.")] == [
        ("founder", frozenset({"henry", "lister"}))
    ]


def test_a_verb_cue_before_a_number_or_a_preposition_leads_nothing() -> None:
    # "It runs 23 routes" was read as Tidewell Buses leading something: a conflict with
    # "The company is led by managing director Helen Marsh" in every version
    for sentence in (
        "Tidewell Buses runs 23 routes across the Carrick Valley.",
        "The Merrow Sound ferry runs every hour in summer.",
        "Tidewell Buses runs a fleet of 140 buses.",
    ):
        assert [f for f in role_facts(sentence) if f.role == "leader"] == [], sentence
    (fact,) = role_facts("Marco Ruiz runs St Mary's Hospital.")
    assert (fact.role, fact.holder) == ("leader", frozenset({"marco", "ruiz"}))
    evidence = (
        "Tidewell Buses is a regional bus company. It runs 23 routes with a fleet of 140 "
        "buses. Helen Marsh is the managing director of Tidewell Buses."
    )
    vote, scores, _ = judge(
        "entity_consistency", "Tidewell Buses is led by managing director Helen Marsh.", evidence
    )
    assert vote == 0.0 and not scores.get("conflict")


def test_sailings_counted_per_day_are_times_a_day() -> None:
    assert [(q.value, q.unit) for q in quantities("There are eight sailings a day.")] == [
        (8.0, "time")
    ]
    assert [(q.value, q.unit) for q in quantities("Eight sailings left the port.")] == [
        (8.0, "sailing")
    ]
    ferry = "In summer it sails eight times a day; in winter it sails five times a day."
    vote, scores, raw = judge(
        "numeric_consistency", "In summer there are eight sailings a day.", ferry
    )
    assert vote == 0.0 and scores["match"] == 1.0, raw
    vote, scores, raw = judge(
        "numeric_consistency", "In summer there are six sailings a day.", ferry
    )
    assert vote == 1.0 and scores["conflict"] == 1.0, raw


def test_a_clear_match_needs_numbers_that_count_something_about_the_claim() -> None:
    clinic = "The Elmridge Dental Clinic has four dentists and two hygienists."
    _, scores, _ = judge("numeric_consistency", "Four dentists work at the clinic.", clinic)
    assert scores.get("match") == 1.0
    # a bare number or a year matches without counting anything: no clear match
    _, scores, _ = judge(
        "numeric_consistency", 'The answer to "how many cups" is 6.', "They have won 6 cups."
    )
    assert scores.get("support") == 1.0 and "match" not in scores
    _, scores, _ = judge(
        "numeric_consistency", "The clinic opened in 1998.", "The clinic opened in 1998."
    )
    assert scores.get("support") == 1.0 and "match" not in scores


def test_a_time_range_with_between_stays_one_claim() -> None:
    assert claim_texts("The Halvorsen Library is big. At weekends it opens between 10am and 6pm.")[
        1:
    ] == ["At weekends the Halvorsen Library opens between 10am and 6pm"]


def test_the_noun_a_named_thing_is_also_called_stands_for_it() -> None:
    # a stadium is also a ground; "Radio X" is a station; "the station's" is possessive
    assert claim_texts(
        "Portgate Stadium is the home of Portgate Rovers. The ground was opened in 1998."
    )[1:] == ["Portgate Stadium was opened in 1998"]
    assert claim_texts(
        "Radio Kestrelford went on air in 2009. The station's manager is Peter Olsen."
    )[1:] == ["Radio Kestrelford's manager is Peter Olsen"]
    # a company named by its founder's sentence is not "the company" (the founder is)
    assert claim_texts("Steve Jobs co-founded Apple. The company is based in Cupertino.")[1:] == [
        "The company is based in Cupertino"
    ]


def test_around_the_clock_is_24_hours_and_extra_is_not_included() -> None:
    claim = "The pharmacy is open 24 hours a day."
    for evidence in ("The Elm Street pharmacy is open around the clock.", "It is open 24/7."):
        vote, scores, raw = judge("numeric_consistency", claim, evidence)
        assert vote == 0.0 and scores["match"] == 1.0, raw
    vote, scores, raw = judge(
        "numeric_consistency",
        "The pharmacy is open 12 hours a day.",
        "The Elm Street pharmacy is open around the clock.",
    )
    assert vote == 1.0 and scores["conflict"] == 1.0, raw
    hotel = "The Harbour Hotel has 40 rooms. Breakfast is included in the room rate."
    vote, scores, raw = judge("negation_polarity", "Breakfast costs extra.", hotel)
    assert vote == 1.0 and scores["contradiction"] == 1.0, raw
    vote, _, raw = judge("negation_polarity", "Breakfast is included in the price.", hotel)
    assert vote == 0.0, raw


def test_a_refusal_after_a_lead_in_and_its_own_its() -> None:
    claims = build_extractor("rules").extract(
        Answer(
            id="a",
            question="",
            answer="St Aidan's is a primary school in Westbury. The school's head is Mrs Helen "
            "Carter. It has roughly 310 pupils. Based on the documents I have, I can't tell "
            "you about its uniform policy. Therefore, 37 + 63 = 100. The centre's main pool "
            "has eight lanes. The centre opens its doors at 6:30 am.",
        )
    )
    got = [(c.text, c.factual) for c in claims]
    # "It" is not the head teacher (a titled person); "St Aidan's" is its own possessive
    assert ("St Aidan's head is Mrs Helen Carter", True) in got
    assert ("It has roughly 310 pupils", True) in got
    # the refusal after "Based on the documents I have," is not factual; a sum after
    # "Therefore," is
    refusal = next(c for c in claims if "uniform" in c.text)
    assert not refusal.factual and refusal.kind == "refusal"
    assert ("Therefore, 37 + 63 = 100.", True) in got
    # a thing's "its" is its own, not the last subject's
    assert ("The centre opens its doors at 6:30 am", True) in got


def test_an_owner_described_before_its_name_is_the_holder() -> None:
    (fact,) = role_facts(
        "Kestwick Regional Airport is owned by a private company, Northgate Aviation Ltd."
    )
    assert (fact.role, fact.holder) == ("by:oper", frozenset({"northgate", "aviation"}))
    vote, scores, raw = judge(
        "entity_consistency",
        "Kestwick Regional Airport is owned by a private company, Northgate Aviation Ltd.",
        "Kestwick Regional Airport lies 8 kilometres north of Kestwick and is owned by "
        "Kestwick County Council.",
    )
    assert vote == 1.0 and scores["conflict"] == 1.0, raw
    vote, scores, raw = judge(
        "entity_consistency",
        "Kestwick Regional Airport is owned by its council, Kestwick County Council.",
        "Kestwick Regional Airport lies 8 kilometres north of Kestwick and is owned by "
        "Kestwick County Council.",
    )
    assert vote == 0.0 and not scores.get("conflict"), raw


def test_banned_against_allowed_is_a_flip() -> None:
    vote, scores, raw = judge(
        "negation_polarity",
        "Dogs are banned on the Wyndale Way.",
        "The Wyndale Way is a 22-kilometre trail. Dogs are allowed on the Wyndale Way but "
        "must be kept on a lead from March to July.",
    )
    assert vote == 1.0 and scores["conflict"] == 1.0, raw


@pytest.mark.parametrize(
    ("claim", "vote"),
    [
        ("The museum is open on Tuesdays.", 1.0),  # outside "Wednesday to Sunday"
        ("The museum is open on Fridays.", 0.0),  # inside it
        ("The market is held in December.", 1.0),  # outside "from April to October"
        ("The market is held in July.", 0.0),
    ],
)
def test_a_day_or_month_outside_a_stated_range_is_a_flip(claim: str, vote: float) -> None:
    evidence = (
        "Entry is free, and the museum is open Wednesday to Sunday from 10 am to 4 pm. "
        "The market is held every Saturday from April to October."
    )
    got, _, raw = judge("negation_polarity", claim, evidence)
    assert got == vote, raw


def test_a_range_round_the_year_end_and_weekday_plurals_are_no_names() -> None:
    winter = "The market is held every Saturday from November to February."
    assert judge("negation_polarity", "The market is held in January.", winter)[0] == 0.0
    assert judge("negation_polarity", "The market is held in June.", winter)[0] == 1.0
    # "Mondays" is a weekday, not a name the evidence lacks
    vote, _, raw = judge(
        "entity_consistency",
        "The box office is open on Mondays.",
        "The box office is open from Tuesday to Saturday.",
    )
    assert vote == 0.5 and raw["reason"] == "no names in claim"


@pytest.mark.parametrize(
    ("claim", "page", "vote"),
    [
        # another range of days than the page's one range: a clear conflict
        (
            "Hartwell Library opens from Tuesday through Saturday",
            "Hartwell Library is on Quarry Lane. The library is open Monday to Saturday.",
            1.0,
        ),
        (
            "Brookside Farm Shop is open from Wednesday to Sunday",
            "Brookside Farm Shop sells eggs. The shop is open Tuesday to Sunday.",
            1.0,
        ),
        # the same range, and a page with two ranges, decide nothing against it
        (
            "Hartwell Library opens from Monday through Saturday",
            "Hartwell Library is on Quarry Lane. The library is open Monday to Saturday.",
            0.0,
        ),
        (
            "The shop is open Monday to Friday",
            "The shop is open Monday to Friday from 9 am and Saturday to Sunday from 10 am.",
            0.0,
        ),
        # a list of days naming one the page's list leaves out
        (
            "Squad sessions take place on Monday, Wednesday and Thursday evenings",
            "Squad sessions take place on Monday, Tuesday and Thursday evenings.",
            1.0,
        ),
        (
            "Squad sessions take place on Monday and Thursday evenings",
            "Squad sessions take place on Monday, Tuesday and Thursday evenings.",
            0.0,
        ),
        # "free of charge" against a charge for the same thing
        (
            "Pick-your-own strawberries are free of charge each June",
            "A pick-your-own strawberry field opens each June, charging £4 per kilo.",
            1.0,
        ),
    ],
)
def test_another_range_of_days_and_a_charge_against_free(
    claim: str, page: str, vote: float
) -> None:
    value, scores, _ = judge("negation_polarity", claim, page)
    assert value == vote
    if vote == 1.0:
        assert scores["conflict"] == 1.0


@pytest.mark.parametrize(
    ("claim", "vote"),
    [
        # another range differing by two months (April and October) is one flip
        ("A warden staffs Gowan Fell Hut from May to September", 1.0),
        ("A warden staffs Gowan Fell Hut from April to October", 0.0),
    ],
)
def test_a_range_of_months_from_may(claim: str, vote: float) -> None:
    page = (
        "Gowan Fell Hut is a stone mountain hut. It is owned by the Northern Fell Club and "
        "staffed by a warden from April to October."
    )
    value, _, _ = judge("negation_polarity", claim, page)
    assert value == vote


# ------------------------------------------------------------------ session 17
FERRY = (
    "An adult single ticket for a foot passenger costs £12, and children under five travel free."
)
GARDEN = "Admission is £9 for adults and free for children under 16."
BREWERY = "Brewery tours run on Saturday afternoons and cost £15, including three tasters."


def test_an_age_after_younger_than_and_no_unit_from_a_contraction() -> None:
    assert [(q.value, q.unit) for q in quantities("Kids younger than five don't pay")] == [
        (5.0, "age")
    ]
    assert [q.unit for q in quantities("The 3 don't work")] == [None]
    value, scores, _ = judge("numeric_consistency", "Kids younger than five don't pay.", FERRY)
    assert value == 0.0 and scores["support"] == 1.0


@pytest.mark.parametrize(
    "claim", ["Kids younger than five don't pay anything.", "Visitors can come at 2pm."]
)
def test_a_plural_opening_the_sentence_is_no_name(claim: str) -> None:
    value, _, raw = judge("entity_consistency", claim, FERRY)
    assert value == ABSTAIN and raw["reason"] == "no names in claim"
    # a name opening the sentence still is one
    value, _, raw = judge("entity_consistency", "Athena Ferries sells tickets.", FERRY)
    assert value == 1.0 and raw["missing"]


@pytest.mark.parametrize(
    ("claim", "evidence", "flip"),
    [
        ("A foot passenger pays £12 for a single ticket.", FERRY, False),  # children's "free"
        ("An adult pays £12 for a ticket, and children under five travel free.", FERRY, False),
        ("Children under five pay for a ticket.", FERRY, True),
        ("Adults pay £9 to get in.", GARDEN, False),  # "free" is said of children
        ("Children under 16 pay to get in.", GARDEN, True),
        (
            "Dogs are allowed in the cafe.",
            "Dogs are allowed in the garden and not in the cafe.",
            True,
        ),
        (
            "Dogs are allowed in the garden.",
            "Dogs are allowed in the garden and not in the cafe.",
            False,
        ),
        ("Tours of the brewery are free.", BREWERY, True),  # "cost £15" is said of the tours
        ("Entry to the museum costs 5 pounds.", "Entry to the museum is free.", True),
        ("Entry to the museum costs nothing.", "Entry to the museum is free.", False),
    ],
)
def test_polarity_of_parts_joined_by_and(claim: str, evidence: str, flip: bool) -> None:
    value, scores, _ = judge("negation_polarity", claim, evidence)
    assert (value == 1.0 and scores["contradiction"] == 1.0) is flip
    assert value != ABSTAIN


ORCHESTRA = (
    "The Wexley Community Orchestra is an amateur orchestra of about 60 players. The "
    "orchestra's conductor is Rachel Amadi, and its chair is Peter Lindsay."
)
BAKERY = (
    "Crumb & Crust is a bakery chain based in Dunmere. The shops sell day-old loaves at half "
    "price after 4pm. The chain employs 95 people."
)


@pytest.mark.parametrize(
    ("claim", "conflict"),
    [
        ("The Wexley Community Orchestra is conducted by Peter Lindsay.", True),
        ("Peter Lindsay conducts the Wexley Community Orchestra.", True),
        ("Rachel Amadi conducts the Wexley Community Orchestra.", False),
    ],
)
def test_who_conducts_is_a_role(claim: str, conflict: bool) -> None:
    value, scores, raw = judge("entity_consistency", claim, ORCHESTRA)
    assert bool(raw["role_conflicts"]) is conflict
    assert value == (1.0 if conflict else 0.0)
    assert (scores.get("conflict") == 1.0) is conflict


def test_a_name_before_based_is_the_name() -> None:
    lumivox = "Lumivox is a Leeds-based startup that makes speech-recognition software."
    value, _, raw = judge("entity_consistency", "Lumivox is based in Leeds.", lumivox)
    assert value == 0.0 and raw["missing"] == []
    value, _, raw = judge("entity_consistency", "Lumivox is based in York.", lumivox)
    assert value == 1.0 and raw["missing"] == ["york"]


def test_won_is_no_negation() -> None:
    race = "The 2025 edition covered 512 kilometres and was won by Jonas Lindqvist."
    value, _, _ = judge("negation_polarity", "The 2025 edition covered 512 km.", race)
    assert value == 0.0
    value, _, _ = judge("negation_polarity", "The 2025 edition did not cover 512 km.", race)
    assert value == 1.0


def test_a_claim_saying_both_opposites_flips_neither_and_takes_place_is_one_verb() -> None:
    value, _, _ = judge(
        "negation_polarity", "Loaves from the day before are sold at half price after 4pm.", BAKERY
    )
    assert value == 0.0
    value, _, _ = judge(
        "negation_polarity", "The shops sell loaves at half price before 4pm.", BAKERY
    )
    assert value == 1.0
    ski = "Night skiing is offered on Friday evenings on the nursery slope."
    value, scores, _ = judge(
        "negation_polarity", "Night skiing takes place on Saturday evenings.", ski
    )
    assert value == 1.0 and scores["conflict"] == 1.0


def test_people_a_company_employs_are_its_staff() -> None:
    assert [q.unit for q in quantities("The chain employs 95 people.")] == ["staff"]
    assert [q.unit for q in quantities("The hall holds 95 people.")] == ["person"]
    value, scores, _ = judge("numeric_consistency", "The chain has ninety-five staff.", BAKERY)
    assert value == 0.0 and scores["support"] == 1.0
    value, scores, _ = judge("numeric_consistency", "The chain has 45 staff.", BAKERY)
    assert value == 1.0 and scores["support"] == 0.0
    value, scores, _ = judge("numeric_consistency", "The chain employs 45 people.", BAKERY)
    assert value == 1.0 and scores["conflict"] == 1.0


def test_a_number_counts_the_nouns_of_its_noun_phrase() -> None:
    food_bank = "Last year the food bank handed out 4,300 emergency food parcels."
    assert [q.nouns for q in quantities(food_bank)] == [("food", "parcel")]
    value, scores, _ = judge("numeric_consistency", "It gave out 4,300 parcels.", food_bank)
    assert value == 0.0 and scores["match"] == 1.0
    value, scores, _ = judge(
        "numeric_consistency", "The food bank gave out 5,000 parcels last year.", food_bank
    )
    assert value == 1.0 and scores["conflict"] == 1.0
    garden = "The garden holds more than 9,000 plant species."
    value, _, _ = judge("numeric_consistency", "The garden has 9,000 species of plants.", garden)
    assert value == 0.0
    # a verb after the noun is no noun of it
    assert [q.nouns for q in quantities("The 40 cars waited in line.")] == [()]
