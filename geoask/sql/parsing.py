"""Tokenize and parse submitted SQL once (sqlglot, PostgreSQL dialect) for the guard rules.

The rules inspect the tree and the tokens; nothing here ever generates SQL to execute.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass

from sqlglot import exp
from sqlglot.dialects.postgres import Postgres
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import Token, TokenType

from geoask.sql.pgview import PgParseFailure, PgView, postgres_view
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


#: Deepest nesting of parentheses accepted. Decided on tokens, so the limit is the same on
#: every sqlglot version and Python recursion limit; analytical SQL rarely nests past 5.
MAX_PAREN_DEPTH = 32
#: Deepest nesting of square brackets (``ARRAY[ARRAY[...]]``): sqlglot's parse time grows
#: about threefold per level (12 levels: 0.25 s, 20: 47 s), so more would let a short text
#: stall the guard; four-dimensional arrays are the most analytical SQL needs.
MAX_BRACKET_DEPTH = 4
#: Longest text checked, in characters (the benchmark's longest statement has 653); parse time
#: and memory grow with it, and a model's statement this long is a mistake.
MAX_SQL_CHARS = 20_000

TOO_DEEP_DESCRIPTION = (
    "the query is nested too deeply to be checked; flatten it with WITH clauses (CTEs)"
)


NOT_READ_BY_POSTGRES = PgParseFailure("not parsed by PostgreSQL's parser")


@dataclass(frozen=True)
class ParsedQuery:
    """Submitted SQL with its tokens and, when sqlglot could build them, its statements.

    Attributes:
        text: the SQL exactly as submitted.
        tokens: sqlglot tokens (``start``/``end`` are character offsets into ``text``).
        statements: parsed statements, empty ones (lone ``;``, comments) removed; empty when
            sqlglot could not parse the tokens (then ``parse_error`` says why).
        parse_error: the ``parses`` violation for text that tokenizes but does not parse.
        pg: PostgreSQL's own reading of the text (:mod:`geoask.sql.pgview`): a
            :class:`~geoask.sql.pgview.PgView`, or the parser's refusal.

    Rules that can decide on tokens do so whether or not the statements exist, so their
    verdicts do not change when a sqlglot release learns to parse more syntax.

    """

    text: str
    tokens: tuple[Token, ...]
    statements: tuple[exp.Expr, ...]
    parse_error: GuardViolation | None = None
    pg: PgView | PgParseFailure = NOT_READ_BY_POSTGRES

    @property
    def parsed(self) -> bool:
        """True when sqlglot built a tree for the text."""
        return bool(self.statements)

    @functools.cached_property
    def nodes(self) -> tuple[exp.Expr, ...]:
        """Every node of :attr:`tree`, breadth first: walked once, shared by all the rules."""
        return tuple(self.tree.walk())

    def find(self, *types: type[exp.Expr]) -> exp.Expr | None:
        """The first node (breadth first) of one of ``types``, like ``tree.find``."""
        return next((node for node in self.nodes if isinstance(node, types)), None)

    def find_all(self, *types: type[exp.Expr]) -> Iterator[exp.Expr]:
        """Every node of one of ``types``, breadth first, like ``tree.find_all``."""
        return (node for node in self.nodes if isinstance(node, types))

    @property
    def tree(self) -> exp.Expr:
        """The first (for an accepted query: the only) statement.

        Raises:
            QueryRejectedError: rule ``parses`` - sqlglot could not parse the text.

        """
        if not self.statements:
            raise (self.parse_error or _NO_STATEMENT).to_error()
        return self.statements[0]


def parse_query(text: str, max_chars: int = MAX_SQL_CHARS) -> ParsedQuery:
    """Tokenize and parse ``text`` with the PostgreSQL dialect.

    Text that tokenizes but does not parse is returned with ``parse_error`` set and no
    statements: the token rules still judge it, and the ``parses`` rule reports it last.

    Raises:
        QueryRejectedError: rule ``parses`` - the text is empty or longer than
            ``max_chars`` (default :data:`MAX_SQL_CHARS`, setting ``sql_max_chars``), does not
            tokenize (an unterminated string, comment or dollar
            quote), has unbalanced parentheses or brackets or nests them deeper than
            :data:`MAX_PAREN_DEPTH` / :data:`MAX_BRACKET_DEPTH`; all decided before parsing.

    """
    if len(text) > max_chars:
        raise GuardViolation(
            "parses", f"the text is {len(text):,} characters; at most {max_chars:,} are "
            "checked - send one shorter SELECT (move work into later steps)").to_error()
    dialect = GuardPostgres()
    try:
        tokens = tuple(dialect.tokenize(text))
    except TokenError as error:
        raise _parse_violation(error).to_error() from None
    if not any(token.token_type != TokenType.SEMICOLON for token in tokens):
        raise _NO_STATEMENT.to_error()
    nesting = _nesting_violation(text, tokens)
    if nesting is not None:
        raise nesting.to_error()
    pg = postgres_view(text)
    try:
        raw = dialect.parser().parse(list(tokens), text)
    except ParseError as error:
        return ParsedQuery(text, tokens, (), _parse_violation(error), pg)
    except RecursionError:
        return ParsedQuery(text, tokens, (), GuardViolation("parses", TOO_DEEP_DESCRIPTION), pg)
    statements = tuple(
        statement
        for statement in raw
        if statement is not None and not isinstance(statement, exp.Semicolon)
    )
    if not statements:
        raise _NO_STATEMENT.to_error()
    return ParsedQuery(text=text, tokens=tokens, statements=statements, pg=pg)


_NO_STATEMENT = GuardViolation("parses", "the text holds no SQL statement; send one SELECT query")


def _nesting_violation(text: str, tokens: tuple[Token, ...]) -> GuardViolation | None:
    """Unbalanced or too deeply nested parentheses or brackets, decided on the tokens alone."""
    pairs = {TokenType.L_PAREN: (TokenType.R_PAREN, MAX_PAREN_DEPTH, "("),
             TokenType.L_BRACKET: (TokenType.R_BRACKET, MAX_BRACKET_DEPTH, "[")}
    for opening, (closing, limit, char) in pairs.items():
        depth = 0
        for token in tokens:
            if token.token_type == opening:
                depth += 1
                if depth > limit:
                    return GuardViolation("parses", TOO_DEEP_DESCRIPTION, line=token.line)
            elif token.token_type == closing:
                depth -= 1
                if depth < 0:
                    what = f"this {token.text!r} closes no {char!r}"
                    return _balance_violation(text, token, what)
        if depth > 0:
            unclosed = _outermost_unclosed(tokens, opening, closing)
            return _balance_violation(text, unclosed, f"{depth} {char!r} never closed")
    return None


def _outermost_unclosed(tokens: tuple[Token, ...], opening: TokenType,
                        closing: TokenType) -> Token:
    opened: list[Token] = []
    for token in tokens:
        if token.token_type == opening:
            opened.append(token)
        elif token.token_type == closing:
            opened.pop()
    return opened[0]


def _balance_violation(text: str, token: Token, what: str) -> GuardViolation:
    line_start = text.rfind("\n", 0, token.start) + 1
    return GuardViolation(
        "parses",
        f"the brackets do not balance ({what}); close every '(' and '[' and send one SELECT "
        "query",
        _shorten(text[max(0, token.start - 40) : token.end + 40]),
        token.line,
        token.start - line_start + 1,
    )


def _parse_violation(error: ParseError | TokenError) -> GuardViolation:
    details = error.errors[0] if isinstance(error, ParseError) and error.errors else {}
    message = str(details.get("description") or error).splitlines()[0]
    # sqlglot's tree-validation messages name its classes; the user needs only the keyword
    message = re.sub(r" for <class '[\w.]+'>", "", message)
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


def cast_type_name(data_type: exp.Expr | None) -> str:
    """The lower-case name of a cast's target type, without schema or modifiers.

    >>> cast_type_name(parse_query("SELECT x::public.geometry(Point, 4326)").tree.find(exp.Cast).to)
    'geometry'
    """
    if not isinstance(data_type, exp.DataType):
        return ""
    this = data_type.this
    if isinstance(this, str):
        return this.lower()
    if this == exp.DataType.Type.USERDEFINED:
        kind = data_type.args.get("kind")
        return str(kind).split("(")[0].split(".")[-1].strip('"').lower()
    return str(this.value).lower()


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
