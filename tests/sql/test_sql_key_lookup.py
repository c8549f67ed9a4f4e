"""The lookup by key against the demo database: names and geometry of an answer's codes."""

from __future__ import annotations

from geoask.catalog.model import load_catalog
from geoask.maps.key_lookup import look_up_keys
from geoask.settings import get_settings
from geoask.sql.executor import PostgresSqlRunner
from geoask.vocabulary.answers import FinalAnswer


def test_codes_of_states_counties_and_airports_get_their_names(reader_url):
    runner, catalog, settings = PostgresSqlRunner(reader_url), load_catalog(), get_settings()

    def names(answer_type: str, payload: dict, read: set[str]) -> tuple[str, dict] | None:
        keyed = look_up_keys(catalog, runner, settings, FinalAnswer(
            answer_type=answer_type, summary="", data_payload=payload), read)
        return None if keyed is None else (keyed.table, keyed.names)

    states = {"items": [{"rank": 1, "id": "CT", "value": 40640},
                        {"rank": 2, "id": "MA", "value": 37992}], "unit": "USD"}
    assert names("ranked_list", states, {"us_states", "state_income_annual"}) == (
        "demo.us_states", {"CT": "Connecticut", "MA": "Massachusetts"})
    counties = {"entities": [{"id": "37063"}, {"id": "37183"}]}
    assert names("entity_list", counties, {"nc_counties"}) == (
        "demo.nc_counties", {"37063": "Durham", "37183": "Wake"})
    airports = {"records": [{"iata": "LGA", "distance_km": 17.2}]}
    assert names("records", airports, set()) == ("demo.airports", {"LGA": "LaGuardia"})
    assert names("entity_list", {"entities": [{"id": "ZZZZ9"}]}, set()) is None


def test_the_lookup_geometry_is_the_tables_own_in_wgs84(reader_url):
    keyed = look_up_keys(load_catalog(), PostgresSqlRunner(reader_url), get_settings(),
                         FinalAnswer(answer_type="entity_list", summary="",
                                     data_payload={"entities": [{"id": "TX"}]}), {"us_states"})
    assert keyed is not None and keyed.features is not None
    west, south, east, north = keyed.features.total_bounds
    assert keyed.features.crs.to_epsg() == 4326
    assert -107 < west < -106 and 25 < south < 26.5 and -94 < east < -93 and 36 < north < 37
