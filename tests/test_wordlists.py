"""The judges' word lists (``auditor/judges/wordlists/``): the loader, the ablation used to
measure each rule group (``bench/ablate_rule_groups.py``), and that every list is read by
a judge or the text toolkit they share (``auditor/text/``) and ships in the wheel."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest

from auditor import text as toolkit
from auditor.judges import entity_consistency, negation_polarity, numeric_consistency
from auditor.judges import wordlists as wl
from auditor.judges.catalog import build_judge
from auditor.judges.wordlists import ablated, groups
from auditor.text import roles
from auditor.types import JudgePair

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "auditor" / "judges" / "wordlists"


def _judge(name: str, claim: str, *evidence: str) -> tuple[float, dict[str, float]]:
    vote, scores, _ = build_judge(name).score(JudgePair(claim=claim, evidence=evidence))
    return vote, scores


def _units(text: str) -> list[tuple[float, str | None]]:
    return [(q.value, q.unit) for q in toolkit.quantities(text)]


# --- the loader -----------------------------------------------------------------------


def test_a_list_file_reads_entries_values_sections_and_comments() -> None:
    parsed = wl._parse(
        "# a header\n\nalpha\nbeta = 2  # a comment\n[second]\n# inside\ngamma delta\n",
        "sample",
    )
    assert parsed.sections[""] == (("alpha", None), ("beta", "2"))
    assert parsed.sections["second"] == (("gamma delta", None),)
    with pytest.raises(ValueError, match="repeated section"):
        wl._parse("[a]\nx\n[a]\ny\n", "sample")


def test_the_accessors() -> None:
    assert "not" in wl.words("negation_cues") and isinstance(wl.words("negation_cues"), frozenset)
    assert wl.entries("number_words", "numbers")[:3] == ("zero", "one", "two")
    assert wl.pairs("number_words", "multipliers") == (("hundred", "100"), ("dozen", "12"))
    assert wl.mapping("currencies")["pound"] == "£"
    assert wl.sections("role_words")[0] == "chair"
    assert wl.one_of("sale_verbs") == "(?:sold|transferred|handed over)"
    assert wl.alternation(["head of", "ceo"]) == r"(?:head\s+of|ceo)"
    assert wl.alternation([]) == "(?!)"
    with pytest.raises(KeyError, match="no word list"):
        wl.words("no_such_group")
    with pytest.raises(KeyError, match="no section"):
        wl.entries("number_words", "no_such_section")
    with pytest.raises(ValueError, match="has no '= value'"):
        wl.pairs("negation_cues")


def test_every_group_file_parses_and_says_who_reads_it() -> None:
    files = sorted(p.stem for p in FOLDER.glob("*.txt"))
    assert list(groups()) == files and len(files) >= 40
    for name in files:
        text = (FOLDER / f"{name}.txt").read_text(encoding="utf-8")
        assert text.startswith(f"# {name}: "), name
        assert re.search(r"Read by auditor/(judges|text)/\w+\.py", text), name
        readers = re.findall(r"auditor/(?:judges|text)/\w+\.py", text)
        assert all((ROOT / path).is_file() for path in readers), (name, readers)
        assert wl.words(name), name


def test_pattern_lists_compile() -> None:
    for name in groups():
        text = (FOLDER / f"{name}.txt").read_text(encoding="utf-8")
        if "format: pattern list" not in text:
            continue
        for section in ("", *wl.sections(name)):
            for entry in wl.entries(name, section):
                re.compile(entry)
    for _, pattern in wl.pairs("number_slot_cues", "before"):
        re.compile(pattern)


def test_every_group_is_read_by_a_judge() -> None:
    """Each group's name is passed to the loader somewhere in ``auditor/judges/`` or the
    text toolkit the judges read (``auditor/text/``): a list nothing reads is a rule nobody
    measures."""
    code = "\n".join(
        p.read_text(encoding="utf-8")
        for folder in ("judges", "text")
        for p in (ROOT / "auditor" / folder).glob("*.py")
        if p.name != "__init__.py"
    )
    unread = [g for g in groups() if f'"{g}"' not in code]
    assert unread == []


def test_every_list_ships_in_the_wheel() -> None:
    """The package data of ``pyproject.toml`` (what setuptools copies into the wheel) holds
    every list file."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["auditor"]
    shipped = {p for pattern in patterns for p in (ROOT / "auditor").glob(pattern)}
    missing = [p.name for p in FOLDER.glob("*.txt") if p not in shipped]
    assert missing == []


# --- ablation -------------------------------------------------------------------------


