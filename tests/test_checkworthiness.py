"""The learned check-worthiness screen (auditor.extract.checkworthiness)."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from auditor.embedding import EMBEDDING_DIM
from auditor.errors import ConfigError
from auditor.extract import build_extractor
from auditor.extract.base import make_claim
from auditor.extract.checkworthiness import (
    KIND,
    CheckWorthinessScreen,
    fit_screen,
    load_screen,
    shipped_screen,
)
from auditor.extract.rules import load_nlp
from auditor.types import Answer


def _claims(answer: str, **params: object) -> list[tuple[bool, str]]:
    extraction = build_extractor("rules", **params).extract_detailed(
        [Answer(id="a", question="", answer=answer)]
    )[0]
    return [(c.factual, c.kind) for c in extraction.claims]


def test_the_shipped_screen_loads_with_its_provenance() -> None:
    screen = shipped_screen()
    assert screen.coef.shape == (EMBEDDING_DIM,)
    assert 0 < screen.threshold < 1
    assert screen.provenance["fit_by"] == "bench/fit_checkworthiness.py"
    assert screen.provenance["positives"] > 100


@pytest.mark.parametrize(
    "sentence",
    [
        "It is worth checking before you travel.",
        "Our team is always happy to help with bookings.",
        "That should cover everything you need to get started.",
    ],
)
def test_remarks_the_grammar_calls_factual_are_screened_out(sentence: str) -> None:
    assert _claims(sentence, checkworthiness=False) == [(True, "claim")]
    assert _claims(sentence) == [(False, KIND)]


@pytest.mark.parametrize(
    "sentence",
    [
        "The museum opens at 9am.",
        "The fee is waived for members under 18.",
        "The library stays open late on Thursdays.",
    ],
)
def test_statements_stay_factual(sentence: str) -> None:
    assert _claims(sentence) == [(True, "claim")]


def _always() -> CheckWorthinessScreen:
    """A screen whose probability is about 1 for every text."""
    screen = shipped_screen()
    return dataclasses.replace(screen, coef=np.zeros(EMBEDDING_DIM), intercept=10.0)


def test_a_number_or_a_name_keeps_a_claim_factual_whatever_the_probability() -> None:
    texts = ["It is lovely.", "It costs 40 pounds.", "Maria runs it.", "It is run well."]
    assert _always().flags(texts, load_nlp()).tolist() == [True, False, False, True]


def test_the_screen_never_makes_a_claim_factual_and_keeps_the_order() -> None:
    claims = [
        make_claim("a", "Hello there.", [(0, 12)], factual=False, kind="greeting"),
        make_claim("a", "It is run well.", [(13, 28)], factual=True, kind="claim"),
        make_claim("a", "It costs 40 pounds.", [(29, 48)], factual=True, kind="claim"),
    ]
    out = _always().screen(claims, load_nlp())
    assert [(c.text, c.factual, c.kind) for c in out] == [
        ("Hello there.", False, "greeting"),
        ("It is run well.", False, KIND),
        ("It costs 40 pounds.", True, "claim"),
    ]
    assert out[1].id == claims[1].id  # the same claim, judged not check-worthy


def test_the_screen_is_part_of_the_extractor_identity() -> None:
    on = build_extractor("rules")
    off = build_extractor("rules", checkworthiness=False)
    assert on.config()["checkworthiness_screen"] == shipped_screen().digest
    assert "checkworthiness_screen" not in off.config()
    assert on.component.digest != off.component.digest
    assert "checkworthiness_screen" not in build_extractor("sentences").config()


def test_fit_save_and_load_round_trip(tmp_path) -> None:
    texts = ["Have a lovely day!", "Hope that helps.", "The pool is 25 metres long."] * 4
    labels = [True, True, False] * 4
    screen = fit_screen(texts, labels, c=1.0, threshold=0.6, provenance={"data": "test"})
    path = tmp_path / "screen.json"
    screen.save(path)
    loaded = load_screen(path)
    assert loaded.digest == screen.digest
    np.testing.assert_allclose(loaded.probabilities(texts), screen.probabilities(texts), atol=1e-6)
    assert loaded.provenance == {"data": "test", "c": 1.0, "n": 12, "positives": 8}


def test_a_bad_screen_file_names_itself(tmp_path) -> None:
    path = tmp_path / "screen.json"
    data = shipped_screen().to_dict()
    path.write_text(json.dumps({**data, "coef": data["coef"][:10]}), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"screen\.json"):
        load_screen(path)
    path.write_text("{}", encoding="utf-8")
    with pytest.raises(ConfigError, match="not a check-worthiness screen"):
        load_screen(path)


def test_fitting_needs_both_classes() -> None:
    with pytest.raises(ConfigError, match="both classes"):
        fit_screen(["a", "b"], [False, False])
