"""Rule: no ``SELECT ... INTO`` (it creates a table)."""

from __future__ import annotations

from sqlglot import exp

from geoask.sql.context import GuardContext
from geoask.sql.parsing import ParsedQuery, violation_at
from geoask.sql.violation import GuardViolation

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
