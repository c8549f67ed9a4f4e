"""The ``postgis`` allow-list derived from the connected database's catalog (issue 17)."""

from __future__ import annotations

import psycopg
import pytest

from geoask.sql import GuardContext, check_sql, find_violation
from geoask.sql.catalog_functions import read_only_extension_functions
from geoask.sql.executor import PostgresSqlRunner
from geoask.sql.functions import POSTGIS_READ_FUNCTIONS, REFUSED_FUNCTIONS


@pytest.fixture(scope="module")
def derived(reader_url: str) -> frozenset[str]:
    with psycopg.connect(reader_url) as connection:
        return read_only_extension_functions(connection)


def test_derived_set_holds_read_only_postgis_functions(derived):
    assert {"st_area", "st_intersects", "st_asgeojson", "st_union", "geomfromewkt"} <= derived
    assert len(derived) > 300


@pytest.mark.parametrize("name", [
    "addgeometrycolumn", "dropgeometrytable", "updategeometrysrid", "populate_geometry_columns",
    "find_srid", "st_estimatedextent", "lockrow", "postgis_full_version", "_st_intersects",
    "geometry_in", "geometry_gist_consistent_2d", "st_clusterkmeans", "pg_sleep",
])
def test_derived_set_leaves_out_management_internal_and_volatile_functions(derived, name):
    assert name not in derived


def test_no_deny_listed_name_is_derived(derived):
    assert not derived & REFUSED_FUNCTIONS


def test_the_built_list_covers_the_installed_postgis(derived):
    """``postgis_functions.txt`` is up to date: the catalog offers nothing the file lacks."""
    assert derived <= POSTGIS_READ_FUNCTIONS, sorted(derived - POSTGIS_READ_FUNCTIONS)


def test_a_catalog_function_is_allowed_without_reading_the_catalog_and_runs(reader_url):
    # issue 31: the built list answers when the catalog is not read (it used to be refused)
    sql = "SELECT GeomFromEWKT('SRID=4326;POINT(1 2)') AS g"
    hand_only = GuardContext(policy="postgis", row_cap=5)
    result = PostgresSqlRunner(reader_url).run(check_sql(sql, hand_only))
    assert result.row_count == 1
    assert find_violation(sql, GuardContext(policy="separated")) is not None
