"""Bounding-box screens: the index-backed ``&&`` tests the ``separated`` policy lets SQL run.

Filter-refine: SQL *screens* rows with a cheap bounding-box test - a superset of the answer,
served by the GiST index - and Python *refines* them exactly (distances, containment, areas).
A screen is a conjunct of the outermost query's ``WHERE``, or of a ``JOIN ... ON`` in its
``FROM``, of one of the forms

* ``geom && <box>`` (either side), ``geom`` a geometry column and ``<box>`` built from
  constants only: ``ST_MakeEnvelope(xmin, ymin, xmax, ymax, srid)``,
  ``ST_SetSRID(ST_MakePoint(x, y), srid)``, ``ST_Point(x, y, srid)``, a key-selected geometry
  ``(SELECT geom FROM t WHERE key = 'const')``, and ``ST_Expand(<box>, d)`` or
  ``ST_Transform(<box>, srid)`` of one of these;
* ``a.geom && b.geom`` in a ``JOIN ... ON``.

Every box carries an SRID (``ST_MakePoint`` and the four-number ``ST_MakeEnvelope`` only inside
``ST_SetSRID``): a box in SRID 0 is a guessed CRS. Both readings are recognised here - sqlglot's
tree (:func:`glot_screens`) and PostgreSQL's (:func:`pg_screened_view`) - by the same grammar;
:mod:`geoask.sql.rules.spatial_policy` decides what else a screened query must do.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeGuard

from sqlglot import exp

from geoask.sql.calls import function_calls
from geoask.sql.parsing import ParsedQuery
from geoask.sql.pgview import PgView, view_of

#: Box constructors that carry an SRID: name -> the kinds of their arguments, in order.
BOX_SIGNATURES: Mapping[str, tuple[str, ...]] = {
    "st_makeenvelope": ("number",) * 5,
    "st_point": ("number",) * 3,
    "st_setsrid": ("bare", "number"),
    "st_expand": ("box", "number"),
    "st_transform": ("box", "number"),
}
#: Constructors without an SRID, allowed only where ``ST_SetSRID`` gives them one.
BARE_SIGNATURES: Mapping[str, tuple[str, ...]] = {
    "st_makepoint": ("number",) * 2,
    "st_makeenvelope": ("number",) * 4,
}
SCREEN_FUNCTIONS: frozenset[str] = frozenset(BOX_SIGNATURES) | frozenset(BARE_SIGNATURES)
"""PostGIS functions a screen may call (lower case); outside a screen they stay computation."""
#: The constant that stands in for a screen in PostgreSQL's pruned reading.
_TRUE = {"A_Const": {"boolval": {"boolval": True}}}


@dataclass(frozen=True)
class GlotScreen:
    """One screen in sqlglot's tree.

    Attributes:
        node: the ``&&`` node (every node under it belongs to the screen).
        columns: the screened geometry columns as ``(qualifier, name)``, lower case
            (qualifier ``""`` when unqualified).

    """

    node: exp.Expr
    columns: frozenset[tuple[str, str]]


def glot_screens(query: ParsedQuery, geometry_columns: frozenset[str]) -> tuple[GlotScreen, ...]:
    """The screens of the outermost SELECT in sqlglot's reading (none for other statements).

    >>> from geoask.sql.parsing import parse_query
    >>> q = parse_query("SELECT id, geom FROM t WHERE geom && ST_MakeEnvelope(0, 0, 1, 1, 4326)")
    >>> [sorted(s.columns) for s in glot_screens(q, frozenset({"geom"}))]
    [[('', 'geom')]]
    >>> glot_screens(parse_query("SELECT id FROM t WHERE ST_DWithin(geom, g, 1)"), frozenset())
    ()
    """
    tree = query.tree if query.parsed else None
    if not isinstance(tree, exp.Select) or query.find(exp.ArrayOverlaps) is None:
        return ()
    names = {id(call.node): call.name for call in function_calls(query)}
    reader = _GlotReader(geometry_columns, names)
    where = tree.args.get("where")
    places = [(where.this if where is not None else None, False)]
    places += [(join.args.get("on"), True) for join in tree.args.get("joins") or ()]
    found = []
    for condition, in_join in places:
        for conjunct in _glot_conjuncts(condition):
            columns = reader.screen(conjunct, in_join)
            if columns:
                found.append(GlotScreen(conjunct, columns))
    return tuple(found)


def _unparen(node: exp.Expr | None) -> exp.Expr | None:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def _glot_conjuncts(node: exp.Expr | None) -> Iterator[exp.Expr]:
    node = _unparen(node)
    if isinstance(node, exp.And):
        yield from _glot_conjuncts(node.this)
        yield from _glot_conjuncts(node.expression)
    elif node is not None:
        yield node


@dataclass(frozen=True)
class _GlotReader:
    geometry_columns: frozenset[str]
    names: Mapping[int, str | None]

    def screen(self, node: exp.Expr, in_join: bool) -> frozenset[tuple[str, str]] | None:
        """The screened columns if ``node`` is a screen, else None."""
        if not isinstance(node, exp.ArrayOverlaps):
            return None
        sides = (_unparen(node.this), _unparen(node.expression))
        columns = [side for side in sides if self.column(side)]
        named = frozenset((column.table.lower(), column.name.lower()) for column in columns)
        if len(columns) == 2 and in_join:
            return named
        if len(columns) == 1:
            other = sides[1] if columns[0] is sides[0] else sides[0]
            return named if self.fits(other, "box") else None
        return None

    def column(self, node: exp.Expr | None) -> TypeGuard[exp.Column]:
        """True for a bare geometry column (not ``t.*``)."""
        return (isinstance(node, exp.Column) and not isinstance(node.this, exp.Star)
                and node.name.lower() in self.geometry_columns)

    def fits(self, node: exp.Expr | None, kind: str) -> bool:
        """True if ``node`` is a constant of ``kind`` (``number``, ``box`` or ``bare``)."""
        node = _unparen(node)
        if kind == "number":
            inner = node.this if isinstance(node, exp.Neg) else node
            return isinstance(inner, exp.Literal) and not inner.is_string
        if kind == "box" and isinstance(node, exp.Subquery):
            return self.keyed(node)
        signatures = BOX_SIGNATURES if kind == "box" else BARE_SIGNATURES
        name = self.names.get(id(node)) if isinstance(node, exp.Func) else None
        arguments = _glot_arguments(node)
        signature = signatures.get(name or "")
        return (signature is not None and arguments is not None
                and len(arguments) == len(signature)
                and all(map(self.fits, arguments, signature)))

    def keyed(self, node: exp.Subquery) -> bool:
        """True for ``(SELECT geom FROM t WHERE key = const [AND ...])``."""
        select = node.this
        if _used(node) != {"this"} or not isinstance(select, exp.Select):
            return False
        source = select.args.get("from_") or select.args.get("from")
        if (_used(select) - {"from_", "from"} != {"expressions", "where"}
                or not isinstance(source, exp.From) or not isinstance(source.this, exp.Table)
                or not _used(source.this) <= {"this", "db", "alias"}
                or len(select.expressions) != 1 or not self.column(select.expressions[0])):
            return False
        return all(self.key_test(test) for test in _glot_conjuncts(select.args["where"].this))

    def key_test(self, node: exp.Expr) -> bool:
        if not isinstance(node, exp.EQ):
            return False
        sides = (_unparen(node.this), _unparen(node.expression))
        return any(
            isinstance(key, exp.Column) and not self.column(key)
            and isinstance(value, exp.Literal)
            for key, value in (sides, sides[::-1])
        )


def _used(node: exp.Expr) -> set[str]:
    return {key for key, value in node.args.items() if value}


def _glot_arguments(node: exp.Expr | None) -> list[exp.Expr] | None:
    """A call's arguments in order, or None if it has anything else (a FILTER, an ORDER BY)."""
    if isinstance(node, exp.Anonymous):
        return list(node.expressions) if _used(node) <= {"this", "expressions"} else None
    if not isinstance(node, exp.Func):
        return None
    values = [value for value in node.args.values() if value is not None]
    return values if all(isinstance(value, exp.Expr) for value in values) else None


