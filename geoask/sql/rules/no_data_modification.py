"""Rule: nothing anywhere in the tree modifies data, schema, session or transaction."""

from __future__ import annotations

from sqlglot import exp

from geoask.sql.context import GuardContext
from geoask.sql.parsing import ParsedQuery, violation_at
from geoask.sql.violation import GuardViolation

RULE = "no_data_modification"
MODIFYING_NODES: tuple[type[exp.Expr], ...] = (
    exp.Insert, exp.Update, exp.Delete, exp.Merge, exp.Create, exp.Drop, exp.Alter,
    exp.TruncateTable, exp.Copy, exp.Command, exp.Set, exp.Commit, exp.Rollback,
    exp.Transaction, exp.Grant, exp.Revoke, exp.Use, exp.Pragma, exp.Analyze, exp.LoadData,
    exp.Kill, exp.Refresh, exp.Cache, exp.Uncache, exp.Comment, exp.Declare, exp.Attach,
    exp.Detach, exp.Install, exp.Export,
)


def no_data_modification(query: ParsedQuery, context: GuardContext) -> GuardViolation | None:
    """Reject data-modifying CTEs and any nested statement (walks the whole tree).

    >>> from geoask.sql.parsing import parse_query
    >>> sql = "WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d"
    >>> no_data_modification(parse_query(sql), GuardContext()).rule
    'no_data_modification'
    """
    for node in query.tree.walk():
        if isinstance(node, MODIFYING_NODES):
            kind = str(node.this).upper() if isinstance(node, exp.Command) else node.key.upper()
            return violation_at(
                RULE,
                f"{kind} inside the query changes data or state; queries may only read - "
                "remove it (a WITH clause may only hold SELECT queries)",
                node,
                query,
                render=True,
            )
    return None
