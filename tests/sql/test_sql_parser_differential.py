"""Differential fuzz test: random mutations of the fixture corpus through both parsers.

Seeded and bounded (a fixed number of mutants). Each mutant is judged by the whole guard; for
every mutant the guard accepts, both readings are re-checked independently:

* PostgreSQL's parser read exactly one plain SELECT, and every policy holds on its reading;
* sqlglot parsed it and every sqlglot rule passes, or (text only PostgreSQL parses) every
  token rule passes;
* every function PostgreSQL calls is on the policy's allow-list and appears as a call in
  sqlglot's tokens; no relation either reads is a system catalog.

A mutant the guard accepts while one reading refuses it or reads it differently fails the test.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from geoask.errors import QueryRejectedError
from geoask.sql import GuardContext, find_violation
from geoask.sql.casefile import load_case_folder
from geoask.sql.functions import allowed_function_names
from geoask.sql.parsing import parse_query
from geoask.sql.pgview import PgView
from geoask.sql.rules import RULES, TOKEN_RULES
from geoask.sql.rules.no_system_catalogs import is_system_relation
from geoask.sql.rules.parsers_agree import IMPLICIT_CALLS, token_call_names
from geoask.sql.rules.postgres_view import postgres_view

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sql"
SEED = 17
MUTANTS = 3000
SECOND_PARSER = {"postgres_view", "parsers_agree", "parses"}
# Pieces spliced into statements: operators, keywords, quotes, comments and odd whitespace.
PIECES = (
    "<@", "@>", "<", "@", "&&", "&&&", "|=|", "<->", "<@>", "@@", "::", "::regclass", "||",
    "-", "--", "/*", "*/", "'", '"', "$1", "$$", ";", "(", ")", ",", ".", "a.to_json",
    "pg_sleep(1)", "lower(", "\u00a0", "\x00", "\r", "\t", "E'", "U&", "LIMIT ALL",
    "ORDER BY 1", "FOR UPDATE", "INTO t", "WITH w AS (SELECT 1)", "UNION SELECT 1",
    " OPERATOR(pg_catalog.+) ", "count(*)", "st_area(geom)", "geom::geography",
)


def _corpus() -> list[str]:
    return [case.sql for folder in ("allowed", "rejected")
            for case in load_case_folder(FIXTURES / folder)]


def _mutate(sql: str, rng: random.Random) -> str:
    for _ in range(rng.randint(1, 3)):
        position = rng.randint(0, len(sql))
        choice = rng.random()
        if choice < 0.5:
            sql = sql[:position] + rng.choice(PIECES) + sql[position:]
        elif choice < 0.8 and sql:
            end = min(len(sql), position + rng.randint(1, 8))
            sql = sql[:position] + sql[end:]
        else:
            sql = sql[:position] + " " + sql[position:]
    return sql


def _mutants() -> list[tuple[str, str]]:
    rng = random.Random(SEED)
    corpus = _corpus()
    return [(_mutate(rng.choice(corpus), rng), rng.choice(("separated", "postgis")))
            for _ in range(MUTANTS)]


def _independent_problem(sql: str, context: GuardContext) -> str | None:
    query = parse_query(sql)
    view = query.pg
    if not isinstance(view, PgView) or view.statement_kinds != ("SelectStmt",):
        return "accepted, but PostgreSQL does not read one SELECT"
    if postgres_view(query, context) is not None:
        return "accepted, but a policy fails on PostgreSQL's reading"
    for rule in RULES:
        if rule.__name__ in SECOND_PARSER or (not query.parsed and rule not in TOKEN_RULES):
            continue
        if rule(query, context) is not None:
            return f"accepted, but sqlglot's rule {rule.__name__} refuses it"
    allowed = allowed_function_names(context.policy.value) | IMPLICIT_CALLS
    if view.named_calls - allowed:
        return f"accepted a call outside the allow-list: {sorted(view.named_calls - allowed)}"
    if view.named_calls - token_call_names(query.tokens) - IMPLICIT_CALLS:
        return "accepted a call PostgreSQL makes that sqlglot's tokens do not show"
    if any(is_system_relation(schema, name) for schema, name in view.relations):
        return "accepted a read of a system relation"
    return None


def test_mutants_accepted_by_the_guard_read_the_same_to_both_parsers():
    problems: list[str] = []
    accepted = caught = 0
    for sql, policy in _mutants():
        context = GuardContext(policy=policy)
        try:
            violation = find_violation(sql, context)
        except QueryRejectedError:  # pragma: no cover - find_violation never raises these
            continue
        if violation is not None:
            caught += violation.rule in SECOND_PARSER and _sqlglot_alone_accepts(sql, context)
            continue
        accepted += 1
        problem = _independent_problem(sql, context)
        if problem is not None:
            problems.append(f"{problem}: {sql!r} ({policy})")
    assert not problems, "\n".join(problems[:10])
    # the corpus is mostly allowed statements: a fair share of mutants must still pass
    assert accepted > MUTANTS // 20
    # and the second parser refuses mutants that sqlglot's rules alone would have run
    assert caught > 0


def _sqlglot_alone_accepts(sql: str, context: GuardContext) -> bool:
    try:
        query = parse_query(sql)
    except QueryRejectedError:
        return False
    return query.parsed and all(
        rule(query, context) is None for rule in RULES if rule.__name__ not in SECOND_PARSER)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_mutation_is_seeded(seed):
    first = _mutate("SELECT iata FROM demo.airports", random.Random(seed))
    assert first == _mutate("SELECT iata FROM demo.airports", random.Random(seed))
