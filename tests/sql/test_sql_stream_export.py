"""Streamed GeoParquet export: batches written as fetched, the CRS as geopandas reads it back,
refusal past the row cap leaving no file, NaN kept in GeoParquet and written as text in JSON."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from decimal import Decimal

import geopandas
import numpy as np
import pyarrow.parquet as pq
import pytest
import shapely
from pyproj import CRS, Transformer

from geoask.errors import ArtifactWriteError, QueryExecutionError
from geoask.sql.executor import QueryResult, ResultColumn, ResultStream
from geoask.sql.export import export_result
from geoask.sql.srs import SpatialRefSys
from geoask.sql.stream_export import export_stream

COLUMNS = (ResultColumn("id", "integer"), ResultColumn("v", "double precision"),
           ResultColumn("geom", "geometry", True, "demo.sites.geom"))
CUSTOM = SpatialRefSys(900914, None, None, CRS.from_epsg(32618).to_wkt(), None)
"""A CRS only the database defines (no EPSG code): UTM 18N by its WKT."""


def rows(start: int, count: int, srid: int = 4326) -> list[tuple[object, ...]]:
    """Points ``start..start+count`` on a line of longitudes (or UTM eastings)."""
    out = []
    for i in range(start, start + count):
        x, y = ((-75.0 + i * 1e-3, 40.0) if srid == 4326
                else (500_000.0 + i * 10, 4_500_000.0))
        out.append((i, float("nan") if i == 7 else i / 2,
                    shapely.set_srid(shapely.Point(x, y), srid)))
    return out


def stream(head: list[tuple[object, ...]], batches: list[list[tuple[object, ...]]], *,
           refuse_after: int | None = None, definitions: dict[int, SpatialRefSys] | None = None
           ) -> ResultStream:
    """A stream over canned batches; ``refuse_after`` batches, then ``result_too_large``."""
    asked: list[list[int]] = []

    def more() -> Iterator[list[tuple[object, ...]]]:
        for number, batch in enumerate(batches):
            if refuse_after is not None and number == refuse_after:
                raise QueryExecutionError("result_too_large", "more than the row cap")
            yield batch

    def lookup(srids: list[int]) -> dict[int, SpatialRefSys]:
        asked.append(srids)
        return {s: d for s, d in (definitions or {}).items() if s in srids}

    result = QueryResult(COLUMNS, head, 10**6, "SELECT ...")
    made = ResultStream(result, complete=not batches, batches=more(), definitions=lookup)
    made.asked = asked  # type: ignore[attr-defined]
    return made


def test_batches_are_written_as_row_groups_and_read_back_whole(tmp_path):
    exported = export_stream(stream(rows(0, 10), [rows(10, 10), rows(20, 5)]), str(tmp_path),
                             name="sites", columnar_rows=10)
    assert exported.format == "geoparquet" and exported.preview.row_count == 25
    assert pq.ParquetFile(exported.data_path).metadata.num_row_groups == 3
    frame = geopandas.read_parquet(exported.data_path)
    assert frame.crs.to_epsg() == 4326
    assert list(frame["id"]) == list(range(25))
    assert math.isnan(frame["v"][7]) and frame["v"][8] == 4.0  # NaN kept as a double
    assert frame.geometry[24].x == pytest.approx(-75.0 + 24e-3)
    geo = json.loads(pq.read_schema(exported.data_path).metadata[b"geo"])["columns"]["geometry"]
    assert geo["bbox"] == pytest.approx([-75.0, 40.0, -75.0 + 24e-3, 40.0])  # every batch
    assert exported.preview.bbox_wgs84 == geo["bbox"]
    assert exported.preview.geometry_types == ["Point"] == geo["geometry_types"]
    assert len(exported.preview.first_rows) == 5


def test_a_result_refused_past_the_row_cap_leaves_no_file(tmp_path):
    with pytest.raises(QueryExecutionError) as caught:
        export_stream(stream(rows(0, 10), [rows(10, 10), rows(20, 10)], refuse_after=1),
                      str(tmp_path), name="sites", columnar_rows=10)
    assert caught.value.kind == "result_too_large"
    assert list(tmp_path.iterdir()) == []


def test_a_custom_crs_first_met_in_a_later_batch_is_read_from_the_database(tmp_path):
    made = stream(rows(0, 10), [rows(10, 10, srid=900914)], definitions={900914: CUSTOM})
    exported = export_stream(made, str(tmp_path), name="sites", columnar_rows=10)
    assert made.asked == [[900914]]  # type: ignore[attr-defined]
    frame = geopandas.read_parquet(exported.data_path)
    assert frame.crs.to_epsg() == 4326  # every geometry reprojected to WGS 84
    lon, lat = Transformer.from_crs(32618, 4326, always_xy=True).transform(500_110.0,
                                                                           4_500_000.0)
    assert (frame.geometry[11].x, frame.geometry[11].y) == pytest.approx((lon, lat), abs=1e-9)
    native = json.loads(pq.read_schema(exported.data_path).metadata[b"native_crs"])["geom"]
    assert native["srids"] == [4326, 900914] and native["crs"] is None  # mixed, both listed


def test_a_custom_crs_alone_is_named_by_its_spatial_ref_sys_row(tmp_path):
    made = stream(rows(0, 10, srid=900914), [rows(10, 10, srid=900914)],
                  definitions={900914: CUSTOM})
    made.head.crs_definitions.update({900914: CUSTOM})  # type: ignore[attr-defined]
    exported = export_stream(made, str(tmp_path), name="sites", columnar_rows=10)
    assert geopandas.read_parquet(exported.data_path).crs.to_epsg() == 4326
    native = exported.preview.native_crs[0]
    assert native["crs"] == "spatial_ref_sys:900914" and native["crs_wkt"]


def test_planar_coordinates_are_written_with_no_crs(tmp_path):
    planar = [(i, 1.0, shapely.Point(1000.0 + i, 2000.0)) for i in range(30)]  # SRID 0
    for result in (export_stream(stream(planar[:10], [planar[10:]]), str(tmp_path / "s"),
                                 name="p", declared_planar={"demo.sites.geom": "foot"},
                                 columnar_rows=10),
                   export_result(QueryResult(COLUMNS, planar, 100, "x"), str(tmp_path / "w"),
                                 name="p", declared_planar={"demo.sites.geom": "foot"},
                                 columnar_rows=10)):
        frame = geopandas.read_parquet(result.data_path)
        assert frame.crs is None and frame.geometry[29].x == 1029.0
        assert result.preview.bbox_planar == [1000.0, 2000.0, 1029.0, 2000.0]
        assert result.preview.bbox_wgs84 is None


def test_a_numeric_value_wider_than_the_first_rows_chose_is_refused(tmp_path):
    columns = (ResultColumn("n", "numeric"), COLUMNS[2])
    point = shapely.set_srid(shapely.Point(1, 2), 4326)
    made = stream([(Decimal("1.5"), point)] * 10, [[(Decimal("0.1234567890123456789"), point)]])
    made.head = QueryResult(columns, made.head.rows, 100, "x")
    with pytest.raises(ArtifactWriteError, match="cast it in SQL"):
        export_stream(made, str(tmp_path), name="n", columnar_rows=10)
    assert list(tmp_path.iterdir()) == []


def test_json_writes_non_finite_numbers_as_text_never_null(tmp_path):
    result = QueryResult((ResultColumn("v", "double precision"), ResultColumn("n", "numeric")),
                         [(float("nan"), Decimal("Infinity")), (float("-inf"), Decimal(1))],
                         10, "x")
    exported = export_result(result, str(tmp_path), name="values")
    written = json.loads((tmp_path / "values.json").read_text())
    assert written == [{"v": "NaN", "n": "Infinity"}, {"v": "-Infinity", "n": 1}]
    assert exported.preview.first_rows[0] == {"v": "NaN", "n": "Infinity"}


def test_a_stream_that_ends_in_its_head_stays_geojson(tmp_path):
    exported = export_stream(stream(rows(0, 5), []), str(tmp_path), name="few",
                             columnar_rows=10)
    assert exported.format == "geojson"
    features = json.loads((tmp_path / "few.geojson").read_text())["features"]
    assert len(features) == 5 and features[4]["properties"]["v"] == 2.0
    assert np.isclose(features[4]["geometry"]["coordinates"][0], -75.0 + 4e-3)


@pytest.mark.db
def test_the_executor_streams_a_large_result_and_refuses_past_the_cap(reader_url, tmp_path):
    from geoask.sql import GuardContext
    from geoask.sql.executor import PostgresSqlRunner
    from geoask.sql.step import run_statement

    runner = PostgresSqlRunner(reader_url)
    sql = "SELECT iata, geom FROM demo.airports ORDER BY iata"
    whole = runner.run_text(sql, 10_000)
    context = GuardContext(policy="postgis", columnar_rows=2, row_cap=whole.row_count)
    run = run_statement(sql, context, runner, str(tmp_path / "ok"), name="airports")
    frame = geopandas.read_parquet(run.exported.data_path)
    assert run.exported.format == "geoparquet" and frame.crs.to_epsg() == 4326
    assert list(frame["iata"]) == [row[0] for row in whole.rows]
    assert run.exported.preview.row_count == whole.row_count
    refused = GuardContext(policy="postgis", columnar_rows=2, row_cap=whole.row_count - 1)
    with pytest.raises(QueryExecutionError) as caught:
        run_statement(sql, refused, runner, str(tmp_path / "cut"), name="airports")
    assert caught.value.kind == "result_too_large"
    assert not (tmp_path / "cut").exists() or list((tmp_path / "cut").iterdir()) == []
