"""Judges compare like with like (issue 13, item 5): a number, date or name supports or
contradicts a claim only in the same slot about the same subject."""

from __future__ import annotations

import json

import pytest

from auditor.judges.catalog import build_judge
from auditor.text import Quantity, claim_subject, quantities, role_conflicts, role_facts, same_slot
from auditor.types import ABSTAIN, JudgePair

BRANCHES = (
    "Riverside Credit Union has branches in Millford and Oakdale.",
    "Riverside Credit Union said membership was up 8 percent last year.",
)


def judge(name: str, claim: str, *evidence: str) -> tuple[float, dict[str, float], dict]:
    vote = build_judge(name).judge_sync([JudgePair(claim, tuple(evidence))])[0]
    return vote.value, dict(vote.scores), json.loads(vote.raw)


def slots(text: str) -> list[tuple[float, str | None]]:
    return [(q.value, q.unit) for q in quantities(text)]


def test_quantities_carry_their_slot() -> None:
    assert slots("Riverside operates eight branches.") == [(8.0, "branch")]
    assert slots("membership was up 8 percent") == [(8.0, "percent")]
    assert slots("up 8% on the year") == [(8.0, "percent")]
    assert slots("a two-hour course and a one-hour session") == [(2.0, "hour"), (1.0, "hour")]
    assert slots("its tunnel is 50 metres long") == [(50.0, "meter")]
    assert slots("cost 2.1 billion dollars, a fare of $2.50") == [
        (2.1e9, "dollar"),
        (2.5, "dollar"),
    ]
    assert slots("It opened on 14 May 1998.") == [(14.0, "may"), (1998.0, "year")]
    assert slots("In 2023 Northwind carried 61.4 million passengers") == [
        (2023.0, "year"),
        (61.4e6, "passenger"),
    ]
    # "one" is a number only before a unit of measure
    assert slots("one of the oldest bridges") == []


def test_same_slot() -> None:
    def q(value: float, unit: str | None) -> Quantity:
        return Quantity(value, unit, 0, 1)

    assert same_slot(q(8, "branch"), q(8, "branch"))
    assert not same_slot(q(8, "branch"), q(8, "percent"))
    assert same_slot(q(47, None), q(47, "station"))
    assert not same_slot(q(1998, "year"), q(1998, None))


def test_a_number_in_another_slot_does_not_support() -> None:
    value, scores, raw = judge(
        "numeric_consistency", "Riverside Credit Union operates eight branches.", *BRANCHES
    )
    assert value == 1.0 and scores["contradiction"] == 0.0 and scores["missing_detail"] == 1.0
    assert raw["missing"] == ["8 branch"]
    value, scores, _ = judge(
        "numeric_consistency",
        "The Bayside Aquarium has 50 tanks.",
        "The Bayside Aquarium's main glass tunnel is 50 metres long.",
    )
    assert value == 1.0 and scores["contradiction"] == 0.0


def test_the_same_number_in_the_same_slot_supports() -> None:
    value, _, raw = judge(
        "numeric_consistency",
        "Riverside Credit Union operates eight branches.",
        "Riverside Credit Union operates 8 branches in the county.",
    )
    assert value == 0.0 and raw["matched"] == ["8 branch"]
    value, _, _ = judge(
        "numeric_consistency",
        "The network has 47 stations.",
        "The Northwind network has 47 stations on four lines.",
    )
    assert value == 0.0


def test_a_different_value_in_the_same_slot_is_a_clear_conflict() -> None:
    value, scores, raw = judge(
        "numeric_consistency",
        "The Red Cross first-aid course is a two-hour session.",
        "The Red Cross first-aid course is a one-hour session.",
    )
    assert value == 1.0 and scores["conflict"] == 1.0 and scores["contradiction"] == 1.0
    assert raw["conflicts"] == ["2 hour vs 1 hour"]
    # ... and both directions of the comparison
    value, scores, _ = judge(
        "numeric_consistency",
        "The Red Cross first-aid course is a one-hour session.",
        "The Red Cross first-aid course is a two-hour session.",
    )
    assert value == 1.0 and scores["conflict"] == 1.0
    # a different number in another slot of the same sentence is no conflict
    value, scores, _ = judge(
        "numeric_consistency",
        "The Red Cross first-aid course takes two hours.",
        "The Red Cross first-aid course has 12 places and starts at 9 am.",
    )
    assert value == 1.0 and "conflict" not in scores and scores["contradiction"] == 0.0
    # years conflict with years
    value, scores, _ = judge(
        "numeric_consistency",
        "The Kestrel Bridge opened in 1932.",
        "The Kestrel Bridge opened in 1931.",
    )
    assert scores.get("conflict") == 1.0


def test_numeric_judge_abstains_without_numbers() -> None:
    assert judge("numeric_consistency", "The bridge is long.", "It is long.")[0] == ABSTAIN


ROLES = {
    "council": "Since May 2024 the Brookvale city council has been chaired by Anna Berg, "
    "who succeeded Peter Holm.",
    "freedonia": "Freedonia's head of government, Prime Minister Mira Kovac, took office in 2022.",
    "rovers": "Head coach Lena Fisk leads the Dunmore Rovers, who finished third.",
    "reed": "Striker Sam Reed joined the Falcons in 2022 after four seasons with the "
    "Dunmore Rovers.",
}


