"""Each guard rule on its own: table-driven cases that must fail it and cases that must pass."""

from __future__ import annotations

import pytest

from geoask.sql.context import AnswerContract, GuardContext, SpatialPolicy
from geoask.sql.parsing import parse_query
from geoask.sql.rules import (
    RULES,
    allowed_functions,
    lexical_safety,
    no_bind_parameters,
    no_data_modification,
    no_operator_syntax,
    no_outdb_rasters,
    no_row_locks,
    no_select_into,
    no_system_catalogs,
    parses,
    query_only,
    single_statement,
    spatial_policy,
    topk_contract,
)

SEPARATED = GuardContext()
POSTGIS = GuardContext(policy=SpatialPolicy.POSTGIS)
TOPK = GuardContext(contract=AnswerContract.TOPK)

# (rule, sql, context, expected fragment or None when the rule must pass)
CASES = [
    (no_system_catalogs, "SELECT setting FROM pg_settings", SEPARATED, "pg_settings"),
    (no_system_catalogs, "SELECT * FROM information_schema.columns", SEPARATED,
     "information_schema.columns"),
    (no_system_catalogs, "WITH pg_x AS (SELECT 1 AS a) SELECT a FROM pg_x", SEPARATED, None),
    (no_system_catalogs, "SELECT * FROM demo.airports", SEPARATED, None),
    (single_statement, "SELECT 1; SELECT 2", SEPARATED, "; SELECT 2"),
    (single_statement, "SELECT 1;;", SEPARATED, None),
    (single_statement, "SELECT 1 -- x\n; DROP TABLE t", SEPARATED, "; DROP TABLE t"),
    (single_statement, "SELECT ';' AS s", SEPARATED, None),
    (query_only, "DELETE FROM t", SEPARATED, "DELETE FROM t"),
    (query_only, "VACUUM", SEPARATED, "VACUUM"),
    (query_only, "NOTIFY c", SEPARATED, "NOTIFY c"),
    (query_only, "RELEASE SAVEPOINT s1", SEPARATED, "RELEASE SAVEPOINT s1"),
    (query_only, "( SELEC 1)", SEPARATED, "SELEC 1)"),
    (query_only, "VALUES (1)", SEPARATED, None),
    (query_only, "((SELECT 1))", SEPARATED, None),
    (query_only, "SELECT 1 EXCEPT SELECT 2", SEPARATED, None),
    (no_data_modification, "WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d", SEPARATED,
     "DELETE FROM t RETURNING *"),
    (no_data_modification, "WITH u AS (UPDATE t SET a = 1) SELECT 1", SEPARATED,
     "UPDATE t SET a = 1"),
    (no_data_modification, "WITH s AS (SELECT 1) SELECT * FROM s", SEPARATED, None),
    (no_data_modification, "SELECT (DELETE FROM t RETURNING 1)", SEPARATED,
     "DELETE FROM t RETURNING 1)"),
    (no_data_modification, "SELECT t.delete FROM t WHERE", SEPARATED, None),
    (parses, "SELECT NEXT VALUE FOR s", SEPARATED, "FOR"),
    (parses, "SELECT 1", SEPARATED, None),
    (no_select_into, "SELECT a INTO b FROM t", SEPARATED, "INTO b"),
    (no_select_into, "SELECT a AS into_x FROM t", SEPARATED, None),
    (no_row_locks, "SELECT * FROM (SELECT 1 FOR SHARE) s", SEPARATED, "FOR SHARE"),
    (no_row_locks, "SELECT * FROM t", SEPARATED, None),
    (lexical_safety, "SELECT $x$a;$x$", SEPARATED, "$x$a;$x$"),
    (lexical_safety, "SELECT $x$a$x$", SEPARATED, None),
    (lexical_safety, "SELECT E'SELECT 1'", SEPARATED, "E'SELECT 1'"),
    (lexical_safety, "SELECT E'a'", SEPARATED, None),
    (lexical_safety, "SELECT U&'a'", SEPARATED, "U&'a'"),
    (lexical_safety, 'SELECT U&"a" FROM t', SEPARATED, "U"),
    (lexical_safety, "SELECT 'a\\' AS backslash, u & 1 AS bits FROM t", SEPARATED, None),
    (no_bind_parameters, "SELECT * FROM t WHERE a = $1", SEPARATED, "$1"),
    (no_bind_parameters, "SELECT * FROM t WHERE a = 1", SEPARATED, None),
    (no_operator_syntax, "SELECT 1 OPERATOR(pg_catalog.*) 2", SEPARATED,
     "1 OPERATOR(pg_catalog.*) 2"),
    (no_operator_syntax, "SELECT 1 * 2", SEPARATED, None),
    (no_outdb_rasters, "SELECT ST_Value(t.h::raster, 1, 1, 1) FROM t", POSTGIS,
     "CAST(t.h AS raster)"),
    (no_outdb_rasters, "SELECT ST_Value(rast, 1, 1, 1) FROM t", POSTGIS, None),
    (spatial_policy, "SELECT ST_Area(geom) FROM t", SEPARATED, "ST_Area(geom)"),
    (spatial_policy, "SELECT ST_Area(geom) FROM t", POSTGIS, None),
    (spatial_policy, "SELECT a.geom && b.geom FROM t a, t b", SEPARATED, "a.geom && b.geom"),
    (spatial_policy, "SELECT geom::geography FROM t", SEPARATED, "CAST(geom AS GEOGRAPHY)"),
    (spatial_policy, "SELECT id FROM t ORDER BY geom <-> geom", SEPARATED, "geom <-> geom"),
    (spatial_policy, "SELECT id, geom FROM t WHERE geom IS NOT NULL", SEPARATED, None),
    (spatial_policy, "SELECT ARRAY[1] && ARRAY[1]", SEPARATED, None),
    (allowed_functions, "SELECT pg_sleep(1)", SEPARATED, "pg_sleep(1)"),
    (allowed_functions, "SELECT * FROM t TABLESAMPLE BERNOULLI (pg_sleep(1)::int)", SEPARATED,
     "pg_sleep"),
    (allowed_functions, "SELECT * FROM t TABLESAMPLE BERNOULLI (abs(1)::int)", SEPARATED, None),
    (allowed_functions, "SELECT x FROM t WHERE f(x) > 0", SEPARATED, "f(x)"),
    (allowed_functions, "SELECT demo.f(x) FROM t", SEPARATED, "demo.f(x)"),
    (allowed_functions, 'SELECT "Upper"(x) FROM t', SEPARATED, '"Upper"(x)'),
    (allowed_functions, "SELECT pg_catalog.upper(x), UPPER(x) FROM t", SEPARATED, None),
    (allowed_functions, "SELECT ST_Area(geom) FROM t", SEPARATED, "ST_Area(geom)"),
    (allowed_functions, "SELECT ST_Area(geom) FROM t", POSTGIS, None),
    (allowed_functions, "SELECT st_evil(geom) FROM t", POSTGIS, "st_evil(geom)"),
    (allowed_functions, "SELECT count(*), date_trunc('day', d) FROM t", SEPARATED, None),
    (topk_contract, "SELECT a FROM t LIMIT 3", TOPK, "SELECT a FROM t LIMIT 3"),
    (topk_contract, "SELECT a FROM t ORDER BY a LIMIT 3", TOPK, None),
    (topk_contract, "SELECT a FROM t", SEPARATED, None),
]


