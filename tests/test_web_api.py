"""The review application's JSON API and pages through FastAPI's test client, on real
SQLite and PostgreSQL ledgers: queue order and filters, reviews written as the rows of
`auditor review add`, bad requests that write nothing, security (escaping, host check,
token, same-origin check, no stack traces), concurrent reviewers."""

from __future__ import annotations

import dataclasses
import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from auditor.web import create_app
from ledger import Ledger, open_ledger
from tests._web_ledger import claim_id, hostile_specs, review_specs, write_run

BASE = "http://127.0.0.1:8765"
SAME_ORIGIN = {"Origin": BASE}


@pytest.fixture
def ledger(ledger_url: str) -> Iterator[Ledger]:
    with open_ledger(ledger_url) as opened:
        yield opened


@pytest.fixture
def run_id(ledger: Ledger) -> str:
    return write_run(ledger, "review", review_specs(4))


@pytest.fixture
def client(ledger: Ledger, run_id: str) -> Iterator[TestClient]:
    with TestClient(create_app(ledger, n_boot=200, per_page=5), base_url=BASE) as c:
        yield c


def _post(
    client: TestClient, run: str, claim: str, body: object, headers: dict[str, str] | None = None
) -> object:
    return client.post(
        f"/api/runs/{run}/claims/{claim}/audits",
        content=json.dumps(body),
        headers={"Content-Type": "application/json", **SAME_ORIGIN, **(headers or {})},
    )


# ---------------------------------------------------------------------------- reading
def test_runs_list_each_run_with_its_id_figures_and_review_share(
    client: TestClient, run_id: str
) -> None:
    res = client.get("/api/runs")
    assert res.status_code == 200
    (run,) = res.json()
    assert run["run_id"] == run_id
    assert run["n_claims"] == 24 and run["n_answers"] == 4 and run["n_flagged"] == 16
    # S = 4 supported, U = 4 contradicted + 4 not_supported + 4 stale
    assert run["support_precision"] == pytest.approx(4 / 16)
    lo, hi = run["ci"]
    assert lo <= 0.25 <= hi
    assert run["reviewed_share"] == 0.0


def test_flagged_claims_come_nearest_the_threshold_first(client: TestClient, run_id: str) -> None:
    res = client.get(f"/api/runs/{run_id[:10]}/claims", params={"flagged": "true"})
    assert res.status_code == 200 and res.headers["X-Total-Count"] == "16"
    claims = res.json()
    assert {c["label"] for c in claims} == {"contradicted", "not_supported", "stale", "unknown"}
    distances = [
        round(abs(c["p_hallucinated"] - 0.5), 6) for c in claims if c["p_hallucinated"] is not None
    ]
    assert distances == sorted(distances)
    # the unknown claims have no stacked probability: they come last
    assert [c["label"] for c in claims[-4:]] == ["unknown"] * 4
    first = claims[0]
    assert set(first) >= {
        "id",
        "text",
        "label",
        "p_hallucinated",
        "spans",
        "error_spans",
        "evidence",
        "votes",
        "audits",
        "deciding_evidence",
        "reason",
    }
    # p = 0.55 (contradicted, answer 0) and 0.45 (stale) are both 0.05 from 0.5: the
    # label order puts contradicted first
    assert first["label"] == "contradicted" and first["answer_id"] == "ans-0"
    assert first["answer"][slice(*first["error_spans"][0])] == "2"
    assert first["deciding_evidence"]["text"] == "A single fare costs 3 dollars."
    assert first["deciding_evidence"]["via"] == "judge bm25_alignment"
    assert first["evidence"][0]["link"] == "https://example.org/f"
    assert first["votes"][0]["raw"]


def test_stale_claims_are_decided_by_the_superseded_version(
    client: TestClient, run_id: str
) -> None:
    claims = client.get(f"/api/runs/{run_id}/claims", params={"label": "stale"}).json()
    assert len(claims) == 4
    decided = claims[0]["deciding_evidence"]
    assert decided["superseded"] and decided["text"].endswith("closed in 2001.")
    marked = [e for e in claims[0]["evidence"] if e["decisive"]]
    assert len(marked) == 1 and marked[0]["superseded"]
    e = marked[0]
    assert e["text"][e["decisive"]["start"] : e["decisive"]["end"]] == decided["text"]


