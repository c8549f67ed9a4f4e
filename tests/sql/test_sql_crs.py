"""Storage CRSs in the export (geoask.sql.crs) on hand-built results (no database)."""

from __future__ import annotations

import dataclasses

import pytest
import shapely
from pyproj import CRS, Transformer
from pyproj.enums import WktVersion

from geoask.errors import CrsError
from geoask.sql.crs import reproject_result
from geoask.sql.executor import QueryResult, ResultColumn
from geoask.sql.srs import SpatialRefSys, crs_from_definition


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


KM_PROJ4 = "+proj=utm +zone=18 +datum=WGS84 +units=km +no_defs"
KM_WKT = CRS.from_proj4(KM_PROJ4).to_wkt(WktVersion.WKT1_GDAL)
KM_METRES_WKT = CRS.from_proj4(KM_PROJ4.replace("units=km", "units=m")).to_wkt()


def _with_definitions(result: QueryResult, *definitions: SpatialRefSys) -> QueryResult:
    return dataclasses.replace(result, crs_definitions={d.srid: d for d in definitions})


@pytest.mark.parametrize(("definition", "label", "authority", "units"), [
    (SpatialRefSys(900914, "geoask_test", 900914, KM_WKT, KM_PROJ4),
     "spatial_ref_sys:900914", "geoask_test:900914", "kilometre"),
    (SpatialRefSys(900914, None, None, None, KM_PROJ4),
     "spatial_ref_sys:900914", None, "kilometre"),
    (SpatialRefSys(900914, "EPSG", 32618, None, None), "EPSG:32618", "EPSG:32618", "metre"),
], ids=["srtext", "proj4text only", "an EPSG row under another srid"])
def test_a_database_defined_srid_is_transformed_with_its_definition_and_recorded(
    definition, label, authority, units,
):
    x, y = 585.0, 4511.0
    if label.startswith("EPSG"):
        x, y = 585000.0, 4511000.0
    result = _with_definitions(_result(_at(x, y, 900914)), definition)
    reprojected, (native,) = reproject_result(result)
    expected = Transformer.from_crs(crs_from_definition(definition), 4326,
                                    always_xy=True).transform(x, y)
    point = reprojected.rows[0][1]
    assert abs(point.x - expected[0]) < 1e-9 and abs(point.y - expected[1]) < 1e-9
    utm = Transformer.from_crs(32618, 4326, always_xy=True).transform(585000.0, 4511000.0)
    assert abs(point.x - utm[0]) < 1e-9 and abs(point.y - utm[1]) < 1e-9  # same place in km
    assert (native.crs, native.authority, native.units) == (label, authority, units)
    custom = label.startswith("spatial_ref_sys")
    assert (native.crs_wkt is not None) is custom
    if custom:
        assert CRS.from_wkt(native.crs_wkt) == crs_from_definition(definition)
        assert "defined by the database's spatial_ref_sys" in native.to_text()
    # a custom CRS is never the to_crs target: the metric CRS comes from the extent
    assert native.metric_crs == "EPSG:32618"
    assert native.metric_basis == ("estimated UTM zone" if custom else "native")


def test_two_databases_defining_one_srid_differently_never_share_a_transform():
    kilometres = SpatialRefSys(900914, None, None, KM_WKT, None)
    metres = SpatialRefSys(900914, None, None, KM_METRES_WKT, None)
    in_km, _ = reproject_result(_with_definitions(_result(_at(585.0, 4511.0, 900914)),
                                                  kilometres))
    in_m, _ = reproject_result(_with_definitions(_result(_at(585000.0, 4511000.0, 900914)),
                                                 metres))
    assert abs(in_km.rows[0][1].x - in_m.rows[0][1].x) < 1e-9
    again, _ = reproject_result(_with_definitions(_result(_at(585.0, 4511.0, 900914)), metres))
    assert abs(again.rows[0][1].y) < 1  # 4.5 km north of the equator, not Manhattan


def test_an_unreadable_spatial_ref_sys_row_is_refused_clearly():
    broken = SpatialRefSys(900915, "local", 1, "not wkt", "+proj=nonsense")
    with pytest.raises(CrsError, match="SRID 900915 of the database's spatial_ref_sys has no "
                                       "definition pyproj can read"):
        reproject_result(_with_definitions(_result(_at(1.0, 2.0, 900915)), broken))


@pytest.mark.parametrize(("x", "y"), [(-73.98, 40.75), (985000.0, 200000.0)],
                         ids=["lon/lat range", "projected range"])
def test_undeclared_srid_0_is_refused_whatever_its_coordinates(x, y):
    with pytest.raises(CrsError, match=r"set geo\.crs of s\.t\.geom in the catalog"):
        reproject_result(_result(_at(x, y, 0)))


@pytest.mark.parametrize(("srids", "planar", "x", "crs", "metric"), [
    ({"s.t.geom": 2263}, {}, -73.9, "EPSG:2263", "EPSG:2263"),
    ({}, {"s.t.geom": "foot"}, 985000.0, "planar", None),
    ({}, {"s.t.geom": "unknown"}, 985000.0, "planar", None),
], ids=["declared EPSG", "declared planar feet", "declared planar unknown units"])
def test_declared_srid_0_uses_the_declaration(srids, planar, x, crs, metric):
    reprojected, (native,) = reproject_result(_result(_at(985000.0, 200000.0, 0)), srids, planar)
    assert reprojected.rows[0][1].x == pytest.approx(x, abs=0.1)
    assert (native.crs, native.metric_crs) == (crs, metric)
    assert native.is_planar is (crs == "planar")
    if native.is_planar:
        assert shapely.get_srid(reprojected.rows[0][1]) == 0
        assert "not lon/lat" in native.to_text() and "never to_crs()" in native.to_text()


def test_a_column_mixing_planar_and_crs_values_is_refused():
    with pytest.raises(CrsError, match="mixes SRID 0 values the catalog declares planar"):
        reproject_result(_result(_at(1.0, 2.0, 0), _at(1.0, 2.0, 4326)), {}, {"s.t.geom": "foot"})