def test_ablation_empties_a_group_and_restores_it() -> None:
    assert toolkit.negation_count("It is not open") == 1
    assert toolkit.content_words("It is not open") == frozenset({"open"})
    with ablated("negation_cues") as state:
        assert state == frozenset({"negation_cues"}) and wl.state() == state
        assert wl.words("negation_cues") == frozenset()
        assert wl.entries("negation_cues") == () and wl.one_of("negation_cues") == "(?!)"
        assert toolkit.negation_count("It is not open") == 0
        with ablated("number_words"):  # nests
            assert wl.state() == {"negation_cues", "number_words"}
            assert toolkit.numbers("four dogs") == frozenset()
        assert toolkit.numbers("four dogs") == frozenset({4.0})
    assert wl.state() == frozenset()
    assert toolkit.negation_count("It is not open") == 1
    with pytest.raises(KeyError, match="no word list"), ablated("negation_cue"):
        pass
    assert wl.state() == frozenset()


def test_a_pattern_of_an_ablated_group_matches_nothing() -> None:
    assert toolkit.role_facts("Anna Berg chairs the council.")
    with ablated("role_words"):
        assert roles._cue() is wl.NEVER
        assert toolkit.role_facts("Anna Berg chairs the council.") == []
    assert toolkit.role_facts("Anna Berg chairs the council.")


def test_derived_values_are_built_once_per_state() -> None:
    assert toolkit.stop_words() is toolkit.stop_words()
    with ablated("negation_cues"):
        assert "not" in toolkit.stop_words()
    assert "not" not in toolkit.stop_words()


