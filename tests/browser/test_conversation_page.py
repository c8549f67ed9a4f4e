"""A follow-up turn's flow-run page, in headless Chromium: its conversation tags and the
``conversation-turn`` artifact linking the earlier turn's flow run it reused.

Two turns of a shipped conversation run through the API (the served flow answers them with
the offline reference model); the screenshot is ``.geoask/screenshots/conversation-turn.png``.
"""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import pytest
from test_dashboard import SCREENSHOTS, TIMEOUT_MS, stack

from geoask.cases.conversations import load_conversations
from geoask.service.client import ask_via_api
from geoask.settings import get_settings

pytestmark = [pytest.mark.browser, pytest.mark.db, pytest.mark.sandbox]
SIDS = next(c for c in load_conversations() if c.id == "nc_sids-001")


@pytest.fixture(scope="module")
def turns(served):
    settings = get_settings().model_copy(update={
        "server_api_url": served.api_url, "server_home": served.work / "prefect"})
    conversation = f"browser-{uuid.uuid4().hex[:8]}"
    results = [ask_via_api(turn.question, settings=settings, conversation=conversation)
               for turn in SIDS.turns[:2]]
    assert [r.status for r in results] == ["answered", "answered"], results[-1].message
    assert results[1].reused == ["turn-1.sql-1.high_sids"]
    return conversation, results


def test_a_follow_up_page_shows_its_conversation_and_links_the_turn_it_reused(
        served, turns, page, tmp_path):
    from playwright.sync_api import expect

    conversation, (first, second) = turns
    page.set_default_timeout(TIMEOUT_MS)
    expect.set_options(timeout=TIMEOUT_MS)
    page.goto(f"{served.dashboard_url}/runs/flow-run/{second.flow_run_id}")
    expect(page.get_by_text(f"conversation:{conversation}").first).to_be_visible()
    expect(page.get_by_text("turn:2").first).to_be_visible()
    page.wait_for_timeout(2000)  # let the page finish drawing before the screenshot
    shots = {"run": tmp_path / "conversation-run.png"}
    page.screenshot(path=shots["run"])

    page.locator("li#artifacts").click()
    for key in ("conversation-turn", "run-summary"):
        expect(page.get_by_text(key, exact=True).first).to_be_visible()
    link = page.locator("a", has=page.get_by_text("conversation-turn", exact=True)).first \
        .get_attribute("href")
    page.goto(f"{served.dashboard_url}{link}")
    expect(page.get_by_text("Reused artifacts").first).to_be_visible()
    expect(page.get_by_text("turn-1.sql-1.high_sids", exact=False).first).to_be_visible()
    earlier = page.get_by_role("link", name="flow run of turn 1").first
    expect(earlier).to_be_visible()
    assert earlier.get_attribute("href").endswith(f"/runs/flow-run/{first.flow_run_id}")
    shots["artifact"] = tmp_path / "conversation-turn-artifact.png"
    page.screenshot(path=shots["artifact"], full_page=True)

    combined = tmp_path / "conversation-turn.png"
    stack(list(shots.values()), combined)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for path in [*shots.values(), combined]:
        shutil.copy(path, SCREENSHOTS / Path(path).name)
