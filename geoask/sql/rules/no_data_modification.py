"""Rule: nothing anywhere in the tree modifies data, schema, session or transaction."""

from __future__ import annotations

from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from geoask.sql.context import GuardContext
from geoask.sql.parsing import ParsedQuery, violation_at, violation_at_token
from geoask.sql.pgview import PgView
from geoask.sql.violation import GuardViolation, PgViolation

RULE = "no_data_modification"
MODIFYING_NODES: tuple[type[exp.Expr], ...] = (
    exp.Insert, exp.Update, exp.Delete, exp.Merge, exp.Create, exp.Drop, exp.Alter,
    exp.TruncateTable, exp.Copy, exp.Command, exp.Set, exp.Commit, exp.Rollback,
    exp.Transaction, exp.Grant, exp.Revoke, exp.Use, exp.Pragma, exp.Analyze, exp.LoadData,
    exp.Kill, exp.Refresh, exp.Cache, exp.Uncache, exp.Comment, exp.Declare, exp.Attach,
    exp.Detach, exp.Install, exp.Export,
)
#: Keywords that start a data-modifying statement; screened on the tokens of text sqlglot
#: cannot parse, so ``SELECT (DELETE FROM t RETURNING 1)`` is refused by this rule on any
#: sqlglot version (a version that parses it finds the Delete node in the tree).
MODIFYING_TOKENS = frozenset(
    {TokenType.INSERT, TokenType.UPDATE, TokenType.DELETE, TokenType.MERGE, TokenType.TRUNCATE}
)


def no_data_modification(query: ParsedQuery, context: GuardContext) -> GuardViolation | None:
    """Reject data-modifying CTEs and any nested statement (walks the whole tree).

    >>> from geoask.sql.parsing import parse_query
    >>> sql = "WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d"
    >>> no_data_modification(parse_query(sql), GuardContext()).rule
    'no_data_modification'
    >>> no_data_modification(parse_query("SELECT (DELETE FROM t RETURNING 1)"), GuardContext()).rule
    'no_data_modification'
    """
    if not query.parsed:
        return _token_screen(query)
    for node in query.nodes:
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


def no_data_modification_pg(view: PgView, context: GuardContext) -> PgViolation | None:
    """Reject a data-modifying statement anywhere in PostgreSQL's reading.

    >>> from geoask.sql.pgview import postgres_view
    >>> view = postgres_view("WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d")
    >>> no_data_modification_pg(view, GuardContext()).fragment
    'DeleteStmt'
    """
    if view.modifying:
        return PgViolation(RULE, "the query holds a statement that changes data (a WITH clause "
                           "may only hold SELECT queries); remove it",
                           ", ".join(sorted(view.modifying)))
    return None


def _token_screen(query: ParsedQuery) -> GuardViolation | None:
    """A modifying keyword in unparsed text (not a column ``t.delete``, not FOR UPDATE)."""
    for previous, token in zip((None, *query.tokens), query.tokens, strict=False):
        if token.token_type in MODIFYING_TOKENS and not _is_name_or_lock(previous, token):
            return violation_at_token(
                RULE,
                f"{token.text.upper()} inside the query changes data; queries may only read - "
                "remove it (a WITH clause may only hold SELECT queries)",
                token,
                query,
                to_end=True,
            )
    return None


def _is_name_or_lock(previous: Token | None, token: Token) -> bool:
    if previous is None:
        return False
    if previous.token_type == TokenType.DOT:
        return True
    return token.token_type == TokenType.UPDATE and previous.text.upper() in {"FOR", "KEY"}
