"""Unit tests of the flow's pure helpers: variants, evidence checks, ScriptedModel, CLI."""

from __future__ import annotations

import psycopg
import pytest
from pydantic import BaseModel
from pydantic_ai import Agent
from pydantic_ai.exceptions import ModelHTTPError
from replies import constraints, intent, sql_plan, sql_python_plan
from typer.testing import CliRunner

from agents.planner import PlannerDeps, plan_errors
from geoask.errors import ConfigurationError, ModelCallError, QueryRejectedError
from geoask.models.retry import is_transient
from geoask.models.scripted import ScriptedModel, ScriptExhaustedError
from geoask.run.variants import (
    VARIANTS,
    Variant,
    parse_variant,
    plan_allowance,
    single_sql_plan,
    with_python_step,
)
from geoask.sql.context import SpatialPolicy
from geoask.vocabulary.answers import AnswerType
from geoask.vocabulary.evidence import records_from_artifact, sql_evidence, unsupported_numbers
from geoask.vocabulary.plan import OperationIntent, Plan, PlanStep

TWO_STEP = sql_python_plan("export", "compute", AnswerType.SCALAR, ["n"])
ONE_STEP = sql_plan("rows", AnswerType.RECORDS, ["a"])
PYTHON_FIRST = Plan(steps=[PlanStep(id="python-1", objective="o",
                                    expected_output="e", success_criteria="s")],
                    constraints=constraints(computation=True), answer_type=AnswerType.SCALAR)
BAD_INPUT = Plan(steps=[PlanStep(id="sql-1", objective="o",
                                 expected_output="e", success_criteria="s"),
                        PlanStep(id="python-1", objective="o",
                                 inputs=["sql-9"], expected_output="e", success_criteria="s")],
                 constraints=constraints(computation=True), answer_type=AnswerType.SCALAR)

PLAN_CASES = [
    ("two steps in FULL", TWO_STEP, Variant.FULL, []),
    ("two steps in POSTGIS", TWO_STEP, Variant.POSTGIS, []),
    ("python in NO_STCA", TWO_STEP, Variant.NO_STCA,
     ["variant NO_STCA has no Python steps; do python-1 in SQL instead"]),
    ("python in BASE", TWO_STEP, Variant.BASE,
     ["variant BASE has no Python steps; do python-1 in SQL instead"]),
    ("sql only in NO_STCA", ONE_STEP, Variant.NO_STCA, []),
    ("python first", PYTHON_FIRST, Variant.FULL,
     ["the first step must be an SQL step, not python-1",
      "Python steps must list the SQL steps they read in inputs: python-1"]),
    ("unknown input", BAD_INPUT, Variant.FULL, ["step python-1 reads sql-9, not an earlier step"]),
]


def plan_violations(plan: Plan, variant: Variant) -> list[str]:
    """The planner's rules on ``plan`` under what ``variant`` allows (a lookup question)."""
    deps = PlannerDeps(question="q", intent=intent("t", OperationIntent.LOOKUP), schema_text="",
                       tables=[], allowance=plan_allowance(variant))
    return plan_errors(plan, deps)


@pytest.mark.parametrize(("title", "plan", "variant", "expected"), PLAN_CASES,
                         ids=[c[0] for c in PLAN_CASES])
def test_plan_violations(title, plan, variant, expected):
    assert plan_violations(plan, variant) == expected


@pytest.mark.parametrize(("name", "variant"), [("full", Variant.FULL), ("no-stca", Variant.NO_STCA),
                                               ("No_Planner", Variant.NO_PLANNER)])
def test_parse_variant(name, variant):
    assert parse_variant(name) is variant


def test_unknown_variant_names_the_choices():
    with pytest.raises(ConfigurationError, match="FULL, POSTGIS, NO_STCA, NO_PLANNER, BASE"):
        parse_variant("fast")


def test_variant_table():
    assert VARIANTS[Variant.FULL].policy is SpatialPolicy.SEPARATED
    assert VARIANTS[Variant.POSTGIS].policy is SpatialPolicy.POSTGIS
    assert not VARIANTS[Variant.NO_PLANNER].use_planner and not VARIANTS[Variant.BASE].use_planner
    assert VARIANTS[Variant.BASE].python_steps == "no"


def test_single_sql_plan_and_python_extension():
    plan = single_sql_plan("top 3?", intent("t", OperationIntent.RANK_TOP_K, top_k=3))
    assert [s.id for s in plan.steps] == ["sql-1"] and plan.steps[0].top_k == 3
    assert plan.answer_type is AnswerType.RANKED_LIST
    extended = with_python_step(plan, "top 3?")
    assert [(s.id, s.inputs) for s in extended.steps] == [("sql-1", []), ("python-1", ["sql-1"])]
    assert extended.constraints.computation_needed
    assert with_python_step(extended, "q") is extended


NUMBER_CASES = [
    ("exact", {"value": 286}, "income_1929: 286", []),
    ("rounded to shown precision", {"value": 0.4123}, "r = 0.41234567", []),
    ("rank is not a number claim", {"items": [{"rank": 1, "value": 5.5}]}, "5.5", []),
    ("invented", {"value": 1000}, "income 286", [1000.0]),
    ("badly rounded", {"value": 0.42}, "r = 0.41234567", [0.42]),
    ("booleans ignored", {"value": True}, "", []),
]


