"""Rule: no bind parameters or placeholders (``$1``, ``?``, ``:name``)."""

from __future__ import annotations

from sqlglot import exp

from geoask.sql.context import GuardContext
from geoask.sql.parsing import ParsedQuery, violation_at
from geoask.sql.pgview import PgView
from geoask.sql.violation import GuardViolation, PgViolation

RULE = "no_bind_parameters"


def no_bind_parameters(query: ParsedQuery, context: GuardContext) -> GuardViolation | None:
    """Reject placeholders: geoask sends no parameters, so values must be literals.

    >>> from geoask.sql.parsing import parse_query
    >>> no_bind_parameters(parse_query("SELECT * FROM t WHERE a = $1"), GuardContext()).rule
    'no_bind_parameters'
    """
    node = query.find(exp.Placeholder, exp.Parameter, exp.SessionParameter)
    if node is None:
        return None
    return violation_at(
        RULE,
        "bind parameters and placeholders are not supported (and '@' is not a known "
        "operator here); write values as literals",
        node,
        query,
    )


def no_bind_parameters_pg(view: PgView, context: GuardContext) -> PgViolation | None:
    """Reject a ``$n`` placeholder in PostgreSQL's reading.

    >>> from geoask.sql.pgview import postgres_view
    >>> no_bind_parameters_pg(postgres_view("SELECT * FROM t WHERE a = $1"), GuardContext()).rule
    'no_bind_parameters'
    """
    if view.parameters:
        return PgViolation(RULE, "bind parameters ($1) are not supported; write values as "
                           "literals", "$n")
    return None
