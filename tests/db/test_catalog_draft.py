"""`geoask catalog draft` and `geoask catalog check` against the demo database and a small
"bring your own" schema: projected CRS (EPSG:32618), a view, a table without a primary key,
an undeclared join key, a geography column."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from geoask.catalog import introspect, spatial_joins
from geoask.catalog.check import check_catalog, pg_type_name
from geoask.catalog.ddl import column_comment, table_comment
from geoask.catalog.draft import draft_catalog, to_yaml
from geoask.catalog.introspect import read_only
from geoask.catalog.model import TODO, load_catalog
from geoask.db.cluster import READER_ROLE
from geoask.errors import CatalogError

pytestmark = pytest.mark.db

GEOASK = str(Path(sys.executable).with_name("geoask"))
EXTRA = "byo_test"
COPY = "byo_copy"

_DDL = """
CREATE SCHEMA {s};
COMMENT ON SCHEMA {s} IS 'Test schema: census tracts in UTM zone 18N and cases per year.';
CREATE TABLE {s}.tracts (
    geoid text PRIMARY KEY,
    tract_name text NOT NULL,
    borough text NOT NULL,
    population integer,
    geom geometry(MultiPolygon, 32618) NOT NULL);
COMMENT ON TABLE {s}.tracts IS 'Census tracts of a test county, stored in UTM zone 18N metres.';
COMMENT ON COLUMN {s}.tracts.geoid IS 'Census tract GEOID, eleven digits.';
CREATE TABLE {s}.cases (geoid text NOT NULL, year integer NOT NULL, cases integer,
                        reported date);
CREATE TABLE {s}.docks (dock_id integer PRIMARY KEY, status text,
                        geog geography(Point, 4326));
CREATE VIEW {s}.tract_points AS
    SELECT geoid, ST_PointOnSurface(geom)::geometry(Point, 32618) AS geom FROM {s}.tracts;
CREATE TABLE {s}."Odd Name" ("Col A" integer PRIMARY KEY, geoid text, "Kind" text);
INSERT INTO {s}."Odd Name" SELECT i, 'T' || lpad(i::text, 10, '0'), 'k' || i % 2
FROM generate_series(1, 4) i;
CREATE VIEW {s}.tract_centres AS SELECT geoid, ST_Centroid(geom) AS geom FROM {s}.tracts;
INSERT INTO {s}.tracts
SELECT 'T' || lpad(i::text, 10, '0'), 'Tract ' || i, (ARRAY['North', 'South'])[1 + i % 2],
       100 * i,
       ST_Multi(ST_MakeEnvelope(580000 + 1000 * i, 4500000, 580900 + 1000 * i, 4500900, 32618))
FROM generate_series(1, 30) i;
INSERT INTO {s}.cases
SELECT 'T' || lpad((1 + i % 30)::text, 10, '0'), 2000 + i % 5, i % 7,
       DATE '2000-01-01' + i
FROM generate_series(1, 150) i;
INSERT INTO {s}.docks
SELECT i, (ARRAY['open', 'closed', 'planned'])[1 + i % 3],
       ST_SetSRID(ST_MakePoint(-0.1 + i / 1000.0, 51.5), 4326)::geography
FROM generate_series(1, 40) i;
CREATE TABLE {s}.sites (site_id integer PRIMARY KEY, geom geometry(Point, 4326));
INSERT INTO {s}.sites  -- WGS 84 points: odd ones inside tract i, even ones in the gap after it
SELECT i, ST_Transform(ST_SetSRID(ST_MakePoint(
           580450 + 1000 * i + CASE WHEN i % 2 = 0 THEN 500 ELSE 0 END, 4500450), 32618), 4326)
