"""Report cards reviewers can act on (issue 14, item 5): flagged claims, unknown ones
too, carry their claim ids and the evidence sentence that decided them in every format;
HTML links each to the review queue; the table format shows the agreement with human
audits when there are any."""

from __future__ import annotations

import json
import re

from rich.console import Console

from auditor.report.evidence import deciding_sentence
from auditor.report.full import build_full_report, full_to_json, full_to_markdown
from auditor.report.html import to_html
from auditor.report.render import print_report
from ledger import open_ledger
from tests._web_ledger import claim_id, review_specs, write_run


def _report(url: str, audits: bool = False):  # type: ignore[no-untyped-def]
    with open_ledger(url) as ledger:
        run = write_run(ledger, "card", review_specs(3))
        if audits:
            rows = [
                (claim_id(f"ans-{i}", f"Line {i} opened in 1998."), "ana", "supported", None)
                for i in range(3)
            ]
            rows += [
                (
                    claim_id(f"ans-{i}", f"The fare is {i + 2} dollars."),
                    "ana",
                    "supported" if i == 0 else "contradicted",
                    "checked",
                )
                for i in range(3)
            ]
            ledger.record_human_audits(run, rows)
        return run, build_full_report(ledger, run, n_boot=100)


def test_flagged_claims_carry_ids_and_deciding_evidence_in_json(sqlite_url: str) -> None:
    _run, report = _report(sqlite_url)
    data = json.loads(full_to_json(report))
    flagged = data["flagged"]
    assert sorted({f["label"] for f in flagged}) == [
        "contradicted",
        "not_supported",
        "stale",
        "unknown",
    ]
    assert len(flagged) == 12
    by_id = {f["claim_id"]: f for f in flagged}
    fare = by_id[claim_id("ans-1", "The fare is 3 dollars.")]
    assert fare["deciding_evidence"]["text"] == "A single fare costs 4 dollars."
    assert fare["deciding_evidence"]["doc_id"] == "doc-fares-1"
    stale = by_id[claim_id("ans-2", "Station 2 closed in 2001.")]
    assert stale["deciding_evidence"]["superseded"] is True
    assert stale["deciding_evidence"]["text"] == "Station 2 closed in 2001."
    unknown = by_id[claim_id("ans-0", "The mascot 0 is blue.")]
    assert unknown["deciding_evidence"] is None  # no evidence: said, not invented


def test_markdown_lists_ids_and_deciding_sentences(sqlite_url: str) -> None:
    _, report = _report(sqlite_url)
    md = full_to_markdown(report)
    section = md[md.index("## Flagged claims") :]
    cid = claim_id("ans-1", "The fare is 3 dollars.")
    row = next(line for line in section.splitlines() if cid[:16] in line)
    row = row.replace("\\", "")  # Markdown punctuation is backslash-escaped
    assert "| contradicted |" in row and '"A single fare costs 4 dollars."' in row
    assert "doc-fares-1@" in row and "judge bm25_alignment" in row
    assert section.count("| unknown |") == 3 and "(no evidence)" in section


def test_html_links_each_flagged_claim_to_the_review_queue(sqlite_url: str) -> None:
    run, report = _report(sqlite_url)
    html = to_html(report)
    cid = claim_id("ans-0", "The depot 0 has 40 trains.")
    link = f"http://127.0.0.1:8765/runs/{run}/review?claim={cid}#claim-{cid}"
    assert f'href="{link}"' in html
    assert len(re.findall(r'href="http://127\.0\.0\.1:8765/runs/', html)) == 12
    assert "&ldquo;A single fare costs 3 dollars.&rdquo;" in html
    assert 'href="' not in to_html(report, review_base=None)
    served = to_html(report, review_base="https://review.example.org/")
    assert f'href="https://review.example.org/runs/{run}/review?claim={cid}' in served


def _table(report) -> str:  # type: ignore[no-untyped-def]
    console = Console(record=True, width=250, color_system=None)
    print_report(report, console)
    return console.export_text()


def test_the_table_format_shows_agreement_once_there_are_audits(
    sqlite_url: str, tmp_path: object
) -> None:
    _, before = _report(sqlite_url)
    text = _table(before)
    assert "Flagged claims" in text and claim_id("ans-1", "The fare is 3 dollars.")[:16] in text
    assert "Agreement with human audits" not in text
    _, after = _report(str(tmp_path) + "/audited.db", audits=True)  # type: ignore[operator]
    text = _table(after)
    assert "Agreement with human audits" in text and "6 of 6 claims compared" in text
    kappa = re.search(r"Cohen's kappa[\s│]+([-\d.]+) \[([-\d.]+), ([-\d.]+)\]", text)
    # reference (human) x auditor: [[2, 0], [1, 3]]: po = 5/6, pe = 1/2, kappa = 2/3
    assert kappa is not None and kappa.group(1) == "0.667"
    assert re.search(r"n audits[\s│]+6", text) and re.search(r"contradicted[\s│]+2\s+0", text)


def test_the_deciding_sentence_rules() -> None:
    current = {
        "rank": 0,
        "doc_id": "d",
        "version": "2",
        "chunk_id": "c0",
        "superseded": False,
        "deciding": True,
        "text": "Trains are red. The fare is 3 dollars. A day fare is 9 dollars. Nothing else.",
    }
    old = {
        "rank": 1,
        "doc_id": "d",
        "version": "1",
        "chunk_id": "c1",
        "superseded": True,
        "deciding": True,
        "text": "The fare is 2 dollars. Trains are red.",
    }
    claim = "The fare is 2 dollars."
    # the sentence of the current passage that states the claim's slot, for contradicted
    got = deciding_sentence(claim, "contradicted", None, [current, old])
    assert got is not None and got["text"] == "The fare is 3 dollars." and got["rank"] == 0
    assert current["text"][got["start"] : got["end"]] == got["text"]
    assert got["via"] == "slot match"
    # the superseded passage for a stale claim
    got = deciding_sentence(claim, "stale", None, [current, old])
    assert got is not None and got["text"] == "The fare is 2 dollars." and got["superseded"]
    # among sentences that fill the slot alike, a judge's reported one wins, the judges
    # the reason names first; one that does not state the slot never does
    votes = [
        {"judge_name": "a_judge", "raw": json.dumps({"sentence": "Trains are red."})},
        {"judge_name": "z_judge", "raw": json.dumps({"sentence": "A day fare is 9 dollars."})},
    ]
    got = deciding_sentence(
        claim, "contradicted", "p=0.9; contradiction 1.00 from z_judge)", [current, old], votes
    )
    assert got is not None and got["text"] == "A day fare is 9 dollars."
    assert got["via"] == "judge z_judge"
    got = deciding_sentence(
        claim, "contradicted", "p=0.9; contradiction 1.00 from a_judge)", [current, old], votes
    )
    assert got is not None and got["text"] == "A day fare is 9 dollars."  # a_judge's: no slot
    got = deciding_sentence(claim, "contradicted", "from a_judge)", [current, old], votes[:1])
    assert got is not None and got["text"] == "The fare is 3 dollars."
    assert got["via"] == "slot match"
    # a reported sentence that is not in the passages the label rests on is ignored
    votes = [
        {"judge_name": "a_judge", "raw": json.dumps({"sentence": "Not there."})},
        {"judge_name": "b_judge", "raw": "not json"},
    ]
    got = deciding_sentence(claim, "contradicted", None, [current], votes)
    assert got is not None and got["via"] == "slot match"
    assert deciding_sentence(claim, "unknown", None, []) is None
