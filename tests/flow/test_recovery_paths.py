"""Whole-flow tests of every recovery path, with scripted models, the real PostGIS and sandbox.

Each test asserts the exact sequence of transitions and the final answer, so a wrong
transition (a blind retry instead of a repair, a missing replan, an unbounded loop) fails it.
"""

from __future__ import annotations

import socket
import time

import pytest
from demo_cases import RANK_SQL, frame
from pydantic_ai import models
from pydantic_ai.exceptions import ModelHTTPError
from replies import (
    accept,
    answer_from,
    draft,
    intent,
    rejection,
    script,
    sql_plan,
    sql_python_plan,
)

from flows.answer_question import answer_question
from geoask.errors import ModelCallError
from geoask.models.llm import model_for
from geoask.models.retry import is_infrastructure_failure
from geoask.models.scripted import ScriptedModel
from geoask.run.variants import Variant
from geoask.settings import Settings
from geoask.vocabulary.answers import AnswerType
from geoask.vocabulary.plan import OperationIntent, Review, ReviewDecision

pytestmark = [pytest.mark.db, pytest.mark.sandbox]

RANK_QUESTION = "Which five states had the highest per-capita income in 1950?"
BAD_COLUMN_SQL = RANK_SQL.replace("i.per_capita_income_usd DESC", "i.income DESC")


def bad_drafts(count: int) -> list:
    """Drafts that each fail differently (a different unknown column): bounds, not repeats."""
    return [draft(("top_states", RANK_SQL.replace("i.per_capita_income_usd DESC",
                                                  f"i.income_{n} DESC"))) for n in range(count)]


def rank_intent():
    return intent("states by 1950 per-capita income", OperationIntent.RANK_TOP_K,
                  years=(1950,), top_k=5)


def rank_plan():
    return sql_plan("the five states with the highest per-capita income in 1950",
                    AnswerType.RANKED_LIST, ["state_abbr", "per_capita_income_usd"], top_k=5)


def rank_answer():
    def build(records):
        items = [{"rank": n, "id": r["state_abbr"], "value": r["per_capita_income_usd"]}
                 for n, r in enumerate(records, start=1)]
        return {"items": items, "unit": "USD", "order": "descending"}, "Top five states."
    return answer_from(AnswerType.RANKED_LIST, build)


def expected_top5(reader):
    data = frame(reader, "SELECT s.state_abbr, i.per_capita_income_usd FROM "
                         "demo.state_income_annual i JOIN demo.us_states s USING (state_fips) "
                         "WHERE i.year = 1950")
    top = data.sort_values(["per_capita_income_usd", "state_abbr"],
                           ascending=[False, True]).head(5)
    return [(r.state_abbr, int(r.per_capita_income_usd)) for r in top.itertuples()]


def ranked(result):
    return [(item["id"], item["value"]) for item in result.answer.data_payload["items"]]


def test_revise_after_an_sql_error(make_services, reader):
    scripted = ScriptedModel({
        "intent": [rank_intent()], "planner": [rank_plan()],
        "sql": [draft(("top_states", BAD_COLUMN_SQL)), draft(("top_states", RANK_SQL))],
        "reviewer": [accept()], "answer": [rank_answer()],
    })
    result = answer_question(RANK_QUESTION, services=make_services(scripted))
    assert result.status == "answered", result.message
    assert result.transitions == ["revise", "continue", "continue"]
    assert ranked(result) == expected_top5(reader)
    sql_prompts = [c.prompt for c in scripted.calls if c.role == "sql"]
    assert "undefined_column" in sql_prompts[1] and "i.income" in sql_prompts[1]
    assert "undefined_column" not in sql_prompts[0]


def test_a_result_past_the_row_cap_is_revised_never_answered_from(make_services, reader):
    """A result with more rows than the cap is a step failure with advice, not a cut sample."""
    def count(records):
        return {"value": records[0]["n"], "unit": "count"}, "States in the table."

    scripted = ScriptedModel({
        "intent": [intent("states", OperationIntent.AGGREGATE)],
        "planner": [sql_plan("count the states", AnswerType.SCALAR, ["n"])],
        "sql": [draft(("states", "SELECT state_abbr FROM demo.us_states")),
                draft(("states", "SELECT count(*) AS n FROM demo.us_states"))],
        "reviewer": [accept()], "answer": [answer_from(AnswerType.SCALAR, count)],
    })
    result = answer_question("How many states are in the table?",
                             services=make_services(scripted, sql_row_cap=10))
    assert result.status == "answered", result.message
    assert result.transitions == ["revise", "continue", "continue"]
    assert result.answer.data_payload["value"] == reader.execute(
        "SELECT count(*) FROM demo.us_states").fetchone()[0]
    retry_prompt = [c.prompt for c in scripted.calls if c.role == "sql"][1]
    assert "result_too_large" in retry_prompt and "more than 10 rows" in retry_prompt


