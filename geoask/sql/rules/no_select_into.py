"""Rule: no ``SELECT ... INTO`` (it creates a table)."""

from __future__ import annotations

from sqlglot import exp

from geoask.sql.context import GuardContext
from geoask.sql.parsing import ParsedQuery, violation_at
from geoask.sql.pgview import PgView
from geoask.sql.violation import GuardViolation, PgViolation

RULE = "no_select_into"


def no_select_into(query: ParsedQuery, context: GuardContext) -> GuardViolation | None:
    """Reject ``INTO`` anywhere in the statement.

    >>> from geoask.sql.parsing import parse_query
    >>> no_select_into(parse_query("SELECT * INTO copy FROM t"), GuardContext()).rule
    'no_select_into'
    """
    node = query.find(exp.Into)
    if node is None:
        return None
    return violation_at(
        RULE,
        "SELECT ... INTO creates a table; remove the INTO clause - results are returned and "
        "exported by geoask",
        node,
        query,
    )


def no_select_into_pg(view: PgView, context: GuardContext) -> PgViolation | None:
    """Reject ``INTO`` in PostgreSQL's reading.

    >>> from geoask.sql.pgview import postgres_view
    >>> no_select_into_pg(postgres_view("SELECT * INTO copy FROM t"), GuardContext()).rule
    'no_select_into'
    """
    if view.into:
        return PgViolation(RULE, "SELECT ... INTO creates a table; remove INTO", "INTO")
    return None
