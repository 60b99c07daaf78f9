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
from auditor.judges import entity_consistency
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
    assert list(groups()) == files and len(files) >= 12
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
    "currencies": lambda: toolkit.canonical_amounts("Entry costs eighteen pounds."),
    "duration_phrases": lambda: _units("The tour takes an hour and a half"),
    "entity_stopwords": lambda: toolkit.entities("Professor Ruth Adeyemi spoke."),
    "role_words": lambda: toolkit.role_facts("Anna Berg chairs the council."),
    "role_qualifiers": lambda: toolkit.role_facts("The deputy chair is Anna Berg."),
    "sale_verbs": lambda: toolkit.role_facts("The council sold the airport to Eastway Holdings."),
    "feature_verbs": lambda: entity_consistency.absent_features(
        "Marlow Street Library has a cafe.", ["Marlow Street Library opened in 1901."]
    ),
    "text_nouns": lambda: toolkit.claim_subject("The passage describes the Kestrel Bridge."),
    "antonyms": lambda: _judge(
        "negation_polarity", "The museum is open on Mondays.", "The museum is closed on Mondays."
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
