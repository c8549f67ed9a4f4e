"""The reference model's replies: consistent with the cases and with every agent's validators.

Pure tests (no database, no sandbox): the replies are checked with the agents' own rule
functions, and the answer is shown to be projected from the evidence, never copied from
``expected``.
"""

from __future__ import annotations

import itertools
import json

import pytest
from pydantic_ai import models

from agents.answer import AnswerDeps, answer_errors
from agents.intent import IntentDeps, intent_agent
from agents.intent import prompt as intent_prompt
from agents.planner import PlannerDeps, plan_errors
from agents.sql import SqlDeps, sql_errors
from geoask.cases.loader import DEFAULT_CASES_DIR, load_cases
from geoask.cases.model import BenchmarkCase, Projection
from geoask.cases.model import SqlStatement as CaseStatement
from geoask.cases.steps import chained_script, consolidated_steps
from geoask.catalog.model import load_catalog
from geoask.models.reference import UNKNOWN_QUESTION_MESSAGE, reference_model
from geoask.models.reference.answer import answer_payload
from geoask.models.reference.faults import (
    FaultKind,
    degrees_script,
    drop_read_column,
    misspell_column,
    planned_fault,
)
from geoask.models.reference.intent import case_intent, case_top_k, case_years
from geoask.models.reference.plan import case_plan
from geoask.models.reference.replay import prompt_question
from geoask.run.variants import Variant, plan_allowance
from geoask.settings import get_settings
from geoask.sql.context import GuardContext
from geoask.vocabulary.answers import AnswerRefusal, AnswerType, FinalAnswer
from geoask.vocabulary.evidence import RECORDS_MARKER, RESULT_MARKER
from geoask.vocabulary.plan import IntentRejection, RejectionType

models.ALLOW_MODEL_REQUESTS = False
CASES: list[BenchmarkCase] = [item.case for item in load_cases(DEFAULT_CASES_DIR, ())]
BY_ID = {case.id: case for case in CASES}
CATALOG = load_catalog(get_settings().catalog_path)


@pytest.mark.parametrize(("question", "years"), [
    ("Population in 1990 and 2000?", [1990, 2000]),
    ("Between 1929 and 2009, and again 1929", [1929, 2009]),
    ("How many airports are in Texas?", []),
    ("Codes 37183 and 123456 are not years", []),
])
def test_case_years(question, years):
    assert case_years(question) == years


@pytest.mark.parametrize(("prompt", "question"), [
    ("Question: How many?\n\nTables: x", "How many?"),
    ("Question:  Spaces around  \n\nrest", "Spaces around"),
    ("no prefix here", "no prefix here"),
])
def test_prompt_question(prompt, question):
    assert prompt_question(prompt) == question


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_replies_pass_the_agents_validators(case):
    intent = case_intent(case)
    plan = case_plan(case)
    every_table = [table.name for table in CATALOG.tables]
    assert plan_errors(plan, PlannerDeps(case.question, intent, "", every_table,
                                             plan_allowance(Variant.FULL))) == []
    from agents.intent import intent_errors

    assert intent_errors(intent) == []
    for step in consolidated_steps(case):
        if step.kind.value != "sql":
            continue
        plan_step = next(s for s in plan.steps if s.id == step.id)
        replay = reference_model([case])
        draft = replay.reply("sql", f"Question: {case.question}\n\nStep (JSON): "
                                    f"{plan_step.model_dump_json()}")
        assert sql_errors(draft, SqlDeps(case.question, plan_step, "", plan.constraints,
                                         GuardContext(policy="separated"))) == []


def test_plans_alternate_and_mirror_the_reference_steps():
    for case in CASES:
        steps = consolidated_steps(case)
        kinds = [step.kind.value for step in steps]
        assert kinds[0] == "sql"
        assert all(a != b for a, b in itertools.pairwise(kinds)), case.id
        reference_sql = [s.sql for step in case.reference.steps if step.kind == "sql"
                         for s in step.statements]
        assert [s.sql for step in steps for s in step.statements] == reference_sql


def test_sql_steps_name_the_tables_they_read_that_the_planner_was_shown():
    case = BY_ID["airports-017"]  # airports per 100,000 residents: airports, counties, states
    sql_1 = case_plan(case).steps[0]
    assert sorted(sql_1.tables) == ["airports", "county_decadal_stats", "us_counties",
                                    "us_states"]
    shown = case_plan(case, shown_tables=["airports", "us_states", "world_countries"])
    assert sorted(shown.steps[0].tables) == ["airports", "us_states"]
    assert all(not step.tables for step in shown.steps if step.kind.value == "python")