@pytest.mark.parametrize(
    ("rule", "sql", "context", "fragment"),
    CASES,
    ids=[f"{rule.__name__}-{index}" for index, (rule, *_rest) in enumerate(CASES)],
)
def test_rule(rule, sql, context, fragment):
    violation = rule(parse_query(sql), context)
    if fragment is None:
        assert violation is None, violation
    else:
        assert violation is not None
        assert violation.rule == rule.__name__
        assert violation.fragment == fragment
        assert violation.description


def test_every_rule_has_failing_and_passing_cases():
    failing = {rule.__name__ for rule, _, _, fragment in CASES if fragment is not None}
    passing = {rule.__name__ for rule, _, _, fragment in CASES if fragment is None}
    # the second parser's rules report under mirrored names or need forged readings:
    # tests/sql/test_sql_second_parser.py covers them
    names = {rule.__name__ for rule in RULES} - {"postgres_view", "parsers_agree"}
    assert names == failing == passing


def test_violation_positions_point_at_the_call():
    violation = allowed_functions(parse_query("SELECT a,\n  pg_sleep(1) FROM t"), SEPARATED)
    assert (violation.line, violation.col) == (2, 3)


def test_rejected_function_message_names_it_for_the_agent():
    violation = allowed_functions(parse_query("SELECT lo_import('/etc/passwd')"), SEPARATED)
    assert "lo_import()" in violation.description
    assert "allow-list" in violation.description


def test_spatial_message_tells_the_agent_to_compute_in_python():
    violation = spatial_policy(parse_query("SELECT ST_Buffer(geom, 1) FROM t"), SEPARATED)
    assert "Python" in violation.description and "geometry column" in violation.description


def test_geometry_columns_come_from_the_context():
    query = parse_query("SELECT a.shape && b.shape FROM t a, t b")
    assert spatial_policy(query, SEPARATED) is None
    custom = GuardContext(geometry_columns=frozenset({"shape"}))
    assert spatial_policy(query, custom).rule == "spatial_policy"
