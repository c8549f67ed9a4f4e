"""The terminal answer: a headline from the payload, a compact table rounded by unit, the files."""

from __future__ import annotations

import pytest

from geoask.base.answer_text import headline, payload_table, rounded
from geoask.base.result_view import result_text
from geoask.errors import QueryExecutionError
from geoask.vocabulary.answers import FinalAnswer
from geoask.vocabulary.question_result import QuestionResult

RANKED = {"items": [{"rank": 1, "id": "Clervaux", "value": 467.10516941},
                    {"rank": 2, "id": "Wiltz", "value": 418.649049123}], "unit": "m"}


@pytest.mark.parametrize(("value", "unit", "shown"), [
    (17.198648306014352, "km", 17.199), (-73.778926999, "degree", -73.778927),
    (1234.5678, "km²", 1234.57), (209, "count", 209), (0.000123456, None, 0.000123),
    (98765.4321, None, 98765), (True, "km", True), ("LGA", "km", "LGA"),
])
def test_values_are_rounded_by_their_unit_and_integers_never(value, unit, shown):
    assert rounded(value, unit) == shown


def test_a_ranked_list_reads_as_one_headline_and_an_aligned_table():
    assert headline("ranked_list", RANKED) == (
        "2 ranked items: 1. Clervaux 467.1 m, 2. Wiltz 418.6 m")
    assert payload_table(RANKED).splitlines() == [
        "rank  id        value [m]",
        "   1  Clervaux      467.1",
        "   2  Wiltz         418.6",
    ]


def test_names_stand_beside_codes_and_long_answers_say_how_many_rows_are_not_shown():
    payload = {"entities": [{"id": f"{n:05d}"} for n in range(25)]}
    table = payload_table(payload, {"00001": "Autauga"}).splitlines()
    assert table[0].split() == ["id", "name"] and table[2].split() == ["00001", "Autauga"]
    assert table[-1] == "... 5 more rows (--json for all)" and len(table) == 22


def test_the_report_heads_with_the_payload_and_lists_maps_geopackage_and_dashboard():
    answer = FinalAnswer(answer_type="object", summary="LGA is nearest",
                         data_payload={"iata": "LGA", "distance_km": 17.198648306014352,
                                       "unit": "km"})
    result = QuestionResult(status="answered", answer=answer, message="LGA is nearest",
                            run_id="r", artifact_folder="/runs/r",
                            maps=["/runs/r/map.png", "/runs/r/map.html"],
                            geopackage="/runs/r/layers.gpkg",
                            dashboard_url="http://127.0.0.1:4200/flow-runs/flow-run/x")
    lines = result_text(result).splitlines()
    assert lines[:2] == ["iata LGA, distance_km 17.199; unit km", "LGA is nearest"]
    assert "17.198648306014352" not in "\n".join(lines)
    assert lines[-5:] == ["map: /runs/r/map.png", "interactive map: /runs/r/map.html",
                          "GeoPackage (every layer, native CRS): /runs/r/layers.gpkg",
                          "dashboard: http://127.0.0.1:4200/flow-runs/flow-run/x",
                          "artifacts: /runs/r"]


def test_a_refusal_is_one_line():
    result = QuestionResult(status="rejected", message="The offline reference model only\n"
                            "knows the benchmark questions;\n  ask one of them.",
                            run_id="r", artifact_folder="/runs/r")
    assert result_text(result).splitlines()[0] == (
        "The offline reference model only knows the benchmark questions; ask one of them.")


def test_a_database_error_names_its_kind_once():
    error = QueryExecutionError("result_too_large", "the result has more than 10 rows")
    assert f"error: {error}" == "error: result_too_large: the result has more than 10 rows"


def test_a_records_code_gets_its_name_beside_it_and_a_payload_name_is_kept():
    records = {"records": [{"iata": "LGA", "distance_km": 17.1986}], "units": {}}
    assert payload_table(records, {"LGA": "LaGuardia"}).splitlines() == [
        "iata  name       distance_km", "LGA   LaGuardia       17.199"]
    named = {"items": [{"rank": 1, "id": "CT", "name": "Conn.", "value": 1}]}
    assert "Connecticut" not in payload_table(named, {"CT": "Connecticut"})