@pytest.mark.parametrize(
    "claim,doc,holder",
    [
        ("Peter Holm chairs the Brookvale city council.", "council", "chair: anna berg"),
        (
            "The prime minister of Freedonia is Jonas Alder.",
            "freedonia",
            "head_of_government: kovac mira",
        ),
        (
            "Jonas Alder, the prime minister of Freedonia, visited Oslo.",
            "freedonia",
            "head_of_government: kovac mira",
        ),
        ("The Dunmore Rovers are coached by Tom Bale.", "rovers", "coach: fisk lena"),
    ],
)
def test_a_role_given_to_someone_else_is_a_conflict(claim: str, doc: str, holder: str) -> None:
    assert role_conflicts(claim, [ROLES[doc]]) == [holder]
    value, scores, raw = judge("entity_consistency", claim, ROLES[doc])
    assert value == 1.0 and scores["conflict"] == 1.0 and raw["role_conflicts"] == [holder]


@pytest.mark.parametrize(
    "claim,doc",
    [
        ("Anna Berg chairs the Brookvale city council.", "council"),
        ("Mira Kovac is the prime minister of Freedonia.", "freedonia"),
        ("Lena Fisk coaches the Dunmore Rovers.", "rovers"),
        # a role about something else is no conflict
        ("Tom Bale chairs the Oakdale rowing club.", "council"),
    ],
)
def test_the_same_holder_or_another_subject_is_no_conflict(claim: str, doc: str) -> None:
    assert role_conflicts(claim, [ROLES[doc]]) == []


ROVERS_PAGE = (
    "Harrow Vale Rovers is a football club founded in 1889. The head coach is Elena Sousa, "
    "appointed in June 2023."
)
ARCHIVES_PAGE = (
    "Westfield County Archives keeps the county's records. Since March 2024 the service has "
    "been headed by Tomas Lindqvist, previously deputy director of the Brackley archive. "
    "Priya Natarajan chairs the board of trustees."
)

CRICKETER_PAGE = (
    "Dev Patel is an English cricketer. He joined Teal Valley Cricket Club in 2022 after "
    "five seasons with Oakridge CC."
)


@pytest.mark.parametrize(
    "claim,evidence,holder",
    [
        # the evidence sentence names nothing the role is about: its page does
        (
            "The head coach of Harrow Vale Rovers is Marco Bellini.",
            ROVERS_PAGE,
            "coach: elena sousa",
        ),
        # the claim names nothing the role is about: its words do ("headed by", "the service")
        (
            "The archive's board of trustees is chaired by Tom Baker.",
            ARCHIVES_PAGE,
            "chair: natarajan priya",
        ),
    ],
)
def test_a_role_is_about_what_its_page_or_its_words_name(
    claim: str, evidence: str, holder: str
) -> None:
    assert role_conflicts(claim, [evidence]) == [holder]


@pytest.mark.parametrize(
    "claim,evidence",
    [
        ("Elena Sousa coaches Harrow Vale Rovers.", ROVERS_PAGE),
        ("Tomas Lindqvist heads the county archive service.", ARCHIVES_PAGE),
        ("Dev Patel plays for Teal Valley Cricket Club.", CRICKETER_PAGE),
        # another role: a qualifier before the cue
        ("Marco Bellini is the assistant coach of Harrow Vale Rovers.", ROVERS_PAGE),
        (
            "The head coach of Harrow Vale Rovers is Marco Bellini.",
            "Harrow Vale Rovers is a football club. The youth team is coached by Elena Sousa.",
        ),
        # another thing: a modifier of the claim's replaced ("audit" for "finance")
        ("Anna Smith chairs the finance committee.", "Bob Jones chairs the audit committee."),
        # a page about something else
        ("Marco Bellini coaches Harrow Vale Rovers.", "Elena Sousa coaches Dunmore City."),
    ],
)
def test_the_same_holder_another_role_or_another_thing_is_no_conflict(
    claim: str, evidence: str
) -> None:
    assert role_conflicts(claim, [evidence]) == []


def test_a_pronoun_is_read_as_the_name_its_passage_starts_with() -> None:
    from auditor.text import resolved_sentences

    assert resolved_sentences(CRICKETER_PAGE)[1].startswith("Dev Patel joined")
    museum = "The Harbour Museum in Port Ellis opened in 1988. Its director is Colin Marsh."
    assert resolved_sentences(museum)[1] == "The Harbour Museum's director is Colin Marsh."
    # a passage opening with "The ..." before its first verb lends that phrase
    hours = "The central library is open on Saturdays. It is closed on Sundays."
    assert resolved_sentences(hours)[1] == "The central library is closed on Sundays."
    # a passage that starts with neither is left as it is
    vague = "Opening hours vary by branch. It is closed on Sundays."
    assert resolved_sentences(vague)[1] == "It is closed on Sundays."


