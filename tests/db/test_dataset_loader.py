"""The load_dataset flow loads spdata into its own database: native SRIDs, a view, no foreign
keys, a reader that can SELECT and not write, a no-op reload, and a catalog that checks clean."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import psycopg
import pyarrow.parquet as pq
import pytest
import yaml
from psycopg.conninfo import make_conninfo

from flows.load_dataset import load_dataset
from geoask.catalog.check import check_catalog
from geoask.catalog.model import load_catalog
from geoask.db.urls import uses_external_database
from geoask.errors import DatasetError

pytestmark = pytest.mark.db

SPDATA = Path(__file__).resolve().parents[2] / "benchmark" / "databases" / "spdata"


@pytest.fixture
def loaded(spdata_loaded):
    """spdata loaded once per session into a throw-away database (tests/conftest.py)."""
    return spdata_loaded.manifest, spdata_loaded.summary


def test_tables_keep_their_native_srid_and_the_view_exists(loaded):
    _, summary = loaded
    assert summary.changed and summary.reader_url is not None
    with psycopg.connect(summary.reader_url) as conn:
        columns = conn.execute(
            "SELECT f_table_schema || '.' || f_table_name, srid, type FROM geometry_columns "
            "ORDER BY 1").fetchall()
        kinds = dict(conn.execute(
            "SELECT n.nspname || '.' || c.relname, c.relkind FROM pg_class c JOIN pg_namespace n "
            "ON n.oid = c.relnamespace WHERE n.nspname IN ('us_census', 'europe') "
            "AND c.relkind IN ('r', 'v')").fetchall())
        constraints = conn.execute(
            "SELECT conrelid::regclass::text, contype FROM pg_constraint "
            "WHERE connamespace::regnamespace::text IN ('us_census', 'europe')").fetchall()
    assert columns == [
        ("europe.london_cycle_docks", 4326, "POINT"),
        ("europe.lux_cantons", 4326, "MULTIPOLYGON"),
        ("us_census.boston_tracts", 4267, "MULTIPOLYGON"),
        ("us_census.ny8_tract_rates", 32618, "MULTIPOLYGON"),
        ("us_census.ny8_tracts", 32618, "MULTIPOLYGON"),
    ]
    assert kinds["us_census.ny8_tract_rates"] == "v"
    assert sorted(v for v in kinds.values()) == ["r"] * 6 + ["v"]
    assert {kind for _, kind in constraints} == {"p"}  # primary keys only, no foreign key
    assert "us_census.ny8_leukemia" not in {table for table, _ in constraints}


def test_row_counts_match_the_files_and_the_view_joins_them(loaded):
    manifest, summary = loaded
    dataset = yaml.safe_load(manifest.read_text())
    expected = {f"{t['schema']}.{t['name']}":
                pq.read_metadata(manifest.parent / t["file"]).num_rows
                for t in dataset["tables"]}
    assert {k: v for k, v in summary.rows.items() if k in expected} == expected
    assert summary.rows["us_census.ny8_tract_rates"] == expected["us_census.ny8_tracts"]
    with psycopg.connect(summary.reader_url) as conn:
        row = conn.execute("SELECT round(sum(cases)::numeric, 3), max(cases_per_100k) > 0 "
                           "FROM us_census.ny8_tract_rates").fetchone()
    assert row is not None and float(row[0]) == pytest.approx(592.0, abs=1e-3) and row[1]


def test_the_reader_can_select_and_cannot_write(loaded):
    _, summary = loaded
    with psycopg.connect(summary.reader_url, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM europe.lux_districts").fetchone() == (3,)
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            conn.execute("DELETE FROM europe.lux_districts")
        with pytest.raises(psycopg.errors.InsufficientPrivilege), conn.transaction():
            conn.execute("SET TRANSACTION READ WRITE")
            conn.execute("INSERT INTO europe.lux_districts VALUES (9, 'x')")
        with pytest.raises(psycopg.errors.InsufficientPrivilege), conn.transaction():
            conn.execute("SET TRANSACTION READ WRITE")
            conn.execute("CREATE TABLE europe.evil (x int)")


def test_a_second_load_changes_nothing(loaded):
    manifest, first = loaded
    second = load_dataset(manifest)
    assert not second.changed and second.fingerprint == first.fingerprint
    assert second.rows == first.rows


def test_the_refined_catalog_checks_clean_against_the_loaded_database(loaded):
    _, summary = loaded
    catalog = load_catalog(SPDATA / "catalog.yaml")
    assert catalog.todos() == []
    assert check_catalog(summary.reader_url, catalog) == []
    draft = load_catalog(SPDATA / "catalog.draft.yaml")
    # the raw draft disagrees with the database in nothing; only what a person fills in is left
    assert draft.todos() and check_catalog(summary.reader_url, draft) == draft.todos()


def _one_table_manifest(folder: Path, database: str, schema: str, views=()) -> Path:
    """A manifest loading lux_districts (3 rows, no geometry) into ``schema`` of ``database``."""
    (folder / "data").mkdir(parents=True)
    shutil.copy(SPDATA / "data" / "lux_districts.parquet", folder / "data")
    manifest = folder / "dataset.yaml"
    manifest.write_text(yaml.safe_dump({
        "version": 1, "database": database, "views": list(views),
        "tables": [{"name": "lux_districts", "schema": schema,
                    "file": "data/lux_districts.parquet", "primary_key": ["id_1"]}]}))
    return manifest


def test_a_schema_geoask_did_not_load_is_never_replaced(loaded, database, tmp_path):
    manifest, _ = loaded
    name = yaml.safe_load(manifest.read_text())["database"]
    owner = make_conninfo(database.owner_url, dbname=name)
    with psycopg.connect(owner, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA mine")
        conn.execute("CREATE TABLE mine.precious AS SELECT 1 AS x")
    with pytest.raises(DatasetError, match=r"schema mine already exists .* not loaded by geoask"):
        load_dataset(_one_table_manifest(tmp_path, name, "mine"))
    with psycopg.connect(owner) as conn:
        assert conn.execute("SELECT count(*) FROM mine.precious").fetchone() == (1,)


def test_a_failing_view_publishes_nothing_and_leaves_no_new_database(database, tmp_path):
    if uses_external_database(database.settings):
        pytest.skip("loads into a new database of the embedded cluster")
    name = f"spdata_v{uuid.uuid4().hex[:8]}"
    view = {"name": "broken", "schema": "europe", "sql": "SELECT * FROM europe.nope"}
    try:
        with pytest.raises(DatasetError, match=r"nope.*nothing was published") as error:
            load_dataset(_one_table_manifest(tmp_path, name, "europe", [view]))
        assert "\n" not in str(error.value)
        with psycopg.connect(database.owner_url) as conn:  # created for the load, dropped
            assert conn.execute("SELECT count(*) FROM pg_database WHERE datname = %s",
                                (name,)).fetchone() == (0,)
    finally:
        with psycopg.connect(database.owner_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
