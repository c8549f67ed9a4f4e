"""A screen's box and its column must share one SRID: ``&&`` compares raw coordinates.

PostGIS answers ``geom && <box>`` on the two bounding boxes' numbers whatever their SRIDs, so a
box in EPSG:3857 against a column in EPSG:4326 overlaps nothing and the query returns no row
- a wrong answer that looks right. :func:`screen_srid_problem` reads the box's SRID from its
constants (``ST_MakeEnvelope(..., srid)``, ``ST_Point(x, y, srid)``, ``ST_SetSRID(..., srid)``,
``ST_Transform(..., srid)``; ``ST_Expand`` keeps its box's; a key-selected geometry has its
column's) and the column's from the catalog (``declared_srids``), and says when they differ or
cannot be told. Without any declared SRID (no catalog: ``GuardContext()``) nothing is checked.
"""

from __future__ import annotations

from collections.abc import Mapping

from sqlglot import exp

from geoask.sql.parsing import ParsedQuery

#: Box constructors whose last argument is the SRID of the box they make.
_SRID_LAST = frozenset({"st_makeenvelope", "st_point", "st_setsrid", "st_transform"})


def screen_srid_problem(node: exp.Expr, query: ParsedQuery,
                        declared: Mapping[str, int]) -> str | None:
    """Why the screen ``node`` (an ``&&``) mixes SRIDs or cannot be checked, else None.

    >>> from geoask.sql.parsing import parse_query
    >>> q = parse_query("SELECT geom FROM demo.airports WHERE geom && "
    ...                 "ST_MakeEnvelope(-9e6, 4e6, -8e6, 5e6, 3857)")
    >>> screen_srid_problem(q.find(exp.ArrayOverlaps), q, {"demo.airports.geom": 4326})[:58]
    'the box is in SRID 3857 but demo.airports.geom in SRID 432'
    """
    if not declared:
        return None
    sides = [_unparen(node.this), _unparen(node.expression)]
    srids = []
    for side in sides:
        srid, where = _side_srid(side, query, declared)
        if srid is None:
            return (f"the SRID of {where} is not declared in the catalog, so the screen cannot be "
                    "checked; declare it (column type geometry(<type>,<srid>))")
        srids.append((srid, where))
    (left, left_where), (right, right_where) = srids
    if left == right:
        return None
    if isinstance(sides[0], exp.Column) and isinstance(sides[1], exp.Column):
        return (f"{left_where} is in SRID {left} but {right_where} in SRID {right}: a "
                "bounding-box join compares raw coordinates; screen in one SRID")
    box, (srid, column) = (right, srids[0]) if isinstance(sides[0], exp.Column) else (
        left, srids[1])
    return (f"the box is in SRID {box} but {column} in SRID {srid}: && compares raw "
            "coordinates, so nothing would overlap; build the box in the column's SRID "
            f"(ST_Transform(<box>, {srid}))")


def _side_srid(node: exp.Expr | None, query: ParsedQuery,
               declared: Mapping[str, int]) -> tuple[int | None, str]:
    if isinstance(node, exp.Column):
        return _column_srid(node, query, declared)
    if isinstance(node, exp.Subquery) and isinstance(node.this, exp.Select):
        select = node.this
        column = select.expressions[0] if select.expressions else None
        source = select.args.get("from_") or select.args.get("from")
        table = source.this if isinstance(source, exp.From) else None
        if isinstance(column, exp.Column) and isinstance(table, exp.Table):
            return _lookup(_table_key(table), column.name, declared)
        return None, "the key-selected geometry"
    if isinstance(node, exp.Func):
        name = (node.name if isinstance(node, exp.Anonymous) else node.sql_name()).lower()
        arguments = _arguments(node)
        if name in _SRID_LAST and arguments and isinstance(arguments[-1], exp.Literal):
            return int(float(arguments[-1].this)), "the box"
        if name == "st_expand" and arguments:
            return _side_srid(_unparen(arguments[0]), query, declared)
    return None, "the box"


def _column_srid(column: exp.Column, query: ParsedQuery,
                 declared: Mapping[str, int]) -> tuple[int | None, str]:
    qualifier = column.table.lower()
    tables = [table for table in _outer_tables(query.tree)
              if not qualifier or qualifier in (table.alias_or_name.lower(), table.name.lower())]
    found = {_lookup(_table_key(table), column.name, declared) for table in tables}
    known = {hit for hit in found if hit[0] is not None}
    if len(known) == 1:
        return known.pop()
    return None, f"column {column.sql(dialect='postgres')}"


def _outer_tables(select: exp.Expr) -> list[exp.Table]:
    """The tables of the outermost query's FROM and JOINs (a screen's column is one of theirs)."""
    source = select.args.get("from_") or select.args.get("from")
    sources = [source.this] if isinstance(source, exp.From) else []
    sources += [join.this for join in select.args.get("joins") or ()]
    return [node for node in sources if isinstance(node, exp.Table)]


def _table_key(table: exp.Table) -> str:
    return ".".join(filter(None, (table.db, table.name))).lower()


def _lookup(table: str, column: str, declared: Mapping[str, int]) -> tuple[int | None, str]:
    """The declared SRID of ``table.column`` (schema-qualified or matched by table name)."""
    wanted = f"{table}.{column}".lower()
    hits = {key: srid for key, srid in declared.items()
            if key.lower() == wanted or key.lower().endswith(f".{wanted}")}
    if len(hits) == 1:
        key, srid = hits.popitem()
        return srid, key
    return None, wanted


def _unparen(node: exp.Expr | None) -> exp.Expr | None:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def _arguments(node: exp.Func) -> list[exp.Expr]:
    if isinstance(node, exp.Anonymous):
        return list(node.expressions)
    return [value for value in node.args.values() if isinstance(value, exp.Expr)]