def test_a_pronoun_sentence_is_an_anchor_for_the_polarity_judge() -> None:
    page = (
        "The central library is open from 9 am to 8 pm on weekdays and from 10 am to 4 pm "
        "on Saturdays. It is closed on Sundays. Branch libraries open four days a week."
    )
    value, _, raw = judge("negation_polarity", "The central library is open on Sundays.", page)
    assert value == 1.0 and raw["antonyms"] == ["open"]
    assert raw["sentence"] == "The central library is closed on Sundays."
    value, _, _ = judge("negation_polarity", "The central library is open on Saturdays.", page)
    assert value == 0.0


def test_a_name_whose_last_word_the_evidence_never_gives_is_a_missing_detail() -> None:
    claim = "The club's stadium, Quarry Lane, is sponsored by Vale Breweries."
    page = "Harrow Vale Rovers play at Quarry Lane, a stadium with 8,400 seats."
    value, scores, raw = judge("entity_consistency", claim, page)
    assert raw["missing"] == ["breweries"]  # "vale" is there, in "Harrow Vale"
    assert value == 1.0 and scores["missing_detail"] == 1.0 and scores["contradiction"] == 0.0
    # every name there (a shorter form counts): no missing detail
    value, scores, _ = judge("entity_consistency", "Quarry Lane is the home of the Rovers.", page)
    assert value == 0.0 and "missing_detail" not in scores


def test_co_holders_all_hold_the_role() -> None:
    facts = role_facts("Acme Labs was founded by Larry Page and Sergey Brin in 1998.")
    assert facts and facts[0].holder == {"larry", "page", "sergey", "brin"}
    assert (
        role_conflicts(
            "Sergey Brin founded Acme Labs.",
            ["Acme Labs was founded by Larry Page and Sergey Brin."],
        )
        == []
    )


def test_a_name_the_evidence_about_the_subject_never_gives_is_a_missing_detail() -> None:
    value, scores, _ = judge(
        "entity_consistency",
        "The Kestrel Bridge was designed by Maria Lopez.",
        "The Kestrel Bridge opened in 1932 and spans the river Avon.",
    )
    assert value == 1.0 and scores["missing_detail"] == 1.0 and scores["contradiction"] == 0.0
    # evidence about another subject: the name is missing, but not a detail of it
    value, scores, _ = judge(
        "entity_consistency",
        "The Kestrel Bridge was designed by Maria Lopez.",
        "The Avon Tunnel opened in 1932.",
    )
    assert value == 1.0 and "missing_detail" not in scores
    assert claim_subject("The Kestrel Bridge was designed by Maria Lopez.") == {"kestrel", "bridge"}


def test_antonyms_match_across_inflections() -> None:
    value, scores, raw = judge(
        "negation_polarity",
        "Riverside Credit Union branches are closed on Sundays.",
        "Riverside Credit Union branches open from 12 to 5 pm on Sundays.",
    )
    assert value == 1.0 and scores["contradiction"] == 1.0 and raw["antonyms"]
    value, _, _ = judge(
        "negation_polarity",
        "Riverside Credit Union branches open on Sundays.",
        "Riverside Credit Union branches open from 12 to 5 pm on Sundays.",
    )
    assert value == 0.0


@pytest.mark.parametrize("apostrophe", ["'", "\u2019"])
def test_a_possessive_name_in_the_claim_matches_the_same_name_in_the_evidence(
    apostrophe: str,
) -> None:
    # a claim restating its evidence word for word, possessive and all, is no missing name
    claim = f"The light source of the Great Tower Neuwerk{apostrophe}s beacon is kerosene."
    value, scores, _ = judge(
        "entity_consistency",
        claim,
        f"As of 1892, the Great Tower Neuwerk{apostrophe}s beacon used kerosene.",
    )
    assert value == 0.0 and scores["support"] == 1.0
    value, _, _ = judge("entity_consistency", claim, "The Great Tower Hamburg used kerosene.")
    assert value == 1.0


@pytest.mark.parametrize(
    "claim,value",
    [
        ("The club finished fourth in the 2023-24 season.", 0.0),
        # a rank in no slot the evidence fills, and a number of seconds: no conflict
        ("The first team plays at Quarry Lane.", ABSTAIN),
    ],
)
def test_a_rank_in_the_same_slot_is_a_number_too(claim: str, value: float) -> None:
    page = (
        "Harrow Vale Rovers is a football club founded in 1889. The club finished fourth in "
        "the 2023-24 season, its best result in 20 years. Lanford is the second largest city "
        "in the county."
    )
    vote, scores, _ = judge("numeric_consistency", claim, page)
    assert vote == value
    assert (scores.get("conflict") == 1.0) == (value == 1.0)


