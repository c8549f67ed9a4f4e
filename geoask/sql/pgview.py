"""PostgreSQL's own reading of a statement: libpg_query (``pglast``) parse tree, summarised.

The guard parses every statement twice: with sqlglot (its rule pipeline, :mod:`geoask.sql.rules`)
and with the server's own grammar through pglast 5 (libpg_query built from PostgreSQL 15, the
version geoask runs). :func:`postgres_view` reduces PostgreSQL's raw parse tree to what the
policies judge - statements, functions, operators, casts, relations, attribute references, the
outer LIMIT - so :mod:`geoask.sql.rules.postgres_view` can check the policies on this view too
and :mod:`geoask.sql.rules.parsers_agree` can compare it with sqlglot's.

Names are as the server resolves them: PostgreSQL's parser has already folded unquoted names to
lower case and kept quoted ones exact. Positions are character offsets into the submitted text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pglast import parser as pg_parser

#: PostgreSQL statement node for a query; anything else at the root is not a query.
SELECT_NODE = "SelectStmt"
#: Nodes of statements that change data, anywhere in the tree (a WITH clause may hold them).
MODIFYING_NODES = frozenset({"InsertStmt", "UpdateStmt", "DeleteStmt", "MergeStmt"})
#: ``SQLValueFunction`` keywords that only read the clock (``current_user`` and the like name
#: the session's role, schema or database - not the data's business).
CLOCK_VALUE_FUNCTIONS = frozenset({
    "SVFOP_CURRENT_DATE", "SVFOP_CURRENT_TIME", "SVFOP_CURRENT_TIME_N",
    "SVFOP_CURRENT_TIMESTAMP", "SVFOP_CURRENT_TIMESTAMP_N", "SVFOP_LOCALTIME",
    "SVFOP_LOCALTIME_N", "SVFOP_LOCALTIMESTAMP", "SVFOP_LOCALTIMESTAMP_N",
})
#: Raw-tree nodes the guard does not accept at all (XML constructs, table functions over XML/JSON,
#: ``COLLATION FOR``-style syntax is a FuncCall and judged by name).
REFUSED_NODES = frozenset({"XmlExpr", "XmlSerialize", "RangeTableFunc", "CurrentOfExpr"})


@dataclass(frozen=True)
class PgCall:
    """One function call PostgreSQL's parser built.

    Attributes:
        schema: the qualifying schema, or None (for SQL-syntax calls such as ``EXTRACT``, the
            parser's own ``pg_catalog``).
        name: the function name as the server resolves it.
        syntax: True when built from SQL syntax (``EXTRACT(... FROM ...)``, ``SUBSTRING(... FROM
            ...)``, ``AT TIME ZONE``), False for a call written by name.
        location: character offset of the call, or -1.

    """

    schema: str | None
    name: str
    syntax: bool
    location: int


@dataclass(frozen=True)
class PgView:
    """What PostgreSQL's parser read in the submitted text.

    Attributes:
        statement_kinds: root node name of each statement (``SelectStmt``, ``DeleteStmt``...).
        calls: every function call (see :class:`PgCall`), including those in FROM.
        operators: symbolic operators applied (``=``, ``&&``, ``<@>``), with qualified ones
            (``OPERATOR(pg_catalog.+)``) as ``schema.op``; the sign of a signed number
            (``LIMIT +5``) is not one (sqlglot reads the number alone).
        operands: for each operator application, ``(operator, operand)`` pairs where the
            operand is described as ``column:<last name>``, ``call:<name>`` or ``cast:<type>``
            (other operands are not listed) - enough to tell an operator applied to geometry.
        casts: cast targets as ``(schema or None, type name)`` (``::int`` is
            ``('pg_catalog', 'int4')``), including typed literals (``DATE '...'``).
        relations: tables and views read, as ``(schema or None, name)``; CTE names excluded.
        attributes: names selected with attribute notation (``a.name``, ``(a).name``): for
            each, the last name. PostgreSQL reads one as a call ``name(a)`` when ``a`` has no
            column ``name``.
        refused_nodes: names of constructs the guard never accepts that occur in the tree.
        session_values: ``SQLValueFunction`` keywords other than the clock's (``CURRENT_USER``).
        into: True if a ``SELECT ... INTO`` creates a table.
        locking: True if any ``FOR UPDATE/SHARE`` clause occurs.
        parameters: True if any ``$n`` placeholder occurs.
        modifying: names of data-modifying statements nested anywhere (a WITH clause).
        sampling_methods: ``TABLESAMPLE`` methods named.
        outer_sorted: True if the outermost query has ORDER BY.
        outer_limit: the outermost query's row limit when it is a positive integer constant;
            0 when it has a LIMIT/FETCH that is not one (``LIMIT ALL``, ``LIMIT NULL``, an
            expression, a sub-select, a cast); None when it has none.
        output_names: the outermost query's column names as PostgreSQL names them (an alias,
            a column's or function's name, ``*`` for a star, ``?column?`` otherwise); for a set
            operation, its first branch's.
        statements: the raw parse tree of each statement (JSON), for a rule that judges the
            shape of a clause (:mod:`geoask.sql.screens`); not compared.

    """

    statement_kinds: tuple[str, ...]
    calls: tuple[PgCall, ...] = ()
    operators: frozenset[str] = frozenset()
    operands: frozenset[tuple[str, str]] = frozenset()
    casts: frozenset[tuple[str | None, str]] = frozenset()
    relations: frozenset[tuple[str | None, str]] = frozenset()
    attributes: frozenset[str] = frozenset()
    refused_nodes: frozenset[str] = frozenset()
    session_values: frozenset[str] = frozenset()
    into: bool = False
    locking: bool = False
    parameters: bool = False
    modifying: frozenset[str] = frozenset()
    sampling_methods: frozenset[str] = frozenset()
    outer_sorted: bool = False
    outer_limit: int | None = None
    output_names: tuple[str, ...] = ()
    statements: tuple[dict[str, Any], ...] = field(default=(), compare=False, repr=False)

    @property
    def named_calls(self) -> frozenset[str]:
        """Names of the functions called by name (not built from SQL syntax)."""
        return frozenset(call.name for call in self.calls if not call.syntax)


@dataclass(frozen=True)
class PgParseFailure:
    """PostgreSQL's parser refused the text.

    Attributes:
        message: the server's own message (``syntax error at or near "FROM"``).
        location: character offset where it stopped, or -1.

    """

    message: str
    location: int = -1


@dataclass
class _Collector:
    calls: list[PgCall] = field(default_factory=list)
    operators: set[str] = field(default_factory=set)
    operands: set[tuple[str, str]] = field(default_factory=set)
    casts: set[tuple[str | None, str]] = field(default_factory=set)
    relations: set[tuple[str | None, str]] = field(default_factory=set)
    ctes: set[str] = field(default_factory=set)
    attributes: set[str] = field(default_factory=set)
    refused: set[str] = field(default_factory=set)
    session_values: set[str] = field(default_factory=set)
    modifying: set[str] = field(default_factory=set)
    sampling: set[str] = field(default_factory=set)
    into: bool = False
    locking: bool = False
    parameters: bool = False


def postgres_view(text: str) -> PgView | PgParseFailure:
    """Parse ``text`` with PostgreSQL's grammar and summarise what it reads.

    >>> view = postgres_view("SELECT a.st_asgeojson, count(*) FROM demo.airports a LIMIT 3")
    >>> sorted(view.named_calls), sorted(view.relations), sorted(view.attributes), view.outer_limit
    (['count'], [('demo', 'airports')], ['st_asgeojson'], 3)
    >>> postgres_view("SELECT FROM WHERE").message
    'syntax error at or near "WHERE"'

    Never raises for bad SQL: a refusal is returned as :class:`PgParseFailure`.
    """
    try:
        tree = json.loads(pg_parser.parse_sql_json(text))
    except pg_parser.ParseError as error:
        message = str(error.args[0]) if error.args else str(error)
        location = error.args[1] if len(error.args) > 1 else -1
        return PgParseFailure(message, location if isinstance(location, int) else -1)
    except RecursionError:
        return PgParseFailure("the statement is nested too deeply")
    return view_of([entry.get("stmt", {}) for entry in tree.get("stmts", [])])


def view_of(statements: list[dict[str, Any]]) -> PgView:
    """Summarise PostgreSQL's raw parse tree of ``statements`` (see :class:`PgView`)."""
    kinds = tuple(next(iter(stmt), "") for stmt in statements)
    found = _Collector()
    for stmt in statements:
        _walk(stmt, found)
    outer = statements[0].get(SELECT_NODE, {}) if len(statements) == 1 else {}
    return PgView(
        statement_kinds=kinds,
        calls=tuple(found.calls),
        operators=frozenset(found.operators),
        operands=frozenset(found.operands),
        casts=frozenset(found.casts),
        relations=frozenset(
            (schema, name) for schema, name in found.relations
            if schema is not None or name not in found.ctes
        ),
        attributes=frozenset(found.attributes),
        refused_nodes=frozenset(found.refused),
        session_values=frozenset(found.session_values),
        into=found.into,
        locking=found.locking,
        parameters=found.parameters,
        modifying=frozenset(found.modifying),
        sampling_methods=frozenset(found.sampling),
        outer_sorted=bool(outer.get("sortClause")),
        outer_limit=_limit_of(outer),
        output_names=_output_names(outer),
        statements=tuple(statements),
    )


