"""Geometry stored in projected CRSs goes through a checked SQL step and the sandbox correctly.

A test schema ``crs_test`` holds polygons in EPSG:32618 (UTM 18N metres), EPSG:2263 (NY Long
Island US survey feet), SRID 0 (projected and lon/lat coordinates: refused unless the catalog
declares a CRS) and a column mixing SRIDs.
Each is read by :func:`geoask.sql.step.run_statement` (guard, read-only reader role, export);
the GeoJSON coordinates are compared with pyproj's own transform of the native coordinates
(and PostGIS's ST_Transform for UTM), and a sandbox script projecting to the recorded metric
CRS must find PostGIS's ST_Area of the native geometry.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import psycopg
import pytest
import shapely
from psycopg import sql
from pyproj import Transformer

from geoask.db.cluster import READER_ROLE
from geoask.errors import CrsError
from geoask.sql.context import GuardContext
from geoask.sql.executor import PostgresSqlRunner
from geoask.sql.step import StatementRun, run_statement
from sandbox.bubblewrap import BubblewrapSandbox

pytestmark = [pytest.mark.db, pytest.mark.sandbox]

SCHEMA = "crs_test"
_DDL = """
CREATE SCHEMA {s};
CREATE TABLE {s}.tracts_utm (id integer PRIMARY KEY, geom geometry(Polygon, 32618));
INSERT INTO {s}.tracts_utm
SELECT i, ST_Buffer(ST_Point(583000 + 1500 * i, 4507000 + 700 * i, 32618), 400 + 30 * i, 5)
FROM generate_series(1, 6) i;
CREATE TABLE {s}.parcels_ft (id integer PRIMARY KEY, geom geometry(Polygon, 2263));
INSERT INTO {s}.parcels_ft
SELECT i, ST_MakeEnvelope(985000 + 900 * i, 200000 + 450 * i, 985600 + 900 * i,
                          200250 + 700 * i, 2263)
FROM generate_series(1, 6) i;
CREATE TABLE {s}.unknown_srid (id integer PRIMARY KEY, geom geometry(Polygon));
INSERT INTO {s}.unknown_srid
SELECT i, ST_MakeEnvelope(985000 + 900 * i, 200000, 985600 + 900 * i, 200250)
FROM generate_series(1, 3) i;
CREATE TABLE {s}.lonlat_srid0 (id integer PRIMARY KEY, geom geometry(Point));
INSERT INTO {s}.lonlat_srid0 VALUES (1, ST_Point(-73.98, 40.75));
CREATE TABLE {s}.mixed (id integer PRIMARY KEY, geom geometry);
INSERT INTO {s}.mixed VALUES (1, ST_Point(-73.98, 40.75, 4326)),
                             (2, ST_Point(585000, 4511000, 32618));
