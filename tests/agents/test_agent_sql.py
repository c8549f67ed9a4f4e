"""The SQL agent: guard and contract checks (table-driven) and its validator's retries."""

from __future__ import annotations

import pytest
from agent_builders import make_constraints, make_step, retry_feedback
from pydantic_ai.exceptions import UnexpectedModelBehavior

from agents import sql as sql_module
from agents.sql import (
    SqlAttempt,
    SqlDeps,
    geometry_exported,
    guard_violations,
    prompt,
    required_fields_selected,
    sql_agent,
    sql_errors,
    statement_names_unique,
    topk_limit_is_k,
)
from geoask.errors import AgentOutputError
from geoask.models.llm import model_call_error
from geoask.models.scripted import ScriptedModel
from geoask.sql.context import GuardContext
from geoask.sql.shape import outer_limit, output_columns
from geoask.vocabulary.drafts import SqlDraft, SqlRefusal, SqlStatement

TOP5 = ("SELECT county_fips, county_name, population FROM demo.county_decadal_stats "
        "WHERE census_year = 2020 ORDER BY population DESC LIMIT 5")
NO_ORDER = "SELECT county_fips, population FROM demo.county_decadal_stats"
WITH_GEOM = "SELECT county_fips, county_name, geom FROM demo.us_counties WHERE state_fips = '37'"
SPATIAL = "SELECT county_fips, ST_Area(geom) AS area FROM demo.us_counties"
DELETE = "DELETE FROM demo.us_counties"


def draft(*sqls: str, needs_python: bool = False) -> SqlDraft:
    return SqlDraft(statements=[SqlStatement(name=f"result_{n}", sql=sql, purpose="rows")
                                for n, sql in enumerate(sqls, start=1)],
                    needs_python=needs_python)


def deps(policy="separated", top_k=None, geometry=False, required=()) -> SqlDeps:
    return SqlDeps(question="Top 5 counties by 2020 population?",
                   step=make_step("sql-1", top_k=top_k),
                   schema_text="demo.county_decadal_stats(county_fips, census_year, population)",
                   constraints=make_constraints(geometry_needed=geometry),
                   guard=GuardContext(policy=policy), required_fields=list(required))


# (title, sql list, deps, expected fragment or None)
GUARD_CASES = [
    ("top-k with order and limit", [TOP5], deps(top_k=5), None),
    ("top-k without order", [NO_ORDER], deps(top_k=5), "rule topk_contract"),
    ("top-k contract on every statement", [NO_ORDER, TOP5], deps(top_k=5),
     "statement result_1: rule topk_contract"),
    ("spatial function under separated", [SPATIAL], deps(), "rule spatial_policy"),
    ("spatial function under postgis", [SPATIAL], deps(policy="postgis"), None),
    ("data modification", [DELETE], deps(), "rule query_only"),
    ("second statement is checked too", [WITH_GEOM, DELETE], deps(), "statement result_2"),
    ("geometry column selected raw", [WITH_GEOM], deps(), None),
]


@pytest.mark.parametrize(("sqls", "sql_deps", "expected"), [c[1:] for c in GUARD_CASES],
                         ids=[c[0] for c in GUARD_CASES])
def test_guard_violations(sqls, sql_deps, expected):
    errors = guard_violations(draft(*sqls), sql_deps)
    if expected is None:
        assert errors == []
    else:
        assert len(errors) == 1 and expected in errors[0], errors