PROBES: dict[str, Callable[[], object]] = {
    "negation_cues": lambda: toolkit.negation_count("The pool is not open and never was"),
    "number_words": lambda: _units("It has four branches"),
    "unit_spellings": lambda: _units("a 5 km route"),
    "unit_classes": lambda: _units("It seats 300 spectators"),
    "number_qualifiers": lambda: _units("Roughly 40 students enrolled"),
    "stop_word_units": lambda: _units("up 8 per cent"),
    "one_units": lambda: _units("It lasts one hour"),
    "occurrence_nouns": lambda: _units("There are eight sailings a day"),
    "unmarked_plurals": lambda: _units("visitors over 12 children"),
    "unit_abbreviations": lambda: _units("the Model 5 kWh battery"),
    "currencies": lambda: toolkit.canonical_amounts("Entry costs eighteen pounds."),
    "frequency_words": lambda: _units("The bus runs twice a day"),
    "number_slot_cues": lambda: _units("a capacity of 9,800"),
    "duration_phrases": lambda: _units("The tour takes an hour and a half"),
    "single_words": lambda: _units("It was funded by a single university"),
    "entity_stopwords": lambda: toolkit.entities("Professor Ruth Adeyemi spoke."),
    "role_words": lambda: toolkit.role_facts("Anna Berg chairs the council."),
    "role_verbs": lambda: toolkit.role_facts("Harbour Ferries runs 23 routes."),
    "no_object_words": lambda: toolkit.role_facts("Harbour Ferries runs every hour."),
    "role_qualifiers": lambda: toolkit.role_facts("The deputy chair is Anna Berg."),
    "team_verbs": lambda: toolkit.role_facts("Sam Reed joined the Falcons."),
    "succession_phrases": lambda: toolkit.role_facts(
        "Martin Oakes retired and was succeeded as chief executive by Leila Haddad."
    ),
    "agent_verbs": lambda: toolkit.role_facts("The bridge was built by Thomas Telford."),
    "agent_classes": lambda: toolkit.role_facts("The airport is owned by Eastway Holdings."),
    "sale_verbs": lambda: toolkit.role_facts("The council sold the airport to Eastway Holdings."),
    "role_link_phrases": lambda: toolkit.role_facts("Anna Berg became chair."),
    "leading_roles": lambda: toolkit.roles_confirmed(
        "Daniel Okafor leads Brightwell Foods.",
        ["The chief executive of Brightwell Foods is Daniel Okafor."],
    ),
    "generic_subjects": lambda: toolkit.role_conflicts(
        "The ferry is run by Halden Council.",
        [
            "The Wey Ferry carries foot passengers across the river. The service is operated "
            "by Riverlink Boats."
        ],
    ),
    "leads_now": lambda: toolkit.role_conflicts(
        "Kelder Rovers are led by Rhys Calloway.",
        [
            "Kelder Rovers are a rugby club. Rhys Calloway stepped down and was succeeded as "
            "captain by Ines Varga."
        ],
    ),
    "role_past_words": lambda: entity_consistency.transition_conflicts(
        "Quillon was originally headquartered in Dunmore.",
        ["Quillon moved its headquarters from Dunmore to Ashby in 2020."],
    ),
    "transition_verbs": lambda: entity_consistency.transition_conflicts(
        "Quillon is headquartered in Dunmore.",
        ["Quillon moved its headquarters from Dunmore to Ashby in 2020."],
    ),
    "sports": lambda: entity_consistency.kind_conflicts(
        "Kelder Rovers are a rugby club.", ["Kelder Rovers are a football club."]
    ),
    "feature_verbs": lambda: entity_consistency.absent_features(
        "Marlow Street Library has a cafe.", ["Marlow Street Library opened in 1901."]
    ),
    "maker_verbs": lambda: entity_consistency.absent_features(
        "Port Ellis was founded by local fishermen.", ["Port Ellis is a town on the coast."]
    ),
    "text_nouns": lambda: toolkit.claim_subject("The passage describes the Kestrel Bridge."),
    "kind_words": lambda: toolkit.role_conflicts(
        "The Kelder Cup is sponsored by Harrow Vale FC.",
        ["The Kelder Cup is sponsored by Harrow Vale Rovers."],
    ),
    "named_thing_words": lambda: toolkit.role_facts("Teams play in the Premier League."),
    "topic_stopwords": lambda: toolkit.role_facts("Anna Berg has served as chair since 2019."),
    "free_phrases": lambda: _judge(
        "numeric_consistency",
        "Entry to the gallery costs 12 pounds.",
        "Entry is free, but special exhibitions cost 12 pounds.",
    ),
    "price_words": lambda: _judge(
        "numeric_consistency",
        "Membership costs 20 pounds a year.",
        "Fenwick Public Library holds 210,000 books and lends e-readers to members. "
        "Membership is free for residents of Fenwick.",
    ),
    "ordinal_words": lambda: numeric_consistency.ordinals("The team finished fourth."),
    "event_classes": lambda: _judge(
        "numeric_consistency",
        "The University of Kestrel Bay was founded in 1972.",
        "The University of Kestrel Bay was established in 1965 and has about 18,000 students.",
    ),
    "antonyms": lambda: _judge(
        "negation_polarity", "The museum is open on Mondays.", "The museum is closed on Mondays."
    ),
    "synonyms": lambda: _judge(
        "negation_polarity",
        "Dogs are allowed on the trail.",
        "Dogs are not permitted on the trail.",
    ),
    "one_verb_phrases": lambda: _judge(
        "negation_polarity",
        "Night skiing takes place on Saturday evenings.",
        "Night skiing is offered on Friday evenings on the nursery slope.",
    ),
    "every_day_phrases": lambda: _judge(
        "negation_polarity",
        "The boathouse cafe is closed on Tuesdays.",
        "The boathouse cafe is open daily from 9am to 6pm.",
    ),
    "other_days_phrases": lambda: _judge(
        "negation_polarity",
        "The shop opens on Sundays.",
        "The shop is closed on Mondays and open on other days.",
    ),
    "rating_words": lambda: _judge(
        "negation_polarity",
        "Inspectors rated the school outstanding.",
        "Inspectors rated the school good.",
    ),
    "only_exceptions": lambda: _judge(
        "negation_polarity",
        "Pinewood depends only on Pillow.",
        "Pinewood has no runtime dependencies apart from Pillow.",
    ),
    "exception_words": lambda: _judge(
        "negation_polarity",
        "The museum is open on Mondays.",
        "The museum is open every day except Monday.",
    ),
    "ended_verbs": lambda: negation_polarity.ended(
        "The zoo has a reptile house.", ["The reptile house was closed in 2023."]
    ),
    "ended_tense_words": lambda: negation_polarity.ended(
        "The zoo had a reptile house.", ["The reptile house was closed in 2023."]
    ),
    "ceased_support": lambda: _judge(
        "negation_polarity",
        "Pinewood supports Python 3.8.",
        "Pinewood 4.0 drops support for Python 3.8.",
    ),
}
"""Per group, a call whose result the group decides: ablating the group must change it."""


def test_every_group_has_a_probe() -> None:
    assert sorted(PROBES) == list(groups())


@pytest.mark.parametrize("group", sorted(PROBES))
def test_ablating_a_group_reaches_what_reads_it(group: str) -> None:
    probe = PROBES[group]
    before = probe()
    with ablated(group):
        during = probe()
    assert during != before
    assert probe() == before
