"""Rule: the policies hold on PostgreSQL's own reading of the statement too.

sqlglot's rules judge sqlglot's tree; this rule judges the tree the server's grammar builds
(:mod:`geoask.sql.pgview`, libpg_query through pglast) by the same policies: one plain SELECT,
nothing that writes, no ``INTO``, locks or placeholders, no ``OPERATOR()``, no system catalogs
(including ``reg*`` casts, which read them), the spatial policy, the function allow-list, no
hidden calls through attribute notation, and the Top-K contract. Each failure is reported
under the name of the rule it mirrors, so a verdict names the policy, not the parser.
"""

from __future__ import annotations

from collections.abc import Callable

from geoask.catalog.spatial import postgis_type_name
from geoask.sql.context import AnswerContract, GuardContext, SpatialPolicy
from geoask.sql.functions import (
    POSTGIS_READ_FUNCTIONS,
    SQL_SYNTAX_FUNCTIONS,
    allowed_function_names,
    attribute_call_names,
    computes_spatially,
    is_spatial_function,
)
from geoask.sql.parsing import ParsedQuery
from geoask.sql.pgview import PgParseFailure, PgView
from geoask.sql.rules.no_system_catalogs import is_system_relation, reads_catalog_type
from geoask.sql.violation import GuardViolation

RULE = "postgres_view"
SEPARATED_ADVICE = (
    "the active policy 'separated' keeps spatial computation out of SQL: select the rows and "
    "their geometry column, then compute in Python with geopandas/shapely"
)
#: Operators only PostGIS defines among the types an analytical query meets; under
#: ``separated`` they are spatial computation whatever their operands.
SPATIAL_OPERATORS = frozenset({"<->", "&&&", "|=|", "<#>", "<<#>>", "<<->>", "~=", "&<|", "|&>"})
#: TABLESAMPLE methods built into PostgreSQL (others come from extensions).
SAMPLING_METHODS = frozenset({"bernoulli", "system"})


def postgres_view(query: ParsedQuery, context: GuardContext) -> GuardViolation | None:
    """Judge PostgreSQL's parse of ``query`` by every policy; the first failure, or None.

    >>> from geoask.sql.parsing import parse_query
    >>> postgres_view(parse_query("SELECT a.st_asgeojson FROM demo.airports a"),
    ...               GuardContext()).rule
    'allowed_functions'
    >>> postgres_view(parse_query("SELECT oid::regrole FROM t"), GuardContext()).rule
    'no_system_catalogs'
    >>> postgres_view(parse_query("SELECT name FROM demo.airports"), GuardContext()) is None
    True
    """
    view = query.pg
    if isinstance(view, PgParseFailure):
        return _at(query, "parses", f"PostgreSQL's parser refuses the statement "
                   f"({view.message}); write one plain SELECT query", view.location)
    for check in CHECKS:
        found = check(view, context)
        if found is not None:
            rule, description, fragment, *where = found
            located = _at(query, rule, description, where[0] if where else -1)
            return GuardViolation(rule, description, fragment, located.line, located.col)
    return None


# (rule, description, fragment[, location]): location is PostgreSQL's byte offset of a call
_Found = tuple[str, str, str] | tuple[str, str, str, int] | None


def _statement(view: PgView, context: GuardContext) -> _Found:
    if len(view.statement_kinds) != 1:
        return ("single_statement", "send exactly one statement; remove the ';' and "
                "everything after the query", f"{len(view.statement_kinds)} statements")
    kind = view.statement_kinds[0]
    if kind != "SelectStmt":
        return ("query_only", f"PostgreSQL reads the text as {kind}, not a query; only "
                "read-only SELECT queries are run - rewrite it as one SELECT", kind)
    if view.modifying:
        return ("no_data_modification", "the query holds a statement that changes data "
                "(a WITH clause may only hold SELECT queries); remove it",
                ", ".join(sorted(view.modifying)))
    return None


def _clauses(view: PgView, context: GuardContext) -> _Found:
    if view.into:
        return ("no_select_into", "SELECT ... INTO creates a table; remove INTO", "INTO")
    if view.locking:
        return ("no_row_locks", "FOR UPDATE/SHARE locks rows; remove the clause", "FOR ...")
    if view.parameters:
        return ("no_bind_parameters", "bind parameters ($1) are not supported; write values "
                "as literals", "$n")
    qualified = sorted(op for op in view.operators if "." in op)
    if qualified:
        return ("no_operator_syntax", "OPERATOR(...) syntax is not accepted; write the "
                "operator itself", f"OPERATOR({qualified[0]})")
    return None


def _catalogs(view: PgView, context: GuardContext) -> _Found:
    for schema, name in sorted(view.relations, key=str):
        if is_system_relation(schema, name):
            return ("no_system_catalogs", "system catalogs, statistics views and PostGIS "
                    "metadata views are not available; query the data tables described in "
                    "the schema", f"{schema}.{name}" if schema else name)
    for _schema, name in sorted(view.casts, key=str):
        if reads_catalog_type(name):
            return ("no_system_catalogs", f"a cast to {name} looks names up in the system "
                    "catalogs; query the data tables described in the schema", f"::{name}")
    return None


