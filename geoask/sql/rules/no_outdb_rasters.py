"""Rule: no out-of-database raster, whatever the policy.

An out-of-database band keeps only a server file path; every raster function given one
(``ST_Value``, ``ST_SummaryStats``, ``ST_AsTIFF``...) opens that file with GDAL, and band
metadata returns its path, size and timestamp. Tables geoask loads hold in-database rasters, so
an out-db raster can only come from the statement itself:

* a string constant holding raster WKB (hex, or a ``bytea`` hex literal) with an out-db band,
  however it reaches a raster (``'...'::raster``, ``ST_RastFromHexWKB('...')``, an untyped
  argument of a raster function);
* a raster built from computed text or bytes, which the guard cannot read: a cast to
  ``raster`` or ``ST_RastFromWKB``/``ST_RastFromHexWKB`` of anything but a string constant
  (or NULL).

Functions that take a server path (``ST_AddBand``'s out-db overload, ``ST_SetBandPath``,
``ST_FromGDALRaster``) and band metadata (``ST_BandMetaData``, ``ST_BandPath``...) are on the
deny-list of :mod:`geoask.sql.functions`. The server's own second wall:
``postgis.enable_outdb_rasters = off`` and ``postgis.gdal_enabled_drivers = 'DISABLE_ALL'``.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from geoask.base.raster import outdb_raster_text
from geoask.sql.calls import function_calls
from geoask.sql.context import GuardContext
from geoask.sql.parsing import ParsedQuery, cast_type_name, violation_at, violation_at_token
from geoask.sql.pgview import PgView
from geoask.sql.rules.lexical_safety import string_value
from geoask.sql.violation import GuardViolation, PgViolation

RULE = "no_outdb_rasters"
#: Functions that make a raster of text or bytes.
RASTER_FROM_BYTES = frozenset({"st_rastfromwkb", "st_rastfromhexwkb"})
STRING_TOKENS = frozenset({TokenType.STRING, TokenType.HEREDOC_STRING, TokenType.BYTE_STRING})
CONSTANT_TOKENS = STRING_TOKENS | {TokenType.NULL}
OUTDB_MESSAGE = ("a raster literal with an out-of-database band (a server file path) is not "
                 "accepted; query the in-database raster columns of the catalog's tables")
COMPUTED_MESSAGE = ("a raster made of computed text or bytes is not accepted (it may name a "
                    "server file); cast only a string constant, or query raster columns")


def no_outdb_rasters(query: ParsedQuery, context: GuardContext) -> GuardViolation | None:
    """Refuse out-db raster literals and rasters made of computed text or bytes.

    >>> from geoask.sql.parsing import parse_query
    >>> no_outdb_rasters(parse_query("SELECT ST_RastFromHexWKB(lower(h)) FROM t"),
    ...                  GuardContext()).rule
    'no_outdb_rasters'
    >>> no_outdb_rasters(parse_query("SELECT ST_Value(rast, 1, 1) FROM t"), GuardContext())
    """
    tokens = query.tokens
    for index, token in enumerate(tokens):
        if token.token_type in STRING_TOKENS and outdb_raster_text(_token_value(query, token)):
            return violation_at_token(RULE, OUTDB_MESSAGE, token, query)
        if not query.parsed and _computed_on_tokens(tokens, index):
            return violation_at_token(RULE, COMPUTED_MESSAGE, token, query)
    if not query.parsed:
        return None
    for node in query.find_all(exp.Cast):
        if cast_type_name(node.args.get("to")) == "raster" and not _is_string(node.this):
            return violation_at(RULE, COMPUTED_MESSAGE, node, query)
    for call in function_calls(query):
        if call.name in RASTER_FROM_BYTES and not _is_string(_first_argument(call.node)):
            return violation_at(RULE, COMPUTED_MESSAGE, call.node, query)
    return None


def no_outdb_rasters_pg(view: PgView, context: GuardContext) -> PgViolation | None:
    """The same on PostgreSQL's parse tree: string constants, casts to raster, WKB readers.

    >>> from geoask.sql.pgview import postgres_view
    >>> no_outdb_rasters_pg(postgres_view("SELECT t.h::raster FROM t"), GuardContext()).rule
    'no_outdb_rasters'
    """
    stack: list[Any] = list(view.statements)
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
            continue
        if not isinstance(node, dict):
            continue
        problem = _pg_problem(node)
        if problem is not None:
            return problem
        stack.extend(node.values())
    return None


def _pg_problem(node: dict[str, Any]) -> PgViolation | None:
    constant = node.get("A_Const")
    if isinstance(constant, dict) and isinstance(constant.get("sval"), dict):
        text = str(constant["sval"].get("sval", ""))
        if outdb_raster_text(text):
            return PgViolation(RULE, OUTDB_MESSAGE, text[:40], int(constant.get("location", -1)))
    cast = node.get("TypeCast")
    if isinstance(cast, dict):
        names = [n.get("String", {}).get("sval", "") for n in
                 cast.get("typeName", {}).get("names", [])]
        if names and names[-1].lower() == "raster" and not _pg_is_string(cast.get("arg")):
            return PgViolation(RULE, COMPUTED_MESSAGE, "::raster", int(cast.get("location", -1)))
    call = node.get("FuncCall")
    if isinstance(call, dict):
        names = [n.get("String", {}).get("sval", "") for n in call.get("funcname", [])]
        arguments = call.get("args") or [None]
        if names and names[-1] in RASTER_FROM_BYTES and not _pg_is_string(arguments[0]):
            return PgViolation(RULE, COMPUTED_MESSAGE, f"{names[-1]}(...)",
                               int(call.get("location", -1)))
    return None


def _pg_is_string(node: Any) -> bool:
    """A string constant or NULL, possibly cast (to ``bytea``)."""
    if isinstance(node, dict) and "TypeCast" in node:
        node = node["TypeCast"].get("arg")
    constant = node.get("A_Const") if isinstance(node, dict) else None
    return isinstance(constant, dict) and (
        isinstance(constant.get("sval"), dict) or bool(constant.get("isnull")))


def _is_string(node: exp.Expr | None) -> bool:
    """A string literal or NULL (sqlglot's reading), possibly cast (to ``bytea``)."""
    if isinstance(node, exp.Cast):
        node = node.this
    return (isinstance(node, exp.Literal) and node.is_string) or isinstance(
        node, exp.ByteString | exp.RawString | exp.Null)


def _computed_on_tokens(tokens: tuple[Token, ...], index: int) -> bool:
    """On text sqlglot cannot parse: ``st_rastfrom*wkb(`` or ``::raster`` of no constant."""
    token = tokens[index]
    if token.text.lower() in RASTER_FROM_BYTES and index + 2 < len(tokens):
        return (tokens[index + 1].token_type == TokenType.L_PAREN
                and tokens[index + 2].token_type not in CONSTANT_TOKENS)
    if token.token_type == TokenType.DCOLON and 0 < index < len(tokens) - 1:
        return (tokens[index + 1].text.lower() == "raster"
                and tokens[index - 1].token_type not in CONSTANT_TOKENS)
    return False


def _first_argument(node: exp.Expr) -> exp.Expr | None:
    arguments = node.expressions if isinstance(node, exp.Anonymous) else [node.this]
    return arguments[0] if arguments else None


def _token_value(query: ParsedQuery, token: Token) -> str:
    if token.token_type == TokenType.STRING:
        return token.text
    return string_value(query.text[token.start : token.end + 1]) or ""
