"""The answer maps of every answer type in headless Chromium, offline, with screenshots.

One demo question per answer type (:mod:`answer_map_runs`: scalar count, entity list, nearest
+ distance, ranked polygons, records, raster zonal ranking, bbox, and a ranked list of codes
whose run exported no geometry) is drawn by
:func:`geoask.maps.answer_map.draw_answer_maps` as a question run draws it; the test opens its
``map.html`` from ``file://`` with the network off and reads what Leaflet drew: SVG paths per
role (answer, reference, ring, link, context, countries), the labels, the legend panel and
``window.geoaskMap``. The screenshot of each page and its ``map.png`` go to the test's tmp dir
and to ``.geoask/screenshots/answer-maps/<answer type>.png`` / ``<answer type>-map.png``.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from answer_map_runs import RUNS, DemoRun
from test_interactive_map import CHROMIUM_ARGS

from geoask.maps.answer_map import draw_answer_maps
from geoask.records.run_artifacts import RunArtifacts

pytestmark = [pytest.mark.browser]
SCREENSHOTS = Path(__file__).resolve().parents[2] / ".geoask" / "screenshots" / "answer-maps"


@pytest.fixture(scope="module")
def browser(chromium, tmp_path_factory):
    """One offline Chromium context for every page (nothing but file:// is allowed)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("profile")), executable_path=str(chromium),
            headless=True, args=CHROMIUM_ARGS, viewport={"width": 1280, "height": 820})
        context.set_offline(True)
        requests: list[str] = []
        context.route("**/*", lambda route: (requests.append(route.request.url),
                                              route.continue_() if route.request.url.startswith(
                                                  "file://") else route.abort()))
        try:
            yield context, requests
        finally:
            context.close()


def opened(browser, kind: str, tmp_path: Path) -> tuple[DemoRun, dict, Path]:
    """Draw ``kind``'s run, open its map.html, read the page; screenshots saved."""
    context, requests = browser
    store = RunArtifacts(str(tmp_path), kind)
    run = RUNS[kind](store)
    maps = draw_answer_maps(store, run.steps, run.answer, run.title, run.focus, run.keyed)
    assert maps is not None and maps.html is not None
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.goto(Path(maps.html).as_uri())
        page.wait_for_function("window.geoaskMap && window.geoaskMap.layers.length > 0",
                               timeout=20_000)
        seen = page.evaluate("""() => ({
            state: window.geoaskMap,
            paths: Object.fromEntries(['answer', 'reference', 'ring', 'link', 'context',
                'basemap'].map(r => [r, document.querySelectorAll('.geoask-' + r).length])),
            labels: [...document.querySelectorAll('.geoask-label')].map(e => e.textContent),
            legend: document.querySelector('.geoask-legend').innerText,
            toggles: [...document.querySelectorAll('.leaflet-control-layers-overlays label')]
                .map(e => e.textContent.trim()),
            rasters: document.querySelectorAll('img.geoask-raster').length,
            title: document.querySelector('header').getBoundingClientRect().toJSON(),
            legendBox: document.querySelector('.geoask-legend').getBoundingClientRect().toJSON(),
            mapBox: document.getElementById('map').getBoundingClientRect().toJSON(),
        })""")
        shot = tmp_path / f"{kind}.png"
        page.screenshot(path=str(shot))
    finally:
        page.close()
    assert errors == []
    assert all(url.startswith("file://") for url in requests), requests
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    shutil.copy(shot, SCREENSHOTS / f"{kind}.png")
    shutil.copy(maps.png, SCREENSHOTS / f"{kind}-map.png")
    return run, seen, Path(maps.png)


def no_overlap(a: dict, b: dict) -> bool:
    return (a["right"] <= b["left"] or b["right"] <= a["left"] or a["bottom"] <= b["top"]
            or b["bottom"] <= a["top"])


def check_common(seen: dict) -> None:
    assert seen["paths"]["basemap"] > 0  # Natural Earth countries drawn, offline
    assert no_overlap(seen["title"], seen["legendBox"]) and no_overlap(seen["title"],
                                                                      seen["mapBox"])
    assert no_overlap(seen["legendBox"], seen["mapBox"])
    assert "countries and coastline (Natural Earth 1:110m)" in seen["toggles"]
    assert len(seen["toggles"]) == len(seen["state"]["layers"]) + 1 + seen["rasters"]


def roles(seen: dict) -> dict[str, dict]:
    return {layer["role"]: layer for layer in seen["state"]["layers"]}


