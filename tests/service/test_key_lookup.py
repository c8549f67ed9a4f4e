"""The lookup by key: which code columns an answer's values may name, one guarded query, and
the names and features it gives (a canned runner here; the live database in
tests/sql/test_sql_key_lookup.py)."""

from __future__ import annotations

import shapely
from shapely.geometry import Point

from geoask.catalog.model import load_catalog
from geoask.errors import QueryExecutionError
from geoask.maps import answer_map
from geoask.maps.answer_values import LABEL_COLUMN
from geoask.maps.key_lookup import (
    KeyedFeatures,
    best_match,
    candidates,
    look_up_keys,
    lookup_sql,
    tables_read_by,
)
from geoask.records.run_artifacts import RunArtifacts
from geoask.settings import get_settings
from geoask.sql.executor import QueryResult, StaticSqlRunner
from geoask.vocabulary.answers import FinalAnswer
from geoask.vocabulary.artifacts import ArtifactRef

CATALOG = load_catalog()


def ranked(*ids: str | int) -> FinalAnswer:
    items = [{"rank": r, "id": i, "value": 10.0 * r} for r, i in enumerate(ids, start=1)]
    return FinalAnswer(answer_type="ranked_list", summary="",
                       data_payload={"items": items, "unit": "USD"})


def columns(found) -> set[tuple[str, str]]:
    return {(c.table.name, c.code.name) for c in found}


def test_a_value_is_looked_up_only_where_its_type_width_and_range_fit():
    assert columns(candidates(CATALOG, ranked("CT", "MA"))) == {
        ("us_states", "state_abbr"), ("airports", "iata"), ("world_countries", "iso_a3")}
    # five digits: not a char(2) state code, nor an integer column
    assert ("us_states", "state_fips") not in columns(candidates(CATALOG, ranked("37063")))
    assert all(c.code.name in ("canton_id", "road_id")
               for c in candidates(CATALOG, ranked(3, 5)))


def test_a_records_field_names_only_a_code_column_of_its_own_name():
    answer = FinalAnswer(answer_type="records", summary="", data_payload={
        "records": [{"year": 2000, "canton_id": 3, "mean_m": 1.5}]})
    assert columns(candidates(CATALOG, answer)) == {("lux_cantons", "canton_id")}


def test_the_tables_the_run_read_are_preferred():
    found = candidates(CATALOG, ranked("CT"), read={"us_states", "state_income_annual"})
    assert columns(found) == {("us_states", "state_abbr")}
    sql = "SELECT s.state_abbr FROM demo.us_states s JOIN demo.state_income_annual i USING (x)"
    steps = [[ArtifactRef(name="top", url="/r/top.json", format="json", sql=sql)]]
    assert tables_read_by(steps) == {"us_states", "state_income_annual"}


def test_one_guarded_query_gives_names_and_features_in_wgs84():
    found = candidates(CATALOG, ranked("CT", "MA"), read={"us_states"})
    sql = lookup_sql(CATALOG, found)
    assert sql.count("SELECT") == 1 and "\"state_abbr\" IN ('CT', 'MA')" in sql
    ct = shapely.set_srid(Point(-72.7, 41.6), 4326)
    rows = [(0, "CT", "Connecticut", ct), (0, "MA", "Massachusetts", Point(-71.8, 42.3))]
    runner = StaticSqlRunner({sql: QueryResult((), rows, 4, sql)})
    keyed = look_up_keys(CATALOG, runner, get_settings(), ranked("CT", "MA"), {"us_states"})
    assert runner.executed[0].row_cap == 4  # bounded: twice the codes looked up
    assert keyed is not None and keyed.table == "demo.us_states" and keyed.code == "state_abbr"
    assert keyed.names == {"CT": "Connecticut", "MA": "Massachusetts"}
    assert keyed.features is not None and keyed.features.crs.to_epsg() == 4326
    assert list(keyed.features["state_abbr"]) == ["CT", "MA"]