KELDER_PAGE = (
    "Kelder Rovers are a football club based in Kelder. In 2024 the club moved from Mill "
    "Lane to the new Riverside Stadium, which holds 6,000 spectators. The manager is Sean "
    "Brody, and the captain is Luis Ortega."
)
PATH_PAGE = (
    "The Alne Valley cycle path runs for 34 kilometres from Ashcombe to Seaholme. The path "
    "was opened in 2008 and is maintained by the county council."
)
BREWERY_PAGE = (
    "Lindqvist Brewery was founded in 1988 in Tarnby. The brewery offers guided tours twice "
    "a week, each lasting about 45 minutes. In 2019 it was bought by the Nordhavn Group."
)
UNIVERSITY_PAGE = (
    "The University of Kestrel Bay was established in 1965 and has about 18,000 students. "
    "Its vice-chancellor is Professor Ruth Adeyemi. The university has five faculties."
)
BRIDGE_PAGE = (
    "Tamsford Bridge is a suspension bridge over the river Orme. It was opened in 1931 by "
    "Queen Mary. The main span is 320 metres long."
)
FESTIVAL_PAGE = (
    "The Port Ellis Folk Festival takes place every August on the seafront. It was founded "
    "in 2002 by the musician Ruth Calloway. The festival is organised by the Ellis Arts "
    "Trust, whose chair is Dominic Reyes."
)
TRUST_PAGE = (
    "Northmere Hospitals Trust runs four hospitals in Westshire. Dr Miriam Osei became chief "
    "executive in January 2025, succeeding Dr Alan Pryce. The trust employs 7,900 staff."
)
COMPANY_PAGE = (
    "Quillon Software makes accounting software for small firms. In 2025 the company moved "
    "its headquarters from Dunmore to Ashby. Petra Lind, who founded the company, stepped "
    "down as chair in March 2025 and was replaced by Omar Haddad."
)
CLUB_PAGE = (
    "Port Ellis Rowing Club was formed in 1899. In 2024 the club relocated from Quay Road to "
    "a new boathouse at Mill Wharf. Its captain is now Tomasz Nowak."
)


@pytest.mark.parametrize(
    "claim,page,conflict",
    [
        # a title is not part of the name: two professors are two people
        (
            "The vice-chancellor of the University of Kestrel Bay is Professor Daniel Okafor.",
            UNIVERSITY_PAGE,
            "head_of_government:vice: adeyemi ruth",
        ),
        # who did it ("opened by", "founded ... by the musician") is a role of its own
        ("Tamsford Bridge was opened by King George V.", BRIDGE_PAGE, "by:open: mary queen"),
        (
            "The Port Ellis Folk Festival was founded by the singer Martin Hale in 2002.",
            FESTIVAL_PAGE,
            "founder: calloway ruth",
        ),
        (
            "Dominic Reyes founded the Port Ellis Folk Festival in 2010.",
            FESTIVAL_PAGE,
            "founder: calloway ruth",
        ),
        # a predecessor ("succeeding Dr Alan Pryce") neither holds the role nor is its subject
        # "run by" and "operated by" name the same role
        # a name the evidence says was left for another
        # a name holding another role in the same sentence is not what the role is about
        ("The manager of Kelder Rovers is Luis Ortega.", KELDER_PAGE, "coach: brody sean"),
        # a holder described in words, not named
        (
            "The Alne Valley cycle path is maintained by a charity called Sustrans.",
            PATH_PAGE,
            "by:maintain: council county",
        ),
    ],
)
def test_slots_filled_by_someone_else(claim: str, page: str, conflict: str) -> None:
    value, scores, raw = judge("entity_consistency", claim, page)
    assert raw["role_conflicts"] == [conflict]
    assert value == 1.0 and scores["conflict"] == 1.0


@pytest.mark.parametrize(
    "claim,page",
    [
        (
            "Professor Ruth Adeyemi is the vice-chancellor of the University of Kestrel Bay.",
            UNIVERSITY_PAGE,
        ),
        ("Tamsford Bridge was opened by Queen Mary.", BRIDGE_PAGE),
        ("The Port Ellis Folk Festival was founded by Ruth Calloway.", FESTIVAL_PAGE),
        ("The Ellis Arts Trust is chaired by Dominic Reyes.", FESTIVAL_PAGE),
        ("The chief executive of the Northmere trust is Dr Miriam Osei.", TRUST_PAGE),
        ("Quillon Software is headquartered in Ashby.", COMPANY_PAGE),
        ("Quillon Software moved its headquarters from Dunmore to Ashby.", COMPANY_PAGE),
        # a claim that places itself in the past is not contradicted by the move
        ("Quillon Software was originally headquartered in Dunmore.", COMPANY_PAGE),
        ("Tomasz Nowak captains Port Ellis Rowing Club.", CLUB_PAGE),
        ("Kelder Rovers' captain is Luis Ortega.", KELDER_PAGE),
        ("The manager of Kelder Rovers is Sean Brody.", KELDER_PAGE),
        ("The Alne Valley cycle path is maintained by the county council.", PATH_PAGE),
        ("Lindqvist Brewery is owned by the Nordhavn Group.", BREWERY_PAGE),
        ("Kelder Rovers are a professional soccer club.", KELDER_PAGE),
        # another club's sport says nothing about this one
        ("Harrow Rovers are a rugby club.", KELDER_PAGE),
    ],
)
def test_the_same_holder_or_a_past_claim_is_no_slot_conflict(claim: str, page: str) -> None:
    _, scores, raw = judge("entity_consistency", claim, page)
    assert raw["role_conflicts"] == [] and "conflict" not in scores


