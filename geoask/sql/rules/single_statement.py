"""Rule: the text holds exactly one statement (trailing semicolons are tolerated)."""

from __future__ import annotations

from sqlglot.tokens import TokenType

from geoask.sql.context import GuardContext
from geoask.sql.parsing import ParsedQuery, violation_at, violation_at_token
from geoask.sql.pgview import PgView
from geoask.sql.violation import GuardViolation, PgViolation

RULE = "single_statement"


def single_statement(query: ParsedQuery, context: GuardContext) -> GuardViolation | None:
    """Reject a second statement, whatever it is.

    >>> from geoask.sql.parsing import parse_query
    >>> single_statement(parse_query("SELECT 1; DELETE FROM t"), GuardContext()).rule
    'single_statement'
    """
    description = "send exactly one statement; remove the ';' and everything after the query"
    for token in trailing_trimmed(query):
        if token.token_type == TokenType.SEMICOLON:
            return violation_at_token(RULE, description, token, query, to_end=True)
    if len(query.statements) > 1:
        return violation_at(RULE, description, query.statements[1], query, render=True)
    return None


def single_statement_pg(view: PgView, context: GuardContext) -> PgViolation | None:
    """Reject text PostgreSQL reads as more (or fewer) than one statement.

    >>> from geoask.sql.pgview import postgres_view
    >>> single_statement_pg(postgres_view("SELECT 1; SELECT 2"), GuardContext()).fragment
    '2 statements'
    """
    if len(view.statement_kinds) != 1:
        return PgViolation(RULE, "send exactly one statement; remove the ';' and everything "
                           "after the query", f"{len(view.statement_kinds)} statements")
    return None


def trailing_trimmed(query: ParsedQuery) -> tuple:
    """Tokens of ``query`` without the semicolons at its end."""
    tokens = list(query.tokens)
    while tokens and tokens[-1].token_type == TokenType.SEMICOLON:
        tokens.pop()
    return tuple(tokens)
