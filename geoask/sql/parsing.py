"""Tokenize and parse submitted SQL once (sqlglot, PostgreSQL dialect) for the guard rules.

The rules inspect the tree and the tokens; nothing here ever generates SQL to execute.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from sqlglot import exp
from sqlglot.dialects.postgres import Postgres
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import Token, TokenType

from geoask.sql.violation import GuardViolation

ORIGINAL_NAME_KEY = "pg_name"
FRAGMENT_MAX_CHARS = 160


class GuardPostgres(Postgres):
    """PostgreSQL dialect that records each known function's name as written.

    sqlglot maps calls such as ``date_trunc(...)`` to typed nodes (``TimestampTrunc``); the
    written name is kept in ``node.meta["pg_name"]`` so the allow-list sees what the server sees.
    """

    ORIGINAL_NAME_META_KEY = ORIGINAL_NAME_KEY


class _DropCommandFallbackWarning(logging.Filter):
    """Silence sqlglot's "falling back to Command" warning; the guard reports it as a rule."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "Falling back to parsing as a 'Command'" not in record.getMessage()


logging.getLogger("sqlglot").addFilter(_DropCommandFallbackWarning())


@dataclass(frozen=True)
class ParsedQuery:
    """Submitted SQL with its tokens and parsed statements.

    Attributes:
        text: the SQL exactly as submitted.
        tokens: sqlglot tokens (``start``/``end`` are character offsets into ``text``).
        statements: parsed statements, empty ones (lone ``;``, comments) removed.

    """

    text: str
    tokens: tuple[Token, ...]
    statements: tuple[exp.Expr, ...]

    @property
    def tree(self) -> exp.Expr:
        """The first (for an accepted query: the only) statement."""
        return self.statements[0]


def parse_query(text: str) -> ParsedQuery:
    """Tokenize and parse ``text`` with the PostgreSQL dialect.

    Raises:
        QueryRejectedError: rule ``parses`` - the text is empty or is not valid SQL to sqlglot.

    """
    dialect = GuardPostgres()
    try:
        tokens = tuple(dialect.tokenize(text))
        raw = dialect.parser().parse(list(tokens), text)
    except (ParseError, TokenError) as error:
        raise _parse_violation(error).to_error() from None
    statements = tuple(
        statement
        for statement in raw
        if statement is not None and not isinstance(statement, exp.Semicolon)
    )
    if not statements:
        raise GuardViolation(
            "parses", "the text holds no SQL statement; send one SELECT query"
        ).to_error()
    return ParsedQuery(text=text, tokens=tokens, statements=statements)


def _parse_violation(error: ParseError | TokenError) -> GuardViolation:
    details = error.errors[0] if isinstance(error, ParseError) and error.errors else {}
    message = str(details.get("description") or error).splitlines()[0]
    fragment = str(details.get("highlight") or "")
    return GuardViolation(
        rule="parses",
        description=(
            f"the statement does not parse as PostgreSQL ({message}); write one plain SELECT "
            "query using standard syntax"
        ),
        fragment=fragment,
        line=details.get("line"),
        col=details.get("col"),
    )


def node_span(node: exp.Expr) -> tuple[int, int] | None:
    """Character span ``(start, end)`` (inclusive) of the positions in ``node``'s subtree."""
    starts: list[int] = []
    ends: list[int] = []
    for child in node.walk():
        meta = child.meta if child.meta else {}
        if "start" in meta and "end" in meta:
            starts.append(meta["start"])
            ends.append(meta["end"])
    if not starts:
        return None
    return min(starts), max(ends)


def node_line_col(node: exp.Expr) -> tuple[int | None, int | None]:
    """1-based ``(line, col)`` of the first position found in ``node``'s subtree."""
    for child in node.walk():
        meta = child.meta if child.meta else {}
        if "line" in meta and "col" in meta:
            # sqlglot's col points at the last character of the token; report its first one.
            start, end = meta.get("start"), meta.get("end")
            width = end - start if start is not None and end is not None else 0
            return meta["line"], max(1, meta["col"] - width)
    return None, None


def fragment_of(node: exp.Expr, query: ParsedQuery) -> str:
    """The submitted text of ``node`` (balanced to its closing parenthesis), shortened.

    Positions in sqlglot's tree do not cover every token (``::type``, ``$1``); when the
    submitted span does not match the node, sqlglot's rendering is quoted - for display only.
    """
    rendered = node.sql(dialect="postgres")
    span = node_span(node)
    if span is not None:
        start, end = span
        end = _extend_to_balanced_parens(query.tokens, start, end)
        text = query.text[start : end + 1]
        if _comparable(text) == _comparable(rendered):
            return _shorten(text)
    return _shorten(rendered)


def _comparable(text: str) -> str:
    return "".join(text.split()).replace('"', "").lower()


def _shorten(text: str) -> str:
    text = " ".join(text.split())
    if len(text) > FRAGMENT_MAX_CHARS:
        text = text[: FRAGMENT_MAX_CHARS - 3] + "..."
    return text


def _extend_to_balanced_parens(tokens: tuple[Token, ...], start: int, end: int) -> int:
    """Grow ``end`` over a call's argument list and any parenthesis left open in the span."""
    depth = 0
    span_end = end
    previous_in_span = False
    for token in tokens:
        if token.start < start:
            continue
        beyond = token.end > span_end
        opens_call = token.token_type == TokenType.L_PAREN and previous_in_span
        if beyond and depth <= 0 and not opens_call:
            break
        if token.token_type == TokenType.L_PAREN:
            depth += 1
        elif token.token_type == TokenType.R_PAREN:
            depth -= 1
        end = max(end, token.end)
        previous_in_span = not beyond
    return end


def violation_at(
    rule: str, description: str, node: exp.Expr, query: ParsedQuery, *, render: bool = False
) -> GuardViolation:
    """A :class:`GuardViolation` quoting ``node`` with its line and column when known.

    ``render=True`` quotes sqlglot's rendering of the node (for display only) - used for whole
    statements, whose leading keyword carries no position.
    """
    line, col = node_line_col(node)
    fragment = _shorten(node.sql(dialect="postgres")) if render else fragment_of(node, query)
    return GuardViolation(rule, description, fragment, line, col)


def violation_at_token(
    rule: str, description: str, token: Token, query: ParsedQuery, *, to_end: bool = False
) -> GuardViolation:
    """A :class:`GuardViolation` quoting ``token`` (``to_end``: and the rest of the text)."""
    line_start = query.text.rfind("\n", 0, token.start) + 1
    return GuardViolation(
        rule,
        description,
        _shorten(query.text[token.start : token.end + 1 if not to_end else len(query.text)]),
        token.line,
        token.start - line_start + 1,
    )
