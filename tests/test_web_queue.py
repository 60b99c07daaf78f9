"""The review queue's pure parts (order, filters, pages, highlighting, links) and the
`auditor serve` command's refusals (non-loopback address without a token)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from auditor.cli.serve import is_loopback, server_token
from auditor.errors import InputError
from auditor.web.queue import (
    QueueFilter,
    Segment,
    filter_queue,
    order_queue,
    page_of,
    safe_link,
    segments,
    threshold_of,
)


@dataclass(frozen=True)
class C:
    claim_id: str
    label: str | None
    p_hallucinated: float | None


def test_order_flagged_first_nearest_the_threshold_then_label_then_input() -> None:
    claims = [
        C("s1", "supported", 0.49),
        C("c1", "contradicted", 0.9),
        C("n1", "not_supported", 0.52),
        C("u1", "unknown", None),
        C("st", "stale", 0.48),
        C("c2", "contradicted", 0.52),
        C("nf", "not_factual", None),
        C("u2", "unknown", 0.5),
    ]
    got = [c.claim_id for c in order_queue(claims, 0.5)]
    # flagged: u2 (0.0 from 0.5), then c2 / n1 / st at 0.02 (label order), c1, u1 (no p)
    assert got == ["u2", "c2", "n1", "st", "c1", "u1", "s1", "nf"]
    # another threshold moves the nearest ones
    assert next(c.claim_id for c in order_queue(claims, 0.9)) == "c1"


def test_filters_by_label_flag_and_review_state() -> None:
    claims = [C("a", "contradicted", 0.6), C("b", "supported", 0.1), C("c", "unknown", None)]
    reviewed = {"a"}
    ids = lambda which: [c.claim_id for c in filter_queue(claims, which, reviewed)]  # noqa: E731
    assert ids(QueueFilter()) == ["a", "b", "c"]
    assert ids(QueueFilter(flagged=True)) == ["a", "c"]
    assert ids(QueueFilter(flagged=False)) == ["b"]
    assert ids(QueueFilter(reviewed=False)) == ["b", "c"]
    assert ids(QueueFilter(reviewed=True, flagged=True)) == ["a"]
    assert ids(QueueFilter(labels=frozenset({"unknown", "supported"}))) == ["b", "c"]


def test_pages() -> None:
    p = page_of(45, 20, 3)
    assert (p.number, p.count, p.start, p.end) == (3, 3, 40, 45)
    assert page_of(45, 20, 99).number == 3 and page_of(45, 20, -1).number == 1
    assert page_of(45, 20, 1, index=20).number == 2
    assert page_of(0, 20).count == 1 and page_of(0, 20).end == 0
    with pytest.raises(ValueError, match="per_page"):
        page_of(10, 0)


def test_segments_mark_overlapping_spans_without_producing_markup() -> None:
    text = "The fare is <b>2</b> dollars."
    got = segments(
        text, {"claim": [(0, 29)], "error": [(12, 20)], "empty": [(5, 5)], "outside": [(100, 200)]}
    )
    assert "".join(s.text for s in got) == text
    assert got == [
        Segment("The fare is ", frozenset({"claim"})),
        Segment("<b>2</b>", frozenset({"claim", "error"})),
        Segment(" dollars.", frozenset({"claim"})),
    ]
    assert segments("", {"claim": [(0, 3)]}) == []


def test_only_http_links_are_links() -> None:
    assert safe_link("https://example.org/a?b=1") == "https://example.org/a?b=1"
    assert safe_link(" http://x.org ") == "http://x.org"
    for bad in (
        "javascript:alert(1)",
        "JaVaScRiPt:alert(1)",
        "data:text/html,<script>",
        "/etc/passwd",
        "doc-1",
        "",
        None,
        "http://",
        "vbscript:x",
        "http://[::1",
    ):
        assert safe_link(bad) is None, bad


def test_threshold_of_a_run() -> None:
    assert threshold_of({"policy": {"threshold": 0.6}}) == 0.6
    assert threshold_of({}) == 0.5 and threshold_of({"policy": {"threshold": "x"}}) == 0.5


def test_serve_refuses_other_addresses_without_a_token(monkeypatch: pytest.MonkeyPatch) -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.5")
    assert server_token("127.0.0.1", None) is None
    with pytest.raises(InputError, match="needs a token"):
        server_token("0.0.0.0", None)
    monkeypatch.delenv("REVIEW_TOKEN", raising=False)
    with pytest.raises(InputError, match="unset or empty"):
        server_token("0.0.0.0", "REVIEW_TOKEN")
    monkeypatch.setenv("REVIEW_TOKEN", "short")
    with pytest.raises(InputError, match="shorter than 16"):
        server_token("0.0.0.0", "REVIEW_TOKEN")
    monkeypatch.setenv("REVIEW_TOKEN", "a-long-enough-token-1234")
    assert server_token("0.0.0.0", "REVIEW_TOKEN") == "a-long-enough-token-1234"
    assert server_token("127.0.0.1", "REVIEW_TOKEN") == "a-long-enough-token-1234"


def test_serve_command_errors_are_one_clean_line(run_cli, sqlite_url: str) -> None:  # type: ignore[no-untyped-def]
    code, _, err = run_cli(["serve", "--db", sqlite_url, "--host", "0.0.0.0"])
    assert code == 2 and "needs a token" in err and "Traceback" not in err
    code, _, err = run_cli(["serve", "--db", sqlite_url + ".missing", "--port", "8766"])
    assert code == 2 and "no ledger at this path" in err
    code, _, err = run_cli(["serve", "--db", sqlite_url, "--port", "70000"])
    assert code == 2 and "--port" in err
