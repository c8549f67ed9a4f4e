"""Rule: no explicit ``OPERATOR(schema.op)`` calls."""

from __future__ import annotations

from sqlglot import exp

from geoask.sql.context import GuardContext
from geoask.sql.parsing import ParsedQuery, violation_at
from geoask.sql.violation import GuardViolation

RULE = "no_operator_syntax"


def no_operator_syntax(query: ParsedQuery, context: GuardContext) -> GuardViolation | None:
    """Reject ``OPERATOR(...)``, which can reach any schema's operator (and its function).

    >>> from geoask.sql.parsing import parse_query
    >>> no_operator_syntax(parse_query("SELECT 1 OPERATOR(pg_catalog.+) 1"), GuardContext()).rule
    'no_operator_syntax'
    """
    node = query.find(exp.Operator)
    if node is None:
        return None
    return violation_at(
        RULE, "OPERATOR(...) syntax is not accepted; write the operator itself", node, query
    )
