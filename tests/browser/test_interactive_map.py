"""The interactive answer map in headless Chromium, from file:// with the network off.

The page is built from a run's layers the way a question run builds it (answer features picked
from the typed answer, context muted); the test counts the SVG paths Leaflet draws per layer,
opens a popup, and checks that no request left the page (all JS/CSS inlined, no tiles).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import geopandas as gpd
import pytest
from shapely.geometry import Point, box

from geoask.maps.answer_features import pick_answer
from geoask.maps.interactive_map import interactive_map_html
from geoask.vocabulary.answers import FinalAnswer

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext

pytestmark = [pytest.mark.browser]
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]
ANSWER_IDS = ["A07", "A08", "A21"]


def run_layers() -> dict[str, gpd.GeoDataFrame]:
    airports = gpd.GeoDataFrame(
        {"iata": [f"A{i:02d}" for i in range(40)], "name": [f"Airport {i}" for i in range(40)]},
        geometry=[Point(-80.0 + 0.05 * i, 35.0 + 0.03 * (i % 9)) for i in range(40)], crs=4326)
    counties = gpd.GeoDataFrame(
        {"fips": [37001 + 2 * i for i in range(5)]},
        geometry=[box(-80.0 + 0.4 * i, 34.9, -79.6 + 0.4 * i, 35.3) for i in range(5)], crs=4326)
    return {"counties": counties, "airports": airports}


@pytest.fixture
def map_page(tmp_path):
    answer = FinalAnswer(answer_type="entity_list", summary="three",
                         data_payload={"entities": [{"id": i} for i in ANSWER_IDS]})
    features = pick_answer(answer, run_layers())
    path = tmp_path / "map.html"
    path.write_text(interactive_map_html(features, "Airports near </script> somewhere"),
                    encoding="utf-8")
    return path


@contextmanager
def offline_browser(chromium: Path, tmp_path: Path) -> Iterator[BrowserContext]:
    """A headless Chromium context of its own profile, with the network off."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=str(chromium), headless=True,
            args=CHROMIUM_ARGS, viewport={"width": 1200, "height": 900})
        try:
            context.set_offline(True)
            yield context
        finally:
            context.close()


def test_the_interactive_map_draws_the_answer_offline(chromium, map_page, tmp_path):
    requests: list[str] = []
    errors: list[str] = []
    with offline_browser(chromium, tmp_path) as context:
        context.route("**/*", lambda route: (requests.append(route.request.url),
                                              route.continue_() if route.request.url
                                              == map_page.as_uri() else route.abort()))
        page = context.new_page()
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(map_page.as_uri())
        page.wait_for_selector("path.geoask-answer", timeout=15_000)
        answer_paths = page.locator("path.geoask-answer").count()
        context_paths = page.locator("path.geoask-context").count()
        legend = page.locator(".geoask-legend").inner_text()
        scale = page.locator(".leaflet-control-scale").inner_text()
        title = page.title()
        page.locator("path.geoask-answer").first.click()
        popup = page.locator(".leaflet-popup-content").inner_text()
        page.screenshot(path=str(tmp_path / "interactive-map.png"))
    assert errors == []
    assert requests == [map_page.as_uri()]  # nothing but the page itself was requested
    assert answer_paths == len(ANSWER_IDS)
    assert context_paths == 5 + 40  # every fetched county and airport, muted
    assert "answer (3 features" in legend and "airports: fetched (40 features)" in legend
    assert "EPSG:4326" in legend
    assert scale.strip().endswith(("m", "km"))
    assert title == "Airports near </script> somewhere"
    assert any(code in popup for code in ANSWER_IDS), popup
    data = json.loads(map_page.read_text().split('id="geoask-layers">')[1].split("</script>")[0])
    assert [layer["answer"] for layer in data] == [False, False, True]


HOSTILE = 'Kildare<img src=x onerror="window.pwned=1">'


def test_database_text_reaches_the_map_as_text_never_as_html(chromium, tmp_path):
    """A label, a layer name and a popup holding markup are shown literally; nothing runs."""
    counties = gpd.GeoDataFrame(
        {"name": [f"{HOSTILE} {i}" for i in range(3)]},
        geometry=[box(-7.0 + 0.4 * i, 53.0, -6.6 + 0.4 * i, 53.4) for i in range(3)], crs=4326)
    answer = FinalAnswer(answer_type="entity_list", summary="two",
                         data_payload={"entities": [{"id": f"{HOSTILE} {i}"} for i in (0, 1)]})
    features = pick_answer(answer, {f"counties{HOSTILE}": counties})
    path = tmp_path / "map.html"
    path.write_text(interactive_map_html(features, "Counties"), encoding="utf-8")
    with offline_browser(chromium, tmp_path) as context:
        page = context.new_page()
        page.goto(path.as_uri())
        page.wait_for_selector("path.geoask-answer", timeout=15_000)
        page.locator("path.geoask-answer").first.click()
        page.wait_for_selector(".leaflet-popup-content", timeout=15_000)
        page.wait_for_timeout(300)  # an injected image would have failed and fired by now
        images = page.locator("img").count()
        handlers = page.evaluate(
            "document.querySelectorAll('[onerror]').length + (window.pwned ? 1000 : 0)")
        labels = page.locator(".geoask-label").all_inner_texts()
        control = page.locator(".leaflet-control-layers").inner_text()
        popup = page.locator(".leaflet-popup-content").inner_text()
    assert (images, handlers) == (0, 0)
    assert sorted(labels) == [f"{HOSTILE} 0", f"{HOSTILE} 1"]
    assert HOSTILE in control
    assert HOSTILE in popup
