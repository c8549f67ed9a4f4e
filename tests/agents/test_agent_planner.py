"""The planner agent: plan rules (table-driven) and its validator's retry behaviour."""

from __future__ import annotations

import pytest
from agent_builders import make_constraints, make_intent, make_step, retry_feedback
from pydantic_ai.exceptions import UnexpectedModelBehavior

from agents import planner as planner_module
from agents.planner import (
    PlannerDeps,
    comparison_mode_set,
    computation_flag_matches_steps,
    ids_numbered_in_order,
    kinds_alternate,
    multiple_inputs_declared,
    plan_errors,
    planner_agent,
    prompt,
    python_steps_have_inputs,
    spatial_computation_needs_geometry,
    sql_steps_read_nothing,
    tables_in_schema,
    topk_answers_ranked_list,
    topk_on_last_step,
)
from geoask.errors import AgentOutputError
from geoask.models.llm import model_call_error
from geoask.models.scripted import ScriptedModel
from geoask.run.variants import Variant, parse_variant, plan_allowance
from geoask.vocabulary.answers import AnswerType
from geoask.vocabulary.plan import OperationIntent, Plan, PlanRefusal

TWO_STEP = make_constraints(computation_needed=True, geometry_needed=True,
                            operation_category="spatial_geometry")


def make_plan(steps, constraints=None, answer_type=AnswerType.RECORDS) -> Plan:
    return Plan(steps=steps, constraints=constraints or make_constraints(),
                answer_type=answer_type)


SQL_ONLY = make_plan([make_step("sql-1")])
SQL_PY = make_plan([make_step("sql-1"), make_step("python-1", inputs=["sql-1"])], TWO_STEP)

# (title, rule, plan, expected message fragment or None)
PLAN_CASES = [
    ("numbered ok", ids_numbered_in_order, SQL_PY, None),
    ("numbered skips", ids_numbered_in_order, make_plan([make_step("sql-2")]), "expected sql-1"),
    ("numbered out of order", ids_numbered_in_order,
     make_plan([make_step("sql-1"), make_step("python-2", inputs=["sql-1"])], TWO_STEP),
     "expected python-1"),
    ("alternate ok", kinds_alternate,
     make_plan([make_step("sql-1"), make_step("python-1", inputs=["sql-1"]), make_step("sql-2"),
                make_step("python-2", inputs=["sql-2"])], TWO_STEP), None),
    ("two sql in a row", kinds_alternate,
     make_plan([make_step("sql-1"), make_step("sql-2")]), "consolidate"),
    ("two python in a row", kinds_alternate,
     make_plan([make_step("sql-1"), make_step("python-1", inputs=["sql-1"]),
                make_step("python-2", inputs=["python-1"])], TWO_STEP), "consolidate"),
    ("sql reads nothing ok", sql_steps_read_nothing, SQL_PY, None),
    ("sql reads a step", sql_steps_read_nothing,
     make_plan([make_step("sql-1"), make_step("python-1", inputs=["sql-1"]),
                make_step("sql-2", inputs=["python-1"])], TWO_STEP), "sql-2"),
    ("python has inputs ok", python_steps_have_inputs, SQL_PY, None),
    ("python without inputs", python_steps_have_inputs,
     make_plan([make_step("sql-1"), make_step("python-1")], TWO_STEP), "python-1"),
    ("computation flag ok (sql only)", computation_flag_matches_steps, SQL_ONLY, None),
    ("computation flag ok (python)", computation_flag_matches_steps, SQL_PY, None),
    ("computation flag false with python", computation_flag_matches_steps,
     make_plan(SQL_PY.steps, make_constraints()), "has Python step"),
    ("computation flag true without python", computation_flag_matches_steps,
     make_plan(SQL_ONLY.steps, TWO_STEP), "has no Python step"),
    ("geometry ok", spatial_computation_needs_geometry, SQL_PY, None),
    ("spatial computation without geometry", spatial_computation_needs_geometry,
     make_plan(SQL_PY.steps, TWO_STEP.model_copy(update={"geometry_needed": False})),
     "geometry_needed"),
    ("single input ok", multiple_inputs_declared, SQL_PY, None),
    ("several inputs declared single", multiple_inputs_declared,
     make_plan([make_step("sql-1"), make_step("python-1", inputs=["sql-1"]), make_step("sql-2"),
                make_step("python-2", inputs=["sql-1", "sql-2"])], TWO_STEP), "multiple"),
]


@pytest.mark.parametrize(("rule", "plan", "expected"), [c[1:] for c in PLAN_CASES],
                         ids=[c[0] for c in PLAN_CASES])
def test_plan_rules(rule, plan, expected):
    error = rule(plan, deps())
    if expected is None:
        assert error is None
    else:
        assert error is not None and expected in error, error


TOP5 = make_intent(operation=OperationIntent.RANK_TOP_K, top_k=5)
COMPARE = make_intent(operation=OperationIntent.COMPARE_PERIODS)
RANKED_TOP5 = make_plan([make_step("sql-1", top_k=5)], answer_type=AnswerType.RANKED_LIST)

