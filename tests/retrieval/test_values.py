"""The value lexicon's pieces that need no database: text columns, fingerprints, the store."""

import pytest

from geoask.retrieval.service import index_values
from geoask.retrieval.values import ValueStore, database_fingerprint, is_text_column
from geoask.settings import get_settings


@pytest.mark.parametrize(
    ("column_type", "expected"),
    [("text", True), ("char(2)", True), ("varchar(10)", True), ("integer", False),
     ("geometry(Point,4326)", False), ("double precision", False)],
)
def test_is_text_column(catalog, column_type, expected):
    column = catalog.table("us_states").columns[0].model_copy(update={"type": column_type})
    assert is_text_column(column) is expected


def test_fingerprint_names_the_database_without_credentials():
    first = database_fingerprint("postgresql://reader:secret@db.example:5433/parcels")
    assert first == "db.example:5433/parcels"
    assert database_fingerprint("host=db.example port=5433 dbname=parcels user=x") == first
    assert "secret" not in first


def test_store_is_keyed_by_catalog_database_and_bound(catalog, tmp_path):
    store = ValueStore(tmp_path)
    values = {"us_states.state_name": ["Georgia", "Texas"]}
    store.write(catalog, "h:1/a", 200, values)
    assert store.read(catalog, "h:1/a", 200) == values
    assert store.read(catalog, "h:1/b", 200) is None  # another database
    assert store.read(catalog, "h:1/a", 10) is None  # another bound
    changed = catalog.model_copy(update={"description": "Another catalog."})
    assert store.read(changed, "h:1/a", 200) is None


def test_unreachable_database_is_a_warning_not_a_crash(catalog, tmp_path):
    settings = get_settings().model_copy(update={
        "database_url": "postgresql://nobody:x@127.0.0.1:9/none", "home": tmp_path})
    result = index_values(settings, catalog)
    assert result.state == "unavailable" and result.values == {}
    assert "127.0.0.1:9/none" in (result.warning or "")
    assert "geoask catalog index" in (result.warning or "")
    assert not list(tmp_path.rglob("column_values-*.json"))  # nothing stored: retried next time


def test_stored_values_are_used_without_the_database(catalog, tmp_path):
    settings = get_settings().model_copy(update={
        "database_url": "postgresql://nobody:x@127.0.0.1:9/none", "home": tmp_path})
    ValueStore(tmp_path / "retrieval").write(
        catalog, "127.0.0.1:9/none", settings.retrieval_value_max_distinct,
        {"us_states.state_name": ["Georgia"]})
    result = index_values(settings, catalog, stored_only=True)
    assert (result.state, result.values) == ("stored", {"us_states.state_name": ["Georgia"]})
