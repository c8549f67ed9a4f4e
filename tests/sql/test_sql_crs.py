"""Storage CRSs in the export (geoask.sql.crs) on hand-built results (no database)."""

from __future__ import annotations

import pytest
import shapely

from geoask.errors import CrsError
from geoask.sql.crs import reproject_result
from geoask.sql.executor import QueryResult, ResultColumn


def _result(*geometries) -> QueryResult:
    return QueryResult((ResultColumn("id", "integer"),
                        ResultColumn("geom", "geometry", True, "s.t.geom")),
                       [(i, g) for i, g in enumerate(geometries)], 100, "SELECT ...")


def _at(x: float, y: float, srid: int):
    return shapely.set_srid(shapely.Point(x, y), srid)


@pytest.mark.parametrize(("srid", "x", "y", "metric", "basis"), [
    (32618, 585000, 4511000, "EPSG:32618", "native"),
    (2263, 985000, 200000, "EPSG:2263", "native"),
    (27700, 530000, 180000, "EPSG:27700", "native"),
    (3857, -8235000, 4975000, "EPSG:32618", "estimated UTM zone"),  # Web Mercator: not metric
    (4326, 13.4, 52.5, "EPSG:32633", "estimated UTM zone"),
], ids=["utm", "state plane feet", "british grid", "web mercator", "lon/lat"])
def test_metric_crs_is_native_when_projected_in_metres_or_feet(srid, x, y, metric, basis):
    reprojected, (native,) = reproject_result(_result(_at(x, y, srid), None))
    assert (native.metric_crs, native.metric_basis) == (metric, basis)
    assert native.crs == f"EPSG:{srid}" and native.srids == [srid]
    point = reprojected.rows[0][1]
    assert shapely.get_srid(point) == 4326 and -180 <= point.x <= 180 and -90 <= point.y <= 90
    assert reprojected.rows[1][1] is None


def test_beyond_utm_latitudes_the_metric_crs_is_global_equal_area_and_geod_is_named():
    _, (native,) = reproject_result(_result(_at(10.0, 89.5, 4326)))
    assert native.metric_crs == "EPSG:8857" and "beyond UTM's -80 to 84" in native.metric_basis
    assert "areas: to_crs(\"EPSG:8857\")" in native.to_text()
    assert "distances: geodesic (pyproj.Geod)" in native.to_text()


def test_an_extent_over_several_utm_zones_records_equal_area_for_areas_geodesic_distances():
    _, (native,) = reproject_result(_result(_at(-124.0, 25.0, 4326), _at(-67.5, 49.0, 4326)))
    assert (native.metric_crs, native.metric_crs_name) == ("EPSG:5070", "NAD83 / Conus Albers")
    assert native.metric_basis == ("extent spans 10 UTM zones: equal-area EPSG:5070 for areas; "
                                   "distances: geodesic (pyproj.Geod)")
    assert native.to_text().endswith(
        '; areas: to_crs("EPSG:5070") (NAD83 / Conus Albers; metre; extent spans 10 UTM zones: '
        'equal-area EPSG:5070 for areas; distances: geodesic (pyproj.Geod))')


def test_an_srid_pyproj_does_not_know_is_refused_clearly():
    with pytest.raises(CrsError, match="SRID 990001 is not an EPSG code"):
        reproject_result(_result(_at(1.0, 2.0, 990001)))


def test_empty_and_all_null_columns_describe_no_crs():
    _, (native,) = reproject_result(_result(None, shapely.Point()))
    assert native.srids == [] and native.crs is None and native.metric_crs is None
    assert "no non-empty values" in native.to_text()


def test_utm_zone_arithmetic_agrees_with_projs_database():
    # utm_epsg replaced a query of PROJ's database (about 50 ms a call); they must agree.
    import doctest
    import random

    from pyproj.aoi import AreaOfInterest
    from pyproj.database import query_utm_crs_info

    from geoask.sql import crs, metric_crs

    assert doctest.testmod(crs).failed == 0 and doctest.testmod(metric_crs).failed == 0
    rng = random.Random(15)
    for _ in range(60):
        lon, lat = rng.uniform(-179.9, 179.9), rng.uniform(-79.9, 83.9)
        found = query_utm_crs_info(datum_name="WGS 84",
                                   area_of_interest=AreaOfInterest(lon, lat, lon, lat))
        assert metric_crs.utm_epsg(lon, lat) in {int(info.code) for info in found}, (lon, lat)
    assert metric_crs.utm_epsg(10.0, 84.5) is None and metric_crs.utm_epsg(10.0, -80.5) is None