def test_a_relative_clause_before_the_role_does_not_hold_it() -> None:
    page = "Anna Berg, who succeeded Peter Holm, chairs the council."
    assert role_conflicts("Peter Holm chairs the council.", [page]) == ["chair: anna berg"]
    assert role_conflicts("Anna Berg chairs the council.", [page]) == []


def test_durations_and_units_in_words() -> None:
    assert slots("takes about an hour and a half") == [(90.0, "minute")]
    assert slots("each tour takes around three quarters of an hour") == [(45.0, "minute")]
    assert slots("half an hour") == [(30.0, "minute")]
    assert (
        slots("a 60-centimetre reflector") == slots("a 60 cm reflector") == [(60.0, "centimeter")]
    )


@pytest.mark.parametrize(
    "claim,evidence,vote",
    [
        # the same amount in other words supports ...
        ("The crossing takes about an hour and a half.", "The crossing takes 90 minutes.", 0.0),
        ("Each tour takes three quarters of an hour.", "Each tour lasts 45 minutes.", 0.0),
        ("The telescope is a 60 cm reflector.", "The telescope is a 60-centimetre reflector.", 0.0),
        # ... and another amount in the same slot is a clear conflict
        ("The crossing takes two hours.", "The crossing takes 90 minutes.", 1.0),
    ],
)
def test_amounts_compare_across_their_wordings(claim: str, evidence: str, vote: float) -> None:
    value, scores, _ = judge("numeric_consistency", claim, evidence)
    assert value == vote
    assert scores.get("conflict", 0.0) == vote


def test_a_sentence_is_about_what_its_passage_opens_with() -> None:
    page = "Harrow Vale Hospice opened in 1994. Visiting hours are from 10am to 8pm."
    value, scores, raw = judge(
        "numeric_consistency", "Visiting hours at Harrow Vale end at 9pm.", page
    )
    assert value == 1.0 and scores["conflict"] == 1.0, raw
    # a sentence that opens with another name is about that name
    other = "Harrow Vale Hospice opened in 1994. Elmbridge Surgery is open until 8pm."
    _, scores, _ = judge("numeric_consistency", "Harrow Vale Hospice is open until 9pm.", other)
    assert "conflict" not in scores


SCHOOL_PAGE = (
    "Larchfield Academy is a state secondary school in the town of Brackwell. It was "
    "founded in 1962."
)
LIBRARY_PAGE = (
    "Brackwell Library occupies a brick building on Station Road. It is open from 9am to "
    "6pm on weekdays and from 10am to 1pm on Saturdays; it is closed on Sundays."
)
ZOO_PAGE = (
    "Brackwater Zoo covers 40 hectares on the edge of Brackwater. The reptile house was "
    "closed in 2023 and its animals moved to other collections."
)
OBSERVATORY_PAGE = (
    "The Cranmoor Observatory stands on Cranmoor Hill. The observatory is open to the public "
    "on Friday evenings."
)


@pytest.mark.parametrize(
    "claim,page,conflict",
    [
        # an antonym in a sentence holding every other word of the claim: a clear conflict
        ("The Cranmoor Observatory is closed to the public.", OBSERVATORY_PAGE, True),
        # the same swap where the sentence misses some of the claim: a vote, not a conflict
        ("The Cranmoor Observatory is closed to the public in winter.", OBSERVATORY_PAGE, False),
        # what a present-tense claim is about has ended
        # a state school is no private one
        ("Larchfield Academy is a private school in Brackwell.", SCHOOL_PAGE, True),
        # one sentence, two clauses: the one naming the claim's day says the opposite, and
        # the name its pronoun stands for is in the passage
        ("Brackwell Library opens on Sundays from 10am to 1pm.", LIBRARY_PAGE, True),
    ],
)
def test_polarity_conflicts(claim: str, page: str, conflict: bool) -> None:
    value, scores, _ = judge("negation_polarity", claim, page)
    assert value == 1.0
    assert ("conflict" in scores) is conflict


@pytest.mark.parametrize(
    "claim,page",
    [
        ("Brackwater Zoo had a reptile house until 2023.", ZOO_PAGE),
        ("The Cranmoor Observatory is open to the public.", OBSERVATORY_PAGE),
        # closed for a while, or on some days, has not ended
        (
            "The Kelder museum has a cafe.",
            "The Kelder museum has a cafe. The cafe was closed for repairs in 2023.",
        ),
        # the clause naming the claim's day agrees; another clause says the opposite
        ("Brackwell Library is open on Saturdays.", LIBRARY_PAGE),
        # a state school named as one
        ("Larchfield Academy is a state school.", SCHOOL_PAGE),
    ],
)
def test_a_past_claim_or_a_passing_closure_is_no_polarity_conflict(claim: str, page: str) -> None:
    value, scores, _ = judge("negation_polarity", claim, page)
    assert value == 0.0 and "conflict" not in scores


AIRPORT_PAGE = (
    "Norwick Airport is a regional airport 6 kilometres north of Norwick. In 2023 the council "
    "sold the airport to Eastway Holdings. Flights to Belfast ended in 2024; Loganair still "
    "flies to Aberdeen."
)
LAKE_PAGE = "Lake Tarrow is a freshwater lake in the Ardmore hills. Swimming is not permitted."