def _spatial(view: PgView, context: GuardContext) -> _Found:
    if context.policy != SpatialPolicy.SEPARATED:
        return None
    for call in view.calls:
        if computes_spatially(call.name):
            return ("spatial_policy", f"spatial function {call.name}() computes in SQL; "
                    f"{SEPARATED_ADVICE}", f"{call.name}(...)", call.location)
    for _schema, name in sorted(view.casts, key=str):
        if postgis_type_name(name) is not None:
            return ("spatial_policy", f"a cast to {name} computes in SQL; {SEPARATED_ADVICE}",
                    f"::{name}")
    for operator, operand in sorted(view.operands):
        kind, _, name = operand.partition(":")
        spatial = (
            (kind == "column" and name.lower() in context.geometry_columns)
            or (kind == "call" and is_spatial_function(name))
            or (kind == "cast" and postgis_type_name(name) is not None)
        )
        if spatial:
            return ("spatial_policy", f"the operator {operator} applied to a geometry computes "
                    f"in SQL; {SEPARATED_ADVICE}", operator)
    for operator in sorted(view.operators & SPATIAL_OPERATORS):
        return ("spatial_policy", f"the operator {operator} is PostGIS computation; "
                f"{SEPARATED_ADVICE}", operator)
    return None


def _functions(view: PgView, context: GuardContext) -> _Found:
    allowed = allowed_function_names(context.policy.value, context.extension_functions)
    for call in view.calls:
        if call.syntax:
            if call.name not in SQL_SYNTAX_FUNCTIONS:
                return ("allowed_functions", f"the SQL construct that calls {call.name}() is "
                        "not accepted; express it with plain SELECT syntax", call.name,
                        call.location)
            continue
        postgis_in_public = call.schema == "public" and call.name in allowed and (
            call.name in POSTGIS_READ_FUNCTIONS or call.name in context.extension_functions)
        if call.schema not in (None, "pg_catalog") and not postgis_in_public:
            return ("allowed_functions", f"the call is qualified with schema {call.schema!r}; "
                    "call built-in functions without a schema", f"{call.schema}.{call.name}",
                    call.location)
        if call.name not in allowed:
            return ("allowed_functions", f"function {call.name}() is not on the read-only "
                    "allow-list; use only aggregate, window, math, string, date/time, JSON "
                    "and array functions", f"{call.name}(...)", call.location)
    hidden = sorted(view.attributes & attribute_call_names(context.column_names))
    if hidden:
        return ("allowed_functions", f"'.{hidden[0]}' is attribute notation for the call "
                f"{hidden[0]}(row) (no such column); select real columns and call functions "
                "by name", f".{hidden[0]}")
    if view.refused_nodes or view.session_values:
        what = sorted(view.refused_nodes | view.session_values)[0]
        return ("allowed_functions", f"the construct {what} is not accepted; express it with "
                "plain SELECT syntax and allowed functions", what)
    unknown = sorted(view.sampling_methods - SAMPLING_METHODS)
    if unknown:
        return ("allowed_functions", f"TABLESAMPLE method {unknown[0]} is not built in; use "
                "BERNOULLI or SYSTEM", unknown[0])
    return None


def _topk(view: PgView, context: GuardContext) -> _Found:
    if context.contract != AnswerContract.TOPK:
        return None
    if view.outer_sorted and view.outer_limit:
        return None
    what = "no ORDER BY" if not view.outer_sorted else (
        "no LIMIT" if view.outer_limit is None else
        "a LIMIT that is not a positive whole number (LIMIT ALL, NULL, an expression)")
    return ("topk_contract", f"the step promises an ordered Top-K answer but the outer query "
            f"has {what}; add ORDER BY <ranking expression> [DESC] LIMIT <k> (k a positive "
            "whole number) to the outermost query", "")


CHECKS: tuple[Callable[[PgView, GuardContext], _Found], ...] = (
    _statement, _clauses, _catalogs, _spatial, _functions, _topk,
)
"""The checks on PostgreSQL's view, in the order of :data:`geoask.sql.rules.RULES`."""


def _at(query: ParsedQuery, rule: str, description: str, location: int) -> GuardViolation:
    """A violation at PostgreSQL's ``location`` (a byte offset into the UTF-8 text)."""
    if location < 0:
        return GuardViolation(rule, description)
    offset = len(query.text.encode()[:location].decode(errors="ignore"))
    line = query.text.count("\n", 0, offset) + 1
    col = offset - (query.text.rfind("\n", 0, offset) + 1) + 1
    fragment = " ".join(query.text[offset : offset + 60].split())
    return GuardViolation(rule, description, fragment, line, col)
