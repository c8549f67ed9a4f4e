"""Rule: under the ``separated`` policy, SQL selects geometry but does not compute with it."""

from __future__ import annotations

from sqlglot import exp

from geoask.catalog.spatial import postgis_type_name
from geoask.sql.calls import function_calls
from geoask.sql.context import GuardContext, SpatialPolicy
from geoask.sql.functions import computes_spatially, is_spatial_function
from geoask.sql.parsing import ORIGINAL_NAME_KEY, ParsedQuery, violation_at
from geoask.sql.pgview import PgView
from geoask.sql.violation import GuardViolation, PgViolation

RULE = "spatial_policy"
ADVICE = (
    "the active policy 'separated' keeps spatial computation out of SQL: select the rows and "
    "their geometry column (e.g. SELECT id, geom FROM ...), then compute in Python with "
    "geopandas/shapely on the exported GeoJSON; for a raster select its raster column (or "
    "ST_Clip(rast, geom) to cut it to a zone) and compute with rasterio/rasterstats on the "
    "exported GeoTIFF"
)
#: The advice on PostgreSQL's reading (shorter: it has no tree to point into).
PG_ADVICE = (
    "the active policy 'separated' keeps spatial computation out of SQL: select the rows and "
    "their geometry column, then compute in Python with geopandas/shapely"
)
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
    """
    if context.policy != SpatialPolicy.SEPARATED:
        return None
    for call in function_calls(query):
        if call.name is not None and computes_spatially(call.name):
            return violation_at(
                RULE, f"spatial function {call.name}() computes in SQL; {ADVICE}", call.node,
                query,
            )
    for node in query.nodes:
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
    return None


def spatial_policy_pg(view: PgView, context: GuardContext) -> PgViolation | None:
    """Reject spatial calls, casts and operators in PostgreSQL's reading (policy ``separated``).

    >>> from geoask.sql.pgview import postgres_view
    >>> view = postgres_view("SELECT a.geom &&& b.geom FROM t a, t b")
    >>> spatial_policy_pg(view, GuardContext()).fragment
    '&&&'
    """
    if context.policy != SpatialPolicy.SEPARATED:
        return None
    for call in view.calls:
        if computes_spatially(call.name):
            return PgViolation(RULE, f"spatial function {call.name}() computes in SQL; "
                               f"{PG_ADVICE}", f"{call.name}(...)", call.location)
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
    return None


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