def test_reference_planner_reads_the_tables_from_the_outline():
    case = BY_ID["airports-017"]
    outline = ("demo.airports: US airports [point, static]\n  iata text PK\n"
               "demo.us_states: US states [state, static]")
    plan = reference_model([case]).reply(
        "planner", f"Question: {case.question}\n\nSchema outline:\n{outline}")
    assert sorted(plan.steps[0].tables) == ["airports", "us_states"]


def test_reference_planner_takes_granularity_and_tables_from_any_schema():
    case = BY_ID["airports-017"]
    outline = ("us_census.airports: Airports [airport_site, static] (joined in via x)\n"
               "  iata text PK\nEurope.us_states: States [TODO, static]")
    plan = reference_model([case]).reply(
        "planner", f"Question: {case.question}\n\nSchema outline:\n{outline}")
    assert sorted(plan.steps[0].tables) == ["airports", "us_states"]
    assert plan.constraints.spatial_granularity == "airport_site"
    untold = case_plan(case, granularities={"us_states": "TODO"})
    assert untold.constraints.spatial_granularity == "none"


def test_misspelt_column_keeps_a_same_named_table_in_any_schema():
    sql = "SELECT t.parcel FROM zoning.parcel AS t"
    text, name = misspell_column([CaseStatement(name="p", sql=sql)])
    assert name == "parcel"
    assert json.loads(text)[0]["sql"] == "SELECT t.parcel_nm FROM zoning.parcel AS t"


def test_top_k_comes_from_the_reference_limit():
    case = BY_ID["states-011"]
    assert case_top_k(case) == 5 == case_intent(case).top_k == case_plan(case).steps[-1].top_k
    assert case_top_k(BY_ID["airports-001"]) is None


def test_chained_script_rewrites_intermediate_inputs():
    case = BY_ID["climate-034"]
    python = [step for step in case.reference.steps if step.kind == "python"]
    assert len(python) == 2
    script = chained_script(python)
    compile(script, "chain", "exec")
    assert f"/scratch/{python[0].name}.json" in script
    assert f"/input/{python[0].name}.json" not in script


def test_unknown_question_is_refused_through_the_intent_agent():
    replay = reference_model(CASES)
    deps = IntentDeps(question="What is the weather on Mars?", catalog_summary="demo.x: x")
    output = intent_agent.run_sync(intent_prompt(deps), deps=deps,
                                   model=replay.any_role_model()).output
    assert isinstance(output, IntentRejection)
    assert output.rejection_type is RejectionType.NOT_ANSWERABLE
    assert output.message == UNKNOWN_QUESTION_MESSAGE


def test_a_case_id_in_the_prompt_finds_the_case():
    replay = reference_model(CASES)
    assert replay.find_case("Question: please answer airports-001\n\nx") is BY_ID["airports-001"]


def _answer_prompt(case: BenchmarkCase, evidence: str) -> str:
    return (f"Question: {case.question}\n\nAnswer contract: answer_type="
            f"{case.answer.answer_type.value}; answer fields: x\n\nEvidence:\n{evidence}")


def test_answer_is_projected_from_the_evidence_not_from_expected():
    case = BY_ID["airports-001"]
    name = case.reference.steps[-1].statements[-1].name
    shown = case.expected.value + 17
    evidence = (f"Evidence from step sql-1 (sql): x\nartifact {name}: 1 rows\n"
                f"{RECORDS_MARKER}{json.dumps([{'airport_count': shown}])}")
    answer = reference_model(CASES).reply("answer", _answer_prompt(case, evidence))
    assert isinstance(answer, FinalAnswer)
    assert answer.data_payload["value"] == shown
    deps = AnswerDeps(case.question, AnswerType.SCALAR, ["airport_count"], evidence)
    assert answer_errors(answer, deps) == []


def test_answer_from_a_script_result():
    case = BY_ID["climate-034"]
    records = [{"county_fips": "37119", "precip_mm": 1.5}]
    evidence = f"Evidence from step python-1 (python): s\nscript summary: s\n" \
               f"{RESULT_MARKER}{json.dumps(records)}"
    answer = reference_model(CASES).reply("answer", _answer_prompt(case, evidence))
    # The projection names fields the made-up result lacks: an honest refusal, no invention.
    assert isinstance(answer, AnswerRefusal) or answer.data_payload["records"]


def test_answer_refuses_when_only_a_preview_is_shown():
    case = BY_ID["airports-001"]
    name = case.reference.steps[-1].statements[-1].name
    evidence = f"artifact {name}: 900 rows (too many to list; preview below)\ncolumns: a"
    answer = reference_model(CASES).reply("answer", _answer_prompt(case, evidence))
    assert isinstance(answer, AnswerRefusal)
    assert "preview" in answer.reason