@pytest.mark.parametrize(("title", "payload", "evidence", "expected"), NUMBER_CASES,
                         ids=[c[0] for c in NUMBER_CASES])
def test_unsupported_numbers(title, payload, evidence, expected):
    assert unsupported_numbers(payload, evidence) == expected


def test_evidence_lists_small_results_and_previews_large_ones():
    geojson = ('{"type": "FeatureCollection", "features": [{"type": "Feature", "geometry": null,'
               ' "properties": {"id": 1}}]}')
    records = records_from_artifact(geojson, "geojson")
    assert records == [{"id": 1}]
    assert 'records (JSON): [{"id": 1}]' in sql_evidence("a", records, "PREVIEW", 5)
    many = [{"id": n} for n in range(10)]
    assert "PREVIEW" in sql_evidence("a", many, "PREVIEW", 5)
    assert records_from_artifact(geojson.encode("utf-8"), "geojson") == [{"id": 1}]
    assert "records (JSON)" not in sql_evidence("a", many, "PREVIEW", 5)


def test_evidence_reads_a_geoparquet_export_from_its_bytes(tmp_path):
    import shapely

    from geoask.sql.executor import QueryResult, ResultColumn
    from geoask.sql.export import export_result

    rows = [(n, shapely.set_srid(shapely.Point(n, 1), 4326)) for n in range(12)]
    result = QueryResult((ResultColumn("n", "integer"), ResultColumn("geom", "geometry", True)),
                         rows, 100, "SELECT n, geom FROM t")
    exported = export_result(result, str(tmp_path), columnar_rows=10)
    records = records_from_artifact((tmp_path / "result.parquet").read_bytes(), exported.format)
    assert records == [{"n": n} for n in range(12)]


class Yes(BaseModel):
    n: int


class No(BaseModel):
    reason: str


def test_scripted_model_picks_the_output_tool_of_each_reply():
    agent = Agent(output_type=[Yes, No], name="demo", defer_model_check=True)
    scripted = ScriptedModel({"demo": [No(reason="x"), lambda prompt: Yes(n=len(prompt))]})
    assert agent.run_sync("hi", model=scripted.model("demo")).output == No(reason="x")
    assert agent.run_sync("four", model=scripted.model("demo")).output == Yes(n=4)
    assert [c.output for c in scripted.calls] == ["No", "Yes"]
    assert all(c.prompt_tokens > 0 for c in scripted.calls)
    with pytest.raises(ScriptExhaustedError):
        agent.run_sync("again", model=scripted.model("demo"))


def test_scripted_model_raises_scripted_exceptions():
    agent = Agent(output_type=Yes, name="demo", defer_model_check=True)
    scripted = ScriptedModel({"demo": [ModelHTTPError(503, "m", body="down")]})
    with pytest.raises(ModelHTTPError) as caught:
        agent.run_sync("hi", model=scripted.model("demo"))
    assert caught.value.status_code == 503


@pytest.mark.parametrize("error", [
    ModelHTTPError(429, "m"), ModelHTTPError(503, "m"), ModelHTTPError(400, "m"),
    ModelHTTPError(401, "m"), ModelCallError("sql", "down", transient=True),
])
def test_prefect_never_retries_model_errors(error):
    # the provider SDK retried the transient ones already (GEOASK_MODEL_MAX_RETRIES)
    assert is_transient(error) is False


def test_ask_without_a_model_says_how_to_configure_one(monkeypatch):
    from geoask.app.cli import app
    from geoask.settings import get_settings

    for name in ("GEOASK_MODEL", "GEOASK_MODEL_INTENT", "GEOASK_MODEL_PLANNER", "GEOASK_MODEL_SQL",
                 "GEOASK_MODEL_COMPUTE", "GEOASK_MODEL_REVIEWER", "GEOASK_MODEL_ANSWER"):
        monkeypatch.delenv(name, raising=False)
    get_settings.cache_clear()
    result = CliRunner().invoke(app, ["ask", "How many airports are in Texas?"])
    get_settings.cache_clear()
    assert result.exit_code != 0
    assert isinstance(result.exception, ConfigurationError)
    assert "GEOASK_MODEL" in str(result.exception)
    assert "GEOASK_OPENAI_BASE_URL" in str(result.exception)


