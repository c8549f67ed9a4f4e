"""The answer map: scale-bar arithmetic, context choice, and a drawn PNG from GeoJSON files."""

from __future__ import annotations

import base64
import io
import json
import re
from pathlib import Path

import pytest
from PIL import Image

from geoask import answer_map
from geoask.run_artifacts import RunArtifacts
from geoask.state import ArtifactRef


@pytest.mark.parametrize(("max_length_m", "expected"), [
    (1.0, 1.0), (1.9, 1.0), (2.0, 2.0), (4.99, 2.0), (5.0, 5.0), (9.9, 5.0), (10.0, 10.0),
    (3700.0, 2000.0), (74_000.0, 50_000.0), (0.03, 0.02), (1_234_567.0, 1_000_000.0),
])
def test_nice_scale_length(max_length_m, expected):
    assert answer_map.nice_scale_length(max_length_m) == pytest.approx(expected)


@pytest.mark.parametrize("bad", [0.0, -5.0, float("nan")])
def test_nice_scale_length_rejects_non_positive(bad):
    with pytest.raises(ValueError, match="positive length"):
        answer_map.nice_scale_length(bad)


@pytest.mark.parametrize(("length_m", "label"), [
    (1.0, "1 m"), (500.0, "500 m"), (999.0, "999 m"), (1000.0, "1 km"), (2500.0, "2.5 km"),
    (200_000.0, "200 km"),
])
def test_scale_label(length_m, label):
    assert answer_map.scale_label(length_m) == label


def test_geojson_urls_keeps_only_geojson():
    refs = [ArtifactRef(name="incidents", url="/r/sql-1/incidents.geojson", format="geojson"),
            ArtifactRef(name="result", url="/r/python-1/result.json", format="json")]
    assert answer_map.geojson_urls(refs) == [("incidents", "/r/sql-1/incidents.geojson")]


def feature_collection(features: list[tuple[dict, dict]]) -> str:
    return json.dumps({"type": "FeatureCollection", "features": [
        {"type": "Feature", "geometry": g, "properties": p} for g, p in features]})


@pytest.fixture
def published(monkeypatch) -> list[tuple[str, str]]:
    """Markdown artifacts the map would create (key, markdown), captured instead of sent."""
    calls: list[tuple[str, str]] = []
    monkeypatch.setattr("geoask.run_artifacts.publish_markdown",
                        lambda key, markdown, description="": calls.append((key, markdown)))
    return calls


def test_publish_answer_map_draws_the_runs_points_and_lines(tmp_path: Path, published):
    store = RunArtifacts(str(tmp_path), "run-1")
    points = store.write_text("sql-1/incidents.geojson", feature_collection([
        ({"type": "Point", "coordinates": [-72.93 + i * 0.002, 41.30 + i * 0.001]}, {"id": i})
        for i in range(20)]))
    roads = store.write_text("sql-1/interstates.geojson", feature_collection([
        ({"type": "LineString", "coordinates": [[-72.96, 41.29], [-72.90, 41.32]]},
         {"name": "I-95"})]))
    refs = [ArtifactRef(name="incidents", url=points, format="geojson"),
            ArtifactRef(name="interstates", url=roads, format="geojson")]
    url = answer_map.publish_answer_map(store, refs, "Incidents near interstates")
    assert url == store.url("map.png")
    image = Image.open(io.BytesIO(Path(url).read_bytes()))
    assert image.format == "PNG"
    assert image.width > 400 and image.height > 300
    colours = {c for _, c in image.convert("RGB").getcolors(maxcolors=1 << 20)}
    assert (214, 39, 40) in colours  # the first result layer's red (#d62728) is drawn
    assert published == [("answer-map", published[0][1])]
    embedded = re.search(r"data:image/png;base64,([A-Za-z0-9+/=]+)", published[0][1])
    assert embedded and base64.b64decode(embedded.group(1)) == Path(url).read_bytes()


def test_publish_answer_map_without_geometry_draws_nothing(tmp_path: Path, published):
    store = RunArtifacts(str(tmp_path), "run-2")
    result = store.write_text("python-1/result.json", "{}")
    refs = [ArtifactRef(name="result", url=result, format="json")]
    assert answer_map.publish_answer_map(store, refs, "q") is None
    assert not (tmp_path / "run-2" / "map.png").exists()
    assert published == []


def test_render_answer_map_needs_a_layer():
    with pytest.raises(ValueError, match="at least one layer"):
        answer_map.render_answer_map({}, "q")
