"""Rule: every function called is on the read-only allow-list of the active policy.

See :mod:`geoask.sql.functions` for the families and why this is an allow-list.
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from geoask.sql.calls import FunctionCall, function_calls
from geoask.sql.context import GuardContext
from geoask.sql.functions import (
    POSTGIS_READ_FUNCTIONS,
    SQL_SYNTAX_FUNCTIONS,
    allowed_function_names,
    attribute_call_names,
    is_spatial_function,
)
from geoask.sql.parsing import ParsedQuery, violation_at, violation_at_token
from geoask.sql.pgview import PgCall, PgView
from geoask.sql.violation import GuardViolation, PgViolation

RULE = "allowed_functions"

# Nodes sqlglot builds from syntax (keywords, operators), not from a call by name. Each maps to
# a fixed PostgreSQL construct that only reads; anything else built from syntax is refused.
SYNTAX_NODES: tuple[type[exp.Expr], ...] = (
    exp.Cast, exp.Extract, exp.Substring, exp.Trim, exp.StrPosition, exp.GroupConcat,
    exp.Ceil, exp.Floor, exp.Chr, exp.Initcap, exp.Overlay, exp.Case, exp.If,
    exp.CurrentDate, exp.CurrentTimestamp, exp.CurrentTime, exp.Localtime, exp.Localtimestamp,
    exp.Array, exp.RegexpLike, exp.RegexpILike, exp.ArrayOverlaps, exp.ArrayContainsAll,
    exp.ArrayContainedBy, exp.JSONExtract, exp.JSONExtractScalar, exp.JSONBExtract,
    exp.JSONBExtractScalar, exp.JSONBContains, exp.Distance, exp.Any, exp.All, exp.Exists,
    exp.And, exp.Or, exp.JSONArrayAgg, exp.JSONObject, exp.JSONObjectAgg, exp.Concat,
    exp.Collate, exp.Pow, exp.Unnest, exp.MatchAgainst,
)

#: TABLESAMPLE methods built into PostgreSQL (others come from extensions).
SAMPLING_METHODS = frozenset({"bernoulli", "system"})

# Tokens after which ``name(`` is no call: an alias's column list, a sampling method
# (``TABLESAMPLE BERNOULLI (10)``).
NOT_CALL_BEFORE = frozenset({TokenType.ALIAS, TokenType.TABLE_SAMPLE})
# Keywords written like calls that build syntax nodes (accepted by the tree check as such).
SYNTAX_CALL_WORDS = frozenset({
    "cast", "extract", "substring", "trim", "position", "overlay", "group", "filter", "over",
    "within", "in", "exists", "any", "all", "some", "array", "row", "values", "lateral",
    "repeatable",
})


def allowed_functions(query: ParsedQuery, context: GuardContext) -> GuardViolation | None:
    """Reject calls to functions outside the allow-list and schema-qualified calls.

    >>> from geoask.sql.parsing import parse_query
    >>> allowed_functions(parse_query("SELECT pg_read_file('/etc/passwd')"), GuardContext()).rule
    'allowed_functions'
    >>> allowed_functions(parse_query("SELECT count(*) FROM t"), GuardContext()) is None
    True

    On text sqlglot cannot parse, every ``name(`` is screened on the tokens instead, so a
    forbidden call is refused by this rule whether or not sqlglot parses the text around it.
    """
    allowed = allowed_function_names(context.policy.value, context.extension_functions)
    if not query.parsed:
        return _token_screen(query, allowed)
    for call in function_calls(query):
        problem = _problem(call, allowed)
        if problem:
            # Quote a qualified call with its schema (the Dot node around the call).
            node = call.node.parent if call.schema is not None and call.node.parent else call.node
            return violation_at(RULE, problem, node, query)
    return None


def allowed_functions_pg(view: PgView, context: GuardContext) -> PgViolation | None:
    """Reject PostgreSQL's calls outside the allow-list and constructs it builds that hide one.

    Attribute notation counts: ``a.st_asgeojson`` is the call ``st_asgeojson(a)`` when ``a``
    has no such column. So do refused nodes (XML), session values (``CURRENT_USER``) and
    TABLESAMPLE methods that extensions define.

    >>> from geoask.sql.pgview import postgres_view
    >>> view = postgres_view("SELECT a.st_asgeojson FROM demo.airports a")
    >>> allowed_functions_pg(view, GuardContext()).fragment
    '.st_asgeojson'
    >>> allowed_functions_pg(postgres_view("SELECT count(*) FROM t"), GuardContext()) is None
    True
    """
    allowed = allowed_function_names(context.policy.value, context.extension_functions)
    for call in view.calls:
        problem = _pg_call_problem(call, allowed, context)
        if problem is not None:
            return problem
    hidden = sorted(view.attributes & attribute_call_names(context.column_names))
    if hidden:
        return PgViolation(RULE, f"'.{hidden[0]}' is attribute notation for the call "
                           f"{hidden[0]}(row) (no such column); select real columns and call "
                           "functions by name", f".{hidden[0]}")
    if view.refused_nodes or view.session_values:
        what = sorted(view.refused_nodes | view.session_values)[0]
        return PgViolation(RULE, f"the construct {what} is not accepted; express it with plain "
                           "SELECT syntax and allowed functions", what)
    unknown = sorted(view.sampling_methods - SAMPLING_METHODS)
    if unknown:
        return PgViolation(RULE, f"TABLESAMPLE method {unknown[0]} is not built in; use "
                           "BERNOULLI or SYSTEM", unknown[0])
    return None


def _pg_call_problem(
    call: PgCall, allowed: frozenset[str], context: GuardContext
) -> PgViolation | None:
    """The problem with one call PostgreSQL's parser built, or None."""
    if call.syntax:
        if call.name in SQL_SYNTAX_FUNCTIONS:
            return None
        return PgViolation(RULE, f"the SQL construct that calls {call.name}() is not accepted; "
                           "express it with plain SELECT syntax", call.name, call.location)
    postgis_in_public = call.schema == "public" and call.name in allowed and (
        call.name in POSTGIS_READ_FUNCTIONS or call.name in context.extension_functions)
    if call.schema not in (None, "pg_catalog") and not postgis_in_public:
        return PgViolation(RULE, f"the call is qualified with schema {call.schema!r}; call "
                           "built-in functions without a schema", f"{call.schema}.{call.name}",
                           call.location)
    if call.name not in allowed:
        return PgViolation(RULE, f"function {call.name}() is not on the read-only allow-list; "
                           "use only aggregate, window, math, string, date/time, JSON and array "
                           "functions", f"{call.name}(...)", call.location)
    return None


def _token_screen(query: ParsedQuery, allowed: frozenset[str]) -> GuardViolation | None:
    """Screen every ``name(`` / ``schema.name(`` of text sqlglot could not parse.

    Mirrors the tree check: a schema other than ``pg_catalog`` is refused, a quoted name must
    match an allowed name exactly, a plain one in lower case. Not calls: syntax words written
    with parentheses (CAST, WITHIN GROUP), alias and CTE column lists (``AS t(a)``,
    ``t(a) AS (...)``) and TABLESAMPLE methods.
    """
    tokens = query.tokens
    for index, token in enumerate(tokens[:-1]):
        if tokens[index + 1].token_type != TokenType.L_PAREN:
            continue
        if token.token_type not in {TokenType.VAR, TokenType.IDENTIFIER}:
            continue
        before = tokens[index - 1] if index else None
        if before is not None and before.token_type in NOT_CALL_BEFORE:
            continue
        if _opens_cte_body(tokens, index + 1):
            continue
        quoted = token.token_type == TokenType.IDENTIFIER
        name = token.text if quoted else token.text.lower()
        qualified = index >= 2 and before is not None and before.token_type == TokenType.DOT
        schema = tokens[index - 2].text.lower() if qualified else None
        if schema is None and not quoted and name in SYNTAX_CALL_WORDS:
            continue
        # the same judgement as the tree check, on a call node built from the tokens
        call = FunctionCall(exp.Anonymous(this=name), name, schema)
        problem = _problem(call, allowed)
        if problem:
            return violation_at_token(RULE, problem, token, query)
    return None


def _opens_cte_body(tokens: tuple[Token, ...], open_index: int) -> bool:
    """True when the parenthesis at ``open_index`` closes before ``AS (``: ``t(a, b) AS (...)``."""
    depth = 0
    for index in range(open_index, len(tokens)):
        kind = tokens[index].token_type
        depth += (kind == TokenType.L_PAREN) - (kind == TokenType.R_PAREN)
        if depth == 0:
            following = tokens[index + 1 : index + 3]
            return [t.token_type for t in following] == [TokenType.ALIAS, TokenType.L_PAREN]
    return False


def _problem(call: FunctionCall, allowed: frozenset[str]) -> str | None:
    postgis_in_public = call.schema == "public" and call.name in allowed and (
        call.name in POSTGIS_READ_FUNCTIONS or is_spatial_function(call.name or ""))
    if call.schema is not None and call.schema != "pg_catalog" and not postgis_in_public:
        return (
            f"the call is qualified with schema {call.schema!r}; call built-in functions "
            "without a schema (or with pg_catalog.)"
        )
    if call.name is None:
        if isinstance(call.node, SYNTAX_NODES):
            return None
        written = " ".join(call.node.sql(dialect="postgres").split())
        return (
            f"the construct {written[:60]} is not accepted; express it with plain SELECT "
            "syntax and allowed functions"
        )
    if call.name in allowed:
        return None
    return (
        f"function {call.name}() is not on the read-only allow-list (functions that write, "
        "reach files, the network or the server, change settings, take locks, touch sequences "
        "or sleep are refused); use only aggregate, window, math, string, date/time, JSON and "
        "array functions"
        + ("" if _is_plain(call) else "; quoted names must match a built-in's lower-case name")
    )


def _is_plain(call: FunctionCall) -> bool:
    return call.name is None or call.name == call.name.lower()

