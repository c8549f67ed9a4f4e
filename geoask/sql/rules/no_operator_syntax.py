"""Rule: no explicit ``OPERATOR(schema.op)`` calls."""

from __future__ import annotations

from sqlglot import exp

from geoask.sql.context import GuardContext
from geoask.sql.parsing import ParsedQuery, violation_at
from geoask.sql.pgview import PgView
from geoask.sql.violation import GuardViolation, PgViolation

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


def no_operator_syntax_pg(view: PgView, context: GuardContext) -> PgViolation | None:
    """Reject an operator PostgreSQL reads as qualified (``OPERATOR(s.op)``).

    >>> from geoask.sql.pgview import postgres_view
    >>> view = postgres_view("SELECT 1 OPERATOR(pg_catalog.+) 1")
    >>> no_operator_syntax_pg(view, GuardContext()).fragment
    'OPERATOR(pg_catalog.+)'
    """
    qualified = sorted(op for op in view.operators if "." in op)
    if qualified:
        return PgViolation(RULE, "OPERATOR(...) syntax is not accepted; write the operator "
                           "itself", f"OPERATOR({qualified[0]})")
    return None
