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
    ],
)
def test_a_shortened_or_unrelated_name_is_no_renaming(claim: str, page: str) -> None:
    _, scores, raw = judge("entity_consistency", claim, page)
    assert raw["conflicts"] == [] and "conflict" not in scores


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


@pytest.mark.parametrize(
    "claim,page,conflict",
    [
        # who leads it, against the role that leads it
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
        # having led it is no conflict with who leads it now
        ("St Mary's Hospital was led by Marco Ruiz.", HOSPITAL, []),
    ],
)
def test_who_runs_or_leads_it_against_the_role_that_leads_it(
    claim: str, page: str, conflict: list[str]
) -> None:
    assert role_conflicts(claim, [page]) == conflict


def test_the_holder_of_a_role_that_leads_it_leads_it() -> None:
    claim = "Elena Vasquez leads the government of Serrania."
    assert role_conflicts(claim, [SERRANIA]) == [] and roles_confirmed(claim, [SERRANIA])


def test_a_role_the_evidence_fills_makes_it_relevant() -> None:
    # what the claim says of the school's head is what the page says of its headteacher
    assert role_stated("The school's head is Mr David Lowe.", [SCHOOL])
    assert not role_stated("The school's head is Mr David Lowe.", [HOSPITAL])
    assert not role_stated("The school has 310 pupils.", [SCHOOL])


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


def test_no_unit_from_a_contraction() -> None:
    assert [q.unit for q in quantities("The 3 don't work")] == [None]


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


def test_a_claim_saying_both_opposites_flips_neither() -> None:
    value, _, _ = judge(
        "negation_polarity", "Loaves from the day before are sold at half price after 4pm.", BAKERY
    )
    assert value == 0.0
    value, _, _ = judge(
        "negation_polarity", "The shops sell loaves at half price before 4pm.", BAKERY
    )
    assert value == 1.0


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