def test_an_unknown_crs_ends_the_run_with_its_reason_not_a_crash(make_services):
    """SRID 0 outside lon/lat range, none declared: no rewrite helps, so no retry; one reason."""
    plan = sql_python_plan("export the points", "measure the points", AnswerType.SCALAR,
                           ["n"], geometry=True, granularity="point",
                           category="spatial_geometry")
    planar = ("SELECT 1 AS id, ST_SetSRID(ST_MakePoint(500000, 4000000), 0) AS geom")
    scripted = ScriptedModel({
        "intent": [intent("points", OperationIntent.AGGREGATE)], "planner": [plan],
        "sql": [draft(("pts", planar))],
    })
    services = make_services(scripted, variant=Variant.POSTGIS)
    result = answer_question("How far apart are the points?", services=services)
    assert result.status == "failed"
    assert result.transitions == ["terminate"]
    assert "SRID 0" in result.message and "pts" in result.message
    trace = [(e.tool, e.status, e.detail[:4]) for e in services.recorder.log.tool_trace]
    assert ("export", "error", "crs:") in trace
    assert [c.role for c in scripted.calls].count("sql") == 1  # no blind retry


REPAIR_QUESTION = "Which three incident categories were most frequent in New Haven?"
CATEGORY_SCRIPT = '''import json

import geopandas as gpd

incidents = gpd.read_file("/input/incidents.geojson")
counts = incidents["category"].value_counts()
top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
print(json.dumps({
    "status": "success",
    "summary": f"{len(incidents)} incidents in {counts.size} categories",
    "result": [{"category": c, "incidents": int(n)} for c, n in top],
}))
'''


def test_repair_by_dependency_backtracking(make_services, reader):
    plan = sql_python_plan("export New Haven incidents", "count incidents per category",
                           AnswerType.RANKED_LIST, ["category", "incidents"],
                           geometry=True, granularity="point", category="spatial_geometry")

    def build(rows):
        items = [{"rank": n, "id": r["category"], "value": r["incidents"]}
                 for n, r in enumerate(rows, start=1)]
        return {"items": items, "unit": "count", "order": "descending"}, "Top categories."

    scripted = ScriptedModel({
        "intent": [intent("incident categories", OperationIntent.AGGREGATE)],
        "planner": [plan],
        "sql": [draft(("incidents", "SELECT incident_id, geom FROM demo.new_haven_incidents")),
                draft(("incidents", "SELECT incident_id, category, geom "
                                    "FROM demo.new_haven_incidents"))],
        "compute": [script(CATEGORY_SCRIPT), script(CATEGORY_SCRIPT)],
        "reviewer": [accept()],
        "answer": [answer_from(AnswerType.RANKED_LIST, build)],
    })
    result = answer_question(REPAIR_QUESTION, services=make_services(scripted))
    assert result.status == "answered", result.message
    # python-1 fails on 'category' -> repair sql-1 (not a blind retry of python-1)
    assert result.transitions == ["continue", "repair", "continue", "continue", "continue"]
    assert scripted.roles_called() == ["intent", "planner", "sql", "compute", "sql", "compute",
                                       "reviewer", "answer"]
    repaired_prompt = [c.prompt for c in scripted.calls if c.role == "sql"][1]
    assert "Required fields" in repaired_prompt and "category" in repaired_prompt
    data = frame(reader, "SELECT category FROM demo.new_haven_incidents")
    counts = data["category"].value_counts()
    expected = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
    assert ranked(result) == [(c, int(n)) for c, n in expected]


