"""Rule: every function called is on the read-only allow-list of the active policy.

See :mod:`geoask.sql.functions` for the families and why this is an allow-list.
"""

from __future__ import annotations

from sqlglot import exp

from geoask.sql.calls import FunctionCall, function_calls
from geoask.sql.context import GuardContext
from geoask.sql.functions import POSTGIS_READ_FUNCTIONS, allowed_function_names
from geoask.sql.parsing import ParsedQuery, violation_at
from geoask.sql.violation import GuardViolation

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
    exp.Collate, exp.Pow,
)


def allowed_functions(query: ParsedQuery, context: GuardContext) -> GuardViolation | None:
    """Reject calls to functions outside the allow-list and schema-qualified calls.

    >>> from geoask.sql.parsing import parse_query
    >>> allowed_functions(parse_query("SELECT pg_read_file('/etc/passwd')"), GuardContext()).rule
    'allowed_functions'
    >>> allowed_functions(parse_query("SELECT count(*) FROM t"), GuardContext()) is None
    True
    """
    allowed = allowed_function_names(context.policy.value)
    for call in function_calls(query):
        problem = _problem(call, allowed)
        if problem:
            # Quote a qualified call with its schema (the Dot node around the call).
            node = call.node.parent if call.schema is not None and call.node.parent else call.node
            return violation_at(RULE, problem, node, query)
    return None


def _problem(call: FunctionCall, allowed: frozenset[str]) -> str | None:
    postgis_in_public = call.schema == "public" and call.name in allowed and (
        call.name in POSTGIS_READ_FUNCTIONS)
    if call.schema is not None and call.schema != "pg_catalog" and not postgis_in_public:
        return (
            f"the call is qualified with schema {call.schema!r}; call built-in functions "
            "without a schema (or with pg_catalog.)"
        )
    if call.name is None:
        if isinstance(call.node, SYNTAX_NODES):
            return None
        return (
            f"the construct {call.node.key.upper()} is not accepted; express it with plain "
            "SELECT syntax and allowed functions"
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