def test_scalar_count_shows_what_was_counted_in_the_ring_around_the_reference(browser,
                                                                              tmp_path):
    run, seen, _ = opened(browser, "scalar-count", tmp_path)
    check_common(seen)
    (count,) = run.answer_ids
    drawn = roles(seen)
    assert drawn["answer"]["count"] == int(count)  # the counted incidents, as the map draws them
    assert seen["paths"]["answer"] == int(count)
    assert drawn["reference"]["count"] > 0 and seen["paths"]["reference"] > 0  # I- 95
    assert seen["paths"]["ring"] == 1 and drawn["ring"]["label"] == "ring: 20 m from I- 95"
    assert seen["state"]["headline"] == f"answer: {count} count"
    incidents = drawn["context"] if drawn["context"]["label"].startswith("incidents") else next(
        layer for layer in seen["state"]["layers"] if layer["label"].startswith("incidents"))
    assert incidents["count"] == 3293 and incidents["drawn"] == 2000  # sampled, and says so
    assert "2,000 drawn" in incidents["label"]
    assert "I- 95" in seen["labels"]


def test_entity_list_highlights_and_labels_the_answer_within_the_ring(browser, tmp_path):
    run, seen, _ = opened(browser, "entity-list", tmp_path)
    check_common(seen)
    assert seen["paths"]["answer"] == len(run.answer_ids) > 0
    assert sorted(label for label in seen["labels"] if label != "RDU") == run.answer_ids
    assert "RDU" in seen["labels"] and seen["paths"]["reference"] == 1
    assert roles(seen)["ring"]["label"] == "ring: 50 km from RDU"


def test_nearest_links_the_reference_to_the_answer_with_its_distance(browser, tmp_path):
    run, seen, _ = opened(browser, "nearest-distance", tmp_path)
    check_common(seen)
    (nearest,) = run.answer_ids
    distance = run.answer.data_payload["distance_km"]
    assert seen["paths"]["answer"] == 1 and seen["paths"]["reference"] == 1
    assert seen["paths"]["link"] == 1 and "ring" not in roles(seen)
    assert f"{nearest} {distance:.3g} km" in seen["labels"] and "JFK" in seen["labels"]
    assert seen["state"]["headline"].startswith(f"answer: iata {nearest}, distance_km ")


def test_ranked_polygons_are_a_choropleth_with_a_legend_of_values(browser, tmp_path):
    run, seen, _ = opened(browser, "ranked-polygons", tmp_path)
    check_common(seen)
    assert seen["paths"]["answer"] == len(run.answer_ids) == 5
    classes = [row for row in seen["state"]["legend"] if row["role"] == "class"]
    values = [item["value"] for item in run.answer.data_payload["items"]]
    assert len(classes) == 5 and all(row["label"].endswith(" USD") for row in classes)
    assert f"{min(values):,.0f} USD" in seen["legend"] and f"{max(values):,.0f} USD" in \
        seen["legend"]
    assert len({row["colour"] for row in classes}) == 5  # one colour per value
    first = run.answer.data_payload["items"][0]
    assert f"1. {first['name']} {first['value']:,.0f} USD" in seen["labels"]


def test_codes_without_geometry_are_drawn_from_the_lookup_by_key_and_say_so(browser,
                                                                           tmp_path):
    run, seen, _ = opened(browser, "codes-only", tmp_path)
    check_common(seen)
    assert run.keyed is not None and len(run.keyed.names) == 5
    assert seen["paths"]["answer"] == 5 and seen["paths"]["context"] == 0
    assert "looked up in demo.us_states by state_abbr; the run exported none" in seen["legend"]
    classes = [row for row in seen["state"]["legend"] if row["role"] == "class"]
    assert len(classes) == 5 and all(row["label"].endswith(" USD") for row in classes)
    first = run.answer.data_payload["items"][0]
    assert f"1. {run.keyed.names[first['id']]} {first['value']:,.0f} USD" in seen["labels"]


def test_records_with_values_are_proportional_symbols(browser, tmp_path):
    run, seen, _ = opened(browser, "records", tmp_path)
    check_common(seen)
    assert seen["paths"]["answer"] == len(run.answer_ids)
    classes = [row for row in seen["state"]["legend"] if row["role"] == "class"]
    assert len(classes) == 3 and all(row["label"].endswith(" km") for row in classes)
    radii = [row["radius"] for row in classes]
    assert radii == sorted(radii) and radii[0] < radii[-1]  # area grows with the value


def test_raster_zonal_ranking_draws_zones_over_the_raster(browser, tmp_path):
    run, seen, _ = opened(browser, "raster-zonal-ranking", tmp_path)
    check_common(seen)
    assert seen["rasters"] == 1
    assert seen["paths"]["answer"] == 12 == len(run.answer_ids)
    classes = [row for row in seen["state"]["legend"] if row["role"] == "class"]
    assert len(classes) == 5 and all(row["label"].endswith(" m") for row in classes)
    assert any(label.startswith(f"1. {run.answer_ids[0]} ") for label in seen["labels"])


def test_bbox_is_drawn_over_the_fetched_features(browser, tmp_path):
    _, seen, png = opened(browser, "bbox", tmp_path)
    check_common(seen)
    assert seen["paths"]["answer"] == 1 and seen["paths"]["context"] > 1
    assert png.stat().st_size > 10_000
