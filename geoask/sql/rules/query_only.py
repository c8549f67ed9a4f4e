"""Rule: the statement is a query (SELECT, WITH ... SELECT, set operation, VALUES, TABLE)."""

from __future__ import annotations

from sqlglot import exp
from sqlglot.tokens import TokenType

from geoask.sql.context import GuardContext
from geoask.sql.parsing import ParsedQuery, violation_at, violation_at_token
from geoask.sql.pgview import SELECT_NODE, PgView
from geoask.sql.violation import GuardViolation, PgViolation

RULE = "query_only"
QUERY_ROOTS = (exp.Select, exp.SetOperation, exp.Values)
#: Keywords a query may start with (after any opening parentheses); decided on tokens, so a
#: statement such as ``RELEASE SAVEPOINT`` is refused here whether sqlglot parses it or not.
QUERY_START_TOKENS = frozenset(
    {TokenType.SELECT, TokenType.WITH, TokenType.VALUES, TokenType.TABLE}
)


def query_only(query: ParsedQuery, context: GuardContext) -> GuardViolation | None:
    """Reject any statement that does not start like a query or whose root is not a query.

    The first keyword (comments skipped) must be SELECT, WITH, VALUES or TABLE; when sqlglot
    built a tree, its root must be a query too (``WITH ... DELETE`` starts like one).

    >>> from geoask.sql.parsing import parse_query
    >>> query_only(parse_query("/* SELECT */ DELETE FROM t"), GuardContext()).rule
    'query_only'
    >>> query_only(parse_query("RELEASE SAVEPOINT s1"), GuardContext()).rule
    'query_only'
    """
    first = next(t for t in query.tokens if t.token_type != TokenType.L_PAREN)
    if first.token_type not in QUERY_START_TOKENS:
        description = (
            f"{first.text.upper()} does not start a query; only read-only SELECT queries "
            "(SELECT, WITH ... SELECT, VALUES, TABLE) are run - rewrite it as one SELECT"
        )
        return violation_at_token(RULE, description, first, query, to_end=True)
    if not query.parsed:
        return None
    root = query_root(query.tree)
    if isinstance(root, QUERY_ROOTS):
        return None
    if isinstance(root, exp.Command):
        kind = str(root.this).upper()
        description = (
            f"{kind} is not a query (sqlglot could only read it as a raw command); only "
            "read-only SELECT queries are run - rewrite it as one SELECT"
        )
    elif isinstance(root, exp.Condition | exp.Alias):
        description = (
            "the text is not a query (it reads as a bare expression - LISTEN, NOTIFY, DISCARD "
            "and similar commands are not queries); send one SELECT query"
        )
    else:
        description = (
            f"{root.key.upper()} is not a read-only query; only SELECT, WITH ... SELECT, "
            "UNION/INTERSECT/EXCEPT and VALUES are run"
        )
    return violation_at(RULE, description, root, query, render=True)


def query_only_pg(view: PgView, context: GuardContext) -> PgViolation | None:
    """Reject a statement PostgreSQL reads as something other than a SELECT.

    >>> from geoask.sql.pgview import postgres_view
    >>> query_only_pg(postgres_view("TABLE t"), GuardContext()) is None
    True
    >>> query_only_pg(postgres_view("EXPLAIN SELECT 1"), GuardContext()).fragment
    'ExplainStmt'
    """
    for kind in view.statement_kinds:
        if kind != SELECT_NODE:
            return PgViolation(RULE, f"PostgreSQL reads the text as {kind}, not a query; only "
                               "read-only SELECT queries are run - rewrite it as one SELECT", kind)
    return None


def query_root(tree: exp.Expr) -> exp.Expr:
    """The statement with any outer parentheses removed: ``((SELECT 1))`` -> ``SELECT 1``."""
    while isinstance(tree, exp.Subquery) and not tree.args.get("alias"):
        tree = tree.this
    return tree
