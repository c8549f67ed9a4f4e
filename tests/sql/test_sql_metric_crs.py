"""The metric CRS chosen from a WGS 84 extent (geoask.sql.metric_crs), table-driven."""

from __future__ import annotations

import numpy as np
import pytest
import shapely
from pyproj import Geod, Transformer
from shapely.geometry import box

from geoask.errors import CrsError
from geoask.sql.metric_crs import (
    GEODESIC_DISTANCES,
    GLOBAL_EQUAL_AREA,
    UTM_BASIS,
    metric_crs_for_extent,
)

EXTENTS = [
    # (extent west, south, east, north), EPSG code, distances geodesic, words of the basis
    ((-78.99, 35.52, -78.25, 36.08), "EPSG:32617", False, UTM_BASIS),  # Wake County, NC
    ((-84.32, 33.84, -75.46, 36.59), "EPSG:5070", True, "extent spans 3 UTM zones"),  # NC
    ((-84.3, 35.0, -77.8, 36.0), "EPSG:32617", False, UTM_BASIS),  # 0.2-0.3 degrees past zone 17
    ((-124.85, 24.39, -66.88, 49.38), "EPSG:5070", True, "extent spans 10 UTM zones"),  # CONUS
    ((-24.5, 27.6, 44.8, 71.2), "EPSG:3035", True, "extent spans 13 UTM zones"),  # Europe
    ((113.0, -43.7, 153.7, -10.0), "EPSG:3577", True, "extent spans 8 UTM zones"),  # Australia
    ((-81.4, -56.0, -34.7, 12.5), "EPSG:10603", True, "extent spans 9 UTM zones"),  # S. America
    ((-179.9, -89.9, 179.9, 89.9), "EPSG:8857", True, "beyond UTM's -80 to 84"),  # global
    ((-180.0, -21.0, 180.0, -12.0), "EPSG:8857", True, "crossing the antimeridian"),  # Fiji
    ((-60.0, -90.0, 60.0, -70.0), "EPSG:8857", True, "extent reaches latitude -90"),  # polar
    ((10.0, 89.5, 10.0, 89.5), "EPSG:8857", True, "extent reaches latitude 89.5"),  # a point
]


@pytest.mark.parametrize(("extent", "code", "geodesic", "why"), EXTENTS,
                         ids=["county", "state", "tolerance", "conus", "europe", "australia",
                              "south america", "global", "antimeridian", "antarctic", "pole"])
def test_metric_crs_fits_the_extent(extent, code, geodesic, why):
    chosen = metric_crs_for_extent(extent)
    assert chosen.code == code
    assert chosen.geodesic_distances is geodesic
    assert why in chosen.basis
    assert chosen.crs.axis_info[0].unit_name == "metre"
    if geodesic:
        assert chosen.basis.endswith(f"equal-area {code} for areas; {GEODESIC_DISTANCES}")
    else:
        assert chosen.basis == UTM_BASIS


def test_two_zones_take_the_covering_continent_else_the_global_equal_area_crs():
    assert metric_crs_for_extent((-1.0, -1.0, 1.0, 1.0)).code == "EPSG:10592"  # GLANCE Africa
    pacific = metric_crs_for_extent((-170.0, -5.0, -120.0, 5.0))
    assert pacific.code == f"EPSG:{GLOBAL_EQUAL_AREA}" and pacific.geodesic_distances


@pytest.mark.parametrize("extent", [
    (-200.0, 0.0, 10.0, 1.0), (0.0, 0.0, 1.0, 95.0), (5.0, 0.0, 1.0, 1.0),
    (float("nan"), 0.0, 1.0, 1.0), (0.0, float("inf"), 1.0, 1.0),
], ids=["west beyond -180", "north beyond 90", "west east of east", "nan", "inf"])
def test_an_extent_outside_lon_lat_is_refused_in_one_line(extent):
    with pytest.raises(CrsError, match=r"^extent \(west .* is no WGS 84 longitude/latitude box"):
        metric_crs_for_extent(extent)


@pytest.mark.parametrize(("west", "south", "code"), [
    (-124.0, 48.0, "EPSG:5070"), (-67.9, 24.5, "EPSG:5070"), (-124.0, 24.5, "EPSG:5070"),
])
def test_equal_area_keeps_a_cell_at_the_edge_of_conus_within_a_thousandth_of_geodesic(
        west, south, code):
    """A 1-degree cell at the edge of the US: its area in the chosen CRS matches geodesic."""
    cell = box(west, south, west + 1.0, south + 1.0).segmentize(0.01)
    geodesic, _ = Geod(ellps="WGS84").geometry_area_perimeter(cell)
    chosen = metric_crs_for_extent((-124.85, 24.39, -66.88, 49.38))
    assert chosen.code == code
    projected = shapely.transform(cell, _projector(chosen.crs))
    assert abs(projected.area / abs(geodesic) - 1) < 1e-3


def _projector(crs):
    transformer = Transformer.from_crs(4326, crs, always_xy=True)

    def project(coords):
        return np.column_stack(transformer.transform(coords[:, 0], coords[:, 1]))

    return project