def pg_screened_view(
    view: PgView, geometry_columns: frozenset[str]
) -> tuple[PgView, list[tuple[str, str]]]:
    """PostgreSQL's reading with each screen replaced by TRUE, and the screened column names.

    >>> from geoask.sql.pgview import postgres_view
    >>> view = postgres_view("SELECT geom FROM t WHERE geom && ST_Point(1, 2, 4326) AND x = 1")
    >>> pruned, columns = pg_screened_view(view, frozenset({"geom"}))
    >>> sorted(pruned.named_calls), sorted(pruned.operators), columns
    ([], ['='], [('', 'geom')])
    """
    if ("&&" not in view.operators or len(view.statements) != 1
            or "SelectStmt" not in view.statements[0]):
        return view, []
    statement = copy.deepcopy(view.statements[0])
    select = statement["SelectStmt"]
    columns: list[tuple[str, str]] = []
    for holder, key, in_join in _pg_places(select):
        for owner, slot in _pg_conjuncts(holder, key):
            screened = _pg_screen(owner[slot], geometry_columns, in_join)
            if screened:
                columns += screened
                owner[slot] = _TRUE
    return (view_of([statement]), columns) if columns else (view, [])


def _pg_places(select: dict[str, Any]) -> Iterator[tuple[dict[str, Any], str, bool]]:
    """``(holder, key, in_join)`` for the WHERE and every left-deep JOIN ... ON condition."""
    if "whereClause" in select:
        yield select, "whereClause", False
    for item in select.get("fromClause") or ():
        join = item.get("JoinExpr")
        while join is not None:
            if "quals" in join:
                yield join, "quals", True
            join = (join.get("larg") or {}).get("JoinExpr")


