"""Live checks (`auditor.check`, `Checker`, `POST /api/check`): a clearly supported and a
clearly contradicted number, the endpoint with and without its token, bad requests that
name the field, and checks recorded in the background that are all written when the
checker closes or `auditor serve` gets SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from auditor import Checker, CheckResult, check
from auditor.errors import InputError
from auditor.web import create_app
from ledger import Ledger, open_ledger

ROOT = Path(__file__).resolve().parent.parent
BASE = "http://127.0.0.1:8765"
TOKEN = "a-test-token-of-32-characters-xx"
ANSWER = "The network has 47 stations. It opened in 1998."
CONTEXTS = ["The regional network has 47 stations and 3 lines. It opened in 2001."]
EXPECTED = [
    ("The network has 47 stations", "supported"),
    ("The network opened in 1998", "contradicted"),
]


def _labels(result: dict[str, Any] | CheckResult) -> list[tuple[str, str]]:
    if isinstance(result, CheckResult):
        return [(c.text, c.label) for c in result.claims]
    return [(c["text"], c["label"]) for c in result["claims"]]


@pytest.fixture
def ledger(sqlite_url: str) -> Iterator[Ledger]:
    with open_ledger(sqlite_url) as opened:
        yield opened


def _check_runs(ledger: Ledger) -> dict[str, str]:
    """Recorded checks: answer text by run id (complete runs of kind ``check``)."""
    out = {}
    for run in ledger.list_runs():
        if run.kind == "check" and run.status == "complete":
            (answer,) = ledger.run_answers(run.run_id)
            out[run.run_id] = answer["answer"]
    return out


# ---------------------------------------------------------------------------- Python API
@pytest.mark.slow
def test_check_labels_a_supported_and_a_contradicted_number() -> None:
    result = check(ANSWER, CONTEXTS, as_of="2026-06-30")
    assert _labels(result) == EXPECTED
    supported, contradicted = result.claims
    assert result.labels == {"supported": 1, "contradicted": 1}
    assert supported.p_hallucinated is not None and contradicted.p_hallucinated is not None
    assert supported.p_hallucinated < 0.5 < contradicted.p_hallucinated
    assert "contradicted" in contradicted.reason
    # the wrong year is the error span, in answer offsets; the evidence is the context
    assert [ANSWER[a:b] for a, b in contradicted.error_spans] == ["1998"]
    assert ANSWER[slice(*supported.spans[0])] == "The network has 47 stations"
    (evidence,) = contradicted.evidence
    assert evidence.inline and evidence.context == "ctx-0" and evidence.relevance > 0.5
    assert set(contradicted.votes) >= {"numeric_consistency", "entailment"}
    assert not result.recorded and result.as_of is not None
    assert result.as_of.isoformat() == "2026-06-30T00:00:00+00:00"
    # the same check again: the same claims and run id (the checker stays warm)
    again = check(ANSWER, CONTEXTS, as_of="2026-06-30")
    assert again.run_id == result.run_id and _labels(again) == EXPECTED
    assert json.loads(json.dumps(result.to_dict()))["labels"] == {
        "supported": 1,
        "contradicted": 1,
    }


@pytest.mark.slow
def test_check_refuses_bad_input_naming_the_field() -> None:
    with pytest.raises(InputError, match="contexts"):
        check(ANSWER, "not a list")  # type: ignore[arg-type]
    with pytest.raises(InputError, match=r"contexts\[0\]\.text"):
        check(ANSWER, [{"source": "x"}])
    with pytest.raises(InputError, match="as_of"):
        check(ANSWER, CONTEXTS, as_of="yesterday")


@pytest.mark.slow
def test_recorded_checks_are_all_written_when_the_checker_closes(ledger: Ledger) -> None:
    answers = [f"The network has {n} stations." for n in (45, 46, 47)]
    with Checker(db=ledger) as checker:
        results = [checker.check(a, CONTEXTS, record=True) for a in answers]
        checker.check("Not recorded: the network has 48 stations.", CONTEXTS)
    assert all(r.recorded for r in results)
    assert _check_runs(ledger) == {r.run_id: a for r, a in zip(results, answers, strict=True)}
    run = results[0].run_id
    assert [c.label for c in ledger.claim_results(run)] == [results[0].claims[0].label]
    with TestClient(create_app(ledger, n_boot=50), base_url=BASE) as client:
        listed = client.get("/api/runs")
    assert listed.status_code == 200
    assert {r["run_id"] for r in listed.json()} == {r.run_id for r in results}


@pytest.mark.slow
def test_a_checker_without_a_ledger_cannot_record() -> None:
    from auditor.checker import shared_checker
    from auditor.errors import ConfigError

    with pytest.raises(ConfigError, match="record"):
        shared_checker().check(ANSWER, CONTEXTS, record=True)


# ---------------------------------------------------------------------------- HTTP
def _post(client: TestClient, body: object, headers: dict[str, str] | None = None) -> Any:
    return client.post(
        "/api/check",
        content=json.dumps(body),
        headers={"Content-Type": "application/json", **(headers or {})},
    )


@pytest.mark.slow
def test_http_check_returns_the_labels(ledger: Ledger) -> None:
    with TestClient(create_app(ledger), base_url=BASE) as client:
        res = _post(client, {"answer": ANSWER, "contexts": CONTEXTS, "as_of": "2026-06-30"})
    assert res.status_code == 200, res.text
    body = res.json()
    assert _labels(body) == EXPECTED and body["labels"] == {"supported": 1, "contradicted": 1}
    assert body["as_of"] == "2026-06-30T00:00:00+00:00" and body["recorded"] is False
    assert body["claims"][1]["error_spans"] == [[42, 46]]
    assert _check_runs(ledger) == {}  # nothing written unless asked


@pytest.mark.slow
def test_http_check_needs_the_token_when_the_server_has_one(ledger: Ledger) -> None:
    body = {"answer": ANSWER, "contexts": CONTEXTS}
    with TestClient(create_app(ledger, token=TOKEN), base_url=BASE) as client:
        refused = _post(client, body)
        wrong = _post(client, body, {"Authorization": "Bearer not-the-token-at-all-xxxx"})
        allowed = _post(client, {**body, "record": True}, {"Authorization": f"Bearer {TOKEN}"})
    assert refused.status_code == 401 and refused.json()["error"]["field"] == "token"
    assert wrong.status_code == 401
    assert allowed.status_code == 200 and _labels(allowed.json()) == EXPECTED
    assert allowed.json()["recorded"] is True
    assert list(_check_runs(ledger)) == [allowed.json()["run_id"]]  # written before shutdown


@pytest.mark.parametrize(
    ("body", "status", "field", "words"),
    [
        ({"contexts": CONTEXTS}, 422, "answer", "missing required field"),
        ({"answer": 3}, 422, "answer", "must be a string"),
        ({"answer": ANSWER, "contexts": "one context"}, 422, "contexts", "must be a list"),
        ({"answer": ANSWER, "contexts": [{"id": "c1"}]}, 422, "contexts[0].text", "text"),
        ({"answer": ANSWER, "as_of": "soon"}, 422, "as_of", "ISO-8601"),
        ({"answer": ANSWER, "record": "yes"}, 422, "record", "true or false"),
        ({"answer": ANSWER, "answr": "x"}, 422, "answr", "unknown field"),
        (["not", "an", "object"], 422, "body", "JSON object"),
    ],
)
def test_http_check_refuses_bad_requests_naming_the_field(
    ledger: Ledger, body: object, status: int, field: str, words: str
) -> None:
    with TestClient(create_app(ledger), base_url=BASE) as client:
        res = _post(client, body)
    assert res.status_code == status, res.text
    error = res.json()["error"]
    assert error["field"] == field and words in error["message"], error


def test_http_check_must_be_json(ledger: Ledger) -> None:
    with TestClient(create_app(ledger), base_url=BASE) as client:
        not_json = client.post(
            "/api/check", content="answer=x", headers={"Content-Type": "text/plain"}
        )
        broken = client.post(
            "/api/check", content="{", headers={"Content-Type": "application/json"}
        )
    assert not_json.status_code == 415 and not_json.json()["error"]["field"] == "body"
    assert broken.status_code == 400 and broken.json()["error"]["field"] == "body"


# ---------------------------------------------------------------------------- SIGTERM
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _send(url: str, answer: str) -> dict[str, Any]:
    data = json.dumps({"answer": answer, "contexts": CONTEXTS, "record": True}).encode()
    request = urllib.request.Request(
        f"{url}/api/check", data=data, headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=300) as res:
        result: dict[str, Any] = json.loads(res.read())
        return result


@pytest.mark.slow
def test_serve_writes_every_recorded_check_on_sigterm(tmp_path: Path) -> None:
    db = tmp_path / "ledger.db"
    open_ledger(db).close()
    port = _free_port()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    with (tmp_path / "serve.log").open("w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "auditor", "serve", "--db", str(db), "--port", str(port)],
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
            env=env,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 120
            while True:
                assert proc.poll() is None, (tmp_path / "serve.log").read_text()
                try:
                    with urllib.request.urlopen(f"{url}/api/runs", timeout=5):
                        break
                except OSError:
                    assert time.monotonic() < deadline, "auditor serve did not start"
                    time.sleep(0.3)
            answers = [f"The network has {n} stations." for n in range(40, 46)]
            with ThreadPoolExecutor(len(answers)) as pool:
                sent = [pool.submit(_send, url, a) for a in answers]
                sent[0].result()  # the first one answered (models loaded): stop the server
                proc.send_signal(signal.SIGTERM)
                results = [f.result() for f in sent]  # in-flight checks still finish
            # uvicorn shuts down gracefully, then exits by the signal it was stopped with
            code = proc.wait(timeout=120)
            assert code in (0, -signal.SIGTERM), (tmp_path / "serve.log").read_text()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert all(r["recorded"] for r in results)
    with open_ledger(db) as ledger:
        assert _check_runs(ledger) == {
            r["run_id"]: a for r, a in zip(results, answers, strict=True)
        }


@pytest.mark.slow
def test_the_doctest_of_check_holds() -> None:
    import doctest

    import auditor.checker

    result = doctest.testmod(auditor.checker, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
