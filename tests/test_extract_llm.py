"""The LLM extractor against a scripted loopback OpenAI-compatible server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _extract_llm_server import GARBAGE, scripted_server

from auditor.digest import sha256_text
from auditor.errors import ConfigError
from auditor.extract import build_extractor
from auditor.extract.llm import DEFAULT_PROMPT, GRAMMAR, LLMExtractor, parse_output
from auditor.types import Answer

pytestmark = pytest.mark.slow  # parses sentences with spaCy

TEXT = "Jack Dorsey co-founded Twitter in 2006. He also leads Square. Any other questions?"
ANSWER = Answer(id="a1", question="Who founded Twitter?", answer=TEXT)
S1 = (0, 39)  # "Jack Dorsey co-founded Twitter in 2006."
S2 = (40, 61)  # "He also leads Square."
S3 = (62, 82)  # "Any other questions?"


def _reply(claims: list[dict[str, Any]]) -> str:
    return json.dumps({"claims": claims})


GOOD = _reply(
    [
        {"sentences": [1], "text": "Jack Dorsey co-founded Twitter", "kind": "claim"},
        {"sentences": [1], "text": "Twitter was founded in 2006", "kind": "claim"},
        {"sentences": [2], "text": "Jack Dorsey leads Square", "kind": "claim"},
        {"sentences": [3], "text": "Any other questions?", "kind": "question"},
    ]
)


def _extractor(base_url: str, **kw: Any) -> LLMExtractor:
    params: dict[str, Any] = {
        "base_url": base_url,
        "model": "scripted",
        "api_key_env": None,
        "max_retries": 1,
        "backoff_base_s": 0.01,
        "backoff_max_s": 0.02,
        "timeout_s": 5.0,
        "constraint": "gbnf",
    }
    params.update(kw)
    ex = build_extractor("llm", params)
    assert isinstance(ex, LLMExtractor)
    return ex


def test_sentence_numbers_map_claims_back_to_spans() -> None:
    assert TEXT[S1[0] : S1[1]].endswith("2006.") and TEXT[S3[0] : S3[1]].endswith("?")
    with scripted_server([GOOD]) as server:
        ex = _extractor(server.base_url)
        [result] = ex.extract_detailed([ANSWER])
    assert result.fallback is None and result.notes == ()
    assert result.extractor.name == "llm"
    by_text = {c.text: c for c in result.claims}
    assert by_text["Twitter was founded in 2006"].spans == (S1,)
    assert by_text["Jack Dorsey leads Square"].spans == (S2,)
    question = by_text["Any other questions?"]
    assert question.spans == (S3,) and not question.factual and question.kind == "question"
    assert sum(c.factual for c in result.claims) == 3
    # the prompt numbers the sentences and the grammar goes to the server
    body = server.requests[0]["body"]
    user = body["messages"][-1]["content"]
    assert "[1] Jack Dorsey co-founded Twitter in 2006." in user
    assert "[3] Any other questions?" in user and "Who founded Twitter?" in user
    assert body["grammar"] == GRAMMAR and body["model"] == "scripted"
    assert result.usage["prompt_tokens"] == 11


def test_component_carries_the_prompt_digest(tmp_path: Path) -> None:
    ex = _extractor("http://127.0.0.1:9/v1")
    digest = sha256_text(DEFAULT_PROMPT.read_text(encoding="utf-8"))
    assert ex.component.kind == "extractor"
    assert ex.component.config["prompt_digest"] == digest
    other = tmp_path / "p.md"
    other.write_text("Be brief.\n<<<USER>>>\n{question}\n{sentences}\n", encoding="utf-8")
    changed = _extractor("http://127.0.0.1:9/v1", prompt_path=other)
    assert changed.component.digest != ex.component.digest
    assert changed.component.config["prompt_digest"] == sha256_text(other.read_text())


def test_garbage_output_is_retried_then_falls_back_to_rules() -> None:
    with scripted_server(["Sure! Here are the claims: none", GARBAGE]) as server:
        ex = _extractor(server.base_url, max_attempts=2)
        [result] = ex.extract_detailed([ANSWER])
    assert len(server.requests) >= 2
    assert result.fallback is not None and result.fallback.startswith("llm:")
    assert result.extractor.name == "rules"
    rules = build_extractor("rules").extract(ANSWER)
    assert [c.id for c in result.claims] == [c.id for c in rules]


def test_server_errors_are_retried() -> None:
    with scripted_server([500, 503, GOOD]) as server:
        ex = _extractor(server.base_url, max_retries=3)
        [result] = ex.extract_detailed([ANSWER])
    assert result.fallback is None
    assert len(server.requests) == 3
    assert len(result.claims) == 4


def test_invalid_sentence_numbers_are_asked_again() -> None:
    bad = _reply([{"sentences": [7], "text": "Out of range", "kind": "claim"}])
    with scripted_server([bad, GOOD]) as server:
        ex = _extractor(server.base_url)
        [result] = ex.extract_detailed([ANSWER])
    assert len(server.requests) == 2
    assert result.fallback is None and len(result.claims) == 4


def test_sentences_left_out_are_covered_by_rule_claims() -> None:
    partial = _reply(
        [{"sentences": [1], "text": "Jack Dorsey co-founded Twitter in 2006", "kind": "claim"}]
    )
    with scripted_server([partial]) as server:
        [result] = _extractor(server.base_url).extract_detailed([ANSWER])
    assert result.fallback is None and result.notes
    assert "[2, 3]" in result.notes[0]
    starts = {c.spans[0][0] for c in result.claims}
    assert S2[0] in starts and S3[0] in starts
    assert any(c.kind == "question" and not c.factual for c in result.claims)


def test_unreachable_server_and_overlong_sentences_fall_back() -> None:
    with scripted_server([GOOD]) as server:
        url = server.base_url
    ex = _extractor(url, max_retries=0, max_chars=200)
    long_sentence = Answer(id="long", question="", answer="Rome is " + "very " * 60 + "old.")
    results = ex.extract_detailed([ANSWER, long_sentence, Answer(id="e", question="", answer="")])
    assert results[0].fallback is not None and "connection" in results[0].fallback
    assert results[1].fallback is not None and "max_chars" in results[1].fallback
    assert results[1].claims and results[2].claims == () and results[2].fallback is None
    assert [r.answer_id for r in results] == ["a1", "long", "e"]


def _cities(n: int) -> Answer:
    cities = ["Rome", "Paris", "Oslo", "Lima", "Kyiv"]
    text = " ".join(f"{cities[k % 5]} is a city number {k}." for k in range(n))
    return Answer(id=f"cities{n}", question="", answer=text)


TEN = _reply([{"sentences": [k], "text": f"claim {k}", "kind": "claim"} for k in range(1, 11)])


def test_long_answers_go_in_chunks_of_sentences() -> None:
    answer = _cities(30)
    with scripted_server([TEN]) as server:
        [result] = _extractor(server.base_url, max_sentences=10).extract_detailed([answer])
    assert len(server.requests) == 3 and result.fallback is None
    prompts = [r["body"]["messages"][-1]["content"] for r in server.requests]
    assert sorted("[1] Rome is a city number 0." in p for p in prompts) == [False, False, True]
    assert any(
        "[1] Kyiv is a city number 24." not in p and "[10] Kyiv is a city number 29." in p
        for p in prompts
    )
    assert len({c.spans for c in result.claims}) == 30


def test_a_failing_chunk_sends_the_whole_answer_to_the_fallback() -> None:
    answer = _cities(25)  # chunks of 10, 10, 5: sentence numbers 6..10 are invalid in the last
    with scripted_server([TEN]) as server:
        [result] = _extractor(server.base_url, max_sentences=10).extract_detailed([answer])
    assert len(server.requests) == 4  # three chunks, then the invalid one once more
    assert result.fallback is not None and "out of range" in result.fallback
    assert result.extractor.name == "rules" and result.usage["requests"] == 4


def test_chunk_numbers_are_offset_to_the_whole_answer() -> None:
    text = "Rome is old. Paris is big. Oslo is cold. Lima is far."
    answer = Answer(id="c", question="", answer=text)
    reply = _reply(
        [
            {"sentences": [1], "text": "first of chunk", "kind": "claim"},
            {"sentences": [2], "text": "second of chunk", "kind": "claim"},
        ]
    )
    with scripted_server([reply]) as server:
        [result] = _extractor(server.base_url, max_sentences=2).extract_detailed([answer])
    assert len(server.requests) == 2 and result.fallback is None
    starts = sorted(c.spans[0][0] for c in result.claims)
    assert [text[s : s + 4] for s in starts] == ["Rome", "Pari", "Oslo", "Lima"]
    assert result.usage["requests"] == 2


def test_extract_many_returns_claims_per_answer() -> None:
    with scripted_server([GOOD]) as server:
        ex = _extractor(server.base_url)
        claims = ex.extract_many([ANSWER, ANSWER])
    assert len(claims) == 2 and [c.id for c in claims[0]] == [c.id for c in claims[1]]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("no json here", "no JSON object"),
        ('{"claims": 3}', "claims"),
        ('{"claims": [{"sentences": [], "text": "x", "kind": "claim"}]}', "sentences"),
        ('{"claims": [{"sentences": [2], "text": "x", "kind": "claim"}]}', "out of range"),
        ('{"claims": [{"sentences": [1], "text": " ", "kind": "claim"}]}', "text"),
        ('{"claims": [{"sentences": [1], "text": "x", "kind": "rumour"}]}', "kind"),
        ('{"claims": [{"sentences": [true], "text": "x", "kind": "claim"}]}', "sentences"),
    ],
)
def test_parse_output_rejects_invalid_output(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_output(text, 1)


def test_parse_output_accepts_a_fenced_object() -> None:
    text = '```json\n{"claims": [{"sentence": 1, "text": "A\\u0000 b", "kind": "hedge"}]}\n```'
    assert parse_output(text, 1) == [{"sentences": [1], "text": "A b", "kind": "hedge"}]


def test_missing_configuration_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="base_url"):
        build_extractor("llm")
    with pytest.raises(ConfigError, match="model"):
        build_extractor("llm", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(ConfigError, match="prompt"):
        build_extractor("llm", base_url="http://x/v1", model="m", prompt_path="/nonexistent")
