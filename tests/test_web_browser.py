"""End to end in a real headless Chromium: `auditor serve` on the demo ledger, a reviewer
labels three claims with the keyboard, reloads, and finds the audits on the page and in
`auditor review list`; a hostile ledger cannot run script in the page. Screenshots of
the three main pages go to ``.auditor/screenshots/`` (or ``AUDITOR_SCREENSHOTS``).

The browser is the system's Chromium (Debian's ``chromium`` package, or the executable
``AUDITOR_CHROMIUM`` names) driven by Playwright; nothing is downloaded. The tests skip,
saying why, only when Playwright or a Chromium is missing (``.ci/run`` installs both).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from ledger import open_ledger
from tests._web_ledger import HOSTILE, HOSTILE_IMG, hostile_specs, write_run

pytestmark = pytest.mark.slow

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
CURRENT = re.compile(r"\bcurrent\b")
REVIEWED = re.compile(r"\breviewed\b")
ROOT = Path(__file__).resolve().parent.parent
SCREENSHOTS = Path(os.environ.get("AUDITOR_SCREENSHOTS", ROOT / ".auditor" / "screenshots"))


def chromium_path() -> str | None:
    """The system Chromium: ``AUDITOR_CHROMIUM``, else ``chromium`` on the PATH."""
    named = os.environ.get("AUDITOR_CHROMIUM")
    if named:
        return named if Path(named).exists() else None
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("Playwright is not installed (it is in the dev extra: pip install -e '.[dev]')")
    exe = chromium_path()
    if exe is None:
        pytest.skip(
            "no Chromium on this machine (apt-get install -y chromium, or point "
            "AUDITOR_CHROMIUM at one); .ci/run installs it"
        )
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _cli(*args: str, timeout: float = 600) -> str:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "auditor", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@contextmanager
def serve(db: Path) -> Iterator[str]:
    """``auditor serve --db DB`` on a free port, as a user starts it; its base URL."""
    port = _free_port()
    log = (db.parent / f"serve-{port}.log").open("w")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "auditor",
            "serve",
            "--db",
            str(db),
            "--port",
            str(port),
            "--bootstrap",
            "200",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=ROOT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            if proc.poll() is not None:
                raise AssertionError(
                    f"auditor serve exited with {proc.returncode}: "
                    f"{(db.parent / f'serve-{port}.log').read_text()}"
                )
            try:
                with urllib.request.urlopen(f"{url}/api/runs", timeout=5) as res:
                    if res.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError("auditor serve did not answer within 180 s")
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@pytest.fixture(scope="module")
def demo_ledger(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("web-demo")
    db = root / "ledger.db"
    _cli("demo", "--db", str(db), "--workdir", str(root / "work"), "--bootstrap", "200")
    return db


def _watch(page: Any) -> list[str]:
    problems: list[str] = []
    page.on(
        "console",
        lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None,
    )
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("dialog", lambda d: (problems.append(f"dialog: {d.message}"), d.dismiss()))
    return problems


def test_review_three_claims_with_the_keyboard(browser: Any, demo_ledger: Path) -> None:
    from playwright.sync_api import expect

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with serve(demo_ledger) as url:
        (run,) = json.loads(urllib.request.urlopen(f"{url}/api/runs").read())
        run_id = run["run_id"]
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        problems = _watch(page)
        page.goto(f"{url}/")
        expect(page.locator("table.runs")).to_contain_text(run_id[:12])
        expect(page.locator("section.plot img")).to_be_visible()
        page.screenshot(path=str(SCREENSHOTS / "runs.png"))

        page.locator("table.runs a", has_text="review").click()
        expect(page).to_have_url(re.compile(re.escape(f"{url}/runs/{run_id}/review")))
        claims = page.locator("article.claim")
        ids = [claims.nth(i).get_attribute("data-claim") for i in range(3)]
        labels = [claims.nth(i).locator("header .label").inner_text() for i in range(3)]
        flagged = {"contradicted", "not_supported", "stale", "unknown"}
        assert set(labels) <= flagged, labels  # flagged claims come first
        expect(claims.nth(0)).to_have_class(CURRENT)

        # the reviewer's name, typed once (remembered in the browser)
        page.locator("#reviewer").click()
        page.keyboard.type("e2e reviewer")
        page.keyboard.press("Escape")
        # claim 1: key 2 = contradicted; the queue moves on to claim 2
        page.keyboard.press("2")
        expect(page.locator(f"#claim-{ids[0]} ul.audits li")).to_have_count(1)
        expect(claims.nth(1)).to_have_class(CURRENT)
        # claim 2: n for a note, Esc, key 1 = supported
        page.keyboard.press("n")
        page.keyboard.type("checked against the <source> by hand")
        page.keyboard.press("Escape")
        page.keyboard.press("1")
        expect(page.locator(f"#claim-{ids[1]} ul.audits li")).to_have_count(1)
        # claim 3: j then k come back to it; key 4 = stale
        page.keyboard.press("j")
        expect(claims.nth(3)).to_have_class(CURRENT)
        page.keyboard.press("k")
        expect(claims.nth(2)).to_have_class(CURRENT)
        page.keyboard.press("4")
        expect(page.locator(f"#claim-{ids[2]} ul.audits li")).to_have_count(1)

        page.reload()
        for claim, label in zip(ids, ("contradicted", "supported", "stale"), strict=True):
            item = page.locator(f"#claim-{claim} ul.audits li")
            expect(item).to_have_count(1)
            expect(item).to_contain_text(f"{label} by e2e reviewer")
            expect(page.locator(f"#claim-{claim}")).to_have_class(REVIEWED)
        expect(page.locator(f"#claim-{ids[1]} .audit-note")).to_have_text(
            "checked against the <source> by hand"
        )
        expect(page.locator("#reviewer")).to_have_value("e2e reviewer")
        page.evaluate("window.scrollTo(0, 0)")
        page.screenshot(path=str(SCREENSHOTS / "queue.png"))

        page.goto(f"{url}/runs/{run_id}")
        expect(page.locator("article.report h2", has_text="Flagged claims")).to_be_visible()
        expect(page.locator("article.report")).to_contain_text("Agreement with human audits")
        page.screenshot(path=str(SCREENSHOTS / "card.png"))
        page.goto(f"{url}/runs/{run_id}/agreement")
        expect(page.locator("#judge-vs-human")).to_contain_text("Cohen's kappa")
        page.screenshot(path=str(SCREENSHOTS / "agreement.png"))
        page.close()
        assert not problems, problems

    listed = json.loads(
        _cli("review", "list", run_id[:12], "--db", str(demo_ledger), "--format", "json")
    )
    assert [(a["claim_id"], a["label"], a["reviewer"]) for a in listed] == [
        (ids[0], "contradicted", "e2e reviewer"),
        (ids[1], "supported", "e2e reviewer"),
        (ids[2], "stale", "e2e reviewer"),
    ]
    assert listed[1]["note"] == "checked against the <source> by hand"
    report = _cli(
        "report", run_id[:12], "--db", str(demo_ledger), "--format", "md", "--bootstrap", "100"
    )
    assert "## Agreement with human audits" in report and "3 of 3 claims" in report


def test_a_hostile_ledger_runs_no_script(browser: Any, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    db = tmp_path / "hostile.db"
    with open_ledger(db) as ledger:
        run_id = write_run(ledger, "hostile", hostile_specs())
    with serve(db) as url:
        page = browser.new_page()
        problems = _watch(page)
        for path in ("/", f"/runs/{run_id}", f"/runs/{run_id}/agreement", f"/runs/{run_id}/review"):
            page.goto(url + path)
            assert page.evaluate("typeof window.__xss") == "undefined", path
        first = page.locator("article.claim").first
        # the markup is there as text, for the reviewer to read
        expect(first.locator(".claim-text")).to_contain_text(HOSTILE)
        expect(first.locator(".passage").first).to_contain_text(HOSTILE_IMG)
        expect(first.locator(".passage").first).to_contain_text("source javascript:alert(4)")
        assert first.locator(".passage a").count() == 0  # no javascript:/data: link
        first.locator("details.votes > summary").click()
        first.locator("details.votes details summary").first.click()
        expect(first.locator("details.votes pre").first).to_contain_text(HOSTILE)
        # a review whose reviewer and note hold markup is shown as text, too
        page.locator("#reviewer").fill(HOSTILE_IMG)
        page.keyboard.press("Escape")
        page.keyboard.press("n")
        page.keyboard.type(HOSTILE)
        page.keyboard.press("Escape")
        page.keyboard.press("3")
        expect(first.locator("ul.audits li")).to_have_count(1)
        expect(first.locator("ul.audits li .who")).to_have_text(HOSTILE_IMG)
        expect(first.locator("ul.audits li .audit-note")).to_have_text(HOSTILE)
        page.reload()
        expect(first.locator("ul.audits li .audit-note")).to_have_text(HOSTILE)
        assert page.evaluate("typeof window.__xss") == "undefined"
        assert page.locator("article.claim img, article.claim svg").count() == 0
        page.close()
    assert not problems, problems


WIDTHS = (1280, 800)
"""Window widths every page is checked and photographed at (issue 37)."""


def _layout(page: Any) -> dict[str, Any]:
    return dict(
        page.evaluate(
            """() => {
              const head = document.querySelector('header.top');
              const h1 = document.querySelector('main h1, body > h1');
              return {
                scroll_y: window.scrollY,
                header_top: head ? head.getBoundingClientRect().top : 0,
                header_bottom: head ? head.getBoundingClientRect().bottom : 0,
                h1_top: h1.getBoundingClientRect().top,
                overflow: document.documentElement.scrollWidth - window.innerWidth,
              };
            }"""
        )
    )


def test_pages_open_at_their_top_and_fit_both_widths(
    browser: Any, demo_ledger: Path, tmp_path: Path
) -> None:
    """The report card, the review queue and the trend page at 1280 and 800 pixels: each
    opens at its top (the queue used to open scrolled past its header, with a blank band
    above it), its heading right under the header, no page wider than the window; the
    screenshots go to the screenshots folder (``card-1280.png``, ``queue-800.png``, ...;
    ``docs/screenshots/`` holds the ones the README shows)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    db = tmp_path / "ledger.db"
    shutil.copy2(demo_ledger, db)
    index = demo_ledger.parent / "work" / "index"
    with open_ledger(db, create=False) as ledger:
        (run_id,) = [r.run_id for r in ledger.list_runs()]
    _cli(
        "reaudit",
        run_id,
        "--db",
        str(db),
        "--index",
        str(index),
        "--as-of",
        "2025-09-01",
        "--override-answer-dates",
        "--quiet",
    )
    trend = tmp_path / "trend.html"
    _cli("trend", "--db", str(db), "--format", "html", "--out", str(trend), "--bootstrap", "200")
    with serve(db) as url:
        pages = {
            "card": f"{url}/runs/{run_id}",
            "queue": f"{url}/runs/{run_id}/review",
            "trend": trend.as_uri(),
        }
        for width in WIDTHS:
            page = browser.new_page(viewport={"width": width, "height": 900})
            problems = _watch(page)
            for name, address in pages.items():
                page.goto(address)
                page.wait_for_load_state("networkidle")
                at = _layout(page)
                assert at["scroll_y"] == 0, (name, width, at)
                assert at["header_top"] == 0, (name, width, at)
                # the heading sits right under the header: no blank band above it
                assert 0 <= at["h1_top"] - at["header_bottom"] <= 60, (name, width, at)
                assert at["overflow"] <= 0, (name, width, at)
                page.screenshot(path=str(SCREENSHOTS / f"{name}-{width}.png"))
            page.close()
            assert not problems, problems
