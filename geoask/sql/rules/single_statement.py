"""Rule: the text holds exactly one statement (trailing semicolons are tolerated)."""

from __future__ import annotations

from sqlglot.tokens import TokenType

from geoask.sql.context import GuardContext
from geoask.sql.parsing import ParsedQuery, violation_at, violation_at_token
from geoask.sql.violation import GuardViolation

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


def trailing_trimmed(query: ParsedQuery) -> tuple:
    """Tokens of ``query`` without the semicolons at its end."""
    tokens = list(query.tokens)
    while tokens and tokens[-1].token_type == TokenType.SEMICOLON:
        tokens.pop()
    return tuple(tokens)
