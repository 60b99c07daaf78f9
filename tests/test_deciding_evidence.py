"""Issue 37, item 4: evidence that decided, or none, in every report format and on the
review page.

A claim shows a deciding sentence only when one decided it: a claim that is ``unknown``
because nothing relevant was retrieved shows its nearest passages as "nearest, not
relevant", never a "deciding" sentence from an unrelated document. The deciding sentence
of a supported or contradicted claim is the one that states the claim's slot about the
claim's subject: a "14-day return window" is decided by the returns sentence, not by a
data-deletion sentence that happens to say "within 14 days" (even when a judge reported
that one)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from rich.console import Console

from auditor.report.evidence import deciding_sentence, nearest_evidence
from auditor.report.full import build_full_report, full_to_json, full_to_markdown
from auditor.report.html import to_html
from auditor.report.render import print_report
from auditor.web import create_app
from ledger import Ledger, open_ledger
from tests._web_ledger import Passage, Spec, bm25, claim_id, write_run

SHOP = (
    "Privacy. We delete your account data within 14 days of a request. "
    "Returns. Items can be returned within 30 days of delivery for a full refund."
)
RETURNS = "Items can be returned within 30 days of delivery for a full refund."
DELETION = "We delete your account data within 14 days of a request."
WINDOW = "The store offers a 14-day return window."
EIFFEL = "The Eiffel Tower is 330 metres tall."
FLEET = "The Northwind fleet has 96 trains, kept at two depots."


def specs() -> list[Spec]:
    return [
        # contradicted on the returns sentence; the lexical judge reported the deletion one
        Spec(
            "shop",
            WINDOW,
            "contradicted",
            0.8,
            reason="contradicted by current evidence (p=0.80; from bm25_alignment)",
            passages=[Passage("shop-policies", SHOP, deciding=True)],
            votes=[("bm25_alignment", 0.9, bm25(DELETION))],
        ),
        # unknown for lack of relevant evidence: what was retrieved is about something else
        Spec(
            "offtopic",
            EIFFEL,
            "unknown",
            None,
            reason="no relevant evidence",
            passages=[
                Passage("fleet", FLEET, deciding=False),
                Passage("opening", "The Airport line opened in August 2024.", deciding=False),
            ],
            votes=[("bm25_alignment", 0.5, bm25(FLEET))],
        ),
        # nothing retrieved at all
        Spec("empty", "The mascot is blue.", "unknown", None, reason="no relevant evidence"),
    ]


@pytest.fixture
def ledger(sqlite_url: str) -> Iterator[Ledger]:
    with open_ledger(sqlite_url) as opened:
        yield opened


@pytest.fixture
def run(ledger: Ledger) -> str:
    return write_run(ledger, "deciding", specs())


def _flagged(ledger: Ledger, run: str) -> dict[str, dict[str, object]]:
    report = build_full_report(ledger, run, n_boot=50, history=False)
    data = json.loads(full_to_json(report))
    return {f["claim"]: f for f in data["flagged"]}


def test_the_slot_that_matched_decides_not_a_number_elsewhere() -> None:
    passage = {"rank": 0, "doc_id": "shop", "version": "1", "chunk_id": "c", "text": SHOP}
    passage["deciding"] = True
    votes = [{"judge_name": "bm25_alignment", "raw": bm25(DELETION)}]
    for label in ("contradicted", "supported"):
        got = deciding_sentence(WINDOW, label, "from bm25_alignment)", [passage], votes)
        assert got is not None and got["text"] == RETURNS, (label, got)
        assert SHOP[got["start"] : got["end"]] == RETURNS
    # evidence the label step did not flag deciding never decides
    assert deciding_sentence(WINDOW, "contradicted", None, [{**passage, "deciding": False}]) is None
    # a label evidence does not decide has no deciding sentence, whatever was retrieved
    assert deciding_sentence(WINDOW, "unknown", None, [passage]) is None
    near = nearest_evidence(WINDOW, [{**passage, "deciding": False, "score": 0.3}])
    assert [(n["text"], n["relevant"], n["via"]) for n in near] == [(RETURNS, False, "nearest")]


def test_an_unknown_claim_shows_its_nearest_passages_not_a_deciding_sentence(
    ledger: Ledger, run: str
) -> None:
    flagged = _flagged(ledger, run)
    eiffel = flagged[EIFFEL]
    assert eiffel["deciding_evidence"] is None
    nearest = eiffel["nearest_evidence"]
    assert isinstance(nearest, list) and [n["doc_id"] for n in nearest] == ["fleet", "opening"]
    assert all(n["relevant"] is False for n in nearest)
    empty = flagged["The mascot is blue."]
    assert empty["deciding_evidence"] is None and empty["nearest_evidence"] == []
    window = flagged[WINDOW]
    assert window["deciding_evidence"]["text"] == RETURNS  # type: ignore[index]
    assert window["nearest_evidence"] == []


def _row(text: str, needle: str) -> str:
    return next(line for line in text.splitlines() if needle in line)


def test_every_report_format_says_nearest_not_relevant(ledger: Ledger, run: str) -> None:
    report = build_full_report(ledger, run, n_boot=50, history=False)
    md = full_to_markdown(report).replace("\\", "")
    row = _row(md, claim_id("offtopic", EIFFEL)[:16])
    assert "nearest, not relevant: " in row and f'"{FLEET}"' in row
    assert _row(md, claim_id("empty", "The mascot is blue.")[:16]).count("(no evidence)") == 1
    window = _row(md, claim_id("shop", WINDOW)[:16])
    assert f'"{RETURNS}"' in window and DELETION not in window

    html = to_html(report)
    items = {
        cid: next(i for i in html.split('<li class="flag">') if cid[:16] in i)
        for cid in (claim_id("offtopic", EIFFEL), claim_id("shop", WINDOW))
    }
    eiffel_item = items[claim_id("offtopic", EIFFEL)]
    assert "nearest, not relevant:" in eiffel_item and "deciding:" not in eiffel_item
    shop_item = items[claim_id("shop", WINDOW)]
    assert f"deciding:</span> &ldquo;{RETURNS}&rdquo;" in shop_item
    assert DELETION not in shop_item

    console = Console(record=True, width=100, color_system=None)
    print_report(report, console)
    table = console.export_text()
    eiffel = table[table.index(EIFFEL) :].split("\n\n")[0]
    assert "nearest, not relevant:" in eiffel and "deciding" not in eiffel
    assert FLEET in " ".join(table.split())
    shop_block = " ".join(table[table.index(WINDOW) :].split("\n\n")[0].split())
    assert f'deciding "{RETURNS}"' in shop_block and DELETION not in shop_block


def test_the_review_page_marks_only_deciding_sentences(ledger: Ledger, run: str) -> None:
    with TestClient(create_app(ledger, n_boot=50), base_url="http://127.0.0.1:8765") as client:
        claims = {c["text"]: c for c in client.get(f"/api/runs/{run}/claims").json()}
        eiffel = claims[EIFFEL]
        assert eiffel["deciding_evidence"] is None
        assert [e["decisive"] for e in eiffel["evidence"]] == [None, None]
        assert [e["deciding"] for e in eiffel["evidence"]] == [False, False]
        assert [n["relevant"] for n in eiffel["nearest_evidence"]] == [False, False]
        window = claims[WINDOW]
        decisive = window["evidence"][0]["decisive"]
        assert SHOP[decisive["start"] : decisive["end"]] == RETURNS

        page = client.get(f"/runs/{run}/review", params={"claim": claim_id("offtopic", EIFFEL)})
        assert page.status_code == 200
        article = page.text.split(f'id="claim-{claim_id("offtopic", EIFFEL)}"')[1]
        article = article.split("</article>")[0]
        assert "nearest, not relevant" in article and "m-decisive" not in article
        assert article.count(">not relevant</span>") == 2
        shop = page.text.split(f'id="claim-{claim_id("shop", WINDOW)}"')[1].split("</article>")[0]
        assert f'<span class="m-decisive ">{RETURNS}</span>' in shop