def _pg_conjuncts(owner: Any, slot: Any) -> Iterator[tuple[Any, Any]]:
    """``(owner, slot)`` of each AND-conjunct under ``owner[slot]``."""
    node = owner[slot]
    boolean = node.get("BoolExpr") if isinstance(node, dict) else None
    if boolean is not None and boolean.get("boolop") == "AND_EXPR":
        for index in range(len(boolean.get("args") or ())):
            yield from _pg_conjuncts(boolean["args"], index)
    else:
        yield owner, slot


def _pg_screen(
    node: Any, geometry_columns: frozenset[str], in_join: bool
) -> list[tuple[str, str]]:
    """The screened columns if ``node`` is a screen in PostgreSQL's tree, else []."""
    body = _pg_node(node, "A_Expr")
    if body is None or body.get("kind") != "AEXPR_OP" or _pg_names(body.get("name")) != ["&&"]:
        return []
    sides = (body.get("lexpr"), body.get("rexpr"))
    columns = [_pg_qualified(side) for side in sides if _pg_column(side, geometry_columns)]
    if len(columns) == 2:
        return columns if in_join else []
    if len(columns) == 1:
        other = sides[1] if _pg_column(sides[0], geometry_columns) else sides[0]
        return columns if _pg_fits(other, "box", geometry_columns) else []
    return []


def _pg_node(node: Any, kind: str) -> dict[str, Any] | None:
    body = node.get(kind) if isinstance(node, dict) and len(node) == 1 else None
    return body if isinstance(body, dict) else None


def _pg_names(items: Any) -> list[str]:
    return [item["String"]["sval"] for item in items or () if "String" in item]


def _pg_column(node: Any, geometry_columns: frozenset[str]) -> str | None:
    body = _pg_node(node, "ColumnRef")
    fields = (body or {}).get("fields") or []
    names = _pg_names(fields)
    if names and len(names) == len(fields) and names[-1] in geometry_columns:
        return names[-1]
    return None


