"""Rule: no row-locking clause (FOR UPDATE / NO KEY UPDATE / SHARE / KEY SHARE)."""

from __future__ import annotations

from sqlglot import exp

from geoask.sql.context import GuardContext
from geoask.sql.parsing import ParsedQuery, violation_at
from geoask.sql.pgview import PgView
from geoask.sql.violation import GuardViolation, PgViolation

RULE = "no_row_locks"


def no_row_locks(query: ParsedQuery, context: GuardContext) -> GuardViolation | None:
    """Reject a locking clause anywhere, including in sub-selects.

    >>> from geoask.sql.parsing import parse_query
    >>> no_row_locks(parse_query("SELECT * FROM t FOR UPDATE"), GuardContext()).rule
    'no_row_locks'
    """
    node = query.find(exp.Lock)
    if node is None:
        return None
    return violation_at(
        RULE,
        "FOR UPDATE/SHARE locks rows; a read-only question needs no locks - remove the clause",
        node,
        query,
    )


def no_row_locks_pg(view: PgView, context: GuardContext) -> PgViolation | None:
    """Reject a locking clause anywhere in PostgreSQL's reading.

    >>> from geoask.sql.pgview import postgres_view
    >>> no_row_locks_pg(postgres_view("SELECT * FROM t FOR SHARE"), GuardContext()).rule
    'no_row_locks'
    """
    if view.locking:
        return PgViolation(RULE, "FOR UPDATE/SHARE locks rows; remove the clause", "FOR ...")
    return None
