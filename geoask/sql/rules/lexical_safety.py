r"""Rule: no literal forms whose lexing could differ between sqlglot and PostgreSQL.

Dollar-quoted strings (``$tag$...$tag$``), escape strings (``E'...'``) and Unicode escapes
(``U&'...'``, ``U&"..."``) are where a parser and the server most easily disagree on where a
string ends - the classic way to hide a call from a checker. Unicode escapes are refused.
Dollar-quoted and escape strings are accepted when they hold only data - WKB hex
(``E'\\x0101...'``), GML or GeoJSON (``$$<gml:Point>...$$``), as public PostGIS SQL writes
them: their value (decoded as PostgreSQL decodes it) is one of the string constants in
PostgreSQL's own reading, holds no quote, dollar sign, semicolon or comment opener, and is no
SQL statement to PostgreSQL's parser.

So are characters the two readers treat differently: a NUL byte (libpq ends the text there;
sqlglot reads on) and Unicode whitespace other than ASCII's (U+00A0 is whitespace to Python
and sqlglot, part of an identifier to PostgreSQL) outside string literals and quoted names.
"""

from __future__ import annotations

import re
from typing import Any

from sqlglot.tokens import Token, TokenType

from geoask.sql.context import GuardContext
from geoask.sql.parsing import ParsedQuery, violation_at_token
from geoask.sql.pgview import PgView, postgres_view
from geoask.sql.violation import GuardViolation

RULE = "lexical_safety"
FORBIDDEN_TOKENS = {TokenType.UNICODE_STRING: "Unicode-escape strings (U&'...')"}
#: String forms accepted when they hold only data (see the module's docstring).
DATA_STRING_TOKENS = {
    TokenType.HEREDOC_STRING: "a dollar-quoted string",
    TokenType.BYTE_STRING: "an escape string (E'...')",
}
#: What data in such a string never holds: a quote, a dollar sign, ';' or a comment opener.
NOT_DATA = re.compile(r"['$;]|--|/\*")
_DOLLAR = re.compile(r"\$([A-Za-z_][A-Za-z_0-9]*|)\$(.*)\$\1\$", re.S)
_ESCAPE = re.compile(
    r"\\(?:x([0-9A-Fa-f]{1,2})|([0-7]{1,3})|u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))|''",
    re.S)
_SIMPLE_ESCAPES = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def lexical_safety(query: ParsedQuery, context: GuardContext) -> GuardViolation | None:
    r"""Reject Unicode escapes, and dollar quotes and escape strings that hold more than data.

    >>> from geoask.sql.parsing import parse_query
    >>> lexical_safety(parse_query("SELECT $x$a; SELECT 1$x$"), GuardContext()).rule
    'lexical_safety'
    >>> lexical_safety(parse_query("SELECT E'\\\\x0101'::bytea"), GuardContext()) is None
    True
    """
    odd = _odd_character(query)
    if odd is not None:
        return odd
    tokens = query.tokens
    for index, token in enumerate(tokens):
        if token.token_type in DATA_STRING_TOKENS:
            problem = _data_string_problem(query, token)
            if problem is not None:
                return violation_at_token(RULE, problem, token, query)
            continue
        what = FORBIDDEN_TOKENS.get(token.token_type)
        if what is None and _starts_unicode_identifier(tokens, index):
            what = 'Unicode-escape identifiers (U&"...")'
        if what is not None:
            return violation_at_token(
                RULE,
                f"{what} are not accepted; write plain single-quoted strings ('...') and "
                "plain or double-quoted identifiers",
                token,
                query,
            )
    return None


ASCII_WHITESPACE = frozenset(" \t\n\r\f\v")
QUOTED_TOKENS = frozenset({TokenType.STRING, TokenType.IDENTIFIER})