def _output_names(select: dict[str, Any]) -> tuple[str, ...]:
    """Column names of a SelectStmt's select list (its first branch for a set operation)."""
    while select.get("larg"):
        select = select["larg"]
    names = []
    for target in select.get("targetList") or ():
        body = target.get("ResTarget", {})
        names.append(body.get("name") or _default_name(body.get("val")))
    return tuple(names)


def _default_name(node: Any) -> str:
    """PostgreSQL's default output name of an unaliased expression (FigureColname, simplified)."""
    if not isinstance(node, dict) or len(node) != 1:
        return "?column?"
    kind, body = next(iter(node.items()))
    if kind == "ColumnRef":
        fields = body.get("fields") or []
        if fields and "A_Star" in fields[-1]:
            return "*"
        return (_names(fields)[-1:] or ["?column?"])[0]
    if kind == "FuncCall":
        return (_names(body.get("funcname"))[-1:] or ["?column?"])[0]
    if kind == "TypeCast":
        return _default_name(body.get("arg"))
    return "?column?"


def _limit_of(select: dict[str, Any]) -> int | None:
    """The outer LIMIT/FETCH count when a positive integer constant, 0 when unbounded.

    ``FETCH ... WITH TIES`` is unbounded: ties at the k-th value may return any number of rows.
    """
    option = select.get("limitOption", "LIMIT_OPTION_DEFAULT")
    if option == "LIMIT_OPTION_DEFAULT":
        return None
    if option == "LIMIT_OPTION_WITH_TIES":
        return 0
    count = select.get("limitCount")
    constant = count.get("A_Const") if isinstance(count, dict) else None
    value = constant.get("ival") if isinstance(constant, dict) else None
    if isinstance(value, dict) and value.get("ival", 0) > 0:
        return int(value["ival"])
    return 0


