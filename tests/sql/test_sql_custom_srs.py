"""A CRS the database defines itself (a custom ``spatial_ref_sys`` row) through the SQL step.

The fixture inserts SRID 900914 (UTM zone 18N in kilometres, a local authority) as the
embedded cluster's superuser - over its Unix socket, in this fixture only - and a table of
polygons in it; the export must transform them with the row's WKT, record the authority and
the WKT, and offer a metric CRS chosen from the extent (never the custom CRS).
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
from pyproj import CRS, Transformer
from pyproj.enums import WktVersion

from geoask.db.cluster import DATABASE_NAME, READER_ROLE, EmbeddedCluster
from geoask.db.urls import uses_external_database
from geoask.sql.context import GuardContext
from geoask.sql.executor import PostgresSqlRunner
from geoask.sql.step import run_statement

pytestmark = pytest.mark.db

SRID = 900914
SCHEMA = "crs_custom_test"
PROJ4 = "+proj=utm +zone=18 +datum=WGS84 +units=km +no_defs"
WKT = CRS.from_proj4(PROJ4).to_wkt(WktVersion.WKT1_GDAL)


@pytest.fixture(scope="module")
def custom_srs(database) -> Iterator[str]:
    """SRID 900914 in ``spatial_ref_sys`` and ``crs_custom_test.km_grid``; removed afterwards."""
    if uses_external_database(database.settings):
        pytest.skip("needs the embedded cluster's superuser to add a spatial_ref_sys row")
    cluster = EmbeddedCluster(database.settings)
    conninfo = dict(host=str(cluster.socket_dir), port=cluster.port, user="postgres",
                    dbname=DATABASE_NAME)
    with psycopg.connect(**conninfo, autocommit=True) as conn:
        conn.execute("DELETE FROM spatial_ref_sys WHERE srid = %s", [SRID])
        conn.execute("INSERT INTO spatial_ref_sys (srid, auth_name, auth_srid, srtext, "
                     "proj4text) VALUES (%s, 'geoask_test', %s, %s, %s)",
                     [SRID, SRID, WKT, PROJ4])
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {s} CASCADE; CREATE SCHEMA {s}; "
                             "CREATE TABLE {s}.km_grid (id integer PRIMARY KEY, "
                             "geom geometry(Polygon, 900914)); "
                             "INSERT INTO {s}.km_grid SELECT i, ST_MakeEnvelope(583 + 1.5 * i, "
                             "4507 + 0.7 * i, 583.8 + 1.5 * i, 4507.9 + 0.7 * i, 900914) "
                             "FROM generate_series(1, 4) i; "
                             "GRANT USAGE ON SCHEMA {s} TO {r}; "
                             "GRANT SELECT ON ALL TABLES IN SCHEMA {s} TO {r}")
                     .format(s=sql.Identifier(SCHEMA), r=sql.Identifier(READER_ROLE)))
        yield database.reader_url
        conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(SCHEMA)))
        conn.execute("DELETE FROM spatial_ref_sys WHERE srid = %s", [SRID])


def test_a_custom_srid_is_exported_with_the_databases_definition(
    custom_srs: str, tmp_path: Path,
) -> None:
    done = run_statement(f"SELECT id, geom FROM {SCHEMA}.km_grid ORDER BY id", GuardContext(),
                         PostgresSqlRunner(custom_srs), str(tmp_path), name="grid")
    assert set(done.result.crs_definitions) == {SRID}
    collection = json.loads(Path(done.exported.data_path).read_text())
    to_wgs84 = Transformer.from_crs(CRS.from_wkt(WKT), 4326, always_xy=True)
    with psycopg.connect(custom_srs) as conn:
        truth = dict(conn.execute(f"SELECT id, ST_AsBinary(geom) FROM {SCHEMA}.km_grid")
                     .fetchall())
    assert len(collection["features"]) == len(truth) == 4
    for feature in collection["features"]:
        ring = shapely.get_coordinates(shapely.from_wkb(bytes(truth[feature["properties"]["id"]])))
        expected = np.column_stack(to_wgs84.transform(ring[:, 0], ring[:, 1]))
        exported = np.asarray(feature["geometry"]["coordinates"][0])
        assert np.abs(exported - expected).max() < 1e-9
    recorded = collection["native_crs"]["geom"]
    assert (recorded["crs"], recorded["authority"], recorded["units"]) == (
        f"spatial_ref_sys:{SRID}", f"geoask_test:{SRID}", "kilometre")
    assert CRS.from_wkt(recorded["crs_wkt"]) == CRS.from_wkt(WKT)
    assert (recorded["metric_crs"], recorded["metric_basis"]) == ("EPSG:32618",
                                                                  "estimated UTM zone")
    assert done.exported.preview.native_crs == [recorded]


def test_no_definitions_are_read_for_a_result_without_geometry(custom_srs: str) -> None:
    result = PostgresSqlRunner(custom_srs).run_text(
        f"SELECT id, ST_Area(geom) AS area FROM {SCHEMA}.km_grid ORDER BY id", 10)
    assert result.crs_definitions == {} and result.rows[0][1] == pytest.approx(0.8 * 0.9)