GRANT USAGE ON SCHEMA {s} TO {reader};
GRANT SELECT ON ALL TABLES IN SCHEMA {s} TO {reader};
"""
AREAS_SCRIPT = """\
import json
import geopandas as gpd
path = "/input/{name}.geojson"
metric = json.load(open(path))["native_crs"]["geom"]["metric_crs"]
frame = gpd.read_file(path).to_crs(metric)
result = dict(zip((int(i) for i in frame["id"]), (float(a) for a in frame.area)))
print(json.dumps({{"status": "success", "summary": f"areas in {{metric}}", "result": result}}))
"""


@pytest.fixture(scope="module")
def crs_schema(database) -> Iterator[str]:
    """Schema ``crs_test`` created as the owner role; dropped afterwards."""
    with psycopg.connect(database.owner_url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(SCHEMA)))
        conn.execute(sql.SQL(_DDL).format(s=sql.Identifier(SCHEMA),
                                          reader=sql.Identifier(READER_ROLE)))
        yield database.reader_url
        conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(SCHEMA)))


def run(reader_url: str, statement: str, out: Path, name: str = "result",
        context: GuardContext | None = None) -> tuple[StatementRun, dict]:
    done = run_statement(statement, context or GuardContext(), PostgresSqlRunner(reader_url),
                         str(out), name=name)
    return done, json.loads(Path(done.exported.data_path).read_text())


def native(reader_url: str, query: str) -> dict[int, tuple[shapely.Geometry, float]]:
    """``id -> (native geometry, ST_Area in native units)``, asked of PostGIS directly."""
    with psycopg.connect(reader_url) as conn:
        rows = conn.execute(query).fetchall()
    return {i: (shapely.from_wkb(bytes(wkb)), float(area)) for i, wkb, area in rows}


@pytest.mark.parametrize(("table", "srid", "units"), [
    ("tracts_utm", 32618, "metre"), ("parcels_ft", 2263, "US survey foot")])
def test_projected_storage_is_exported_in_wgs84_with_its_native_crs_recorded(
    crs_schema: str, tmp_path: Path, real_sandbox: BubblewrapSandbox, table: str, srid: int,
    units: str,
) -> None:
    done, collection = run(crs_schema, f"SELECT id, geom FROM {SCHEMA}.{table} ORDER BY id",
                           tmp_path, name=table)
    truth = native(crs_schema, f"SELECT id, ST_AsBinary(geom), ST_Area(geom) "
                               f"FROM {SCHEMA}.{table}")
    to_wgs84 = Transformer.from_crs(srid, 4326, always_xy=True)
    assert len(collection["features"]) == len(truth) == 6
    for feature in collection["features"]:
        exported = np.asarray(feature["geometry"]["coordinates"][0])
        ring = shapely.get_coordinates(truth[feature["properties"]["id"]][0])
        expected = np.column_stack(to_wgs84.transform(ring[:, 0], ring[:, 1]))
        assert np.abs(exported - expected).max() < 1e-7
    recorded = collection["native_crs"]["geom"]
    assert recorded["srids"] == [srid] and recorded["crs"] == f"EPSG:{srid}"
    assert recorded["units"] == units and recorded["source"] == f"{SCHEMA}.{table}.geom"
    assert recorded["metric_crs"] == f"EPSG:{srid}" and recorded["metric_basis"] == "native"
    assert done.exported.preview.native_crs == [recorded]
    assert f"stored in EPSG:{srid}" in done.exported.preview.to_text()

    outcome = real_sandbox.run(AREAS_SCRIPT.format(name=table), [Path(done.exported.data_path)])
    assert outcome.status == "success", outcome.model_dump_json(indent=1)
    assert outcome.protocol is not None
    areas = {int(k): v for k, v in outcome.protocol.result.items()}
    for i, (_, st_area) in truth.items():
        assert abs(areas[i] - st_area) / st_area < 1e-4, (i, areas[i], st_area)


def test_utm_export_agrees_with_postgis_st_transform(crs_schema: str, tmp_path: Path) -> None:
    _, collection = run(crs_schema, f"SELECT id, geom FROM {SCHEMA}.tracts_utm ORDER BY id",
                        tmp_path)
    postgis = native(crs_schema, f"SELECT id, ST_AsBinary(ST_Transform(geom, 4326)), 0 "
                                 f"FROM {SCHEMA}.tracts_utm")
    for feature in collection["features"]:
        exported = np.asarray(feature["geometry"]["coordinates"][0])
        expected = shapely.get_coordinates(postgis[feature["properties"]["id"]][0])
        assert np.abs(exported - expected).max() < 1e-7


@pytest.mark.parametrize("table", ["unknown_srid", "lonlat_srid0"],
                         ids=["projected coordinates", "lon/lat-range coordinates"])
def test_undeclared_srid_0_is_refused_naming_the_catalog_field_whatever_the_coordinates(
    crs_schema: str, tmp_path: Path, table: str,
) -> None:
    # Behaviour change (issue 30): SRID 0 in lon/lat range used to be taken as EPSG:4326.
    with pytest.raises(CrsError) as refused:
        run(crs_schema, f"SELECT id, geom FROM {SCHEMA}.{table}", tmp_path)
    message = str(refused.value)
    assert f"column geom ({SCHEMA}.{table}.geom) has SRID 0" in message
    assert f"set geo.crs of {SCHEMA}.{table}.geom in the catalog" in message
    assert "\n" not in message and "set the SRID in the database" in message
    assert not list(tmp_path.iterdir())  # nothing half-written


def test_a_computed_srid_0_value_is_refused_saying_to_set_the_srid_in_sql(
    crs_schema: str, tmp_path: Path,
) -> None:
    with pytest.raises(CrsError, match=r"\(a computed value\) has SRID 0 .*ST_SetSRID"):
        run(crs_schema, "SELECT 1 AS id, ST_Point(-73.98, 40.75) AS geom", tmp_path,
            context=GuardContext(policy="postgis"))


@pytest.mark.parametrize(("units", "text"), [
    ("foot", "measure areas and distances directly in foot"),
    ("unknown", "units unknown: report them as units of the data"),
])
def test_declared_planar_srid_0_is_exported_in_its_own_coordinates_and_says_so(
    crs_schema: str, tmp_path: Path, units: str, text: str,
) -> None:
    context = GuardContext(declared_planar={f"{SCHEMA}.unknown_srid.geom": units})
    done, collection = run(crs_schema, f"SELECT id, geom FROM {SCHEMA}.unknown_srid "
                                       "ORDER BY id", tmp_path, context=context)
    assert collection["crs"] == {"type": "name", "properties": {"name": "planar",
                                                                "units": units}}
    assert collection["features"][0]["geometry"]["coordinates"][0][0] == [985900.0, 200000.0]
    recorded = collection["native_crs"]["geom"]
    assert (recorded["crs"], recorded["units"], recorded["metric_crs"]) == ("planar", units, None)
    assert recorded["srids"] == [0] and "as the catalog declares" in recorded["note"]
    preview = done.exported.preview
    assert preview.bbox_wgs84 is None and preview.bbox_planar == [985900.0, 200000.0,
                                                                  988300.0, 200250.0]
    assert text in preview.to_text() and "bbox (planar)" in preview.to_text()


def test_srid_0_takes_the_catalogs_declared_srid_through_aliases_and_subqueries(
    crs_schema: str, tmp_path: Path,
) -> None:
    context = GuardContext(declared_srids={f"{SCHEMA}.unknown_srid.geom": 2263})
    _, collection = run(crs_schema, f"SELECT id, shape FROM (SELECT u.id, u.geom AS shape "
                                    f"FROM {SCHEMA}.unknown_srid u) AS t ORDER BY id",
                        tmp_path, context=context)
    recorded = collection["native_crs"]["shape"]
    assert recorded["crs"] == "EPSG:2263" and "catalog declares" in recorded["note"]
    lon, lat = collection["features"][0]["geometry"]["coordinates"][0][0]
    expected = Transformer.from_crs(2263, 4326, always_xy=True).transform(985900, 200000)
    assert abs(lon - expected[0]) < 1e-7 and abs(lat - expected[1]) < 1e-7


def test_mixed_srids_are_transformed_feature_by_feature(crs_schema: str, tmp_path: Path) -> None:
    _, collection = run(crs_schema, f"SELECT id, geom FROM {SCHEMA}.mixed ORDER BY id", tmp_path)
    first, second = (f["geometry"]["coordinates"] for f in collection["features"])
    assert first == [-73.98, 40.75]
    expected = Transformer.from_crs(32618, 4326, always_xy=True).transform(585000, 4511000)
    assert np.abs(np.asarray(second) - np.asarray(expected)).max() < 1e-7
    recorded = collection["native_crs"]["geom"]
    assert recorded["srids"] == [4326, 32618] and recorded["crs"] is None
    assert recorded["metric_crs"] == "EPSG:32618"


GEOPARQUET_SCRIPT = """\
import json
import geopandas as gpd
frame = gpd.read_parquet("/input/{name}.parquet")
metric = frame.estimate_utm_crs()
areas = dict(zip((int(i) for i in frame["id"]), (float(a) for a in frame.to_crs(metric).area)))
print(json.dumps({{"status": "success", "summary": "areas", "result": {{
    "epsg": frame.crs.to_epsg(), "wkb": [g.wkb_hex for g in frame.geometry], "areas": areas}}}}))