# (title, rule, plan, intent, expected fragment or None)
INTENT_CASES = [
    ("top-k on last step ok", topk_on_last_step, RANKED_TOP5, TOP5, None),
    ("top-k missing", topk_on_last_step, make_plan([make_step("sql-1")]), TOP5, "top_k=5"),
    ("top-k wrong k", topk_on_last_step, make_plan([make_step("sql-1", top_k=3)]), TOP5,
     "top_k=5"),
    ("top-k on first of two steps only", topk_on_last_step,
     make_plan([make_step("sql-1", top_k=5), make_step("python-1", inputs=["sql-1"])], TWO_STEP),
     TOP5, "python-1"),
    ("no top-k question", topk_on_last_step, SQL_ONLY, make_intent(), None),
    ("top-k answers ranked list ok", topk_answers_ranked_list, RANKED_TOP5, TOP5, None),
    ("top-k answered as records", topk_answers_ranked_list,
     make_plan([make_step("sql-1", top_k=5)]), TOP5, "ranked_list"),
    ("comparison mode set", comparison_mode_set,
     make_plan([make_step("sql-1")], make_constraints(temporal_comparison="period_vs_period")),
     COMPARE, None),
    ("comparison mode missing", comparison_mode_set, SQL_ONLY, COMPARE, "period_vs_period"),
]


@pytest.mark.parametrize(("rule", "plan", "intent", "expected"), [c[1:] for c in INTENT_CASES],
                         ids=[c[0] for c in INTENT_CASES])
def test_plan_intent_rules(rule, plan, intent, expected):
    error = rule(plan, deps(intent=intent))
    if expected is None:
        assert error is None
    else:
        assert error is not None and expected in error, error


def deps(variant="FULL", intent=None) -> PlannerDeps:
    return PlannerDeps(question="Which parks lie within 1 km of a school?",
                       intent=intent or make_intent(), schema_text="demo.parks(id, name, geom)",
                       tables=["parks", "schools"],
                       allowance=plan_allowance(parse_variant(variant)))


@pytest.mark.parametrize(("variant", "plan", "expected"), [
    ("FULL", SQL_PY, None),
    ("POSTGIS", SQL_PY, None),
    ("NO_STCA", SQL_PY, "no Python steps"),
    ("BASE", SQL_PY, "no Python steps"),
    ("NO_STCA", SQL_ONLY, None),
    ("FULL", make_plan([make_step("python-1")], TWO_STEP), "first step must be an SQL step"),
], ids=["full", "postgis", "no_stca python", "base python", "no_stca sql", "starts python"])
def test_plan_errors_apply_variant_and_shared_rules(variant, plan, expected):
    errors = plan_errors(plan, deps(variant))
    if expected is None:
        assert errors == []
    else:
        assert any(expected in e for e in errors), errors


@pytest.mark.parametrize(("tables", "expected"), [
    (["parks"], None),
    (["demo.parks", " schools"], None),  # schema prefix and blanks dropped
    (["parks", "hospitals"], "unknown tables hospitals; steps may read only parks, schools"),
], ids=["known", "qualified", "unknown"])
def test_steps_name_only_tables_of_the_schema(tables, expected):
    plan = make_plan([make_step("sql-1", tables=tables)])
    error = tables_in_schema(plan, deps())
    assert error == expected


def test_refusal_needs_reason():
    assert plan_errors(PlanRefusal(reason="no school table"), deps()) == []
    assert plan_errors(PlanRefusal(reason=" "), deps()) == ["a refusal needs a reason"]


def test_prompt_lists_earlier_failures():
    d = PlannerDeps(question="q", intent=make_intent(), schema_text="demo.t(a)", tables=["t"],
                    allowance=plan_allowance(Variant.FULL),
                    previous_failures=["sql-1: column pop does not exist"])
    text = prompt(d)
    assert "column pop does not exist" in text and "Variant: FULL" in text


def test_rule_break_is_retried_and_corrected_plan_accepted():
    bad = make_plan([make_step("sql-1"), make_step("sql-2")])
    scripted = ScriptedModel({"planner": [bad, SQL_ONLY]})
    result = planner_agent.run_sync(prompt(deps()), deps=deps(),
                                    model=scripted.model("planner"))
    assert result.output == SQL_ONLY
    assert any("consolidate" in text for text in retry_feedback(result.all_messages()))


def test_exhausted_budget_is_a_clear_error():
    scripted = ScriptedModel({"planner": [SQL_PY] * (planner_module.OUTPUT_RETRIES + 1)})
    with pytest.raises(UnexpectedModelBehavior) as caught:
        planner_agent.run_sync(prompt(deps("BASE")), deps=deps("BASE"),
                               model=scripted.model("planner"))
    assert len(scripted.calls) == planner_module.OUTPUT_RETRIES + 1
    assert isinstance(model_call_error(caught.value, "planner"), AgentOutputError)
