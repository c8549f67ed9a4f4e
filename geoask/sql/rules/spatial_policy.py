"""Rule: under the ``separated`` policy, SQL selects geometry but does not compute with it.

The one spatial test it runs is a bounding-box screen (:mod:`geoask.sql.screens`): an
index-backed ``&&`` conjunct of WHERE or JOIN ... ON that narrows the rows exported for an
exact refine in Python (filter-refine). A screened query exports the screened geometry and
does not aggregate: the box is a superset of the answer, never the answer.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from sqlglot import exp

from geoask.catalog.spatial import postgis_type_name
from geoask.sql.calls import function_calls
from geoask.sql.context import GuardContext, SpatialPolicy
from geoask.sql.functions import (
    AGGREGATE_FUNCTIONS,
    WINDOW_FUNCTIONS,
    computes_spatially,
    is_spatial_function,
)
from geoask.sql.parsing import ORIGINAL_NAME_KEY, ParsedQuery, violation_at
from geoask.sql.pgview import PgView
from geoask.sql.screen_srids import screen_srid_problem
from geoask.sql.screens import (
    SCREEN_FUNCTIONS,
    GlotScreen,
    exported,
    glot_screens,
    pg_screened_view,
)
from geoask.sql.violation import GuardViolation, PgViolation

RULE = "spatial_policy"
#: Where a box constructor may stand (the refusal of one found elsewhere says so).
SCREEN_PLACE = (
    "a screen is allowed only as a geom && <box> conjunct of the outermost query's WHERE or "
    "JOIN ... ON - not in the select list or ORDER BY, under OR/NOT, in a CTE or subquery - its "
    "box built from constants that carry an SRID"
)
#: How to narrow rows under ``separated``: screen with a box, refine in Python (filter-refine).
SCREEN_ADVICE = (
    "to narrow rows spatially, screen them with a bounding box as a WHERE or JOIN ... ON "
    "conjunct (geom && ST_Expand(ST_SetSRID(ST_MakePoint(lon, lat), 4326), deg), geom && "
    "ST_MakeEnvelope(xmin, ymin, xmax, ymax, 4326), geom && ST_Expand((SELECT geom FROM t "
    "WHERE key = 'k'), deg), a.geom && b.geom in a JOIN ON) with a conservative margin "
    "(deg = metres / 111320 / cos(lat) * 1.5), select the screened geometry, and refine "
    "exactly in Python (metric CRS or geodesic distance)"
)
ADVICE = "; ".join((
    "the active policy 'separated' keeps spatial computation out of SQL: select the rows and "
    "their geometry column (e.g. SELECT id, geom FROM ...), then compute in Python with "
    "geopandas/shapely on the exported GeoJSON",
    SCREEN_ADVICE,
    "for a raster select its raster column (or ST_Clip(rast, geom) to cut it to a zone) and "
    "compute with rasterio/rasterstats on the exported GeoTIFF",
))
#: The advice on PostgreSQL's reading (shorter: it has no tree to point into).
PG_ADVICE = "; ".join((
    "the active policy 'separated' keeps spatial computation out of SQL: select the rows and "
    "their geometry column, then compute in Python with geopandas/shapely",
    SCREEN_ADVICE,
))
#: Functions whose presence in a screened query's select list aggregates its rows.
ROW_AGGREGATES = AGGREGATE_FUNCTIONS | WINDOW_FUNCTIONS
#: Operators only PostGIS defines among the types an analytical query meets; under
#: ``separated`` they are spatial computation whatever their operands.
SPATIAL_OPERATORS = frozenset({"<->", "&&&", "|=|", "<#>", "<<#>>", "<<->>", "~=", "&<|", "|&>"})
# Binary nodes that only test or name a geometry rather than compute with it.
NON_COMPUTING = (exp.Is, exp.Dot, exp.Alias, exp.PropertyEQ, exp.And, exp.Or)


def spatial_policy(query: ParsedQuery, context: GuardContext) -> GuardViolation | None:
    """Reject ST_* calls, geometry operators and casts to spatial types (policy ``separated``).

    The raster export functions (``ST_Clip``, ``ST_AsTIFF``, ``ST_AsGDALRaster``:
    :data:`~geoask.sql.functions.RASTER_EXPORT_FUNCTIONS`) only cut and encode a raster for
    Python and pass; raster statistics, values and terrain functions are computation.

    >>> from geoask.sql.parsing import parse_query
    >>> spatial_policy(parse_query("SELECT ST_Area(geom) FROM t"), GuardContext()).rule
    'spatial_policy'
    >>> spatial_policy(parse_query("SELECT name, geom FROM t"), GuardContext()) is None
    True
    >>> spatial_policy(parse_query("SELECT id, geom FROM t WHERE geom && "
    ...     "ST_MakeEnvelope(-73, 41, -72, 42, 4326)"), GuardContext()) is None
    True
    """
    if context.policy != SpatialPolicy.SEPARATED:
        return None
    screens = glot_screens(query, context.geometry_columns) if context.screens else ()
    inside = {id(node) for screen in screens for node in screen.node.walk()}
    for call in function_calls(query):
        if id(call.node) in inside:
            continue
        if call.name is not None and computes_spatially(call.name):
            return violation_at(RULE, _computes(call.name, context, ADVICE), call.node, query)
    for node in query.nodes:
        if id(node) in inside:
            continue
        if isinstance(node, exp.Cast | exp.TryCast) and _is_spatial_type(node.to):
            return violation_at(
                RULE, f"a cast to {node.to.sql(dialect='postgres')} computes in SQL; {ADVICE}",
                node, query,
            )
        if isinstance(node, exp.Distance):
            return violation_at(
                RULE, f"the distance operator <-> computes in SQL; {ADVICE}", node, query
            )
        if _is_operator(node) and any(
            is_geometry_expression(child, context) for child in _operands(node)
        ):
            return violation_at(
                RULE, f"an operator applied to a geometry computes in SQL; {ADVICE}", node,
                query,
            )
    return _screened_use(query, screens, context.declared_srids)


def spatial_policy_pg(view: PgView, context: GuardContext) -> PgViolation | None:
    """Reject spatial calls, casts and operators in PostgreSQL's reading (policy ``separated``).

    >>> from geoask.sql.pgview import postgres_view
    >>> view = postgres_view("SELECT a.geom &&& b.geom FROM t a, t b")
    >>> spatial_policy_pg(view, GuardContext()).fragment
    '&&&'
    """
    if context.policy != SpatialPolicy.SEPARATED:
        return None
    whole = view
    view, screened = (pg_screened_view(whole, context.geometry_columns) if context.screens
                      else (whole, []))
    for call in view.calls:
        if computes_spatially(call.name):
            return PgViolation(RULE, _computes(call.name, context, PG_ADVICE),
                               f"{call.name}(...)", call.location)
    for _schema, name in sorted(view.casts, key=str):
        if postgis_type_name(name) is not None:
            return PgViolation(RULE, f"a cast to {name} computes in SQL; {PG_ADVICE}",
                               f"::{name}")
    for operator, operand in sorted(view.operands):
        if _is_spatial_operand(operand, context):
            return PgViolation(RULE, f"the operator {operator} applied to a geometry computes "
                               f"in SQL; {PG_ADVICE}", operator)
    for operator in sorted(view.operators & SPATIAL_OPERATORS):
        return PgViolation(RULE, f"the operator {operator} is PostGIS computation; "
                           f"{PG_ADVICE}", operator)
    return _screened_use_pg(whole, screened)


def _is_spatial_operand(operand: str, context: GuardContext) -> bool:
    """True for an operand :class:`~geoask.sql.pgview.PgView` describes as a geometry."""
    kind, _, name = operand.partition(":")
    return (
        (kind == "column" and name.lower() in context.geometry_columns)
        or (kind == "call" and is_spatial_function(name))
        or (kind == "cast" and postgis_type_name(name) is not None)
    )


def is_geometry_expression(node: exp.Expr, context: GuardContext) -> bool:
    """True if ``node`` is (syntactically) a geometry: a geometry column, cast or ST_* result."""
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.Column):
        return node.name.lower() in context.geometry_columns
    if isinstance(node, exp.Cast | exp.TryCast):
        return _is_spatial_type(node.to)
    if isinstance(node, exp.Anonymous):
        return is_spatial_function(node.name)
    written = (node.meta or {}).get(ORIGINAL_NAME_KEY)
    return isinstance(node, exp.Func) and written is not None and is_spatial_function(written)


def _is_spatial_type(data_type: exp.Expr | None) -> bool:
    """True if ``data_type`` names a PostGIS type (the catalog's notion, any case or schema)."""
    if not isinstance(data_type, exp.DataType):
        return False
    # sqlglot knows GEOMETRY and GEOGRAPHY; other PostGIS types arrive user-defined by name
    kind = data_type.args.get("kind")
    this = data_type.this
    name = kind.name if kind is not None else str(getattr(this, "value", this))
    return postgis_type_name(name) is not None


def _is_operator(node: exp.Expr) -> bool:
    if isinstance(node, NON_COMPUTING):
        return False
    if isinstance(node, exp.Binary):
        return True
    return (
        isinstance(node, exp.Func)
        and not isinstance(node, exp.Anonymous)
        and ORIGINAL_NAME_KEY not in (node.meta or {})
        and not isinstance(node, exp.Cast | exp.TryCast | exp.Count | exp.Coalesce)
    )


def _operands(node: exp.Expr) -> list[exp.Expr]:
    return [value for value in node.args.values() if isinstance(value, exp.Expr)]


def _screen_misuse(aggregates: bool, columns: frozenset[tuple[str, str]] | list[tuple[str, str]],
                   select_list: frozenset[str]) -> str | None:
    """Why a screened query misuses its screens (both readings), or None."""
    if aggregates:
        return ("a bounding-box screen's rows are aggregated (an aggregate, window, GROUP BY "
                "or HAVING), so the box would be the answer; export the screened rows and "
                "refine and aggregate in Python")
    missing = sorted(".".join(filter(None, column)) for column in columns
                     if not exported(column, select_list))
    if missing:
        return (f"a bounding-box screen on {missing[0]} needs that geometry column in the "
                "select list: the exact refine in Python reads it")
    return None


def _computes(name: str, context: GuardContext, advice: str) -> str:
    """Why a spatial call outside a screen is refused (a box constructor: where screens go)."""
    if name.lower() in SCREEN_FUNCTIONS and context.screens:
        return f"{name}() builds a bounding-box screen; {SCREEN_PLACE}; {advice}"
    return f"spatial function {name}() computes in SQL; {advice}"


def _screened_use(query: ParsedQuery, screens: tuple[GlotScreen, ...],
                  declared_srids: Mapping[str, int]) -> GuardViolation | None:
    """Refuse a screened query that aggregates its rows, drops its geometry or mixes SRIDs.

    The SRIDs of a screen's box and column are compared by
    :func:`geoask.sql.screen_srids.screen_srid_problem`.
    """
    if not screens:
        return None
    select = query.tree
    aggregates = bool(select.args.get("group") or select.args.get("having")) or any(
        isinstance(node, exp.AggFunc | exp.Window)
        or (isinstance(node, exp.Anonymous) and node.name.lower() in ROW_AGGREGATES)
        for item in select.expressions for node in item.walk()
    )
    columns = frozenset().union(*(screen.columns for screen in screens))
    problem = _screen_misuse(aggregates, columns, _glot_exported(select.expressions))
    if problem is not None:
        return violation_at(RULE, f"{problem}; {ADVICE}", screens[0].node, query)
    for screen in screens:
        if (mixed := screen_srid_problem(screen.node, query, declared_srids)) is not None:
            return violation_at(RULE, mixed, screen.node, query)
    return None


def _glot_exported(items: list[exp.Expr]) -> frozenset[str]:
    """Columns a select list exports as such: ``*``, ``q.*``, ``q.name``, ``name`` (lower case)."""
    names = set()
    for item in items:
        column = item.this if isinstance(item, exp.Alias) else item
        if isinstance(column, exp.Star):
            names.add("*")
        elif isinstance(column, exp.Column):
            name = "*" if isinstance(column.this, exp.Star) else column.name
            names.add(".".join(filter(None, (column.table, name))).lower())
    return frozenset(names)


def _screened_use_pg(view: PgView, screened: list[tuple[str, str]]) -> PgViolation | None:
    """PostgreSQL's reading of :func:`_screened_use`."""
    if not screened:
        return None
    select = view.statements[0]["SelectStmt"]
    targets = [target.get("ResTarget", {}) for target in select.get("targetList") or ()]
    aggregates = bool(select.get("groupClause") or select.get("havingClause")) or any(
        call.get("over") is not None or _last_name(call.get("funcname")) in ROW_AGGREGATES
        for target in targets for call in _pg_calls(target.get("val"))
    )
    problem = _screen_misuse(aggregates, screened, _pg_exported(targets))
    if problem is None:
        return None
    return PgViolation(RULE, f"{problem}; {PG_ADVICE}", "&&")


def _pg_exported(targets: list[dict[str, Any]]) -> frozenset[str]:
    """PostgreSQL's reading of :func:`_glot_exported`."""
    names = set()
    for target in targets:
        fields = (target.get("val") or {}).get("ColumnRef", {}).get("fields") or []
        written = ["*" if "A_Star" in item else item.get("String", {}).get("sval", "")
                   for item in fields[-2:]]
        if written:
            names.add(".".join(written).lower())
    return frozenset(names)


def _last_name(items: Any) -> str:
    names = [item["String"]["sval"] for item in items or () if "String" in item]
    return names[-1] if names else ""


def _pg_calls(node: Any) -> Iterator[dict[str, Any]]:
    """Every FuncCall body under ``node`` in PostgreSQL's JSON tree."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, list):
            stack.extend(current)
        elif isinstance(current, dict):
            if isinstance(current.get("FuncCall"), dict):
                yield current["FuncCall"]
            stack.extend(current.values())
