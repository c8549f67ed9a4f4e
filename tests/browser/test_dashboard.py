"""The dashboard as the trace viewer, checked in headless Chromium (Debian's, via Playwright).

After a scripted-model run of answer-question through the API, the test opens the Prefect UI,
finds the run in the runs list, opens its page, and finds its task runs (one per stage) and
its artifacts (SQL, previews, file links, script, sandbox output, summary, the answer map).
Screenshots go to the test's tmp dir and to .geoask/screenshots/ (the combined one is
``flow-run-stages-artifacts.png``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import harness
import pytest
from PIL import Image

pytestmark = [pytest.mark.browser, pytest.mark.db, pytest.mark.sandbox]
STAGES = ["intent", "schema", "plan", "sql-1", "python-1", "review", "answer", "map"]
ARTIFACT_KEYS = ["run-intent", "run-plan", "sql-1-sql", "python-1-script", "run-summary"]
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
SCREENSHOTS = Path(__file__).resolve().parents[2] / ".geoask" / "screenshots"
TIMEOUT_MS = 30_000


@pytest.fixture
def api_run(served):
    """The buffer question's run through the API, shared with tests/service/test_api_runs.py."""
    result = harness.shared_run(served, "buffer_topology")
    assert result.status == "answered", result.message
    return result


def test_dashboard_shows_the_run_its_stages_and_artifacts(served, api_run, page, tmp_path):
    from playwright.sync_api import expect

    page.set_default_timeout(TIMEOUT_MS)
    expect.set_options(timeout=TIMEOUT_MS)  # the task-run artifacts load after the flow-run ones
    run_path = f"/runs/flow-run/{api_run.flow_run_id}"
    page.goto(f"{served.dashboard_url}/runs")
    page.locator(f'a[href="{run_path}"]').first.click()  # find the run in the runs list
    page.wait_for_url(f"**{run_path}")
    expect(page.get_by_text("answer-question").first).to_be_visible()
    expect(page.get_by_text("Completed").first).to_be_visible()
    expect(page.get_by_text(f"{len(STAGES)} Task runs").first).to_be_visible()
    page.wait_for_timeout(2000)  # the run graph draws on a canvas after the data arrives
    shots = {"flow-run": tmp_path / "flow-run.png"}
    page.screenshot(path=shots["flow-run"])

    page.locator("li#task-runs").click()
    for stage in STAGES:
        expect(page.get_by_role("link", name=stage, exact=True).first).to_be_visible()
    shots["task-runs"] = tmp_path / "task-runs.png"
    page.screenshot(path=shots["task-runs"], full_page=True)

    page.locator("li#artifacts").click()
    # the task runs' artifacts load when their section scrolls into view
    page.get_by_role("heading", name="Task runs").scroll_into_view_if_needed()
    for key in ARTIFACT_KEYS:
        expect(page.get_by_text(key, exact=True).first).to_be_visible()
    shots["artifacts"] = tmp_path / "artifacts.png"
    page.screenshot(path=shots["artifacts"])
    summary_link = page.locator("a", has=page.get_by_text("run-summary", exact=True)).first \
        .get_attribute("href")

    page.goto(f"{served.dashboard_url}{summary_link}")  # answer, map, registry, trace, files
    image = page.locator('img[src^="data:image/png;base64,"]').first
    expect(image).to_be_visible()
    assert image.evaluate("img => img.naturalWidth") > 400
    shots["answer-map"] = tmp_path / "answer-map.png"
    page.screenshot(path=shots["answer-map"])
    for text in ("prompt_tokens", "wall_ms", "python-1", "total"):  # tokens and timings
        expect(page.get_by_text(text, exact=True).first).to_be_visible()
    page.get_by_text("prompt_tokens", exact=True).first.scroll_into_view_if_needed()
    shots["run-trace"] = tmp_path / "run-trace.png"
    page.screenshot(path=shots["run-trace"])

    combined = tmp_path / "flow-run-stages-artifacts.png"
    stack(list(shots.values()), combined)
    assert Image.open(combined).height > 4000
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for path in [*shots.values(), combined]:
        shutil.copy(path, SCREENSHOTS / path.name)


def stack(images: list[Path], target: Path, max_height: int = 1000) -> None:
    """Write ``images`` (each cut to ``max_height`` px) one below the other as ``target``."""
    pieces = [Image.open(path).convert("RGB") for path in images]
    pieces = [p.crop((0, 0, p.width, min(p.height, max_height))) for p in pieces]
    sheet = Image.new("RGB", (max(p.width for p in pieces), sum(p.height for p in pieces)),
                      "white")
    top = 0
    for piece in pieces:
        sheet.paste(piece, (0, top))
        top += piece.height
    sheet.save(target)