def test_ask_cli_exits_1_with_a_message_and_no_traceback():
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = {k: v for k, v in os.environ.items() if not k.startswith("GEOASK_MODEL")}
    geoask = Path(sys.executable).with_name("geoask")
    done = subprocess.run([str(geoask), "ask", "How many airports are in Texas?"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 1
    assert done.stderr.startswith("error: no language model is configured")
    assert "Traceback" not in done.stderr + done.stdout


@pytest.mark.parametrize(("error", "expected"), [
    (ModelCallError("sql", "endpoint down", transient=True), "ModelCallError"),
    (psycopg.OperationalError("server closed the connection"), "DatabaseError"),
    (ConfigurationError("set X"), "ConfigurationError"),
    (ValueError("bug"), None),
])
def test_errors_that_end_a_run_become_user_errors(error, expected):
    from flows.answer_question import user_error

    translated = user_error(error)
    assert (type(translated).__name__ if translated else None) == expected


@pytest.mark.parametrize(("variant", "geometry_needed", "expected"), [
    (Variant.FULL, False, False),  # separated SQL cannot compute with geometry, nor export it
    (Variant.FULL, True, True),
    (Variant.POSTGIS, False, True),  # spatial SQL computes with geometry
    (Variant.NO_PLANNER, False, True),  # the SQL agent may still ask for a Python step
    (Variant.BASE, False, False),
])
def test_geometry_is_shown_to_sql_only_when_useful(variant, geometry_needed, expected):
    from types import SimpleNamespace

    from tasks.steps import _geometry_useful

    plan = sql_plan("count", AnswerType.SCALAR, ["n"], geometry=geometry_needed)
    services = SimpleNamespace(config=VARIANTS[variant])
    assert _geometry_useful(services, plan) is expected


def test_ask_refuses_a_question_that_is_not_utf8():
    from geoask.app.cli import app

    # a non-UTF-8 argument byte reaches Python as a lone surrogate
    result = CliRunner().invoke(app, ["ask", "How many airports \udcff in Texas?",
                                      "--model", "reference"])
    assert result.exit_code == 2  # a usage error of QUESTION, as an empty or too long one
    assert "not valid UTF-8" in result.output


@pytest.mark.parametrize(("arguments", "message"), [
    (["ask", "   ", "--model", "reference"], "the question is empty"),
    (["ask", "Which airport? " * 300, "--model", "reference"], "one shorter question"),
    (["ask", "How many airports?", "--variant", "WEIRD"], "unknown variant 'WEIRD'"),
    (["bench", "--variant", "WEIRD", "--limit", "1"], "unknown variant 'WEIRD'"),
    # refused before the server starts or runs anything (it refused after a failed run)
    (["bench", "--via-api", "--model", "reference", "--limit", "1", "--out", "/tmp/elsewhere"],
     "out_dir '/tmp/elsewhere' is outside the folders this server serves"),
])
def test_usage_errors_exit_2_before_any_work(arguments, message):
    from geoask.app.cli import app

    result = CliRunner().invoke(app, arguments)
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.replace("│", " ").split())


def test_bench_with_an_unusable_model_fails_before_running_anything(tmp_path, monkeypatch):
    from geoask.app.cli import app

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = CliRunner().invoke(app, ["bench", "--model", "openai:gpt-4o", "--limit", "1",
                                      "--out", str(tmp_path / "b")])
    assert isinstance(result.exception, ConfigurationError), result.output
    assert not (tmp_path / "b").exists()  # nothing saved that a rerun would resume


def test_report_of_a_rejected_question_names_no_route():
    from flows.answer_question import QuestionResult
    from geoask.base.result_view import result_text as format_result

    rejected = QuestionResult(status="rejected", message="not a question about the data",
                              run_id="r", artifact_folder="/runs/r")
    text = format_result(rejected)
    assert "route:" not in text and text.splitlines()[-1] == "artifacts: /runs/r"
    answered = rejected.model_copy(update={"status": "answered", "transitions": ["continue"],
                                           "route": "sql_only"})
    assert "route: sql_only; transitions: continue" in format_result(answered)


def test_question_services_are_one_leaf_for_the_flow_run_parameters(tmp_path):
    from flows.answer_question import answer_question
    from geoask.catalog.model import Catalog
    from geoask.run.composition import QuestionServices
    from geoask.settings import Settings

    services = QuestionServices(
        settings=Settings(artifact_root=str(tmp_path)), variant=Variant.FULL, models=None,
        sql_runner=None, sandbox=None, schema=None,
        catalog=Catalog(version=1, schema="demo", description="d", tables=[]))
    # no __dict__: the parameters' JSON encoder gives up at once instead of walking vars()
    assert not hasattr(services, "__dict__")
    parameters = answer_question.serialize_parameters({"question": "q", "services": services})
    assert parameters == {"question": "q", "services": "<QuestionServices>"}


@pytest.mark.parametrize(("variant", "screens"), [
    (Variant.FULL, True), (Variant.REACT, True), (Variant.PLAN_EXECUTE, True),
    (Variant.NO_PLANNER, False), (Variant.BASE, False),
])
def test_only_variants_that_refine_in_python_may_screen_with_a_bounding_box(variant, screens):
    from geoask.run.variants import VARIANTS
    from geoask.settings import Settings
    from geoask.sql import check_sql

    screened = ("SELECT iata, geom FROM demo.airports "
                "WHERE geom && ST_MakeEnvelope(-79, 35, -78, 36, 4326)")
    context = VARIANTS[variant].guard_context(Settings())
    assert context.screens is screens
    if screens:
        assert check_sql(screened, context).sql
    else:
        with pytest.raises(QueryRejectedError) as caught:
            check_sql(screened, context)
        assert caught.value.rule == "spatial_policy"
