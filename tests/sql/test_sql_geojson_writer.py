"""The GeoJSON export's bytes are those of the per-feature ``shapely.geometry.mapping`` writer.

``result_to_geojson`` builds the geometry objects of a whole column in vectorised calls
(:mod:`geoask.sql.geojson_geometry`); the reference here is the writer it replaced, feature by
feature, and the exported file must be the same bytes for every geometry type, dimension,
SRID and property value.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import numpy as np
import pytest
import shapely
from shapely.geometry import mapping

from geoask.sql.crs import reproject_result, to_wgs84
from geoask.sql.executor import QueryResult, ResultColumn
from geoask.sql.export import _dumps, export_result, result_to_geojson
from geoask.sql.geojson_geometry import geojson_geometries
from geoask.sql.values import json_value, unique_names, wkt

SHAPES = [
    "POINT (1.5 -2.25)",
    "POINT Z (1 2 3)",
    "LINESTRING (0 0, 1 1.000000000000001, 2 0)",
    "LINESTRING Z (0 0 1, 1 1 2)",
    "POLYGON ((0 0, 4 0, 4 4, 0 4, 0 0), (1 1, 2 1, 2 2, 1 1), (3 3, 3.5 3, 3.5 3.5, 3 3))",
    "POLYGON Z ((0 0 5, 1 0 5, 1 1 5, 0 0 5))",
    "MULTIPOINT ((0 0), (1e-300 -7))",
    "MULTILINESTRING ((0 0, 1 1), (2 2, 3 3, 4 4))",
    "MULTIPOLYGON (((0 0, 1 0, 1 1, 0 0)), ((5 5, 6 5, 6 6, 5 5), (5.1 5.1, 5.2 5.1, 5.2 5.2, "
    "5.1 5.1)))",
    "MULTIPOLYGON Z (((0 0 1, 1 0 1, 1 1 1, 0 0 1)))",
    "GEOMETRYCOLLECTION (POINT (1 2), LINESTRING (0 0, 1 1))",
    "POINT EMPTY",
    "LINESTRING EMPTY",
    "POLYGON EMPTY",
    "MULTIPOLYGON EMPTY",
    "LINEARRING (0 0, 1 0, 1 1, 0 0)",
]


def _mapping_writer(result: QueryResult) -> dict[str, Any]:
    """The features as the export wrote them before: one ``mapping`` per feature."""
    geometry_indexes = result.geometry_columns
    feature_index = geometry_indexes[0]
    names = unique_names([column.name for column in result.columns])
    features = []
    for row in result.rows:
        geometry = to_wgs84(row[feature_index])
        properties = {
            names[i]: wkt(to_wgs84(value)) if i in geometry_indexes else json_value(value)
            for i, value in enumerate(row) if i != feature_index
        }
        features.append({"type": "Feature", "geometry": (
            mapping(geometry) if geometry is not None and not geometry.is_empty else None),
            "properties": properties})
    return {"type": "FeatureCollection", "features": features}


def _result(geometries: list[Any]) -> QueryResult:
    rows = [(f"n{i}", Decimal("12345678901234567890.123456789") if i % 3 else i,
             dt.date(2020, 1, 1 + i % 28), geometry,
             None if geometry is None else shapely.centroid(geometry))
            for i, geometry in enumerate(geometries)]
    return QueryResult(
        columns=(ResultColumn("name", "text"), ResultColumn("value", "numeric"),
                 ResultColumn("day", "date"), ResultColumn("geom", "geometry", True),
                 ResultColumn("name", "geometry", True)),
        rows=rows, row_cap=1000, executed_sql="SELECT ...")


def _features_text(result: QueryResult) -> str:
    return _dumps(result_to_geojson(result)["features"]).decode()


def test_every_geometry_type_writes_the_bytes_mapping_wrote() -> None:
    """Each type, 2D and 3D, holes, empties, None and collections: the same feature text."""
    geometries = [shapely.from_wkt(text) for text in SHAPES] + [None]
    result = _result(geometries + geometries[::-1])
    assert _features_text(result) == _dumps(_mapping_writer(result)["features"]).decode()


def test_reprojected_road_segments_write_the_bytes_mapping_wrote(tmp_path: Any) -> None:
    """Screened segments in EPSG:2264 (feet), exported through ``export_result``: same file."""
    rng = np.random.default_rng(7)
    starts = rng.uniform([407376, 388609], [1081383, 741579], size=(300, 2))
    segments = [shapely.set_srid(shapely.LineString([start, start + rng.normal(0, 900, 2),
                                                     start + rng.normal(0, 900, 2)]), 2264)
                for start in starts]
    result = _result(segments)
    exported = export_result(result, str(tmp_path))
    written = (tmp_path / "result.geojson").read_text(encoding="utf-8")
    assert exported.format == "geojson"
    reprojected, _ = reproject_result(result)
    expected = _dumps(_mapping_writer(reprojected)["features"]).decode()
    assert written.startswith('{"type": "FeatureCollection", "features": ' + expected + ", ")


@pytest.mark.parametrize("text", SHAPES)
def test_one_geometry_object_is_mappings(text: str) -> None:
    """Column of one geometry: ``mapping``'s object (lists for tuples), or None when empty."""
    geometry = shapely.from_wkt(text)
    (got,) = geojson_geometries(np.array([geometry], dtype=object))
    expected = None if geometry.is_empty else mapping(geometry)
    assert _dumps(got) == _dumps(expected)
