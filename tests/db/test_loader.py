"""The load_demo_data flow on a small synthetic catalog, in a throw-away schema of PostGIS."""

from __future__ import annotations

import uuid
from pathlib import Path

import geopandas as gpd
import pandas as pd
import psycopg
import pytest
import yaml
from shapely.geometry import MultiPolygon, Polygon

from flows.load_demo_data import load_demo_data
from geoask.errors import DataValidationError

pytestmark = pytest.mark.db

CATALOG = {
    "version": 1,
    "schema": "x",
    "description": "Synthetic zones for loader tests.",
    "tables": [
        {
            "name": "zones",
            "title": "Zones",
            "theme": "Two square zones used to test the loader end to end.",
            "spatial_granularity": "county",
            "temporal_granularity": "static",
            "source": "made by the test",
            "expected_rows": 2,
            "primary_key": ["zone_id"],
            "columns": [
                {"name": "zone_id", "type": "char(2)", "nullable": False,
                 "description": "Zone identifier."},
                {"name": "zone_name", "type": "text", "description": "Name of the zone."},
                {"name": "geom", "type": "geometry(MultiPolygon,4326)", "nullable": False,
                 "description": "Zone boundary, EPSG:4326."},
            ],
        },
        {
            "name": "zone_values",
            "title": "Zone values",
            "theme": "Annual values per zone, used to test foreign keys.",
            "spatial_granularity": "county",
            "temporal_granularity": "annual",
            "temporal_coverage": {"start": "2000", "end": "2001"},
            "source": "made by the test",
            "expected_rows": 3,
            "primary_key": ["zone_id", "year"],
            "foreign_keys": [{"columns": ["zone_id"], "ref_table": "zones",
                              "ref_columns": ["zone_id"]}],
            "columns": [
                {"name": "zone_id", "type": "char(2)", "nullable": False,
                 "description": "Zone identifier."},
                {"name": "year", "type": "integer", "nullable": False,
                 "description": "Calendar year."},
                {"name": "value_mm", "type": "double precision", "unit": "mm",
                 "description": "A measured value."},
            ],
        },
    ],
}


def _square(x: float, y: float) -> MultiPolygon:
    return MultiPolygon([Polygon([(x, y), (x + 1, y), (x + 1, y + 1), (x, y + 1)])])


def _write(folder: Path, catalog: dict, zones: gpd.GeoDataFrame) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "catalog.yaml").write_text(yaml.safe_dump(catalog))
    zones.to_parquet(folder / "zones.parquet")
    pd.DataFrame({"zone_id": ["aa", "aa", "bb"], "year": [2000, 2001, 2000],
                  "value_mm": [1.5, None, 3.25]}).to_parquet(folder / "zone_values.parquet")
    return folder / "catalog.yaml"


def _zones(bad_geometry: bool = False) -> gpd.GeoDataFrame:
    second = _square(2, 0)
    if bad_geometry:  # a self-intersecting "bow tie"
        second = MultiPolygon([Polygon([(2, 0), (3, 1), (3, 0), (2, 1)])])
    return gpd.GeoDataFrame({"zone_id": ["aa", "bb"], "zone_name": ["A", "B"]},
                            geometry=[_square(0, 0), second],
                            crs="EPSG:4326").rename_geometry("geom")


@pytest.fixture
def schema(database):
    name = f"t_{uuid.uuid4().hex[:8]}"
    yield name
    with psycopg.connect(database.owner_url, autocommit=True) as conn:
        for s in (name, f"{name}_staging"):
            conn.execute(f'DROP SCHEMA IF EXISTS "{s}" CASCADE')
        conn.execute("DELETE FROM geoask_meta.load_state WHERE schema_name = %s", (name,))


