"""The guard's verdicts do not hang on how far a sqlglot release can parse.

Every fixture whose expected rule can decide on tokens is judged again as if sqlglot had failed
to parse it (statements removed): the verdict must not change. Allowed fixtures, judged that way,
are still accepted on PostgreSQL's own reading (no token rule mistakes them for something
forbidden), and without PostgreSQL's reading as well they fall through to ``parses`` only.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from geoask.errors import QueryRejectedError
from geoask.sql import GuardContext
from geoask.sql.casefile import SqlCase, load_case_folder
from geoask.sql.guard import first_violation
from geoask.sql.parsing import ParsedQuery, parse_query
from geoask.sql.pgview import PgParseFailure
from geoask.sql.rules import TOKEN_RULES
from geoask.sql.violation import GuardViolation

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sql"
TOKEN_RULE_NAMES = {rule.__name__ for rule in TOKEN_RULES} - {"parses"}
PRETEND = GuardViolation("parses", "pretend sqlglot could not parse this")


def _without_tree(sql: str) -> ParsedQuery:
    return dataclasses.replace(parse_query(sql), statements=(), parse_error=PRETEND)


def _without_trees(sql: str) -> ParsedQuery:
    return dataclasses.replace(_without_tree(sql), pg=PgParseFailure("pretend"))


def _cases(folder: str, keep) -> list[tuple[SqlCase, str]]:
    return [
        (case, policy)
        for case in load_case_folder(FIXTURES / folder)
        for policy in case.policies
        if keep(case)
    ]


def _id(item: tuple[SqlCase, str]) -> str:
    return f"{item[0].source} {item[1]} {item[0].title}"


@pytest.mark.parametrize(
    "item", _cases("rejected", lambda c: c.expected_rule in TOKEN_RULE_NAMES), ids=_id
)
def test_token_rule_verdict_holds_without_a_tree(item):
    case, policy = item
    context = GuardContext(policy=policy, contract=case.contract)
    violation = first_violation(_without_tree(case.sql), context)
    assert violation is not None and violation.rule == case.expected_rule, violation


@pytest.mark.parametrize("item", _cases("allowed", lambda c: True), ids=_id)
def test_allowed_statement_without_sqlglot_tree_passes_on_postgres_reading(item):
    case, policy = item
    context = GuardContext(policy=policy, contract=case.contract)
    assert first_violation(_without_tree(case.sql), context) is None


@pytest.mark.parametrize("item", _cases("allowed", lambda c: True), ids=_id)
def test_allowed_statement_without_either_tree_is_refused_by_parses(item):
    case, policy = item
    context = GuardContext(policy=policy, contract=case.contract)
    violation = first_violation(_without_trees(case.sql), context)
    assert violation is not None and violation.rule == "parses", violation


@pytest.mark.parametrize(
    "item", _cases("rejected", lambda c: c.expected_rule == "parses"), ids=_id
)
def test_parses_fixture_is_refused_before_or_by_sqlglot(item):
    """A ``parses`` fixture is empty, unlexable, unbalanced, too deep - or a syntax error."""
    case, _policy = item
    try:
        query = parse_query(case.sql)
    except QueryRejectedError as error:
        assert error.rule == "parses"
        return
    assert not query.parsed and query.parse_error is not None