def test_all_claims_list_flagged_first_then_the_others(client: TestClient, run_id: str) -> None:
    res = client.get(f"/api/runs/{run_id}/claims", params={"limit": 1000})
    labels = [c["label"] for c in res.json()]
    assert len(labels) == 24
    assert set(labels[:16]) == {"contradicted", "not_supported", "stale", "unknown"}
    assert labels[16:] == ["supported"] * 4 + ["not_factual"] * 4
    page = client.get(f"/api/runs/{run_id}/claims", params={"offset": 20, "limit": 3}).json()
    assert [c["id"] for c in page] == [c["id"] for c in res.json()[20:23]]


# ---------------------------------------------------------------------------- writing
def test_a_review_is_the_row_auditor_review_add_writes(
    client: TestClient, ledger: Ledger, run_id: str, ledger_url: str, run_cli: object
) -> None:
    cid = claim_id("ans-1", "The fare is 3 dollars.")
    res = _post(
        client,
        run_id[:12],
        cid[:10],
        {"label": "supported", "reviewer": " ana ", "note": "the fare page is old"},
    )
    assert res.status_code == 201, res.text
    audit = res.json()
    assert audit["added"] is True and audit["claim_id"] == cid and audit["run_id"] == run_id
    assert audit["reviewer"] == "ana" and audit["label"] == "supported"
    (row,) = ledger.human_audits(run_id)
    assert (row["id"], row["claim_id"], row["reviewer"], row["label"], row["note"]) == (
        audit["id"],
        cid,
        "ana",
        "supported",
        "the fare page is old",
    )
    # the same verdict again adds nothing; a second review (another label) adds a row
    again = _post(
        client,
        run_id,
        cid,
        {"label": "supported", "reviewer": "ana", "note": "the fare page is old"},
    )
    assert again.status_code == 200 and again.json()["added"] is False
    assert again.json()["id"] == audit["id"]
    second = _post(client, run_id, cid, {"label": "contradicted", "reviewer": "ana"})
    assert second.status_code == 201
    assert [a["label"] for a in ledger.human_audits(run_id)] == ["supported", "contradicted"]
    listed = client.get(f"/api/runs/{run_id}/claims/{cid[:12]}/audits").json()
    assert [(a["reviewer"], a["label"]) for a in listed] == [
        ("ana", "supported"),
        ("ana", "contradicted"),
    ]
    # the reviewed filter sees it; `auditor review list` shows the same rows
    unreviewed = client.get(
        f"/api/runs/{run_id}/claims", params={"flagged": "true", "reviewed": "false"}
    ).json()
    assert cid not in {c["id"] for c in unreviewed} and len(unreviewed) == 15
    code, out, err = run_cli(
        [
            "review",
            "list",
            run_id[:12],
            "--db",
            ledger_url,  # type: ignore[operator]
            "--format",
            "json",
        ]
    )
    assert code == 0, err
    assert [(a["claim_id"], a["label"], a["reviewer"]) for a in json.loads(out)] == [
        (cid, "supported", "ana"),
        (cid, "contradicted", "ana"),
    ]


@pytest.mark.parametrize(
    ("body", "status", "field"),
    [
        ({"label": "wrong", "reviewer": "ana"}, 422, "label"),
        ({"label": "supported", "reviewer": "   "}, 422, "reviewer"),
        ({"label": "supported"}, 422, "reviewer"),
        ({"reviewer": "ana"}, 422, "label"),
        ({"label": 3, "reviewer": "ana"}, 422, "label"),
        ({"label": "supported", "reviewer": "ana", "note": 5}, 422, "note"),
        ({"label": "supported", "reviewer": "ana", "admin": True}, 422, "admin"),
        (["supported", "ana"], 400, "body"),
    ],
)
def test_bad_reviews_get_a_4xx_naming_the_field_and_write_nothing(
    client: TestClient, ledger: Ledger, run_id: str, body: object, status: int, field: str
) -> None:
    cid = claim_id("ans-0", "The fare is 2 dollars.")
    res = _post(client, run_id, cid, body)
    assert res.status_code == status, res.text
    assert res.json()["error"]["field"] == field
    assert ledger.count("human_audit") == 0