def _names(items: list[Any] | None) -> list[str]:
    return [item["String"]["sval"] for item in items or () if "String" in item]


def _walk(node: Any, found: _Collector) -> None:
    """Visit every node of PostgreSQL's JSON parse tree (iteratively: no recursion limit)."""
    stack: list[Any] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, list):
            stack.extend(current)
            continue
        if not isinstance(current, dict):
            continue
        for kind, body in current.items():
            if isinstance(body, dict):
                _note(kind, body, found)
            stack.append(body)


def _note(kind: str, body: dict[str, Any], found: _Collector) -> None:
    handler = _HANDLERS.get(kind)
    if handler is not None:
        handler(body, found)
    elif kind in REFUSED_NODES:
        found.refused.add(kind)
    elif kind in MODIFYING_NODES:
        found.modifying.add(kind)


def _func_call(body: dict[str, Any], found: _Collector) -> None:
    names = _names(body.get("funcname"))
    if not names:
        return
    found.calls.append(PgCall(
        schema=names[-2] if len(names) > 1 else None,
        name=names[-1],
        syntax=body.get("funcformat") == "COERCE_SQL_SYNTAX",
        location=int(body.get("location", -1)),
    ))


def _a_expr(body: dict[str, Any], found: _Collector) -> None:
    if body.get("kind") not in {"AEXPR_OP", "AEXPR_OP_ANY", "AEXPR_OP_ALL"}:
        return
    operator = ".".join(_names(body.get("name")))
    if operator == "+" and body.get("lexpr") is None and _is_number(body.get("rexpr")):
        return  # a signed number (LIMIT +5): the number itself, as sqlglot reads it
    found.operators.add(operator)
    for side in ("lexpr", "rexpr"):
        described = _describe(body.get(side))
        if described is not None:
            found.operands.add((operator, described))