@pytest.mark.parametrize(
    "judge_name,claim,page,conflict",
    [
        # the buyer owns it now
        (
            "entity_consistency",
            "Norwick Airport is owned by Norwick City Council.",
            AIRPORT_PAGE,
            True,
        ),
        (
            "entity_consistency",
            "Norwick Airport is owned by Eastway Holdings.",
            AIRPORT_PAGE,
            False,
        ),
        # two holders that share only a kind word ("Trust") are two holders
        (
            "entity_consistency",
            "Harrow Museum is run by the Westshire Trust.",
            "Harrow Museum is run by the Ellis Arts Trust.",
            True,
        ),
        (
            "entity_consistency",
            "Harrow Museum is run by the Ellis Trust.",
            "Harrow Museum is run by the Ellis Arts Trust.",
            False,
        ),
        # a service that ended, said in the active voice; the clause about another ends nothing
        (
            "negation_polarity",
            "Loganair flies from Norwick Airport to Aberdeen.",
            AIRPORT_PAGE,
            False,
        ),
        (
            "negation_polarity",
            "Loganair flew from Norwick Airport to Belfast.",
            AIRPORT_PAGE,
            False,
        ),
        # a negation flip with every word of the claim said, one of them in other words
        ("negation_polarity", "Lake Tarrow is a saltwater lake.", LAKE_PAGE, True),
    ],
)
def test_ownership_endings_and_polarity_in_other_words(
    judge_name: str, claim: str, page: str, conflict: bool
) -> None:
    _, scores, _ = judge(judge_name, claim, page)
    assert ("conflict" in scores) is conflict


def test_a_name_given_as_an_acronym_is_present() -> None:
    page = "Corvane was approved in the United Kingdom in 2016. It is used across the NHS."
    value, _, raw = judge("entity_consistency", "Corvane was approved in the UK in 2016.", page)
    assert value == 0.0 and raw["missing"] == []
    value, _, _ = judge(
        "entity_consistency", "Corvane is used across the National Health Service.", page
    )
    assert value == 0.0
    # letters that spell no name of the evidence stay missing
    value, _, raw = judge("entity_consistency", "Corvane was approved in the EU in 2016.", page)
    assert value == 1.0 and raw["missing"] == ["eu"]


@pytest.mark.parametrize(
    "claim,page,vote",
    [
        # another weekday or season of the same thing
        (
            "Brackwater town council meets on Tuesdays.",
            "The town council meets at the Guildhall on Wednesdays.",
            1.0,
        ),
        (
            "Brightside Theatre Company tours Ireland every autumn.",
            "Brightside Theatre Company tours Ireland each spring.",
            1.0,
        ),
    ],
)
def test_another_weekday_or_season_is_a_polarity_conflict(
    claim: str, page: str, vote: float
) -> None:
    value, _, _ = judge("negation_polarity", claim, page)
    assert value == vote


def test_a_feature_the_page_about_the_subject_never_mentions_is_a_missing_detail() -> None:
    page = (
        "Marlow Street Library is the main public library in Daleford. The library holds "
        "about 95,000 books and has 40 public computers."
    )
    value, scores, raw = judge("entity_consistency", "Marlow Street Library has a cafe.", page)
    assert value == 1.0 and scores["missing_detail"] == 1.0
    assert raw["absent_features"] == ["cafe"]
    # who or where it is for may follow the feature
    claim = "Marlow Street Library also has a cafe for visitors."
    _, _, raw = judge("entity_consistency", claim, page)
    assert raw["absent_features"] == ["cafe"]
    _, scores, _ = judge(
        "entity_consistency", "Marlow Street Library has a room for 40 people.", page
    )
    assert "missing_detail" not in scores  # a number there is the number judge's slot
    # a feature the page gives, or a page about another subject, is no missing detail
    value, _, _ = judge("entity_consistency", "Marlow Street Library has public computers.", page)
    assert value == 0.0
    _, scores, _ = judge("entity_consistency", "Harrow Library has a cafe.", page)
    assert "missing_detail" not in scores
    # a measure is the number's slot, not a feature
    town = "Lanford is a city of 251,000 people on the river Teal."
    _, scores, _ = judge("entity_consistency", "Lanford has a population of 240,000.", town)
    assert "missing_detail" not in scores


@pytest.mark.parametrize(
    "claim,absent",
    [
        # a maker the page gives, or a named one (the name check's), is no absent feature
        ("The Wendmouth Folk Festival was founded by harbour traders.", []),
        ("The Wendmouth Folk Festival was founded by Anna Berg.", []),
    ],
)
def test_an_unnamed_maker_the_page_never_mentions_is_a_missing_detail(
    claim: str, absent: list[str]
) -> None:
    page = (
        "The Wendmouth Folk Festival takes place every August on the harbour green. "
        "It was first held in 1979 and was set up by harbour traders."
    )
    value, scores, raw = judge("entity_consistency", claim, page)
    assert raw.get("absent_features", []) == absent
    if absent:
        assert value == 1.0 and scores["missing_detail"] == 1.0


