"""The workspace page of ``geoask server`` in headless Chromium, end to end.

The shared test server starts the page (its URL and token are in the server's record); the
test asks the first two turns of the shipped conversation ``nc_airports-001`` in the page's
question box with the offline reference model, sees each turn's question and answer table (the
conversation's expected values), the first run's interactive map drawn in its frame (the
follow-up reads the first turn's layer and exports none of its own, so its run draws no map)
and its Prefect flow-run link; every request stays on the page's own origin without a
Content-Security-Policy violation, and a request without the token is refused (403); the map
frame is sandboxed (it cannot read the page) and the token is in no log file. The
screenshot is ``.geoask/screenshots/workspace.png``.
"""

from __future__ import annotations

import json
import re
import shutil
import time

import pytest
from test_dashboard import SCREENSHOTS, TIMEOUT_MS

from geoask.cases.conversations import load_conversations

pytestmark = [pytest.mark.browser, pytest.mark.db, pytest.mark.sandbox]
AIRPORTS = next(c for c in load_conversations() if c.id == "nc_airports-001")
ASK_TIMEOUT_MS = 45_000


@pytest.fixture(scope="module")
def workspace(served) -> tuple[str, str]:
    record = json.loads((served.work / "prefect" / "server.json").read_text())
    assert record["workspace_url"].startswith("http://127.0.0.1:"), record
    assert f"workspace page: {record['workspace_url']} (" in served.log()
    assert record["workspace_token"] not in served.log()  # the token is never in a log file
    return record["workspace_url"], record["workspace_token"]


def ask(page, question: str, number: int):
    page.locator("textarea[name=question]").fill(question)
    page.locator("select[name=model]").select_option("reference")
    began = time.perf_counter()
    page.get_by_role("button", name="Ask").click()
    turn = page.locator(f"#turn-{number}")
    turn.wait_for(timeout=ASK_TIMEOUT_MS)
    print(f"turn {number} asked and on the page after {time.perf_counter() - began:.1f} s")
    return turn


def test_the_workspace_asks_a_conversation_and_shows_tables_and_maps(
        served, workspace, page, tmp_path):
    from playwright.sync_api import expect

    url, token = workspace
    page.set_default_timeout(TIMEOUT_MS)
    expect.set_options(timeout=TIMEOUT_MS)
    requests: list[str] = []
    violations: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.on("console", lambda message: violations.append(message.text)
            if "Content Security Policy" in message.text else None)

    assert page.request.get(f"{url}/").status == 403
    assert page.request.get(f"{url}/?token=not-{token}").status == 403
    page.goto(f"{url}/?token={token}")
    conversation = page.locator("input[name=conversation]").get_attribute("value")

    first, second = AIRPORTS.turns[:2]
    turn = ask(page, first.question, 1)
    expect(turn.locator("h2")).to_have_text("Turn 1: answered")
    expect(turn.locator("p.question")).to_have_text(first.question)
    expect(turn.locator("table")).to_contain_text(str(first.expected.value))
    link = turn.get_by_role("link", name="flow run in Prefect").get_attribute("href")
    # Prefect's own flow-run URL (``/flow-runs/flow-run/<id>``, which its UI redirects)
    assert re.fullmatch(rf"{re.escape(served.dashboard_url)}/(flow-)?runs/flow-run/[0-9a-f-]{{36}}",
                        link), link

    frame = turn.frame_locator("iframe.map")  # the run's own map.html, drawn offline
    expect(frame.locator(".leaflet-container")).to_be_visible()
    expect(frame.locator("path.leaflet-interactive").first).to_be_attached()
    assert turn.locator("iframe.map").get_attribute("sandbox") == "allow-scripts"
    assert token not in (turn.locator("iframe.map").get_attribute("src") or "")
    inner = next(f for f in page.frames if "/map/" in f.url)
    reach = inner.evaluate("() => { try { return parent.document.body.innerHTML.length; }"
                           " catch (error) { return error.name; } }")
    assert reach == "SecurityError"  # the map cannot read the page (nor its token)

    turn = ask(page, second.question, 2)
    expect(turn.locator("h2")).to_have_text("Turn 2: answered")
    for code in second.expected.value:
        expect(turn.locator("table")).to_contain_text(code)
    expect(turn.locator("details.evidence li").first).to_be_attached()
    assert page.locator("input[name=conversation]").get_attribute("value") == conversation

    page.wait_for_timeout(1000)  # let the map finish drawing before the screenshot
    shot = tmp_path / "workspace.png"
    page.screenshot(path=shot, full_page=True)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    shutil.copy(shot, SCREENSHOTS / shot.name)

    outside = [r for r in requests if not r.startswith((url, "data:", "about:", "blob:"))]
    assert outside == []
    assert violations == []