def test_unknown_runs_claims_and_non_json_bodies_write_nothing(
    client: TestClient, ledger: Ledger, run_id: str
) -> None:
    cid = claim_id("ans-0", "The fare is 2 dollars.")
    ok = {"label": "supported", "reviewer": "ana"}
    res = _post(client, "ffffffffff", cid, ok)
    assert res.status_code == 404 and res.json()["error"]["field"] == "run"
    res = _post(client, run_id, "0000000000dead", ok)
    assert res.status_code == 404 and res.json()["error"]["field"] == "claim"
    res = client.post(
        f"/api/runs/{run_id}/claims/{cid}/audits",
        content=b"{label: 1",
        headers={"Content-Type": "application/json", **SAME_ORIGIN},
    )
    assert res.status_code == 400 and res.json()["error"]["field"] == "body"
    res = client.post(
        f"/api/runs/{run_id}/claims/{cid}/audits",
        content=b"label=supported&reviewer=ana",
        headers={"Content-Type": "application/x-www-form-urlencoded", **SAME_ORIGIN},
    )
    assert res.status_code == 415 and res.json()["error"]["field"] == "body"
    assert client.get("/api/runs/zz-not-a-run/claims").status_code == 404
    bad = client.get(f"/api/runs/{run_id}/claims", params={"limit": 0})
    assert bad.status_code == 422 and bad.json()["error"]["field"] == "limit"
    assert client.get("/api/nothing-here").json()["error"]["message"] == "not found"
    assert ledger.count("human_audit") == 0


# ---------------------------------------------------------------------------- agreement
def test_agreement_judge_vs_human_and_reviewer_vs_reviewer(client: TestClient, run_id: str) -> None:
    empty = client.get(f"/api/runs/{run_id}/agreement").json()
    assert empty["judge_vs_human"] is None and empty["reviewer_pairs"] == []
    claims = client.get(f"/api/runs/{run_id}/claims", params={"limit": 1000}).json()
    decidable = [c for c in claims if c["label"] in ("supported", "contradicted")]
    for c in decidable:  # ana agrees with the auditor, bob says the opposite on half
        _post(client, run_id, c["id"], {"label": c["label"], "reviewer": "ana"})
    for i, c in enumerate(decidable):
        flip = {"supported": "contradicted", "contradicted": "supported"}[c["label"]]
        _post(client, run_id, c["id"], {"label": flip if i % 2 else c["label"], "reviewer": "bob"})
    data = client.get(f"/api/runs/{run_id}/agreement").json()
    human = data["judge_vs_human"]
    assert human["n_items"] == 8 and human["n_reviewers"] == 2
    assert human["confusion"]  # latest audit per claim: bob's
    (pair,) = data["reviewer_pairs"]
    assert pair["reviewers"] == ["ana", "bob"] and pair["n_shared_claims"] == 8
    assert pair["share_equal"] == pytest.approx(0.5)
    assert pair["kappa"] is not None and pair["kappa_ci"] is not None
    page = client.get(f"/runs/{run_id}/agreement")
    assert page.status_code == 200 and "ana (reference) and bob" in page.text


# ---------------------------------------------------------------------------- pages
def test_the_three_pages_render(client: TestClient, run_id: str) -> None:
    runs = client.get("/")
    assert runs.status_code == 200 and run_id[:12] in runs.text
    assert 'src="data:image/png;base64,' in runs.text  # the support precision plot
    card = client.get(f"/runs/{run_id[:8]}")
    assert card.status_code == 200 and "support_precision" in card.text
    assert "Flagged claims" in card.text
    cid = claim_id("ans-0", "The fare is 2 dollars.")
    assert f'href="/runs/{run_id}/review?claim={cid}#claim-{cid}"' in card.text
    queue = client.get(f"/runs/{run_id}/review")
    assert queue.status_code == 200
    assert queue.text.count('<article class="claim') == 5  # per_page=5
    assert "page 1 of 5" in queue.text and 'rel="next"' in queue.text
    assert '<script src="/static/review.js"></script>' in queue.text
    for asset in ("/static/review.js", "/static/app.css", "/report.css"):
        assert client.get(asset).status_code == 200