WATER_PAGE = (
    "Greyfield Water Company supplies drinking water to about 1.3 million people. Martin "
    "Oakes retired in 2024 and was succeeded as chief executive by Leila Haddad."
)
RACE_PAGE = (
    "The Riverside Half Marathon is held every September in Eastport. The race was first "
    "held in 1987 and is organised by Eastport Athletic Club."
)


@pytest.mark.parametrize(
    "claim,page,conflict",
    [
        # who retired, stepped down or was succeeded left the role
        ("Leila Haddad is the chief executive of Greyfield Water Company.", WATER_PAGE, []),
        # leading it now, in whatever words, conflicts with having left it; having led it
        # in the past does not
        ("Greyfield Water Company was led by Martin Oakes until 2024.", WATER_PAGE, []),
        ("Greyfield Water Company is led by Leila Haddad.", WATER_PAGE, []),
        # "the leader of the council is ...": the role of a thing the page names, called
        # by a common noun
        (
            "Oldhaven Borough Council is led by Daniel Okafor.",
            "Oldhaven Borough Council has 48 councillors. The leader of the council is Priya "
            "Sandhu.",
            ["leader: priya sandhu"],
        ),
        (
            "Oldhaven Borough Council is led by Priya Sandhu.",
            "Oldhaven Borough Council has 48 councillors. The leader of the council is Priya "
            "Sandhu.",
            [],
        ),
        # a shared place name does not make a council a club; "held in 1987 and is
        # organised by" is who organises it, not who held it
        (
            "The Riverside Half Marathon is organised by Eastport City Council.",
            RACE_PAGE,
            ["by:organis: athletic club eastport"],
        ),
        ("The Riverside Half Marathon is organised by Eastport Athletic Club.", RACE_PAGE, []),
    ],
)
def test_predecessors_and_kinds_of_holder(claim: str, page: str, conflict: list[str]) -> None:
    assert role_conflicts(claim, [page]) == conflict


def test_a_capitalised_first_word_matches_its_plural() -> None:
    page = "Halden Castle is a ruined castle. Entry costs 9 pounds for adults."
    value, _, raw = judge(
        "entity_consistency", "Adult tickets to Halden Castle cost 9 pounds.", page
    )
    assert value == 0.0 and raw["missing"] == []


@pytest.mark.parametrize(
    "claim,page,vote",
    [
        (
            "The Riverside Half Marathon is held every April in Eastport.",
            "The Riverside Half Marathon is held every September in Eastport.",
            1.0,
        ),
        # a range of months, or "may" the verb, decides nothing
        (
            "Halden Castle is open in April.",
            "Halden Castle is open from March to October.",
            0.0,
        ),
        (
            "The Riverside Half Marathon may be held in Eastport.",
            "The Riverside Half Marathon is held every September in Eastport.",
            0.0,
        ),
    ],
)
def test_another_month_is_a_polarity_conflict(claim: str, page: str, vote: float) -> None:
    value, _, _ = judge("negation_polarity", claim, page)
    assert value == vote


@pytest.mark.parametrize(
    "claim,vote",
    [
        ("The Wendmouth Folk Festival is held each July.", 1.0),  # the next sentence says August
        ("The Wendmouth Folk Festival is held each August.", 0.0),
        ("The Wendmouth Folk Festival was first held in 1979.", 0.0),
    ],
)
def test_another_month_in_the_next_sentence_about_the_claim(claim: str, vote: float) -> None:
    """The best sentence ("first held in 1979") says nothing of the month; the next one
    about the festival names another."""
    page = (
        "The Wendmouth Folk Festival was first held in 1979. "
        "The Wendmouth Folk Festival takes place every August on the harbour green."
    )
    value, _, raw = judge("negation_polarity", claim, page)
    assert value == vote
    if vote:
        assert raw["antonyms"] == ["juli"]  # the stem


def test_a_month_named_by_any_sentence_about_the_claim_is_no_conflict() -> None:
    page = (
        "The Wendmouth Folk Festival was first held in 1979. "
        "The Wendmouth Folk Festival takes place every August on the harbour green. "
        "The Wendmouth Folk Festival also holds a winter market each December."
    )
    assert (
        judge("negation_polarity", "The Wendmouth Folk Festival is held each August.", page)[0]
        == 0.0
    )


@pytest.mark.parametrize(
    "claim,page,vote",
    [
        # the clause naming the claim's subject says the opposite; the other says it of
        # another subject
        ("Cyclists have to pay the toll.", "Cars pay a toll of 2 euros; cyclists cross free.", 1.0),
        ("Cars cross free of charge.", "Cars pay a toll of 2 euros; cyclists cross free.", 1.0),
        ("Children pay 5 euros.", "Adults pay 5 euros; children enter free.", 1.0),
        ("Adults pay 5 euros.", "Adults pay 5 euros; children enter free.", 0.0),
        ("Cyclists cross free of charge.", "Cars pay a toll of 2 euros; cyclists cross free.", 0.0),
        # a clause opening with a pronoun shares the other's subject: no contrast
        ("Prices rose in 2020.", "Prices fell in 2019; they rose in 2020.", 0.0),
    ],
)
def test_a_contrast_of_two_subjects_across_a_semicolon(claim: str, page: str, vote: float) -> None:
    value, _, _ = judge("negation_polarity", claim, page)
    assert value == vote