def test_replan_asked_by_the_reviewer(make_services, reader):
    wrong_year = RANK_SQL.replace("i.year = 1950", "i.year = 1960")
    scripted = ScriptedModel({
        "intent": [rank_intent()], "planner": [rank_plan(), rank_plan()],
        "sql": [draft(("top_states", wrong_year)), draft(("top_states", RANK_SQL))],
        "reviewer": [Review(decision=ReviewDecision.REPLAN,
                            reason="the query filters 1960, the question asks for 1950"),
                     accept()],
        "answer": [rank_answer()],
    })
    result = answer_question(RANK_QUESTION, services=make_services(scripted))
    assert result.status == "answered", result.message
    assert result.transitions == ["continue", "replan", "continue", "continue"]
    planner_prompts = [c.prompt for c in scripted.calls if c.role == "planner"]
    assert "filters 1960" in planner_prompts[1] and "filters 1960" not in planner_prompts[0]
    assert ranked(result) == expected_top5(reader)


def test_off_topic_question_is_rejected(make_services):
    scripted = ScriptedModel({"intent": [rejection()]})
    result = answer_question("How are you today?", services=make_services(scripted))
    assert result.status == "rejected"
    assert result.answer is None
    assert "questions about the spatial data" in result.message
    assert result.transitions == []
    assert scripted.roles_called() == ["intent"]


def test_a_bound_exhausted_gives_an_honest_failure(make_services):
    scripted = ScriptedModel({
        "intent": [rank_intent()], "planner": [rank_plan(), rank_plan()], "sql": bad_drafts(6),
    })
    services = make_services(scripted, flow_max_replans=1)
    result = answer_question(RANK_QUESTION, services=services)
    assert result.status == "failed"
    assert result.transitions == ["revise", "revise", "replan", "revise", "revise", "terminate"]
    assert result.answer is None
    assert "could not answer" in result.message
    assert "all 1 replans are used" in result.message
    for plan_number in (1, 2):
        for attempt in (1, 2, 3):
            assert f"plan {plan_number}, sql-1 attempt {attempt}: database" in result.message
    assert "reviewer" not in scripted.roles_called()
    log = services.recorder.log
    assert log.outcome == "failed" and log.guardrail_retries == 5


def test_step_budget_bounds_the_run(make_services):
    scripted = ScriptedModel({"intent": [rank_intent()], "planner": [rank_plan()] * 3,
                              "sql": bad_drafts(4)})
    result = answer_question(RANK_QUESTION,
                             services=make_services(scripted, flow_max_step_runs=4))
    assert result.status == "failed"
    assert result.transitions == ["revise", "revise", "replan", "terminate"]
    assert "step budget of 4 step runs" in result.message


def test_the_same_error_twice_is_not_revised_again_and_not_after_a_new_plan(make_services):
    # Attack pass: a chat follow-up ran 9 attempts repeating one deterministic error.
    bad = draft(("top_states", BAD_COLUMN_SQL))
    scripted = ScriptedModel({
        "intent": [rank_intent()], "planner": [rank_plan(), rank_plan()], "sql": [bad] * 6,
    })
    result = answer_question(RANK_QUESTION, services=make_services(scripted))
    assert result.status == "failed"
    assert result.transitions == ["revise", "replan", "terminate"]
    assert "failed with the same error under a new plan" in result.message
    assert scripted.roles_called().count("sql") == 3


def test_a_model_endpoint_failure_ends_the_run_at_once(make_services):
    # The SDK already retried it (GEOASK_MODEL_MAX_RETRIES); Prefect does not retry it again
    # and no step attempt is spent on it.
    scripted = ScriptedModel({
        "intent": [rank_intent()], "planner": [rank_plan()],
        "sql": [ModelHTTPError(503, "scripted", body="down"), draft(("top_states", RANK_SQL))],
    })
    with pytest.raises(ModelCallError, match="answered HTTP 503 after retries") as caught:
        answer_question(RANK_QUESTION, services=make_services(scripted))
    assert caught.value.transient and is_infrastructure_failure(caught.value)
    assert scripted.roles_called() == ["intent", "planner", "sql"]


def test_an_unreachable_model_url_fails_fast_naming_it(make_services, monkeypatch):
    monkeypatch.setattr(models, "ALLOW_MODEL_REQUESTS", True)  # only to a closed local port
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    settings = Settings(model="openai-compatible:x", openai_base_url=url)
    services = make_services(ScriptedModel({}))
    services.models = lambda role: model_for(role, settings)
    begin = time.perf_counter()
    with pytest.raises(ModelCallError) as caught:
        answer_question(RANK_QUESTION, services=services)
    elapsed = time.perf_counter() - begin
    assert f"model endpoint {url} refused the connection" in str(caught.value)
    assert elapsed < 5.0, f"took {elapsed:.1f} s to fail"


