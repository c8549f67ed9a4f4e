"""PostgreSQL's own parser as the guard's second opinion (issue 17).

* every rejected fixture is refused on PostgreSQL's reading alone too (the policies are checked
  on both views), except the lexical ones PostgreSQL reads harmlessly;
* every allowed fixture passes on PostgreSQL's reading alone;
* the agreement rule refuses a statement whose two readings differ (forged readings);
* NUL bytes, length caps and the catalog's real columns.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from geoask.errors import QueryRejectedError
from geoask.sql import GuardContext, check_sql, find_violation
from geoask.sql.casefile import SqlCase, load_case_folder
from geoask.sql.parsing import parse_query
from geoask.sql.pgview import PgCall, PgView, postgres_view
from geoask.sql.rules.parsers_agree import parsers_agree
from geoask.sql.rules.postgres_view import postgres_view as postgres_view_rule

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sql"


def _cases(folder: str) -> list[tuple[SqlCase, str]]:
    return [(c, p) for c in load_case_folder(FIXTURES / folder) for p in c.policies]


def _id(item: tuple[SqlCase, str]) -> str:
    return f"{item[0].source} {item[1]} {item[0].title}"


def _refused_before_parsing(sql: str) -> bool:
    try:
        parse_query(sql)
    except QueryRejectedError:
        return True
    return False


@pytest.mark.parametrize("item", _cases("rejected"), ids=_id)
def test_rejected_fixture_is_refused_on_postgres_reading_alone(item):
    case, policy = item
    if case.expected_rule == "lexical_safety" or _refused_before_parsing(case.sql):
        pytest.skip("refused on the text before either reading; PostgreSQL reads it harmlessly")
    query = parse_query(case.sql)
    view = query.pg
    if case.expected_rule == "single_statement" and isinstance(view, PgView) and (
            view.statement_kinds == ("SelectStmt",)):
        pytest.skip("a lone ';' before a SELECT: one harmless statement to PostgreSQL")
    violation = postgres_view_rule(query, GuardContext(policy=policy, contract=case.contract))
    assert violation is not None, f"PostgreSQL's reading accepted {case.sql!r}"
    assert violation.rule in {case.expected_rule, "parses"}, violation


@pytest.mark.parametrize("item", _cases("allowed"), ids=_id)
def test_allowed_fixture_passes_on_postgres_reading_and_agreement(item):
    case, policy = item
    query = parse_query(case.sql)
    context = GuardContext(policy=policy, contract=case.contract)
    assert postgres_view_rule(query, context) is None
    assert parsers_agree(query, context) is None


def _forged(sql: str, **changes) -> object:
    query = parse_query(sql)
    assert isinstance(query.pg, PgView)
    return dataclasses.replace(query, pg=dataclasses.replace(query.pg, **changes))


@pytest.mark.parametrize(
    ("sql", "changes", "says"),
    [
        ("SELECT iata FROM demo.airports",
         {"calls": (PgCall(None, "pg_sleep", False, 7),)}, "pg_sleep"),
        ("SELECT a < b FROM t", {"operators": frozenset({"<@"})}, "<@"),
        ("SELECT a <@ b FROM t", {"operators": frozenset({"<@", "<"})}, "<"),
        ("SELECT iata FROM demo.airports",
         {"relations": frozenset({("pg_catalog", "pg_authid")})}, "tables"),
        ("SELECT lower(iata) FROM demo.airports", {"calls": ()}, "lower"),
        ("SELECT x::text FROM t", {"casts": frozenset({(None, "regclass")})}, "regclass"),
    ],
    ids=["hidden call", "operator read shorter", "operator sqlglot lacks", "other table",
         "call postgres lacks", "other cast"],
)
def test_parsers_agree_refuses_differing_readings(sql, changes, says):
    violation = parsers_agree(_forged(sql, **changes), GuardContext())
    assert violation is not None and violation.rule == "parsers_agree"
    assert says in violation.fragment


@pytest.mark.parametrize(
    "sql",
    ["SELECT 1\x00; DELETE FROM demo.airports", "SELECT iata FROM demo.airports\x00",
     "SELECT iata\x00FROM demo.airports", "SELECT '\x00' AS nul"],
)
def test_nul_byte_is_refused_in_one_line(sql):
    violation = find_violation(sql, GuardContext())
    assert violation is not None and violation.rule in {"lexical_safety", "single_statement"}
    assert "\n" not in violation.description


def test_postgis_only_operators_accepted_under_postgis_and_run_unchanged():
    sql = "SELECT a.iata FROM demo.airports a, demo.airports b WHERE a.geom &&& b.geom LIMIT 3"
    checked = check_sql(sql, GuardContext(policy="postgis", row_cap=10))
    assert checked.sql == sql and not checked.row_limit_added
    violation = find_violation(sql, GuardContext(policy="separated"))
    assert violation is not None and violation.rule == "spatial_policy"


def test_unparsed_by_sqlglot_gets_the_wrapper_and_no_tree_quoting():
    sql = "SELECT a.iata FROM demo.airports a, demo.airports b WHERE a.geom |=| b.geom"
    checked = check_sql(sql, GuardContext(policy="postgis", row_cap=10))
    assert checked.row_limit_added and sql in checked.sql


def test_attribute_notation_allowed_for_a_real_catalog_column():
    sql = "SELECT d.count FROM docs.pages d"
    assert find_violation(sql, GuardContext()).rule == "allowed_functions"
    assert find_violation(sql, GuardContext(column_names=frozenset({"count"}))) is None
    assert find_violation("SELECT d.name, d.text FROM docs.pages d", GuardContext()) is None


def test_sql_length_cap_comes_from_the_context():
    sql = "SELECT " + " + ".join(["1"] * 60)
    assert find_violation(sql, GuardContext()) is None
    violation = find_violation(sql, GuardContext(max_sql_chars=100))
    assert violation is not None and violation.rule == "parses"
    assert f"{len(sql):,} characters" in violation.description


def test_postgres_view_reads_the_outer_limit():
    assert postgres_view("SELECT 1 ORDER BY 1 LIMIT 4").outer_limit == 4
    assert postgres_view("SELECT 1 ORDER BY 1 LIMIT ALL").outer_limit == 0
    assert postgres_view("(SELECT 1 LIMIT 2) UNION (SELECT 2)").outer_limit is None
    assert postgres_view("SELECT 1 UNION SELECT 2 ORDER BY 1 LIMIT 7").outer_limit == 7


@pytest.mark.parametrize("sql", [
    "SELECT a.geom |=| b.geom FROM demo.airports a, demo.airports b LIMIT 1",
    "SELECT a.lon <@> b.lat FROM t a, t b",
    "SELECT a.geom &&& b.geom FROM demo.airports a, demo.airports b LIMIT 1",
])
def test_operators_only_postgres_parses_pass_under_postgis(sql):
    assert find_violation(sql, GuardContext(policy="postgis")) is None


def test_postgres_view_refusal_points_at_the_call():
    query = parse_query("SELECT 'é' AS a,\n  pg_sleep(1) FROM t")  # a 2-byte character first
    violation = postgres_view_rule(query, GuardContext())
    assert violation.rule == "allowed_functions" and violation.fragment == "pg_sleep(...)"
    assert (violation.line, violation.col) == (2, 3)


def test_shape_of_a_statement_only_postgres_parses():
    from geoask.sql.shape import outer_limit, output_columns, tables_read

    sql = ("SELECT a.iata, a.geom AS g, count(*), b.* FROM demo.airports a "
           "JOIN demo.us_states b ON a.geom &&& b.geom GROUP BY 1, 2 ORDER BY 1 LIMIT 5")
    assert not parse_query(sql).parsed  # sqlglot cannot; PostgreSQL's reading answers
    assert output_columns(sql) == ["iata", "g", "count", "*"]
    assert tables_read(sql) == ["airports", "us_states"]
    assert outer_limit(sql) == 5