def test_the_queue_pages_filters_and_finds_a_claims_page(client: TestClient, run_id: str) -> None:
    last = client.get(f"/runs/{run_id}/review", params={"page": 5})
    assert last.text.count('<article class="claim') == 4 and 'rel="next"' not in last.text
    stale = client.get(f"/runs/{run_id}/review", params={"label": "stale", "flagged": "true"})
    assert stale.text.count('<article class="claim') == 4
    assert stale.text.count('class="label l-stale"') == 4
    cid = claim_id("ans-3", "Thanks for asking!")  # not flagged: on the last page
    found = client.get(f"/runs/{run_id}/review", params={"claim": cid[:12]})
    assert f'id="claim-{cid}"' in found.text and "page 5 of 5" in found.text
    hidden = client.get(f"/runs/{run_id}/review", params={"claim": cid, "flagged": "true"})
    assert f'id="claim-{cid}"' in hidden.text  # the filter that hid it is dropped
    bad = client.get(f"/runs/{run_id}/review", params={"page": "x"})
    assert bad.status_code == 422 and "page" in bad.text


def test_hostile_text_is_escaped_everywhere(ledger: Ledger) -> None:
    run = write_run(ledger, "hostile", hostile_specs())
    with TestClient(create_app(ledger, n_boot=50), base_url=BASE) as client:
        pages = [
            client.get(u)
            for u in ("/", f"/runs/{run}", f"/runs/{run}/review", f"/runs/{run}/agreement")
        ]
    for res in pages:
        assert res.status_code == 200
        html = res.text
        # no markup from the ledger survives: only the app's own script tag
        assert re.findall(r"<script[^>]*>", html) in ([], ['<script src="/static/review.js">'])
        assert "<img src=x" not in html and "<svg" not in html and "<b>bold" not in html
        assert 'href="javascript:' not in html and 'href="data:text' not in html
        assert "Content-Security-Policy" in res.headers
    queue = pages[2].text
    assert "&lt;script&gt;window.__xss=1;alert(1)&lt;/script&gt;" in queue
    assert "&lt;img src=x onerror=" in queue
    assert "source <code>javascript:alert(4)</code>" in queue  # shown as text, not linked


# ---------------------------------------------------------------------------- security
def test_only_loopback_host_names_are_answered_without_a_token(client: TestClient) -> None:
    assert client.get("/api/runs", headers={"Host": "localhost:8765"}).status_code == 200
    res = client.get("/api/runs", headers={"Host": "evil.example:8765"})
    assert res.status_code == 400 and res.json()["error"]["field"] == "host"


def test_cross_site_posts_are_refused(client: TestClient, ledger: Ledger, run_id: str) -> None:
    cid = claim_id("ans-0", "The fare is 2 dollars.")
    body = {"label": "supported", "reviewer": "mallory"}
    for headers in (
        {"Origin": "http://evil.example"},
        {"Origin": "null"},
        {"Origin": "http://127.0.0.1:9999"},
    ):
        res = _post(client, run_id, cid, body, headers)
        assert res.status_code == 403 and res.json()["error"]["field"] == "origin"
    res = client.post(
        f"/api/runs/{run_id}/claims/{cid}/audits",
        content=json.dumps(body),
        headers={"Content-Type": "application/json", "Referer": "http://evil.example/page"},
    )
    assert res.status_code == 403
    assert ledger.count("human_audit") == 0
    # a script without Origin or Referer (curl) may post JSON to a loopback server
    res = client.post(
        f"/api/runs/{run_id}/claims/{cid}/audits",
        content=json.dumps(body),
        headers={"Content-Type": "application/json"},
    )
    assert res.status_code == 201