def test_a_code_with_two_names_and_a_tie_between_tables_are_not_named():
    found = candidates(CATALOG, ranked("CT", "MA"))
    rows = [(0, "CT", "Connecticut", None), (0, "CT", "Conn.", None),
            (0, "MA", "Massachusetts", None)]
    keyed = best_match(CATALOG, found, rows)
    assert keyed is not None and keyed.names == {"MA": "Massachusetts"}
    # Attack pass: the map's legend said nothing of the answer's code it could not draw
    point = [(0, "CT", "Connecticut", Point(-72.7, 41.6)), (0, "CT", "Conn.", Point(-72, 41)),
             (0, "MA", "Massachusetts", Point(-71.8, 42.3))]
    assert "; 1 of the 2 codes not drawn" in best_match(CATALOG, found, point).how
    tied = [(0, "CT", "Connecticut", None), (1, "CT", "Cape Town", None)]
    assert best_match(CATALOG, found, tied) is None
    agreeing = [(0, "CT", "Connecticut", None), (1, "CT", "Connecticut", None)]
    assert best_match(CATALOG, found, agreeing).names == {"CT": "Connecticut"}


def test_a_failed_lookup_gives_no_names_and_raises_nothing():
    error = QueryExecutionError("statement_timeout", "canceling statement")
    sql = lookup_sql(CATALOG, candidates(CATALOG, ranked("CT")))
    runner = StaticSqlRunner({sql: error})
    assert look_up_keys(CATALOG, runner, get_settings(), ranked("CT")) is None
    assert look_up_keys(CATALOG, runner, get_settings(), FinalAnswer(
        answer_type="scalar", summary="", data_payload={"value": 3})) is None


def test_an_answer_without_geometry_is_mapped_from_the_lookup_and_says_so(tmp_path):
    store = RunArtifacts(str(tmp_path), "run")
    url = store.write_text("sql-1/top.json", '[{"state_abbr": "CT", "income": 40640}]')
    steps = [[ArtifactRef(name="top", url=url, format="json")]]
    answer = ranked("CT", "MA")
    assert answer_map.draw_answer_maps(store, steps, answer, "top states") is None
    square = shapely.box(-73.7, 41.0, -71.8, 42.05)
    frame = best_match(CATALOG, candidates(CATALOG, answer, {"us_states"}),
                       [(0, "CT", "Connecticut", square),
                        (0, "MA", "Massachusetts", shapely.box(-73.5, 41.2, -69.9, 42.9))])
    assert isinstance(frame, KeyedFeatures)
    drawn = []
    original = answer_map.render_answer_map
    answer_map.render_answer_map = lambda features, *a: drawn.append(features) or b"png"
    try:
        maps = answer_map.draw_answer_maps(store, steps, answer, "top states", None, frame)
    finally:
        answer_map.render_answer_map = original
    assert maps is not None and "looked up in demo.us_states by state_abbr" in drawn[0].how
    assert list(drawn[0].answer[LABEL_COLUMN]) == ["1. Connecticut 10 USD",
                                                   "2. Massachusetts 20 USD"]
    assert drawn[0].context == {} and drawn[0].looked_up == "demo.us_states"
    assert "demo.us_states" in (tmp_path / "run" / "map.html").read_text()


def test_a_long_code_list_is_looked_up_whole_and_an_overlong_value_not_at_all():
    # Attack pass: 1,500 three-letter codes (airports and countries alike) made a 20,500-
    # character lookup, over the guard's text limit for model SQL: no names, no map.
    import itertools
    import string

    codes = ["".join(t) for t in itertools.islice(
        itertools.product(string.ascii_uppercase, repeat=3), 1500)]
    answer = FinalAnswer(answer_type="entity_list", summary="",
                         data_payload={"entities": [{"id": c} for c in codes]})
    sql = lookup_sql(CATALOG, candidates(CATALOG, answer))
    assert len(sql) > get_settings().sql_max_chars
    rows = [(0, code, f"Airport {code}", None) for code in codes]
    runner = StaticSqlRunner({sql: QueryResult((), rows, len(rows), sql)})
    keyed = look_up_keys(CATALOG, runner, get_settings(), answer)
    assert keyed is not None and keyed.table == "demo.airports" and len(keyed.names) == 1500
    assert candidates(CATALOG, ranked("A" * 65)) == []  # a code is short; the text stays bounded


def test_a_records_row_id_is_not_taken_for_the_code_beside_it():
    # Attack pass: records {id: 1..3, canton_id: 5, 5, 1} looked up the row ids as canton ids
    # (canton_id ends with _id) and won with more distinct values: row 1 named Clervaux.
    answer = FinalAnswer(answer_type="records", summary="", data_payload={"records": [
        {"id": 1, "canton_id": 5}, {"id": 2, "canton_id": 5}, {"id": 3, "canton_id": 1}]})
    found = candidates(CATALOG, answer, read={"lux_cantons"})
    assert [(c.field, c.code.name, c.values) for c in found] == [("canton_id", "canton_id", (5, 1))]