def _is_number(node: Any) -> bool:
    """True for a numeric constant node (``{"A_Const": {"ival": ...}}``, or ``fval``)."""
    constant = node.get("A_Const") if isinstance(node, dict) else None
    return isinstance(constant, dict) and ("ival" in constant or "fval" in constant)


def _describe(node: Any) -> str | None:
    """``column:<name>``, ``call:<name>`` or ``cast:<type>`` for an operand, else None."""
    if not isinstance(node, dict) or len(node) != 1:
        return None
    kind, body = next(iter(node.items()))
    if kind == "ColumnRef":
        names = _names(body.get("fields"))
        return f"column:{names[-1]}" if names else None
    if kind == "FuncCall":
        names = _names(body.get("funcname"))
        return f"call:{names[-1]}" if names else None
    if kind == "TypeCast":
        names = _names((body.get("typeName") or {}).get("names"))
        return f"cast:{names[-1]}" if names else None
    return None


def _type_cast(body: dict[str, Any], found: _Collector) -> None:
    names = _names((body.get("typeName") or {}).get("names"))
    if names:
        found.casts.add((names[-2] if len(names) > 1 else None, names[-1]))


def _range_var(body: dict[str, Any], found: _Collector) -> None:
    found.relations.add((body.get("schemaname"), body.get("relname", "")))


def _column_ref(body: dict[str, Any], found: _Collector) -> None:
    names = _names(body.get("fields"))
    if len(names) > 1 and len(names) == len(body.get("fields", ())):
        found.attributes.add(names[-1])


def _indirection(body: dict[str, Any], found: _Collector) -> None:
    names = _names(body.get("indirection"))
    if names:
        found.attributes.add(names[-1])


def _value_function(body: dict[str, Any], found: _Collector) -> None:
    op = str(body.get("op", ""))
    if op not in CLOCK_VALUE_FUNCTIONS:
        found.session_values.add(op.removeprefix("SVFOP_"))


def _cte(body: dict[str, Any], found: _Collector) -> None:
    found.ctes.add(body.get("ctename", ""))


def _select(body: dict[str, Any], found: _Collector) -> None:
    found.into = found.into or "intoClause" in body
    found.locking = found.locking or bool(body.get("lockingClause"))


def _param(body: dict[str, Any], found: _Collector) -> None:
    found.parameters = True


def _sample(body: dict[str, Any], found: _Collector) -> None:
    found.sampling.update(_names(body.get("method"))[-1:])


_HANDLERS = {
    "FuncCall": _func_call,
    "A_Expr": _a_expr,
    "TypeCast": _type_cast,
    "RangeVar": _range_var,
    "ColumnRef": _column_ref,
    "A_Indirection": _indirection,
    "SQLValueFunction": _value_function,
    "CommonTableExpr": _cte,
    "SelectStmt": _select,
    "ParamRef": _param,
    "RangeTableSample": _sample,
}