FROM generate_series(1, 20) i;
GRANT USAGE ON SCHEMA {s} TO {reader};
GRANT SELECT ON ALL TABLES IN SCHEMA {s} TO {reader};
ANALYZE {s}.tracts;
"""


@pytest.fixture(scope="module")
def extra(database):
    """Schemas ``byo_test`` and ``byo_copy`` (same content), created as the owner role."""
    with psycopg.connect(database.owner_url, autocommit=True) as conn:
        for schema in (EXTRA, COPY):
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
            conn.execute(sql.SQL(_DDL).format(s=sql.Identifier(schema),
                                              reader=sql.Identifier(READER_ROLE)))
        yield database
        for schema in (EXTRA, COPY):
            conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([GEOASK, *args], env=dict(os.environ), capture_output=True, text=True,
                          timeout=300, check=False)


def test_draft_of_demo_finds_tables_types_srids_keys_joins_comments(database):
    demo = load_catalog(database.settings.catalog_path)
    drafted = draft_catalog(database.reader_url, [demo.schema_name])
    assert drafted.schema_name == demo.schema_name
    assert [t.name for t in drafted.tables] == sorted(t.name for t in demo.tables)
    for table in demo.tables:
        got = drafted.table(table.name)
        assert got.kind == "table"
        assert got.expected_rows == table.expected_rows and not got.rows_estimated
        assert got.primary_key == table.primary_key
        assert sorted((fk.columns, fk.ref_table, fk.ref_columns) for fk in got.foreign_keys) == \
            sorted((fk.columns, fk.ref_table, fk.ref_columns) for fk in table.foreign_keys)
        # COMMENT ON TABLE harvested, unreviewed: a person confirms it into the theme
        assert got.from_database == {"theme": table_comment(table)}
        assert got.title == got.theme == TODO  # never catalog text before a person reads it
        # labels proposed from the declared keys and the naming column (propose_labels)
        assert (got.labels is None) == (table.labels is None), table.name
        if got.labels and table.labels:
            assert got.labels.name == table.labels.name
            assert set(got.labels.codes) <= set(table.labels.codes)
        assert [c.name for c in got.columns] == [c.name for c in table.columns]
        for column in table.columns:
            drafted_column = got.column(column.name)
            assert drafted_column.type == pg_type_name(column.type), (table.name, column.name)
            assert drafted_column.nullable == column.nullable
            assert drafted_column.description == TODO
            assert drafted_column.from_database == {"description": column_comment(column)}
            if column.is_geometry:
                assert drafted_column.geo is not None
                assert drafted_column.geo.srid == 4326
                assert drafted_column.geo.crs_units == "degree"
                assert drafted_column.geo.valid_share == 1.0
                assert f"{drafted_column.geo.geometry_type.lower()},4326)" in column.type.lower()
            if column.range is not None and isinstance(column.range[0], int | float):
                assert drafted_column.range is not None, (table.name, column.name)
                low, high = drafted_column.range
                assert column.range[0] <= low <= high <= column.range[1]
    joins = {(j.left, j.right, j.kind, j.inferred) for j in drafted.join_paths}
    for path in demo.join_paths:
        if path.kind == "foreign_key":
            assert (path.left, path.right, "foreign_key", False) in joins
    assert ("new_haven_roads.county_fips", "us_counties.county_fips", "attribute",
            True) in joins
    spatial = {(j.left, j.right): j for j in drafted.join_paths if j.kind == "spatial"}
    assert all(j.inferred and j.sampled and j.match_share for j in spatial.values())
    nested = spatial[("us_counties.geom", "us_states.geom")]  # polygons in polygons
    assert (nested.predicate, nested.match_share) == ("ST_Within", 1.0)
    airports = spatial[("airports.geom", "us_states.geom")]  # points in polygons
    assert airports.predicate == "ST_Within" and airports.match_share >= 0.95
    roads = spatial[("new_haven_roads.geom", "us_counties.geom")]  # lines across polygons
    assert roads.predicate == "ST_Intersects"
    assert not any("new_haven_incidents" in e and "new_haven_roads" in e  # points ~ lines
                   for e in ((j.left + j.right) for j in spatial.values()))
    cells = drafted.table("climate_grid_cells")
    assert cells.column("center_lon").abbreviation_candidates == {"lon": ["longitude"]}
    assert cells.column("center_lon").from_database["description"] == column_comment(
        demo.table("climate_grid_cells").column("center_lon"))  # nothing invented
    assert drafted.table("us_states").column("state_name").abbreviation_candidates == {}
    assert drafted.table("airports").spatial_granularity == "point"
    assert drafted.table("new_haven_roads").spatial_granularity == "line"
    monthly = drafted.table("climate_grid_monthly")
    assert monthly.temporal_granularity == "monthly"
    assert monthly.temporal_coverage is not None
    assert (monthly.temporal_coverage.start, monthly.temporal_coverage.end) == \
        ("1999-01-01", "1999-12-01")
    assert drafted.table("county_decadal_stats").temporal_granularity == "decadal"
    for table in demo.tables:  # every closed vocabulary of up to 50 values is found
        for column in table.columns:
            if column.values and len(column.values) <= 50:
                assert drafted.table(table.name).column(column.name).values == [
                    v if isinstance(v, int) else str(v) for v in column.values], column.name
    # the draft's check is clean except for its TODOs
    assert check_catalog(database.reader_url, drafted) == drafted.todos()


def test_draft_of_extra_schema_loads_and_check_lists_only_todos(extra, tmp_path):
    out = tmp_path / "byo.yaml"
    result = _run("catalog", "draft", "--database-url", extra.reader_url, "--schema", EXTRA,
                  "--out", str(out))
    assert result.returncode == 0, result.stderr
    catalog = load_catalog(out)
    assert catalog.schema_name == EXTRA
    assert catalog.description == TODO
    assert catalog.from_database["description"].startswith("Test schema")
    assert {t.name: t.kind for t in catalog.tables} == {
        "Odd Name": "table", "cases": "table", "docks": "table", "sites": "table",
        "tract_centres": "view",
        "tract_points": "view", "tracts": "table"}
    odd = catalog.table("Odd Name")  # quoted identifiers survive
    assert odd.primary_key == ["Col A"] and odd.column("Kind").values == ["k0", "k1"]
    assert odd.column("Col A").range == (1, 4)
    tracts, cases = catalog.table("tracts"), catalog.table("cases")
    assert tracts.expected_rows == 30 and cases.expected_rows == 150
    assert cases.primary_key == [] and tracts.primary_key == ["geoid"]
    assert tracts.theme == tracts.title == TODO  # a comment is never catalog text unreviewed
    assert tracts.column("geoid").description == TODO
    assert tracts.column("geoid").from_database == {
        "description": "Census tract GEOID, eleven digits."}
    assert tracts.column("tract_name").description == TODO
    assert tracts.column("tract_name").from_database == {}
    assert tracts.column("borough").values == ["North", "South"]
    assert tracts.column("tract_name").values is None  # 30 distinct names: no vocabulary
    assert tracts.column("population").range == (100, 3000)
    assert tracts.column("population").unit == TODO
    geom = tracts.column("geom")
    assert geom.type == "geometry(MultiPolygon,32618)"
    assert geom.geo is not None
    assert (geom.geo.geometry_type, geom.geo.srid) == ("MULTIPOLYGON", 32618)
    assert geom.geo.crs_name == "WGS 84 / UTM zone 18N"
    assert geom.geo.crs_units == "metre"
    assert geom.unit == "metre (EPSG:32618)"
    assert geom.geo.extent == (581000.0, 4500000.0, 610900.0, 4500900.0)
    assert geom.geo.valid_share == 1.0
    assert tracts.spatial_granularity == TODO  # polygons: a person names the unit
    view_geom = catalog.table("tract_points").column("geom")
    assert view_geom.geo is not None and view_geom.geo.srid == 32618
    assert catalog.table("tract_points").spatial_granularity == "point"
    bare = catalog.table("tract_centres").column("geom")  # no type modifier: sampled
    assert bare.type == "geometry"
    assert bare.geo is not None and (bare.geo.geometry_type, bare.geo.srid) == ("POINT", 32618)
    assert bare.unit == "metre (EPSG:32618)"
    geog = catalog.table("docks").column("geog")
    assert geog.geo is not None and (geog.geo.srid, geog.geo.crs_units) == (4326, "degree")
    assert catalog.table("docks").column("status").values == ["closed", "open", "planned"]
    assert cases.temporal_granularity == "annual"
    assert cases.temporal_coverage is not None
    assert (cases.temporal_coverage.start, cases.temporal_coverage.end) == ("2000", "2004")
    assert cases.column("year").range == (2000, 2004) and cases.column("year").unit == "year"
    assert cases.column("year").values == [2000, 2001, 2002, 2003, 2004]
    assert cases.column("reported").range == ("2000-01-02", "2000-05-30")
    joins = {(j.left, j.right, j.kind, j.inferred) for j in catalog.join_paths}
    assert ("cases.geoid", "tracts.geoid", "attribute", True) in joins
    assert ("tract_points.geoid", "tracts.geoid", "attribute", True) in joins
    assert ("Odd Name.geoid", "tracts.geoid", "attribute", True) in joins
    assert not any(j.left.endswith(".geom") for j in catalog.join_paths if j.kind != "spatial")
    todos = catalog.todos()
    # a one-sentence comment would be the title; it waits for a person in from_database
    assert tracts.from_database == {
        "title": "Census tracts of a test county, stored in UTM zone 18N metres"}
    assert "cases: title is TODO" in todos and "tracts.population: unit is TODO" in todos
    assert any(line.startswith('tracts: title from the database, unreviewed: "Census tracts')
               for line in todos)
    checked = _run("catalog", "check", "--catalog", str(out), "--database-url", extra.reader_url)
    assert checked.returncode == 1
    assert checked.stdout.splitlines() == todos


def test_check_reports_missing_column_wrong_srid_wrong_type_and_range(extra, tmp_path):
    catalog = draft_catalog(extra.reader_url, [COPY])
    assert check_catalog(extra.reader_url, catalog, todos=False) == []
    with psycopg.connect(extra.owner_url, autocommit=True) as conn:
        for statement in (
            "DROP VIEW {s}.tract_points",
            "DROP VIEW {s}.tract_centres",
            "ALTER TABLE {s}.tracts DROP COLUMN tract_name",
            "ALTER TABLE {s}.tracts ALTER COLUMN geom TYPE geometry(MultiPolygon, 3857) "
            "USING ST_Transform(geom, 3857)",
            "CREATE VIEW {s}.tract_centres AS SELECT geoid, "
            "ST_Transform(ST_Centroid(geom), 4326) AS geom FROM {s}.tracts",
            f"GRANT SELECT ON {{s}}.tract_centres TO {READER_ROLE}",
            "ALTER TABLE {s}.cases ALTER COLUMN cases TYPE bigint",
            "UPDATE {s}.cases SET year = 2010 WHERE year = 2004",
            "ALTER TABLE {s}.docks ADD COLUMN capacity integer",
            "UPDATE {s}.docks SET status = 'demolished' WHERE dock_id = 3",
            "UPDATE {s}.sites SET geom = ST_Translate(geom, 10, 0)",
        ):
            conn.execute(sql.SQL(statement).format(s=sql.Identifier(COPY)))
    problems = check_catalog(extra.reader_url, catalog, todos=False)
    assert problems == [
        "cases.year: range [2000, 2004] in the catalog, [2000, 2010] in the database",
        "cases.cases: type integer in the catalog, bigint in the database",
        "docks.status: values 'demolished' in the database are not among the catalog's values",
        "docks.capacity: column integer in the database is not in the catalog",
        "tract_centres.geom: SRID 32618 in the catalog, 4326 in the database (sampled)",
        "tract_points: no table or view in schema byo_copy that this role can read",
        "tracts.tract_name: column missing in the database",
        "tracts.geom: SRID 32618 in the catalog, 3857 in the database",
        "sites.geom ~ tracts.geom: no sampled row of sites (20 sampled) matches a row of "
        "tracts by ST_Within",
    ]
    # the CLI prints the same lines and exits 1
    path = tmp_path / "copy.yaml"
    path.write_text(to_yaml(catalog))
    result = _run("catalog", "check", "--catalog", str(path), "--database-url", extra.reader_url)
    assert result.returncode == 1
    for line in problems:
        assert line in result.stdout.splitlines()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--database-url", "postgresql://nobody@127.0.0.1:1/none"], "cannot connect"),
        (["--schema", "no_such_schema"], "schema no_such_schema does not exist"),
    ],
)
def test_draft_bad_input_is_one_line_and_writes_nothing(database, tmp_path, args, message):
    out = tmp_path / "draft.yaml"
    if "--database-url" not in args:
        args = [*args, "--database-url", database.reader_url]
    result = _run("catalog", "draft", *args, "--out", str(out))
    assert result.returncode == 1
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert list(tmp_path.iterdir()) == []


def test_draft_refuses_to_overwrite_without_force(database, tmp_path):
    out = tmp_path / "draft.yaml"
    out.write_text("precious\n")
    result = _run("catalog", "draft", "--database-url", database.reader_url, "--schema", "demo",
                  "--out", str(out))
    assert result.returncode == 1
    assert "exists; pass --force" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert out.read_text() == "precious\n"
    forced = _run("catalog", "draft", "--database-url", database.reader_url, "--schema", "demo",
                  "--out", str(out), "--force")
    assert forced.returncode == 0, forced.stderr
    assert load_catalog(out).schema_name == "demo"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["draft.yaml"]  # no temporary left


def test_big_tables_are_estimated_and_sampled_not_scanned(extra):
    catalog = draft_catalog(extra.reader_url, [EXTRA], threshold=10)
    tracts = catalog.table("tracts")  # analysed in the fixture: reltuples = 30
    assert (tracts.expected_rows, tracts.rows_estimated) == (30, True)
    assert tracts.column("population").range == (100, 3000)  # pg_stats histogram bounds
    cases = catalog.table("cases")  # reltuples if autovacuum analysed it, else threshold + 1
    assert cases.rows_estimated and cases.expected_rows in (11, 150)
    geom = tracts.column("geom").geo
    assert geom is not None and geom.srid == 32618 and geom.extent is not None
    # estimated row counts are not checked; everything else still holds
    assert check_catalog(extra.reader_url, catalog, todos=False) == []


def test_spatial_joins_are_inferred_from_geometry_types_and_a_sample(extra):
    catalog = draft_catalog(extra.reader_url, [EXTRA])
    spatial = {(j.left, j.right): j for j in catalog.join_paths if j.kind == "spatial"}
    # docks (London) do not overlap the tracts (New York); point-point pairs are never joined
    assert set(spatial) == {("sites.geom", "tracts.geom"), ("tract_centres.geom", "tracts.geom"),
                            ("tract_points.geom", "tracts.geom")}
    sites = spatial[("sites.geom", "tracts.geom")]  # EPSG:4326 points in EPSG:32618 polygons
    assert (sites.predicate, sites.match_share, sites.sampled, sites.inferred) == (
        "ST_Within", 0.5, 20, True)
    assert "10 of 20 sampled sites rows lie within a tracts row" in sites.description
    points = spatial[("tract_points.geom", "tracts.geom")]
    assert (points.predicate, points.match_share, points.sampled) == ("ST_Within", 1.0, 30)
    assert "sites.geom ~ tracts.geom: inferred join path; confirm it (inferred: false) or " \
        "delete it" in catalog.todos()
    assert check_catalog(extra.reader_url, catalog, todos=False) == []


def test_a_bounded_sample_measures_the_match_share(extra):
    catalog = draft_catalog(extra.reader_url, [EXTRA])
    with read_only(extra.reader_url) as conn:
        rels = [r for r in introspect.relations(conn, [EXTRA]) if r.name in ("sites", "tracts")]
        sides = {s.rel.name: s for s in spatial_joins.sides(conn, rels, [
            catalog.table("sites"), catalog.table("tracts")])}
        assert sides["tracts"].bounds_wgs84 is not None
        matched, sampled = spatial_joins.match_share(conn, sides["sites"], sides["tracts"],
                                                     "ST_Within", rows=6) or (-1, -1)
        assert sampled == 6 and 0 <= matched <= 6  # a repeatable Bernoulli sample of 20 rows
        assert spatial_joins.match_share(conn, sides["sites"], sides["tracts"],
                                         "ST_Within") == (10, 20)
        assert spatial_joins.match_share(conn, sides["tracts"], sides["sites"],
                                         "ST_Intersects") == (10, 30)


def test_several_schemas_in_one_draft(extra):
    catalog = draft_catalog(extra.reader_url, [EXTRA, "demo"])
    assert catalog.schema_name == EXTRA
    assert catalog.table("tracts").schema_name is None
    assert catalog.table("us_states").schema_name == "demo"
    assert check_catalog(extra.reader_url, catalog) == catalog.todos()


def test_same_table_name_in_two_schemas_is_refused(extra):
    with pytest.raises(CatalogError, match="table Odd Name is in schemas byo_copy and byo_test"):
        draft_catalog(extra.reader_url, [EXTRA, COPY])


def test_the_draft_transaction_is_read_only(extra):
    with read_only(extra.owner_url) as conn, pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
        conn.execute(sql.SQL("DELETE FROM {}.docks").format(sql.Identifier(EXTRA)))
    with psycopg.connect(extra.reader_url) as conn:
        assert conn.execute(sql.SQL("SELECT count(*) FROM {}.docks").format(
            sql.Identifier(EXTRA))).fetchone() == (40,)


def test_draft_reads_raster_facts_from_raster_columns(database):
    demo = load_catalog()
    drafted = draft_catalog(database.reader_url, [demo.schema_name])
    for name in ("lux_elevation", "landsat_etm"):
        shipped = demo.table(name).raster_column.raster
        raster = drafted.table(name).raster_column.raster
        assert raster is not None, name
        assert (raster.srid, raster.width, raster.height, raster.tile_size) == (
            shipped.srid, shipped.width, shipped.height, shipped.tile_size)
        assert raster.pixel_size == pytest.approx(shipped.pixel_size, rel=1e-8)
        assert raster.extent == pytest.approx(shipped.extent, rel=1e-9)
        assert [(b.pixel_type, b.nodata) for b in raster.bands] == [
            (b.pixel_type, b.nodata) for b in shipped.bands]
        assert f"{name}.rast band 1: description is TODO" in drafted.todos()