# (title, rule, draft, deps, expected fragment or None)
RULE_CASES = [
    ("top-k limit equals k", topk_limit_is_k, draft(TOP5), deps(top_k=5), None),
    ("top-k limit too big", topk_limit_is_k, draft(TOP5.replace("LIMIT 5", "LIMIT 50")),
     deps(top_k=5), "LIMIT 5"),
    ("no top-k, any limit", topk_limit_is_k, draft(TOP5), deps(), None),
    ("geometry needed and selected", geometry_exported, draft(WITH_GEOM), deps(geometry=True),
     None),
    ("geometry needed, star counts", geometry_exported,
     draft("SELECT * FROM demo.us_counties"), deps(geometry=True), None),
    ("geometry needed but missing", geometry_exported, draft(NO_ORDER), deps(geometry=True),
     "select the geometry column"),
    ("geometry not needed", geometry_exported, draft(NO_ORDER), deps(), None),
    ("geometry needed, alias ending in geom counts", geometry_exported,
     draft("SELECT county_fips, geom AS county_geom FROM demo.us_counties"),
     deps(geometry=True), None),
    ("geometry needed, conventional name in any case counts", geometry_exported,
     draft('SELECT county_fips, geom AS "THE_GEOM" FROM demo.us_counties'),
     deps(geometry=True), None),
    ("geometry needed, a geometry-looking name is not enough", geometry_exported,
     draft("SELECT county_fips, county_name AS geometry_type FROM demo.us_counties"),
     deps(geometry=True), "select the geometry column"),
    ("required fields present", required_fields_selected, draft(WITH_GEOM),
     deps(required=["county_name"]), None),
    ("required field via alias", required_fields_selected,
     draft("SELECT county_fips, population AS pop_2020 FROM demo.county_decadal_stats"),
     deps(required=["pop_2020"]), None),
    ("required field missing", required_fields_selected, draft(NO_ORDER),
     deps(required=["county_name", "population"]), "county_name"),
    ("unique names", lambda d, _: statement_names_unique(d), draft(TOP5, WITH_GEOM), deps(),
     None),
    ("repeated names", lambda d, _: statement_names_unique(d),
     SqlDraft(statements=[SqlStatement(name="a", sql=TOP5, purpose="p"),
                          SqlStatement(name="a", sql=WITH_GEOM, purpose="p")]), deps(),
     "repeated: a"),
]


@pytest.mark.parametrize(("rule", "sql_draft", "sql_deps", "expected"),
                         [c[1:] for c in RULE_CASES], ids=[c[0] for c in RULE_CASES])
def test_sql_rules(rule, sql_draft, sql_deps, expected):
    error = rule(sql_draft, sql_deps)
    if expected is None:
        assert error is None
    else:
        assert error is not None and expected in error, error


@pytest.mark.parametrize(("sql", "columns", "limit"), [
    (TOP5, ["county_fips", "county_name", "population"], 5),
    ("WITH t AS (SELECT 1 AS a) SELECT a AS b FROM t FETCH FIRST 3 ROWS ONLY", ["b"], 3),
    ("SELECT c.* FROM demo.us_counties c", ["*"], None),
    ("SELEC nonsense", None, None),
], ids=["select", "cte fetch", "star", "unparsable"])
def test_output_columns_and_limit(sql, columns, limit):
    assert output_columns(sql) == columns
    assert outer_limit(sql) == limit


def test_refusal_and_prompt():
    assert sql_errors(SqlRefusal(reason="no income table"), deps()) == []
    d = SqlDeps(question="q", step=make_step("sql-1"), schema_text="demo.t(a)",
                constraints=make_constraints(), guard=GuardContext(policy="separated"),
                previous_attempts=[SqlAttempt(sql="SELECT pop FROM demo.t",
                                              error="undefined_column: column pop")],
                required_fields=["geoid"])
    text = prompt(d)
    assert "undefined_column: column pop" in text and "geoid" in text


def test_guard_failure_is_retried_and_checked_sql_accepted():
    scripted = ScriptedModel({"sql": [draft(NO_ORDER), draft(TOP5)]})
    d = deps(top_k=5)
    result = sql_agent.run_sync(prompt(d), deps=d, model=scripted.model("sql"))
    assert result.output == draft(TOP5)
    assert any("topk_contract" in text for text in retry_feedback(result.all_messages()))


def test_unsafe_sql_never_comes_back():
    scripted = ScriptedModel({"sql": [draft(DELETE)] * (sql_module.OUTPUT_RETRIES + 1)})
    with pytest.raises(UnexpectedModelBehavior) as caught:
        sql_agent.run_sync(prompt(deps()), deps=deps(), model=scripted.model("sql"))
    error = model_call_error(caught.value, "sql")
    assert isinstance(error, AgentOutputError) and "sql agent" in str(error)