"""


def test_a_large_result_goes_to_the_sandbox_as_geoparquet_read_with_read_parquet(
    crs_schema: str, tmp_path: Path, real_sandbox: BubblewrapSandbox,
) -> None:
    import geopandas as gpd

    done = run_statement(f"SELECT id, geom FROM {SCHEMA}.tracts_utm ORDER BY id",
                         GuardContext(columnar_rows=5), PostgresSqlRunner(crs_schema),
                         str(tmp_path), name="tracts")
    assert done.exported.format == "geoparquet"
    assert done.exported.data_path.endswith("tracts.parquet")
    outcome = real_sandbox.run(GEOPARQUET_SCRIPT.format(name="tracts"),
                               [Path(done.exported.data_path)])
    assert outcome.status == "success", outcome.model_dump_json(indent=1)
    assert outcome.protocol is not None
    read = outcome.protocol.result
    assert read["epsg"] == 4326
    # streamed: the rows are in the file only; the sandbox reads what the host reads, in order
    written = gpd.read_parquet(done.exported.data_path)
    assert len(written) == 6 and written.crs.to_epsg() == 4326
    assert read["wkb"] == [shapely.to_wkb(g, hex=True) for g in written.geometry]
    truth = native(crs_schema, f"SELECT id, ST_AsBinary(geom), ST_Area(geom) "
                               f"FROM {SCHEMA}.tracts_utm")
    for i, (_, st_area) in truth.items():
        assert abs(read["areas"][str(i)] - st_area) / st_area < 1e-4, (i, st_area)
