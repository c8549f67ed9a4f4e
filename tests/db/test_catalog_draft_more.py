"""`geoask catalog draft` on a schema without foreign keys: unique keys and join cardinality,
joins on same-named non-key columns by sampled match share, a table comment used once, and a
per-relation time budget on a deliberately slow view."""

from __future__ import annotations

import psycopg
import pytest
from psycopg import sql

from geoask.catalog.check import check_catalog
from geoask.catalog.draft import draft_catalog
from geoask.catalog.model import TODO
from geoask.db.cluster import READER_ROLE

pytestmark = pytest.mark.db

MORE = "byo_more"

_DDL = """
CREATE SCHEMA {s};
CREATE TABLE {s}.counties (county_code text NOT NULL, county_name text NOT NULL, state text,
                           CONSTRAINT counties_code_key UNIQUE (county_code));
CREATE UNIQUE INDEX counties_name_idx ON {s}.counties (county_name);
CREATE INDEX counties_state_idx ON {s}.counties (state);
COMMENT ON TABLE {s}.counties IS 'Counties of a test state.';
CREATE TABLE {s}.parcels (parcel_no integer PRIMARY KEY, county_name text NOT NULL, name text,
                          zoning text, lot_sqft integer);
COMMENT ON TABLE {s}.parcels IS 'Tax parcels of a test state. Each row is one parcel with its '
    'county, lot size and owner name, from the assessor roll of 2020.';
CREATE VIEW {s}.county_summary AS
    SELECT county_name, count(*) AS parcels, sum(lot_sqft) AS lot_sqft
    FROM {s}.parcels GROUP BY county_name;
CREATE TABLE {s}.owners (name text, zoning text);
CREATE FUNCTION {s}.slowly(i integer) RETURNS integer LANGUAGE plpgsql VOLATILE
    AS $$ BEGIN PERFORM pg_sleep(0.2); RETURN i; END $$;
CREATE VIEW {s}.slow_parcels AS
    SELECT {s}.slowly(parcel_no) AS parcel_no, county_name FROM {s}.parcels;
INSERT INTO {s}.counties SELECT 'C' || i, 'County ' || i, 'S' FROM generate_series(1, 5) i;
INSERT INTO {s}.parcels SELECT i, 'County ' || (1 + i % 5), 'Owner ' || i, 'R' || i % 3, 1000 * i
    FROM generate_series(1, 40) i;
INSERT INTO {s}.owners SELECT 'Owner ' || i, 'Z' || i FROM generate_series(1, 10) i;
GRANT USAGE ON SCHEMA {s} TO {reader};
GRANT SELECT ON ALL TABLES IN SCHEMA {s} TO {reader};
"""


@pytest.fixture(scope="module")
def more(database):
    """Schema ``byo_more``: no foreign keys, a UNIQUE constraint, a unique index, a slow view."""
    with psycopg.connect(database.owner_url, autocommit=True) as conn:
        schema = sql.Identifier(MORE)
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(schema))
        conn.execute(sql.SQL(_DDL).format(s=schema, reader=sql.Identifier(READER_ROLE)))
        yield database
        conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(schema))


@pytest.fixture(scope="module")
def drafted(more):
    return draft_catalog(more.reader_url, [MORE], sample_budget_s=1.5)


def test_unique_constraints_and_indexes_are_drafted_and_give_cardinality(drafted):
    counties = drafted.table("counties")
    assert counties.primary_key == []
    assert counties.unique == [["county_code"], ["county_name"]]  # constraint, then index
    assert drafted.table("parcels").unique == []  # the primary key is not repeated
    paths = {(j.left, j.right): j for j in drafted.join_paths}
    onto_unique = paths[("parcels.county_name", "counties.county_name")]
    assert (onto_unique.kind, onto_unique.inferred) == ("attribute", True)
    assert onto_unique.cardinality == "many_to_one"
    assert drafted.join_cardinality(onto_unique) == "many_to_one"


def test_same_named_non_key_columns_join_by_sampled_match_share(drafted):
    paths = {(j.left, j.right): j for j in drafted.join_paths}
    grouped = paths[("parcels.county_name", "county_summary.county_name")]
    assert (grouped.kind, grouped.inferred) == ("attribute", True)
    assert (grouped.match_share, grouped.sampled) == (1.0, 5)
    assert grouped.cardinality == "many_to_many"  # a view states no key
    assert "5 of 5 sampled distinct parcels.county_name values occur in county_summary" in \
        grouped.description
    ends = {frozenset((j.left, j.right)) for j in drafted.join_paths}
    assert frozenset(("owners.name", "parcels.name")) not in ends  # a generic name
    assert frozenset(("owners.zoning", "parcels.zoning")) not in ends  # no value in common


def test_a_table_comment_is_used_once(drafted):
    counties, parcels = drafted.table("counties"), drafted.table("parcels")
    assert counties.from_database == {"title": "Counties of a test state"}
    assert list(parcels.from_database) == ["theme"]
    assert parcels.from_database["theme"].startswith(
        "Tax parcels of a test state. Each row is one parcel")
    for table in (counties, parcels):  # unreviewed: never the catalog's own text
        assert table.title == table.theme == TODO


def test_sampling_a_slow_view_stops_at_the_budget_and_is_noted(drafted):
    slow = drafted.table("slow_parcels")
    assert slow.notes == ["sampling stopped after 1.5 s (the per-relation budget, "
                          "--sample-budget); statistics it did not reach are left out or TODO"]
    assert slow.expected_rows == TODO  # the count was cancelled: not guessed
    assert f"slow_parcels: {slow.notes[0]}" in drafted.todos()
    assert all(not t.notes for t in drafted.tables if t.name != "slow_parcels")
    assert not any("slow_parcels" in j.left + j.right for j in drafted.join_paths
                   if j.match_share is not None)  # not probed after its budget ran out


def test_check_accepts_the_new_fields_and_reports_a_unique_key_the_database_lacks(more, drafted):
    assert check_catalog(more.reader_url, drafted, todos=False) == []
    counties = drafted.table("counties").model_copy(update={"unique": [["county_code"],
                                                                       ["state"]]})
    changed = drafted.model_copy(update={"tables": [
        counties if t.name == "counties" else t for t in drafted.tables]})
    assert check_catalog(more.reader_url, changed, todos=False) == [
        "counties: unique (state) in the catalog is not a UNIQUE constraint or unique index in "
        "the database"]