def test_a_token_is_required_on_every_request(ledger: Ledger, run_id: str) -> None:
    token = "s3cret-token-0123456789"
    app = create_app(ledger, token=token, n_boot=50)
    with TestClient(app, base_url="http://10.0.0.5:8765") as client:
        assert client.get("/api/runs").status_code == 401
        assert client.get("/").status_code == 401
        assert client.get("/static/review.js").status_code == 401
        wrong = client.get("/api/runs", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401 and wrong.headers["WWW-Authenticate"] == "Bearer"
        ok = client.get("/api/runs", headers={"Authorization": f"Bearer {token}"})
        assert ok.status_code == 200
        cid = claim_id("ans-0", "The fare is 2 dollars.")
        body = json.dumps({"label": "supported", "reviewer": "ana"})
        url = f"/api/runs/{run_id}/claims/{cid}/audits"
        assert (
            client.post(url, content=body, headers={"Content-Type": "application/json"}).status_code
            == 401
        )
        # the header token needs no same-origin check (a browser never adds it by itself)
        res = client.post(
            url,
            content=body,
            headers={
                "Content-Type": "application/json",
                "Authorization": f"Bearer {token}",
                "Origin": "http://elsewhere",
            },
        )
        assert res.status_code == 201
        # a browser opens a page once with ?token=: it gets a cookie and a clean URL
        res = client.get(f"/runs/{run_id}/review?token={token}&page=1", follow_redirects=False)
        assert res.status_code == 303 and res.headers["location"] == (
            f"/runs/{run_id}/review?page=1"
        )
        assert "httponly" in res.headers["set-cookie"].lower()
        assert "samesite=strict" in res.headers["set-cookie"].lower()
        assert client.get("/").status_code == 200  # the cookie now
        # with the cookie alone, a cross-site post is still refused
        res = client.post(
            url,
            content=json.dumps({"label": "stale", "reviewer": "x"}),
            headers={"Content-Type": "application/json", "Origin": "http://elsewhere"},
        )
        assert res.status_code == 403
    assert len(ledger.human_audits(run_id)) == 1


def test_errors_carry_no_stack_trace(
    ledger: Ledger, run_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = create_app(ledger, n_boot=50)

    def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("secret internals at /srv/ledger.db")

    monkeypatch.setattr(ledger, "claim_results", broken)
    with TestClient(app, base_url=BASE, raise_server_exceptions=False) as client:
        for url in (f"/api/runs/{run_id}/claims", f"/runs/{run_id}/review"):
            res = client.get(url)
            assert res.status_code == 500
            assert "Traceback" not in res.text and "secret internals" not in res.text
            assert "RuntimeError" not in res.text and "internal error" in res.text


# ---------------------------------------------------------------------------- concurrency
def test_two_reviewers_at_once_lose_no_review(ledger_url: str, ledger: Ledger, run_id: str) -> None:
    """Two servers (two engines) on one ledger, two reviewers posting at the same time."""
    claims = sorted(ledger.claim_ids(run_id))
    errors: list[str] = []

    def review(name: str, label: str) -> None:
        with TestClient(create_app(ledger_url, n_boot=50), base_url=BASE) as client:
            for cid in claims:
                res = _post(client, run_id, cid, {"label": label, "reviewer": name})
                if res.status_code != 201:
                    errors.append(f"{name} {cid[:8]}: {res.status_code} {res.text}")

    threads = [
        threading.Thread(target=review, args=("ana", "supported")),
        threading.Thread(target=review, args=("bob", "contradicted")),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    audits = ledger.human_audits(run_id)
    assert len(audits) == 2 * len(claims)
    assert {(a["reviewer"], a["claim_id"]) for a in audits} == {
        (r, c) for r in ("ana", "bob") for c in claims
    }


def test_create_app_refuses_a_missing_ledger(tmp_path: Path) -> None:
    from ledger import LedgerError

    with pytest.raises(LedgerError, match="no ledger at this path"):
        create_app(str(tmp_path / "missing.db"))


def test_claim_labels_are_the_claim_results_in_light_form(ledger: Ledger, run_id: str) -> None:
    full = [
        (c.claim_id, c.answer_id, c.label, c.p_hallucinated) for c in ledger.claim_results(run_id)
    ]
    assert ledger.claim_labels(run_id) == full and len(full) == 24


def test_claim_rows_are_kept_only_for_complete_runs(ledger: Ledger) -> None:
    from auditor.web.views import ClaimRows, resolve_run
    from tests._web_ledger import Spec

    run = write_run(ledger, "small", [Spec("a", "One.", "supported", 0.1)])
    rows = ClaimRows(ledger, keep=1)
    info = resolve_run(ledger, run)
    assert [r.label for r in rows.get(info)] == ["supported"]
    assert rows.get(info) is rows.get(info)  # complete: kept
    running = dataclasses.replace(info, status="running")
    other = ClaimRows(ledger)
    assert other.get(running) is not other.get(running)  # still being written: re-read
