"""GeoParquet export of large vector results - on hand-built results (no database)."""

from __future__ import annotations

import datetime as dt
import io
import json
from decimal import Decimal
from pathlib import Path

import geopandas
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import shapely
from pyproj import Transformer

from geoask.base.formats import GEOJSON, GEOPARQUET, JSON, PARQUET
from geoask.sql.crs import reproject_result
from geoask.sql.executor import QueryResult, ResultColumn
from geoask.sql.export import export_result
from geoask.sql.parquet_export import geoparquet_bytes

COLUMNS = (ResultColumn("id", "integer"), ResultColumn("name", "text"),
           ResultColumn("share", "numeric"), ResultColumn("opened", "date"),
           ResultColumn("tags", "jsonb"),
           ResultColumn("geom", "geometry", True, "demo.parcels.geom"),
           ResultColumn("centre", "geometry", True))


def parcels(count: int, srid: int = 32618) -> QueryResult:
    """``count`` polygons stored in ``srid`` (UTM 18N metres by default) with mixed columns."""
    rng = np.random.default_rng(7)
    x = 500_000 + rng.uniform(-50_000, 50_000, count)
    y = 4_500_000 + rng.uniform(-50_000, 50_000, count)
    rows = []
    for i in range(count):
        ring = [(x[i], y[i]), (x[i] + 120.5, y[i]), (x[i] + 120.5, y[i] + 80.25), (x[i], y[i])]
        polygon = shapely.set_srid(shapely.Polygon(ring), srid) if i % 97 else None
        centre = shapely.set_srid(shapely.Point(x[i], y[i]), srid)
        rows.append((i, f"parcel {i}", Decimal("12345678901234567890.123456789") if i == 3
                     else Decimal(i) / 8, dt.date(2020, 1, 1 + i % 28), {"k": [i, None]},
                     polygon, centre))
    return QueryResult(COLUMNS, rows, 10 * count, "SELECT ...")


def test_a_large_result_is_geoparquet_whose_crs_and_geometries_round_trip_exactly(tmp_path):
    result = parcels(2_500)
    exported = export_result(result, str(tmp_path), name="parcels", columnar_rows=2_000)
    assert exported.format == GEOPARQUET.name
    assert exported.data_path == f"{tmp_path}/parcels.parquet"
    frame = geopandas.read_parquet(exported.data_path)
    assert frame.crs.to_epsg() == 4326 and frame.geometry.name == "geometry"
    assert list(frame.columns) == ["id", "name", "share", "opened", "tags", "geometry",
                                   "centre"]
    wgs84, _ = reproject_result(result)
    expected = [row[5] for row in wgs84.rows]
    written = frame.geometry.values
    assert [g is None for g in written] == [g is None for g in expected]
    assert [shapely.to_wkb(g) for g in written if g is not None] == [
        shapely.to_wkb(g) for g in expected if g is not None]
    to_lonlat = Transformer.from_crs(32618, 4326, always_xy=True)
    assert expected[1].exterior.coords[0] == pytest.approx(
        to_lonlat.transform(*result.rows[1][5].exterior.coords[0]), abs=1e-12)
    assert list(frame["id"]) == list(range(2_500)) and frame["name"][9] == "parcel 9"
    assert frame["share"][3] == Decimal("12345678901234567890.123456789")
    assert frame["share"][4] == Decimal("0.5") and frame["opened"][0] == "2020-01-01"
    assert json.loads(frame["tags"][2]) == {"k": [2, None]}
    assert shapely.from_wkt(frame["centre"][5]).equals_exact(wgs84.rows[5][6], 0)
    metadata = pq.read_schema(exported.data_path).metadata
    geo = json.loads(metadata[b"geo"])
    assert geo["primary_column"] == "geometry"
    assert geo["columns"]["geometry"]["encoding"] == "WKB"
    assert geo["columns"]["geometry"]["geometry_types"] == ["Polygon"]
    assert geo["columns"]["geometry"]["bbox"] == exported.preview.bbox_wgs84
    assert json.loads(metadata[b"native_crs"])["geom"]["crs"] == "EPSG:32618"
    assert exported.preview.row_count == 2_500 and exported.preview.geometry_column == "geom"


def test_a_small_result_stays_geojson_and_many_rows_without_geometry_are_parquet(tmp_path):
    small = export_result(parcels(30), str(tmp_path), name="few", columnar_rows=2_000)
    assert small.format == GEOJSON.name and small.data_path.endswith("few.geojson")
    assert len(json.loads(Path(small.data_path).read_text(encoding="utf-8"))["features"]) == 30
    table = QueryResult((ResultColumn("n", "integer"),), [(i,) for i in range(50)], 100,
                        "SELECT n")
    rows = export_result(table, str(tmp_path), name="rows", columnar_rows=10)
    assert rows.format == PARQUET.name and rows.data_path.endswith("rows.parquet")
    few = export_result(table, str(tmp_path), name="few_rows", columnar_rows=51)
    assert few.format == JSON.name
    never = export_result(parcels(30), str(tmp_path), name="never", columnar_rows=None)
    assert never.format == GEOJSON.name


def test_the_threshold_is_inclusive(tmp_path):
    assert export_result(parcels(20), str(tmp_path), name="at",
                         columnar_rows=20).format == GEOPARQUET.name
    assert export_result(parcels(19), str(tmp_path), name="below",
                         columnar_rows=20).format == GEOJSON.name


def test_rows_are_written_in_batches_as_row_groups(tmp_path):
    wgs84, native = reproject_result(parcels(25))
    data = geoparquet_bytes(wgs84, native, ["Polygon"], None, batch_rows=10)
    path = tmp_path / "batched.parquet"
    path.write_bytes(data)
    assert pq.ParquetFile(path).metadata.num_row_groups == 3
    frame = geopandas.read_parquet(path)
    assert list(frame["id"]) == list(range(25))
    assert [shapely.to_wkb(g) for g in frame.geometry.values if g is not None] == [
        shapely.to_wkb(row[5]) for row in wgs84.rows if row[5] is not None]
    assert "bbox" not in json.loads(pq.read_schema(path).metadata[b"geo"])["columns"][
        "geometry"]


def test_a_column_type_stays_the_same_across_batches(tmp_path):
    columns = (ResultColumn("v", "numeric"), ResultColumn("geom", "geometry", True))
    point = shapely.set_srid(shapely.Point(1, 2), 4326)
    rows = [(None, point)] * 5 + [(Decimal("2.5"), point)] * 5
    data = geoparquet_bytes(QueryResult(columns, rows, 100, "x"), [], ["Point"], None,
                            batch_rows=5)
    path = tmp_path / "typed.parquet"
    path.write_bytes(data)
    assert pq.read_schema(path).field("v").type == pa.float64()
    assert list(geopandas.read_parquet(path)["v"][4:6]) == pytest.approx([np.nan, 2.5],
                                                                          nan_ok=True)


def test_without_a_geometry_column_the_writer_writes_a_plain_parquet_table():
    table = QueryResult((ResultColumn("n", "integer"),), [(1,)], 10, "SELECT 1")
    data = geoparquet_bytes(table, [], [], None)
    read = pq.read_table(io.BytesIO(data))
    assert read.to_pylist() == [{"n": 1}]
    assert b"geo" not in (read.schema.metadata or {})