def _count(url: str, schema: str, table: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute(f'SELECT count(*) FROM "{schema}"."{table}"').fetchone()
        assert row is not None
        return row[0]


def test_load_publishes_verifies_and_is_idempotent(database, schema, tmp_path):
    catalog_path = _write(tmp_path, CATALOG, _zones())
    first = load_demo_data(schema_name=schema, catalog_path=catalog_path, data_dir=tmp_path)
    assert first.changed and first.rows == {"zones": 2, "zone_values": 3}
    # the reader sees the published data, keys and comments
    assert _count(database.reader_url, schema, "zone_values") == 3
    with psycopg.connect(database.reader_url) as conn:
        comment = conn.execute("SELECT col_description(%s::regclass, 3)",
                               (f"{schema}.zone_values",)).fetchone()
        assert comment is not None and "Unit: mm." in comment[0]
        srid = conn.execute(f'SELECT DISTINCT ST_SRID(geom) FROM "{schema}".zones').fetchall()
        assert srid == [(4326,)]
        nulls = conn.execute(
            f'SELECT count(*) FROM "{schema}".zone_values WHERE value_mm IS NULL').fetchone()
        assert nulls == (1,)
    second = load_demo_data(schema_name=schema, catalog_path=catalog_path, data_dir=tmp_path)
    assert not second.changed and second.fingerprint == first.fingerprint
    assert second.rows == first.rows


def test_failed_verification_keeps_the_published_schema(database, schema, tmp_path):
    catalog_path = _write(tmp_path / "good", CATALOG, _zones())
    load_demo_data(schema_name=schema, catalog_path=catalog_path, data_dir=tmp_path / "good")
    wrong = yaml.safe_load(yaml.safe_dump(CATALOG))
    wrong["tables"][1]["expected_rows"] = 4
    bad_path = _write(tmp_path / "bad", wrong, _zones())
    with pytest.raises(DataValidationError, match="zone_values: 3 rows, catalog expects 4"):
        load_demo_data(schema_name=schema, catalog_path=bad_path, data_dir=tmp_path / "bad")
    assert _count(database.owner_url, schema, "zone_values") == 3
    with psycopg.connect(database.owner_url) as conn:
        staging = conn.execute("SELECT to_regnamespace(%s)", (f"{schema}_staging",)).fetchone()
        assert staging == (None,)


def test_invalid_geometry_is_refused(database, schema, tmp_path):
    catalog_path = _write(tmp_path, CATALOG, _zones(bad_geometry=True))
    with pytest.raises(DataValidationError, match="zones: 1 invalid geometries"):
        load_demo_data(schema_name=schema, catalog_path=catalog_path, data_dir=tmp_path)


def test_foreign_key_violation_is_refused(database, schema, tmp_path):
    catalog_path = _write(tmp_path, CATALOG, _zones())
    pd.DataFrame({"zone_id": ["aa", "zz", "bb"], "year": [2000, 2001, 2000],
                  "value_mm": [1.0, 2.0, 3.0]}).to_parquet(tmp_path / "zone_values.parquet")
    with pytest.raises(psycopg.errors.ForeignKeyViolation):
        load_demo_data(schema_name=schema, catalog_path=catalog_path, data_dir=tmp_path)


def test_wrong_crs_is_refused(database, schema, tmp_path):
    catalog_path = _write(tmp_path, CATALOG, _zones())
    _zones().to_crs("EPSG:3857").to_parquet(tmp_path / "zones.parquet")
    with pytest.raises(DataValidationError, match="EPSG:3857, expected EPSG:4326"):
        load_demo_data(schema_name=schema, catalog_path=catalog_path, data_dir=tmp_path)


RASTER_TABLE = {
    "name": "heights", "title": "Heights", "theme": "A small synthetic height grid in UTM 32N.",
    "spatial_granularity": "raster_cell", "temporal_granularity": "static",
    "source": "made by the test", "expected_rows": 9, "primary_key": ["rid"],
    "columns": [
        {"name": "rid", "type": "integer", "nullable": False, "description": "Tile number."},
        {"name": "rast", "type": "raster", "nullable": False,
         "description": "Height tiles, band 1 in metres.",
         "raster": {"srid": 32632, "pixel_size": [30.0, 30.0], "width": 9, "height": 7,
                    "tile_size": [4, 3], "extent": [500000, 4999790, 500270, 5000000],
                    "bands": [{"index": 1, "name": "height", "unit": "m", "pixel_type": "16BSI",
                               "description": "Height above sea level.", "nodata": -9999}]}},
    ],
}


def _raster_catalog(tmp_path: Path, srid_in_catalog: int) -> Path:
    import numpy as np

    from geoask.base.raster import RasterTile, to_geotiff_bytes

    values = np.arange(63, dtype="int16").reshape(1, 7, 9)
    values[0, 0, 0] = -9999
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "heights.tif").write_bytes(to_geotiff_bytes(RasterTile(
        values, (500000.0, 30.0, 0.0, 5000000.0, 0.0, -30.0), 32632, (-9999,))))
    catalog = yaml.safe_load(yaml.safe_dump(CATALOG))
    table = yaml.safe_load(yaml.safe_dump(RASTER_TABLE))
    table["columns"][1]["raster"]["srid"] = srid_in_catalog
    catalog["tables"] = [table]
    path = tmp_path / "catalog.yaml"
    path.write_text(yaml.safe_dump(catalog))
    return path


def test_raster_table_is_tiled_constrained_and_verified(database, schema, tmp_path):
    summary = load_demo_data(schema_name=schema, catalog_path=_raster_catalog(tmp_path, 32632),
                             data_dir=tmp_path)
    assert summary.rows == {"heights": 9}  # 3 x 3 tiles, edge tiles smaller
    with psycopg.connect(database.reader_url) as conn:
        row = conn.execute(
            "SELECT srid, blocksize_x, blocksize_y, num_bands, nodata_values FROM raster_columns "
            "WHERE r_table_schema = %s AND r_table_name = 'heights'", (schema,)).fetchone()
        assert row == (32632, 4, 3, 1, [-9999.0])
        stats = conn.execute(f'SELECT (ST_SummaryStatsAgg(rast, 1, true)).* FROM "{schema}".heights'
                             ).fetchone()
        assert stats[0] == 62 and stats[1] == sum(range(1, 63))  # nodata pixel left out


def test_raster_with_another_srid_than_the_catalog_is_refused(database, schema, tmp_path):
    with pytest.raises(DataValidationError, match=r"heights\.rast: SRID 32632, catalog says 32633"):
        load_demo_data(schema_name=schema, catalog_path=_raster_catalog(tmp_path, 32633),
                       data_dir=tmp_path)