@pytest.mark.parametrize(("projected", "answer_type", "projection", "payload"), [
    (7, AnswerType.SCALAR, Projection(value_field="n", unit="count"),
     {"value": 7, "unit": "count"}),
    (["A", "B"], AnswerType.ENTITY_LIST, Projection(entity_field="id"),
     {"entities": [{"id": "A"}, {"id": "B"}]}),
    ([{"id": "TX", "value": 3}], AnswerType.RANKED_LIST,
     Projection(entity_field="s", value_field="v", order="descending"),
     {"items": [{"rank": 1, "id": "TX", "value": 3}], "order": "descending"}),
    ([{"id": "TX"}], AnswerType.RANKED_LIST, Projection(entity_field="s"),
     {"items": [{"rank": 1, "id": "TX", "value": None}]}),
    ([{"k": 1, "v": 2.5}], AnswerType.RECORDS,
     Projection(key_fields=["k"], value_fields=["v"], unit="km"),
     {"records": [{"k": 1, "v": 2.5}], "units": {"v": "km"}}),
    ({"iata": "LGA", "d": 1.0}, AnswerType.OBJECT, Projection(fields=["iata", "d"], unit="km"),
     {"iata": "LGA", "d": 1.0, "unit": "km"}),
    ([1.0, 2.0, 3.0, 4.0], AnswerType.BBOX, Projection(value_field="b"),
     {"bbox": [1.0, 2.0, 3.0, 4.0]}),
])
def test_answer_payload_shapes(projected, answer_type, projection, payload):
    assert answer_payload(projected, answer_type, projection) == payload


@pytest.mark.parametrize(("script", "faulty"), [
    ("g = g.to_crs(g.estimate_utm_crs())\n", 'g = g.to_crs("EPSG:4326")\n'),
    ("a = x.to_crs(epsg=32618)\n", 'a = x.to_crs("EPSG:4326")\n'),
    ("print(1)\n", None),
])
def test_degrees_script(script, faulty):
    assert degrees_script(script) == faulty


def test_misspelt_column_is_a_column_not_a_table():
    statements = [CaseStatement(name="n", sql="SELECT state_abbr FROM demo.airports "
                                               "WHERE state_abbr = 'TX'")]
    text, name = misspell_column(statements)
    sql = json.loads(text)[0]["sql"]
    assert name == "state_abbr"
    assert sql == "SELECT state_abbr_nm FROM demo.airports WHERE state_abbr_nm = 'TX'"


def test_misspelt_column_is_never_an_alias_of_the_query():
    sql = ("WITH d AS (SELECT day, count(*) AS n FROM demo.t GROUP BY day) "
           "SELECT avg(n) AS mean_n FROM d")
    text, name = misspell_column([CaseStatement(name="m", sql=sql)])
    assert name == "day"
    assert "day_nm" in json.loads(text)[0]["sql"]


def test_dropped_column_is_one_the_script_reads():
    statements = [CaseStatement(name="pts", sql="SELECT iata, elevation_ft, geom FROM demo.a")]
    text, name = drop_read_column(statements, "df['elevation_ft'].mean()")
    assert name == "elevation_ft"
    assert "elevation_ft" not in json.loads(text)[0]["sql"]
    assert drop_read_column(statements, "print('nothing used')") is None


def test_fault_subset_is_documented_and_deterministic():
    faults = {case.id: planned_fault(case) for case in CASES}
    chosen = {case_id for case_id, fault in faults.items() if fault is not None}
    assert chosen and all(int(case_id[-3:]) % 5 == 0 for case_id in chosen)
    kinds = {fault.kind for fault in faults.values() if fault is not None}
    assert kinds == set(FaultKind)


def test_faulty_model_injects_each_fault_once():
    case = BY_ID["airports-010"]
    fault = planned_fault(case)
    assert fault is not None and fault.kind is FaultKind.WRONG_COLUMN
    replay = reference_model(CASES, "reference-faulty")
    step = case_plan(case).steps[0]
    prompt = f"Question: {case.question}\n\nStep (JSON): {step.model_dump_json()}"
    first, second = replay.reply("sql", prompt), replay.reply("sql", prompt)
    reference_sql = case.reference.steps[0].statements[-1].sql
    assert first.statements[-1].sql != reference_sql
    assert second.statements[-1].sql == reference_sql
    assert replay.injected == [(case.id, "wrong_column")]