def test_credentials_in_the_model_url_reach_no_message_and_no_log(make_services, monkeypatch,
                                                                  flow_settings):
    from pathlib import Path

    monkeypatch.setattr(models, "ALLOW_MODEL_REQUESTS", True)  # only to a closed local port
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings = Settings(model="openai-compatible:x",
                        openai_base_url=f"http://alice:pw-s3cret@127.0.0.1:{port}/v1")
    services = make_services(ScriptedModel({}))
    services.models = lambda role: model_for(role, settings)
    with pytest.raises(ModelCallError) as caught:
        answer_question(RANK_QUESTION, services=services)
    assert f"model endpoint http://alice:[redacted]@127.0.0.1:{port}/v1 refused" in str(
        caught.value)
    logs = [path.read_text() for path in Path(flow_settings.artifact_root).rglob(
        "execution_log.json") if f"127.0.0.1:{port}" in path.read_text()]
    assert len(logs) == 1 and "alice:[redacted]@" in logs[0]
    assert "pw-s3cret" not in str(caught.value) + logs[0]


def test_no_planner_variant_adds_python_when_the_sql_agent_asks(make_services, reader):
    from demo_cases import CORRELATION_SCRIPT

    def build(result):
        return ({"records": [{"pearson_r": round(result["pearson_r"], 4),
                              "counties": result["counties"]}]}, "The correlation.")

    scripted = ScriptedModel({
        "intent": [intent("correlation of homicide rate and poverty", OperationIntent.STATISTICS,
                          years=(1990,))],
        "sql": [draft(("county_1990", "SELECT county_fips, homicide_rate_per_100k, "
                                      "families_below_poverty_pct FROM demo.county_decadal_stats "
                                      "WHERE census_year = 1990"), needs_python=True)],
        "compute": [script(CORRELATION_SCRIPT, "pandas")],
        "reviewer": [accept()], "answer": [answer_from(AnswerType.RECORDS, build)],
    })
    result = answer_question("Correlation of homicide and poverty in 1990?",
                             services=make_services(scripted, variant=Variant.NO_PLANNER))
    assert result.status == "answered", result.message
    assert "planner" not in scripted.roles_called()
    assert result.route == "sql_then_python"
    assert result.transitions == ["continue", "continue", "continue"]
    assert result.answer.data_payload["records"][0]["counties"] == 3085


def test_postgis_variant_allows_spatial_sql(make_services, reader):
    from pyproj import Geod
    from shapely import from_wkb

    area_sql = ("SELECT state_abbr, ST_Area(geom::geography) / 1e6 AS area_km2 "
                "FROM demo.us_states ORDER BY area_km2 DESC LIMIT 3")

    def build(records):
        items = [{"rank": n, "id": r["state_abbr"], "value": r["area_km2"]}
                 for n, r in enumerate(records, start=1)]
        return {"items": items, "unit": "km2", "order": "descending"}, "Largest states."

    scripted = ScriptedModel({
        "intent": [intent("states by area", OperationIntent.RANK_TOP_K, top_k=3)],
        "planner": [sql_plan("the three largest states by area", AnswerType.RANKED_LIST,
                             ["state_abbr", "area_km2"], top_k=3)],
        "sql": [draft(("largest_states", area_sql))],
        "reviewer": [accept()], "answer": [answer_from(AnswerType.RANKED_LIST, build)],
    })
    result = answer_question("Which three states are the largest?",
                             services=make_services(scripted, variant=Variant.POSTGIS))
    assert result.status == "answered", result.message
    geod = Geod(ellps="WGS84")
    rows = reader.execute("SELECT state_abbr, ST_AsBinary(geom) FROM demo.us_states").fetchall()
    areas = {abbr: abs(geod.geometry_area_perimeter(from_wkb(bytes(wkb)))[0]) / 1e6
             for abbr, wkb in rows}
    expected = sorted(areas, key=areas.get, reverse=True)[:3]
    assert [item["id"] for item in result.answer.data_payload["items"]] == expected
    for item in result.answer.data_payload["items"]:
        assert item["value"] == pytest.approx(areas[item["id"]], rel=1e-3)
