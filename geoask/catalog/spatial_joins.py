"""Spatial join paths between geometry tables, inferred from geometry types and a sample.

``geoask catalog draft`` proposes, for each pair of relations with a geometry or geography
column, a ``kind: spatial`` join path marked ``inferred: true`` when (1) one side is polygonal
(points or lines *in* areas, or areas with areas; point-point and point-line pairs have no
containment to measure and are left to a person), (2) the two extents overlap (compared in
WGS 84 after ``pyproj``'s densified ``transform_bounds``), and (3) some of a bounded sample of
the left relation's rows match a right row. The path records the ``predicate``, the measured
``match_share`` and the ``sampled`` row count.

Direction and predicate come from the geometry types:

- points or lines (left) and polygons (right): ``ST_Within`` for points (a point lies in an
  area), ``ST_Intersects`` for lines (a road crosses several areas);
- polygons and polygons: ``ST_Within`` with the *nested* side left when at least 80 % of its
  sampled polygons that meet the other side have a point on their surface inside one right
  polygon that also covers at least 90 % of their area (counties in states); otherwise
  ``ST_Intersects`` with the side of more rows left.

Every match is measured in the right column's SRID (the left sample goes through
``ST_Transform``), so the right side's GiST index answers each probe; ``ST_Within`` is measured as
``ST_Intersects(right, ST_PointOnSurface(left))`` (boundary points count). The sample is the
whole relation up to :data:`SAMPLE_ROWS` rows, else a repeatable ``TABLESAMPLE`` of tables and
materialized views (``BERNOULLI`` up to ``profile.ROW_THRESHOLD`` rows, block-level ``SYSTEM``
above, so a big table is never read whole) or the first rows of a view. ``geoask catalog
check`` calls :func:`match_share` again for every join path with a ``predicate``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql

from geoask.catalog import introspect, profile
from geoask.catalog.introspect import Relation
from geoask.catalog.join_path import SpatialPredicate
from geoask.catalog.model import JoinPath, Table

SAMPLE_ROWS = 200
"""Left rows sampled per candidate pair (each probes the right side's spatial index once)."""

NESTED_SHARE = 0.8
"""Share of matching sampled polygons that must nest in the other side for ``ST_Within``."""

NESTED_AREA = 0.9
"""Share of a polygon's area one right polygon must cover for it to count as nested."""

BBox = tuple[float, float, float, float]
Budget = tuple[float, int]
"""``(seconds, statement timeout s)`` of one pair's probes (:func:`profile.time_budget`)."""


@dataclass(frozen=True)
class GeoSide:
    """One relation's spatial column as a join end.

    ``kind`` is ``geometry`` or ``geography``; ``dimension`` 0 points, 1 lines, 2 polygons;
    ``srid`` the column's (or its sampled values') SRID; ``rows`` the drafted row count;
    ``bounds_wgs84`` its extent as ``[west, south, east, north]`` degrees, if known.
    """

    rel: Relation
    column: str
    kind: str
    dimension: int
    srid: int
    rows: int
    bounds_wgs84: BBox | None = None

    @property
    def end(self) -> str:
        """``table.column`` as a join path end."""
        return f"{self.rel.name}.{self.column}"


def dimension(geometry_type: str) -> int | None:
    """Topological dimension of a PostGIS geometry type name; None for mixed or unknown types.

    >>> [dimension(t) for t in ("MULTIPOINT", "LineString", "POLYGON", "GEOMETRY")]
    [0, 1, 2, None]
    """
    name = geometry_type.upper().removeprefix("MULTI").rstrip("ZM")
    return {"POINT": 0, "LINESTRING": 1, "POLYGON": 2}.get(name)


def bounds_overlap(a: BBox, b: BBox) -> bool:
    """Whether two ``[west, south, east, north]`` boxes in degrees overlap (edges count).

    A box with west > east crosses the antimeridian and is taken as spanning all longitudes.

    >>> bounds_overlap((0, 0, 2, 2), (1, 1, 3, 3)), bounds_overlap((0, 0, 1, 1), (2, 2, 3, 3))
    (True, False)
    """
    def lon(box: BBox) -> tuple[float, float]:
        return (box[0], box[2]) if box[0] <= box[2] else (-180.0, 180.0)

    (aw, ae), (bw, be) = lon(a), lon(b)
    return aw <= be and bw <= ae and a[1] <= b[3] and b[1] <= a[3]


def wgs84_bounds(conn: psycopg.Connection, srid: int, extent: BBox | None) -> BBox | None:
    """``extent`` (in SRID ``srid`` units) as WGS 84 degrees; None if it cannot be transformed.

    Uses pyproj's ``Transformer.transform_bounds`` (21 points per edge) with the CRS of this
    database's ``spatial_ref_sys``.
    """
    from pyproj import Transformer
    from pyproj.exceptions import ProjError

    if extent is None:
        return None
    crs = introspect.pyproj_crs(conn, srid)
    if crs is None:
        return None
    try:
        west, south, east, north = Transformer.from_crs(
            crs, "EPSG:4326", always_xy=True).transform_bounds(*extent, densify_pts=21)
    except ProjError:
        return None
    box = (float(west), float(south), float(east), float(north))
    return box if all(abs(v) != float("inf") for v in box) else None


def _geometry(column: str, kind: str, alias: str) -> sql.Composable:
    ident = sql.Identifier(alias, column)
    return ident if kind == "geometry" else sql.SQL("{}::geometry").format(ident)


def _sample(side: GeoSide, target_srid: int, rows: int) -> tuple[sql.Composed, list[Any]]:
    geom = _geometry(side.column, side.kind, "t")
    params: list[Any] = []
    if target_srid > 0:  # a no-op when the SRIDs are equal
        geom = sql.SQL("ST_Transform({}, %s)").format(geom)
        params.append(target_srid)
    sample = sql.SQL("")
    if side.rows > rows and side.rel.kind in ("table", "materialized_view"):
        sample = sql.SQL(" TABLESAMPLE BERNOULLI (%s) REPEATABLE (0)"
                         if side.rows <= profile.ROW_THRESHOLD
                         else " TABLESAMPLE SYSTEM (%s) REPEATABLE (0)")
        params.append(min(100.0, 100.0 * rows * 2 / side.rows))
    query = sql.SQL("(SELECT {g} AS g FROM {t} AS t{s} WHERE {c} IS NOT NULL LIMIT %s) AS l"
                    ).format(g=geom, t=side.rel.identifier, s=sample,
                             c=sql.Identifier("t", side.column))
    return query, [*params, rows]


def _probe(predicate: str) -> sql.SQL:
    return sql.SQL("ST_PointOnSurface(l.g)" if predicate == "ST_Within" else "l.g")


def match_share(conn: psycopg.Connection, left: GeoSide, right: GeoSide,
                predicate: SpatialPredicate, rows: int = SAMPLE_ROWS,
                budget: Budget = (profile.RELATION_BUDGET_S, 30)) -> tuple[int, int] | None:
    """``(matched, sampled)``: sampled left rows with a right row related by ``predicate``.

    ``predicate`` is ``ST_Within`` (measured as ``ST_Intersects(right, ST_PointOnSurface(left))``)
    or ``ST_Intersects``. None if the query fails (invalid geometry, an SRID PostGIS cannot
    transform) or runs out of ``budget`` (``(seconds, statement timeout s)``: the
    per-relation budget of the draft, :func:`geoask.catalog.profile.time_budget`); the
    transaction survives (savepoint).
    """
    counts = _counts(conn, left, right, predicate, rows, budget, nested=False)
    return None if counts is None else (counts[0], counts[1])


def _counts(conn: psycopg.Connection, left: GeoSide, right: GeoSide,
            predicate: SpatialPredicate,
            rows: int, budget: Budget, *, nested: bool) -> tuple[int, int, int] | None:
    """(matched, sampled, nested) for the sample of ``left``; nested is 0 unless asked."""
    from_item, params = _sample(left, right.srid, rows)
    r_geom = _geometry(right.column, right.kind, "r")
    nested_sql: sql.Composable = sql.SQL("0")
    if nested:
        nested_sql = sql.SQL(
            "count(*) FILTER (WHERE EXISTS (SELECT 1 FROM {t} AS r WHERE ST_Intersects({rg}, "
            "ST_PointOnSurface(l.g)) AND ST_Area(ST_Intersection({rg}, l.g)) >= %s * "
            "ST_Area(l.g)))").format(t=right.rel.identifier, rg=r_geom)
    query = sql.SQL(
        "SELECT count(*) FILTER (WHERE EXISTS (SELECT 1 FROM {t} AS r WHERE "
        "ST_Intersects({rg}, {probe}))), count(*), {nested} FROM {sample}"
    ).format(t=right.rel.identifier, rg=r_geom, probe=_probe(predicate), nested=nested_sql,
             sample=from_item)
    with profile.time_budget(*budget):
        found = profile.safe_rows(conn, query, [*([NESTED_AREA] if nested else []), *params])
    return (int(found[0][0]), int(found[0][1]), int(found[0][2])) if found else None


def sides(conn: psycopg.Connection, rels: list[Relation], tables: list[Table]) -> list[GeoSide]:
    """The first spatial column of each drafted table with a known dimension, as a join end."""
    by_name = {r.name: r for r in rels}
    out = []
    for table in tables:
        column = next((c for c in table.spatial_columns if c.geo is not None), None)
        if column is None or column.geo is None:
            continue
        dim = dimension(column.geo.geometry_type)
        if dim is None:
            continue
        rel = by_name[table.name]
        rows = table.expected_rows if isinstance(table.expected_rows, int) else 0
        out.append(GeoSide(rel, column.name, rel.spatial[column.name].kind, dim,
                           column.geo.srid, rows,
                           wgs84_bounds(conn, column.geo.srid, column.geo.extent)))
    return out


def infer_spatial_joins(conn: psycopg.Connection, rels: list[Relation], tables: list[Table],
                        rows: int = SAMPLE_ROWS,
                        budget: Budget = (profile.RELATION_BUDGET_S, 30)) -> list[JoinPath]:
    """Inferred ``kind: spatial`` join paths between the drafted geometry tables (see module).

    ``rels`` are the introspected relations and ``tables`` their drafted entries (with
    ``geo`` facts). Pairs whose extents are unknown or do not overlap, and pairs with no
    sampled match, get no path. Never raises for one pair's failed query (it is skipped);
    each pair's probes share one per-relation ``budget`` (see :func:`match_share`).
    """
    paths = []
    for a, b in itertools.combinations(sides(conn, rels, tables), 2):
        if max(a.dimension, b.dimension) < 2 or a.bounds_wgs84 is None \
                or b.bounds_wgs84 is None or not bounds_overlap(a.bounds_wgs84, b.bounds_wgs84):
            continue
        found = _relate(conn, a, b, rows, budget)
        if found is None:
            continue
        left, right, predicate, (matched, sampled) = found
        if matched == 0 or sampled == 0:
            continue
        share = round(matched / sampled, 4)
        what = {"ST_Within": "lie within", "ST_Intersects": "intersect"}[predicate]
        paths.append(JoinPath(
            left=left.end, right=right.end, kind="spatial", inferred=True, predicate=predicate,
            match_share=share, sampled=sampled,
            description=f"Inferred: {predicate}({left.rel.name}, {right.rel.name}); "
            f"{matched} of {sampled} sampled {left.rel.name} rows {what} a {right.rel.name} "
            f"row (SRID {left.srid} -> {right.srid})."))
    return sorted(paths, key=lambda p: (p.left, p.right))


def _relate(conn: psycopg.Connection, a: GeoSide, b: GeoSide, rows: int, budget: Budget
            ) -> tuple[GeoSide, GeoSide, SpatialPredicate, tuple[int, int]] | None:
    """Direction, predicate and (matched, sampled) of one candidate pair."""
    if a.dimension != b.dimension:
        left, right = (a, b) if a.dimension < b.dimension else (b, a)
        predicate: SpatialPredicate = "ST_Within" if left.dimension == 0 else "ST_Intersects"
        counts = match_share(conn, left, right, predicate, rows, budget)
        return None if counts is None else (left, right, predicate, counts)
    nests = []
    for left, right in ((a, b), (b, a)):
        nested = _counts(conn, left, right, "ST_Within", rows, budget, nested=True)
        if nested is not None and nested[0] and nested[2] >= NESTED_SHARE * nested[0]:
            nests.append((nested[2] / nested[0], left, right, nested))
    if nests:
        _, left, right, best = max(nests, key=lambda n: n[0])
        return left, right, "ST_Within", (best[0], best[1])
    left, right = (a, b) if (a.rows, b.rel.name) >= (b.rows, a.rel.name) else (b, a)
    counts = match_share(conn, left, right, "ST_Intersects", rows, budget)
    return None if counts is None else (left, right, "ST_Intersects", counts)
