"""Rule: no literal forms whose lexing could differ between sqlglot and PostgreSQL.

Dollar-quoted strings (``$tag$...$tag$``), escape strings (``E'...'``) and Unicode escapes
(``U&'...'``, ``U&"..."``) are where a parser and the server most easily disagree on where a
string ends - the classic way to hide a call from a checker. Analytical queries never need them.

So are characters the two readers treat differently: a NUL byte (libpq ends the text there;
sqlglot reads on) and Unicode whitespace other than ASCII's (U+00A0 is whitespace to Python
and sqlglot, part of an identifier to PostgreSQL) outside string literals and quoted names.
"""

from __future__ import annotations

from sqlglot.tokens import Token, TokenType

from geoask.sql.context import GuardContext
from geoask.sql.parsing import ParsedQuery, violation_at_token
from geoask.sql.violation import GuardViolation

RULE = "lexical_safety"
FORBIDDEN_TOKENS = {
    TokenType.HEREDOC_STRING: "dollar-quoted strings",
    TokenType.BYTE_STRING: "escape strings (E'...')",
    TokenType.UNICODE_STRING: "Unicode-escape strings (U&'...')",
}


def lexical_safety(query: ParsedQuery, context: GuardContext) -> GuardViolation | None:
    """Reject dollar quotes, escape strings and Unicode escapes.

    >>> from geoask.sql.parsing import parse_query
    >>> lexical_safety(parse_query("SELECT $x$a$x$"), GuardContext()).rule
    'lexical_safety'
    """
    odd = _odd_character(query)
    if odd is not None:
        return odd
    tokens = query.tokens
    for index, token in enumerate(tokens):
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