@pytest.mark.parametrize(
    "claim,vote",
    [
        ("The Wend Valley Museum opens on Mondays.", 1.0),
        ("The Wend Valley Museum is closed on Mondays.", 0.0),
        ("The Wend Valley Museum opens at 10am.", 0.0),
    ],
)
def test_the_part_of_a_clause_naming_the_claims_day_is_read_apart(claim: str, vote: float) -> None:
    """ "closed on Mondays and open from 10am to 5pm on other days": the day is in the
    part before "and"."""
    page = (
        "The Wend Valley Museum opened in 1972 in a former textile mill. The museum is "
        "closed on Mondays and open from 10am to 5pm on other days."
    )
    assert judge("negation_polarity", claim, page)[0] == vote


def test_how_often_is_a_slot_of_its_own() -> None:
    """ "every hour" and "every half hour" are minutes between runs (unit ``interval``),
    compared with each other and never with how long something takes."""
    assert slots("Crossings take 25 minutes and run every half hour.") == [
        (25.0, "minute"),
        (30.0, "interval"),
    ]
    assert slots("Buses leave every 20 minutes, and every two hours at night.") == [
        (20.0, "interval"),
        (120.0, "interval"),
    ]
    assert slots("It runs every hour.") == [(60.0, "interval")]
    claim = "The ferry to Easton Point runs every hour."
    value, _, _ = judge(
        "numeric_consistency", claim, "Crossings take 25 minutes and run every half hour."
    )
    assert value == 1.0
    value, _, _ = judge(
        "numeric_consistency", claim, "Crossings take 25 minutes and run every hour."
    )
    assert value == 0.0
    value, scores, _ = judge("numeric_consistency", claim, "Crossings take 25 minutes.")
    # a duration says nothing of how often: the interval is unstated, not contradicted
    assert "conflict" not in scores and scores["contradiction"] == 0.0


def test_numbers_in_several_words_and_times_of_day() -> None:
    assert slots("around eighty-five thousand homes") == [(85000.0, "home")]
    assert slots("three hundred and twenty pupils, two dozen boats") == [
        (320.0, "pupil"),
        (24.0, "boat"),
    ]
    assert slots("under 50 branches") == [(50.0, "branch")]
    assert slots("begins at 8:45 am and ends at 3:15 pm.") == [(525.0, "clock"), (915.0, "clock")]
    assert slots("open at seven in the morning, from noon") == [(420.0, "clock"), (720.0, "clock")]
    assert slots("at a quarter to nine") == [(525.0, "clock12")]
    assert slots("at half past six in the evening") == [(1110.0, "clock")]


@pytest.mark.parametrize(
    ("claim", "evidence", "vote", "score"),
    [
        (
            "It supplies drinking water to around eighty-five thousand homes",
            "Kestrel Valley Water supplies drinking water to about 85,000 homes.",
            0.0,
            "match",
        ),
        (
            "The shops open at seven in the morning",
            "The shops open at 7 am from Monday to Saturday.",
            0.0,
            "match",
        ),
        (
            "The shops open at eight in the morning",
            "The shops open at 7 am from Monday to Saturday.",
            1.0,
            "conflict",
        ),
        (
            # the words of a time are no words the sentence about the claim must share
            "The lifts run each day until four in the afternoon",
            "The lifts run daily from 8:30 to 16:30 during the winter season.",
            1.0,
            "conflict",
        ),
        (
            "Children under the age of ten ride for free",
            "A full-day adult lift pass costs £46, and children under 8 ride free.",
            1.0,
            "conflict",
        ),
        (
            "The school day begins at a quarter to nine",
            "The school day begins at 8:45 am and ends at 3:15 pm.",
            0.0,
            "support",
        ),
    ],
)
def test_numbers_in_words_and_times_fill_the_slots_of_figures(
    claim: str, evidence: str, vote: float, score: str
) -> None:
    value, scores, _ = judge("numeric_consistency", claim, evidence)
    assert value == vote and scores.get(score) == 1.0


def test_amounts_of_money_are_read_in_the_evidences_form() -> None:
    from auditor.text import canonical_amounts

    assert canonical_amounts("A standard ticket costs eighteen pounds") == (
        "A standard ticket costs £18"
    )
    assert canonical_amounts("a fare of 2.50 dollars and 3 euros") == "a fare of $2.50 and €3"
    assert canonical_amounts("costs 5.2 pounds per kilo") == "costs £5.20 per kilo"
    # already signed, a weight, or a sum the reader reads as words: left alone
    for text in ("Adults pay £195 a year", "It weighs 200 pounds", "cost 2.1 billion dollars"):
        assert canonical_amounts(text) == text


@pytest.mark.slow
def test_the_reader_entails_an_amount_written_in_words() -> None:
    page = "Standard tickets cost £18, with a concession price of £12 for students."
    value, scores, _ = judge("entailment", "A standard ticket costs eighteen pounds", page)
    assert value == 0.0 and scores["entailment"] >= 0.5
