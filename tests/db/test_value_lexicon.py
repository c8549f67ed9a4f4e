"""The value lexicon read from the live database at ``catalog index`` time (bounded, read-only)."""

from __future__ import annotations

import pytest

from geoask.catalog.model import load_catalog
from geoask.retrieval.service import index_values
from geoask.retrieval.values import DatabaseValueSource, ValueStore
from geoask.settings import get_settings

pytestmark = pytest.mark.db


@pytest.fixture(scope="module")
def catalog():
    return load_catalog(get_settings().catalog_path)


def test_distinct_values_come_from_the_database(database, catalog):
    values = DatabaseValueSource(database.reader_url).distinct_values(catalog)
    names = values["us_states.state_name"]
    assert len(names) == 51 and names == sorted(names) and "North Carolina" in names
    assert values["us_states.census_region"] == ["Midwest", "Northeast", "South", "West"]
    assert "us_counties.county_name" not in values  # about 1,800 names: over the bound
    assert not any(key.endswith((".geom", ".year")) for key in values)  # text columns only


def test_a_column_over_the_bound_is_left_out(database, catalog):
    values = DatabaseValueSource(database.reader_url, max_distinct=9).distinct_values(catalog)
    assert values["us_states.census_division"][0] == "East North Central"  # 9 values: kept
    assert "us_states.state_name" not in values


def test_tables_are_read_in_their_own_schema(database, catalog):
    first, *rest = catalog.tables
    moved = catalog.model_copy(update={"tables": [
        first.model_copy(update={"schema_name": "no_such_schema"}), *rest]})
    values = DatabaseValueSource(database.reader_url).distinct_values(moved)
    assert not any(key.startswith(f"{first.name}.") for key in values)
    assert "world_countries.continent" in values


def test_index_reads_once_then_uses_the_store(database, catalog, tmp_path):
    store = ValueStore(tmp_path)
    first = index_values(database.settings, catalog, store=store)
    assert first.state == "read" and first.warning is None
    again = index_values(database.settings, catalog, store=store)
    assert (again.state, again.values) == ("stored", first.values)
    assert index_values(database.settings, catalog, store=store, force=True).state == "read"