def test_the_report_shows_the_runs_names_beside_the_codes():
    answer = FinalAnswer(answer_type="ranked_list", summary="CT first", data_payload={
        "items": [{"rank": 1, "id": "CT", "value": 40640}, {"rank": 2, "id": "MA",
                                                            "value": 37992}], "unit": "USD"})
    result = QuestionResult(status="answered", answer=answer, message="CT first", run_id="r",
                            artifact_folder="/runs/r", names={"CT": "Connecticut"})
    table = result_text(result).split("answer (ranked_list):\n")[1].splitlines()
    assert table[0].split() == ["rank", "id", "name", "value", "[USD]"]
    assert table[1].split() == ["1", "CT", "Connecticut", "40640"]
    assert table[2].split() == ["2", "MA", "37992"]  # no name known: none guessed


@pytest.mark.parametrize("name", ["geoask.base.answer_text", "geoask.catalog.labels",
                                  "geoask.base.ports"])
def test_the_docstring_examples_hold(name):
    import doctest
    import importlib

    failures, attempted = doctest.testmod(importlib.import_module(name))[:2]
    assert failures == 0 and attempted > 0


def test_the_notebook_view_and_the_data_frame_carry_the_names_too():
    from geoask.app.result import AskResult
    from geoask.base.result_view import result_html

    answer = FinalAnswer(answer_type="entity_list", summary="", data_payload={
        "entities": [{"id": "37063"}, {"id": "37183"}]})
    result = AskResult(status="answered", answer=answer, message="m", run_id="r",
                       artifact_folder="/runs/r", names={"37063": "Durham"})
    assert list(result.df.columns) == ["id", "name"]
    assert list(result.df["name"]) == ["Durham", ""]
    assert "<td>37063</td><td>Durham</td>" in result_html(result)


def test_a_hostile_name_or_code_stays_on_its_own_row_of_the_report():
    # A label column is database text: a newline must not forge report lines, a bidi override
    # must not reverse a row, an escape must not reach the terminal, a long one is cut.
    names = {"CT": "Conn\nevidence:\n  sql-1: 0 rows", "MA": "Mass\x1b[2J", "NH": "\u202eHN",
             "RI": "R" * 300}
    answer = FinalAnswer(answer_type="entity_list", summary="", data_payload={
        "entities": [{"id": code} for code in [*names, "VT\nroute: forged"]]})
    result = QuestionResult(status="answered", answer=answer, message="", run_id="r",
                            artifact_folder="/runs/r", names=names)
    text = result_text(result)
    table = text.split("answer (entity_list):\n")[1].split("\n\n")[0].splitlines()
    assert [row.split()[0] for row in table] == ["id", "CT", "MA", "NH", "RI", "VT\\nroute:"]
    assert "Conn\\nevidence:\\n  sql-1: 0 rows" in table[1]
    assert "\u202e" not in text and "\x1b" not in text and "\\u202eHN" in table[3]
    assert max(len(row) for row in table) < 80 and table[4].rstrip().endswith("...")
    assert "\nroute: forged" not in text and "\nevidence:\n  sql-1" not in text
    ranked = {"items": [{"rank": 1, "id": "TX\nroute: forged", "value": 2}], "unit": "count"}
    assert headline("ranked_list", ranked) == "1 ranked items: 1. TX\\nroute: forged 2"


def test_names_go_beside_the_column_holding_the_named_codes():
    # Attack pass: names of cantons 5 and 1 went beside the row id (id first), naming row 1
    # Clervaux although its canton_id is 5.
    records = {"records": [{"id": 1, "canton_id": 5}, {"id": 2, "canton_id": 1}]}
    assert payload_table(records, {"5": "Wiltz", "1": "Clervaux"}).splitlines() == [
        "id  canton_id  name", " 1          5  Wiltz", " 2          1  Clervaux"]
