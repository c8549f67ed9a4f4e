"""The "Done when" questions: scripted runs on the demo database give the right numbers.

The scripted model supplies only the SQL and script text; the numbers come from the real
PostGIS and the real sandbox, and are checked against pandas/geopandas computations on the raw
tables.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from demo_cases import CASES

from flows.answer_question import answer_question
from geoask.maps.answer_frame import answer_frame
from geoask.maps.geopackage import write_geopackage
from geoask.models.scripted import ScriptedModel

pytestmark = [pytest.mark.db, pytest.mark.sandbox]
BY_NAME = {case.name: case for case in CASES}


@pytest.fixture(scope="module")
def finished() -> dict:
    """This module's runs by case name: tests reading one case's run share it."""
    return {}


@pytest.fixture
def ran(make_services, finished):
    """``ran(name)``: the case's run (result and services), run once per module."""
    def run(name: str):
        if name not in finished:
            finished[name] = run_case(name, make_services)
        return finished[name]

    return run


def run_case(name, make_services):
    case = BY_NAME[name]
    scripted = ScriptedModel(case.replies())
    services = make_services(scripted)
    result = answer_question(case.question, services=services)
    assert result.status == "answered", result.message
    assert all(scripted.remaining(role) == 0 for role in case.replies()), "unused replies"
    return result, services


def test_filter_rank(ran, reader, tmp_path):
    result, _ = ran("filter_rank")
    items = result.answer.data_payload["items"]
    assert [(item["id"], item["value"]) for item in items] == BY_NAME["filter_rank"].expected(
        reader)
    assert result.route == "sql_only"
    assert result.transitions == ["continue", "continue"]
    # postal codes only, no geometry exported: names and the map come from one lookup by key
    names = dict(reader.execute("SELECT state_abbr, state_name FROM demo.us_states").fetchall())
    assert result.names == {item["id"]: names[item["id"]] for item in items}
    assert any(url.endswith("map.html") for url in result.maps)
    # ... and the looked-up states are the run's artifact: gdf and the GeoPackage have them
    _, services = ran("filter_rank")
    frame = answer_frame(result.answer, services.registry.entries)  # AskResult.gdf
    assert frame is not None and frame.crs.to_epsg() == 4326
    assert list(frame["state_abbr"]) == [item["id"] for item in items]
    bounds = {code: box for code, *box in reader.execute(
        "SELECT state_abbr, ST_XMin(g), ST_YMin(g), ST_XMax(g), ST_YMax(g) FROM "
        "(SELECT state_abbr, ST_Transform(geom, 4326) AS g FROM demo.us_states) s").fetchall()}
    for code, shape in zip(frame["state_abbr"], frame.geometry, strict=True):
        assert list(shape.bounds) == pytest.approx(bounds[code], abs=1e-9)
    written = write_geopackage(services.registry.entries, str(tmp_path / "run.gpkg"))
    assert "map_us_states" in written.layers


def test_join_aggregation(ran, reader):
    result, _ = ran("join_aggregation")
    expected = BY_NAME["join_aggregation"].expected(reader)
    records = result.answer.data_payload["records"]
    assert {r["census_region"] for r in records} == set(expected)
    for record in records:
        mean, count = expected[record["census_region"]]
        assert record["mean_homicide_rate"] == pytest.approx(mean, rel=1e-9)
        assert record["counties"] == count


def test_temporal_comparison(ran, reader):
    result, _ = ran("temporal_comparison")
    assert result.answer.data_payload == BY_NAME["temporal_comparison"].expected(reader)


def test_buffer_topology_needs_python(ran, reader):
    result, services = ran("buffer_topology")
    expected = BY_NAME["buffer_topology"].expected(reader)
    assert result.answer.data_payload == {"value": expected, "unit": "count"}
    assert expected > 0
    assert result.route == "sql_then_python"
    assert result.transitions == ["continue", "continue", "continue"]
    folder = Path(services.store.folder)
    assert (folder / "sql-1" / "incidents.geojson").is_file()
    assert (folder / "sql-1" / "interstates.geojson").is_file()
    assert (folder / "python-1" / "script-1.py").is_file()
    saved = json.loads((folder / "python-1" / "result.json").read_text())
    assert saved["result"]["incident_count"] == expected


def test_statistics_needs_python(ran, reader):
    result, _ = ran("statistics")
    r, n = BY_NAME["statistics"].expected(reader)
    assert result.answer.data_payload["counties"] == n
    assert result.answer.data_payload["pearson_r"] == pytest.approx(round(r, 4), abs=1e-12)
    assert result.route == "sql_then_python"


def test_execution_log_is_saved_with_the_artifacts(ran):
    result, services = ran("buffer_topology")
    log = json.loads((Path(services.store.folder) / "execution_log.json").read_text())
    assert [s["stage"] for s in log["stages"]] == [
        "intent", "schema", "plan", "sql-1", "python-1", "review", "answer", "map"]
    assert [c["role"] for c in log["model_calls"]] == [
        "intent", "planner", "sql", "compute", "reviewer", "answer"]
    assert all(c["prompt_tokens"] > 0 and c["completion_tokens"] > 0
               for c in log["model_calls"])
    tools = [(t["stage"], t["tool"], t["status"]) for t in log["tool_trace"]]
    assert ("sql-1", "guard", "ok") in tools and ("python-1", "sandbox", "ok") in tools
    assert log["failed_calls"] == 0
    assert log["guardrail_retries"] == 0
    assert log["route"] == "sql_then_python"
    assert log["final_answer"] == result.answer.model_dump(mode="json")
    assert (Path(services.store.folder) / "summary.md").read_text().startswith("# How many")


def test_prefect_artifacts_have_stable_keys(ran):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId

    from geoask.records.artifact_publisher import flush

    result, _ = ran("statistics")
    assert result.flow_run_id
    assert flush(30) == 0  # posted in the background
    with get_client(sync_client=True) as client:
        artifacts = client.read_artifacts(artifact_filter=ArtifactFilter(
            flow_run_id=ArtifactFilterFlowRunId(any_=[result.flow_run_id])))
    keys = {artifact.key for artifact in artifacts}
    # one artifact per stage: the step's SQL, exports and previews, or script and run, together
    assert keys == {"run-intent", "run-plan", "sql-1-sql", "python-1-script", "run-summary"}


def test_cli_report_shows_answer_evidence_and_artifacts(ran, reader):
    from geoask.base.answer_text import rounded
    from geoask.base.result_view import result_text as format_result

    expected = BY_NAME["temporal_comparison"].expected(reader)
    result, services = ran("temporal_comparison")
    text = format_result(result)
    # a headline written from the payload, then the answer agent's summary, then the table
    headline, summary = text.splitlines()[:2]
    assert headline.startswith(f"income_1929 {expected['income_1929']}, ")
    assert summary.startswith("Per-capita income in Mississippi rose from "
                              f"{expected['income_1929']} USD")
    table = text.split("answer (object):\n")[1].split("\n\n")[0].splitlines()
    assert "change_pct" in table[0].split()
    assert str(rounded(expected["change_pct"], "pct")) in table[1].split()
    assert "sql-1: income_change: 1 rows" in text
    assert f"artifacts: {services.store.folder}" in text
