"""Real analyses succeed in the sandbox, with values checked against independent computations.

The expected numbers are computed here by other means (closed-form geometry, brute force,
pyproj's geodesic area on the host) from inputs generated here with fixed seeds.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import fsspec
import pytest
from pyproj import Geod

from sandbox.bubblewrap import BubblewrapSandbox
from sandbox.models import SandboxOutcome

ANALYSIS = Path(__file__).resolve().parents[1] / "fixtures" / "sandbox" / "analysis"
DISTRICTS = {"A": (13.30, 52.45, 13.40, 52.55), "B": (13.40, 52.45, 13.50, 52.55)}
RANKS = {"A": 3, "B": 4}

pytestmark = pytest.mark.sandbox


def run_fixture(sandbox: BubblewrapSandbox, name: str, inputs: list[Path]) -> SandboxOutcome:
    outcome = sandbox.run((ANALYSIS / name).read_text(), inputs)
    assert outcome.status == "success", outcome.model_dump_json(indent=1)
    assert outcome.leftover_processes == 0
    return outcome


def box(west: float, south: float, east: float, north: float) -> dict[str, object]:
    ring = [[west, south], [east, south], [east, north], [west, north], [west, south]]
    return {"type": "Polygon", "coordinates": [ring]}


def feature_collection(features: list[tuple[dict[str, object], dict[str, object]]]) -> str:
    return json.dumps({"type": "FeatureCollection", "features": [
        {"type": "Feature", "properties": props, "geometry": geom} for props, geom in features
    ]})


@pytest.fixture
def districts_file(tmp_path: Path) -> Path:
    path = tmp_path / "districts.geojson"
    path.write_text(feature_collection([
        ({"district": name, "rank": RANKS[name]}, box(*bounds))
        for name, bounds in DISTRICTS.items()
    ]))
    return path


def test_buffer_in_projected_crs_has_the_area_of_the_inscribed_64_gon(
    real_sandbox: BubblewrapSandbox,
) -> None:
    outcome = run_fixture(real_sandbox, "buffer_projected.py", [])
    assert outcome.protocol is not None
    result = outcome.protocol.result
    assert isinstance(result, dict)
    # quad_segs=16 -> a regular 64-gon inscribed in the 100 m circle: A = n r^2 sin(2 pi/n) / 2
    n, radius = 64, 100.0
    expected = 0.5 * n * radius**2 * math.sin(2 * math.pi / n)
    assert result["crs"] == "EPSG:32633"
    assert result["vertices"] == n
    assert result["area_m2"] == pytest.approx(expected, rel=1e-9)
    assert result["area_m2"] == pytest.approx(math.pi * radius**2, rel=2e-3)


def test_spatial_join_counts_match_brute_force(
    real_sandbox: BubblewrapSandbox, tmp_path: Path, districts_file: Path
) -> None:
    generator = random.Random(42)
    coordinates = [
        (generator.uniform(13.25, 13.55), generator.uniform(52.40, 52.60)) for _ in range(500)
    ]
    points_file = tmp_path / "points.geojson"
    points_file.write_text(feature_collection([
        ({"id": index}, {"type": "Point", "coordinates": [x, y]})
        for index, (x, y) in enumerate(coordinates)
    ]))
    expected = {
        name: sum(1 for x, y in coordinates if w < x < e and s < y < n)
        for name, (w, s, e, n) in DISTRICTS.items()
    }

    outcome = run_fixture(real_sandbox, "spatial_join_counts.py", [districts_file, points_file])

    assert outcome.protocol is not None and outcome.protocol.result == expected
    assert 0 < expected["A"] < 500 and 0 < expected["B"] < 500
    (csv,) = [artifact for artifact in outcome.artifacts if artifact.name == "joined.csv"]
    assert csv.media_type == "text/csv"
    with fsspec.open(csv.uri, "r") as handle:
        rows = handle.read().strip().splitlines()
    assert rows[0] == "district" and len(rows) - 1 == sum(expected.values())


def test_areas_in_local_utm_zone_match_geodesic_areas(
    real_sandbox: BubblewrapSandbox, tmp_path: Path
) -> None:
    cells = {"west": (13.40, 52.52), "east": (13.50, 52.52), "south": (13.45, 52.40)}
    path = tmp_path / "cells.geojson"
    path.write_text(feature_collection([
        ({"name": name}, box(x, y, x + 0.01, y + 0.01)) for name, (x, y) in cells.items()
    ]))
    geod = Geod(ellps="WGS84")
    expected = {}
    for name, (x, y) in cells.items():
        lons = [x, x + 0.01, x + 0.01, x, x]
        lats = [y, y, y + 0.01, y + 0.01, y]
        area, _ = geod.polygon_area_perimeter(lons, lats)
        expected[name] = abs(area)

    outcome = run_fixture(real_sandbox, "areas_local_utm.py", [path])

    assert outcome.protocol is not None
    result = outcome.protocol.result
    assert isinstance(result, dict)
    assert result["epsg"] == 32633  # 12-18 deg E, northern hemisphere
    areas = result["areas_m2"]
    assert isinstance(areas, dict) and set(areas) == set(expected)
    for name, area in expected.items():
        # UTM's scale factor ~1.6 deg from the central meridian changes areas by ~0.05 %.
        assert areas[name] == pytest.approx(area, rel=1e-3)


def test_scipy_sklearn_matplotlib_produce_values_and_a_png(
    real_sandbox: BubblewrapSandbox, tmp_path: Path
) -> None:
    generator = random.Random(7)
    points = [(generator.gauss(0, 10), generator.gauss(0, 10)) for _ in range(100)]
    points += [(generator.gauss(1000, 10), generator.gauss(1000, 10)) for _ in range(150)]
    path = tmp_path / "xy.csv"
    path.write_text("\n".join(f"{x!r},{y!r}" for x, y in points) + "\n")
    nearest = [
        min(math.dist(p, q) for j, q in enumerate(points) if j != i) for i, p in enumerate(points)
    ]

    outcome = run_fixture(real_sandbox, "map_png_and_kdtree.py", [path])

    assert outcome.protocol is not None
    result = outcome.protocol.result
    assert isinstance(result, dict)
    assert result["nearest_mean_m"] == pytest.approx(sum(nearest) / len(nearest), rel=1e-9)
    assert result["cluster_sizes"] == [100, 150]
    (png,) = [artifact for artifact in outcome.artifacts if artifact.name == "clusters.png"]
    assert png.media_type == "image/png" and png.size_bytes > 1000
    with fsspec.open(png.uri, "rb") as handle:
        assert handle.read(8) == b"\x89PNG\r\n\x1a\n"


def test_polars_reads_geoparquet_written_in_scratch(
    real_sandbox: BubblewrapSandbox, districts_file: Path
) -> None:
    outcome = run_fixture(real_sandbox, "polars_pyarrow_parquet.py", [districts_file])
    assert outcome.protocol is not None
    assert outcome.protocol.result == {"rank_sum": sum(RANKS.values()), "rows": len(RANKS)}
    assert [artifact.name for artifact in outcome.artifacts] == ["districts.parquet"]