def _pg_qualified(node: Any) -> tuple[str, str]:
    """``(qualifier, name)`` of a column reference, lower case (qualifier ``""`` if none)."""
    names = [name.lower() for name in _pg_names((_pg_node(node, "ColumnRef") or {}).get("fields"))]
    return (names[-2] if len(names) > 1 else "", names[-1])


def exported(column: tuple[str, str], select_list: frozenset[str]) -> bool:
    """True if ``select_list`` (``*``, ``q.*``, ``q.name``, ``name``, lower case) exports it.

    >>> exported(("a", "geom"), frozenset({"a.geom"})), exported(("a", "geom"), frozenset({"b.*"}))
    (True, False)
    """
    qualifier, name = column
    if "*" in select_list or name in select_list:
        return True
    if qualifier:
        return bool({f"{qualifier}.*", f"{qualifier}.{name}"} & select_list)
    return any(item.endswith((f".{name}", ".*")) for item in select_list)


def _pg_fits(node: Any, kind: str, geometry_columns: frozenset[str]) -> bool:
    """True if PostgreSQL's ``node`` is a constant of ``kind`` (see ``_GlotReader.fits``)."""
    if kind == "number":
        negated = _pg_node(node, "A_Expr")
        if negated is not None and _pg_names(negated.get("name")) == ["-"] \
                and negated.get("lexpr") is None:
            node = negated.get("rexpr")
        constant = _pg_node(node, "A_Const")
        return constant is not None and ("ival" in constant or "fval" in constant)
    if kind == "box" and _pg_node(node, "SubLink") is not None:
        return _pg_keyed(_pg_node(node, "SubLink") or {}, geometry_columns)
    call = _pg_node(node, "FuncCall")
    if call is None or set(call) - {"funcname", "args", "funcformat", "location"} \
            or call.get("funcformat") != "COERCE_EXPLICIT_CALL":
        return False
    names = _pg_names(call.get("funcname"))
    signatures = BOX_SIGNATURES if kind == "box" else BARE_SIGNATURES
    signature = signatures.get(names[0]) if len(names) == 1 else None
    arguments = call.get("args") or []
    return (signature is not None and len(arguments) == len(signature)
            and all(_pg_fits(arg, want, geometry_columns)
                    for arg, want in zip(arguments, signature, strict=True)))


def _pg_keyed(link: dict[str, Any], geometry_columns: frozenset[str]) -> bool:
    """True for PostgreSQL's ``(SELECT geom FROM t WHERE key = const [AND ...])``."""
    select = _pg_node(link.get("subselect"), "SelectStmt") or {}
    if (link.get("subLinkType") != "EXPR_SUBLINK"
            or set(select) != {"targetList", "fromClause", "whereClause", "limitOption", "op"}
            or select["limitOption"] != "LIMIT_OPTION_DEFAULT" or select["op"] != "SETOP_NONE"
            or len(select["targetList"]) != 1 or len(select["fromClause"]) != 1
            or _pg_node(select["fromClause"][0], "RangeVar") is None):
        return False
    target = _pg_node(select["targetList"][0], "ResTarget") or {}
    if "name" in target or not _pg_column(target.get("val"), geometry_columns):
        return False
    holder = {"where": select["whereClause"]}
    return all(_pg_key_test(owner[slot], geometry_columns)
               for owner, slot in _pg_conjuncts(holder, "where"))


def _pg_key_test(node: Any, geometry_columns: frozenset[str]) -> bool:
    body = _pg_node(node, "A_Expr")
    if body is None or body.get("kind") != "AEXPR_OP" or _pg_names(body.get("name")) != ["="]:
        return False
    sides = (body.get("lexpr"), body.get("rexpr"))
    return any(
        _pg_node(key, "ColumnRef") is not None and _pg_column(key, geometry_columns) is None
        and "isnull" not in (_pg_node(value, "A_Const") or {"isnull": True})
        for key, value in (sides, sides[::-1])
    )
