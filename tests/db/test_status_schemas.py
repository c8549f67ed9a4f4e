"""``geoask db status`` counts each table in the schema its catalog places it in."""

from __future__ import annotations

import pytest

from geoask.catalog.model import load_catalog
from geoask.db.status import database_status
from geoask.settings import get_settings

pytestmark = pytest.mark.db


def test_tables_are_counted_in_their_catalog_schema(database):
    settings = get_settings()
    catalog = load_catalog(settings.catalog_path)
    elsewhere = catalog.model_copy(update={"schema_name": "no_such_schema"})
    first, *rest = elsewhere.tables
    placed = elsewhere.model_copy(
        update={"tables": [first.model_copy(update={"schema_name": catalog.schema_name}), *rest]})

    assert all(n is not None for n in database_status(settings, catalog).row_counts.values())
    counted = database_status(settings, placed).row_counts
    assert counted[first.name] is not None and counted[first.name] > 0
    assert all(counted[table.name] is None for table in rest)