def _odd_character(query: ParsedQuery) -> GuardViolation | None:
    """A NUL anywhere, or non-ASCII whitespace outside strings and quoted identifiers."""
    if query.text.isascii() and "\x00" not in query.text:
        return None
    quoted = [(t.start, t.end) for t in query.tokens if t.token_type in QUOTED_TOKENS]
    for offset, char in enumerate(query.text):
        odd = char == "\x00" or (char.isspace() and char not in ASCII_WHITESPACE)
        if not odd or (char != "\x00" and any(a <= offset <= b for a, b in quoted)):
            continue
        line = query.text.count("\n", 0, offset) + 1
        col = offset - (query.text.rfind("\n", 0, offset) + 1) + 1
        return GuardViolation(
            RULE,
            f"the character U+{ord(char):04X} is read differently by the guard and the "
            "server; use plain ASCII spaces and no NUL bytes",
            repr(query.text[max(0, offset - 20) : offset + 20]),
            line,
            col,
        )
    return None


def _starts_unicode_identifier(tokens: tuple[Token, ...], index: int) -> bool:
    """``U&"..."`` lexes in sqlglot as ``U``, ``&``, identifier with no space between."""
    if index + 2 >= len(tokens) or tokens[index].text.upper() != "U":
        return False
    amp, ident = tokens[index + 1], tokens[index + 2]
    return (
        amp.token_type == TokenType.AMP
        and amp.start == tokens[index].end + 1
        and ident.start == amp.end + 1
    )


def _data_string_problem(query: ParsedQuery, token: Token) -> str | None:
    """Why a dollar-quoted or escape string is not plain data both readers agree on, or None."""
    what = DATA_STRING_TOKENS[token.token_type]
    value = string_value(query.text[token.start : token.end + 1])
    advice = ("write data only (WKB hex, GML, GeoJSON, text) in it, or use a plain "
              "single-quoted string ('...')")
    if not isinstance(query.pg, PgView):
        return None  # PostgreSQL cannot read the text: rule parses refuses it
    if value is None or value not in pg_string_constants(query.pg):
        return f"{what} is read differently by the guard and the server; {advice}"
    if NOT_DATA.search(value):
        return (f"{what} holding a quote, a dollar sign, ';' or a comment opener is not "
                f"accepted; {advice}")
    if _holds_statement(value):
        return f"{what} holding a SQL statement is not accepted; {advice}"
    return None


def string_value(written: str) -> str | None:
    r"""The value PostgreSQL gives a dollar-quoted (``$t$...$t$``) or escape (``E'...'``) string.

    >>> string_value("$g$<gml:Point/>$g$"), string_value("E'\\\\x01\\t''a'")
    ('<gml:Point/>', "\\x01\t'a")
    >>> string_value("'plain'") is None
    True
    """
    dollar = _DOLLAR.fullmatch(written)
    if dollar is not None:
        return dollar.group(2)
    if len(written) < 3 or written[0] not in "eE" or written[1] != "'" or written[-1] != "'":
        return None
    return _ESCAPE.sub(_unescape, written[2:-1])


def _unescape(match: re.Match[str]) -> str:
    hex_byte, octal, short, long, other = match.groups()
    if match.group(0) == "''":
        return "'"
    for digits, base in ((hex_byte, 16), (octal, 8), (short, 16), (long, 16)):
        if digits is not None:
            return chr(int(digits, base))
    return _SIMPLE_ESCAPES.get(other, other)


def pg_string_constants(view: PgView) -> frozenset[str]:
    """Every string constant (``A_Const`` text) in PostgreSQL's parse tree of the statement."""
    found: set[str] = set()
    stack: list[Any] = list(view.statements)
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            constant = node.get("A_Const")
            if isinstance(constant, dict) and isinstance(constant.get("sval"), dict):
                found.add(str(constant["sval"].get("sval", "")))
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return frozenset(found)


def _holds_statement(value: str) -> bool:
    """True if PostgreSQL's parser reads ``value`` as one or more statements."""
    view = postgres_view(value)
    return isinstance(view, PgView) and bool(view.statement_kinds)
