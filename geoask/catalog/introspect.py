"""Read a PostgreSQL/PostGIS database's own catalogs: relations, columns, keys, spatial columns.

Used by ``geoask catalog draft`` and ``geoask catalog check``. Everything runs in one read-only
transaction (``SET TRANSACTION READ ONLY``) with a statement timeout; identifiers are
``psycopg.sql.Identifier`` objects and values are placeholders, never formatted into SQL text.
Nothing here scans table data: see :mod:`geoask.catalog.profile` for the (bounded) statistics.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import psycopg
from psycopg import sql

from geoask.errors import CatalogError, DatabaseError

if TYPE_CHECKING:
    from pyproj import CRS

RELKINDS = {"r": "table", "p": "table", "v": "view", "m": "materialized_view",
            "f": "foreign_table"}
"""``pg_class.relkind`` of the relations a catalog describes, and the catalog's ``kind``."""


@dataclass
class LiveColumn:
    """One column as ``pg_attribute`` describes it.

    ``type`` is ``format_type(atttypid, atttypmod)`` (e.g. ``character(2)``,
    ``geometry(Point,32618)``); ``category`` is ``pg_type.typcategory`` (``N`` numeric, ``S``
    string, ``D`` date/time, ``U`` user types such as PostGIS's, ``B`` boolean...).
    """

    name: str
    type: str
    type_name: str
    category: str
    not_null: bool
    comment: str | None


@dataclass
class SpatialColumn:
    """A ``geometry_columns``/``geography_columns`` row: ``srid`` 0 means unconstrained."""

    kind: str  # "geometry" or "geography"
    geometry_type: str  # e.g. "MULTIPOLYGON", "POINT", "GEOMETRY" (any)
    srid: int
    dimensions: int


@dataclass
class ForeignKeyInfo:
    """A declared foreign key: ``columns`` reference ``ref_schema.ref_table(ref_columns)``."""

    columns: list[str]
    ref_schema: str
    ref_table: str
    ref_columns: list[str]


@dataclass
class Relation:
    """A table, view, materialized view or foreign table with its columns and keys.

    ``reltuples`` is the planner's row estimate (-1 or 0 when never analysed, 0 for views).
    """

    oid: int
    schema: str
    name: str
    kind: str
    reltuples: float
    comment: str | None
    columns: list[LiveColumn] = field(default_factory=list)
    primary_key: list[str] = field(default_factory=list)
    unique: list[list[str]] = field(default_factory=list)
    """Column lists of UNIQUE constraints and unique indexes (not the primary key)."""
    foreign_keys: list[ForeignKeyInfo] = field(default_factory=list)
    spatial: dict[str, SpatialColumn] = field(default_factory=dict)

    @property
    def identifier(self) -> sql.Composed:
        """``schema.name`` as quoted identifiers."""
        return sql.SQL("{}.{}").format(sql.Identifier(self.schema), sql.Identifier(self.name))

    def column(self, name: str) -> LiveColumn | None:
        """The column called ``name``, or None."""
        return next((c for c in self.columns if c.name == name), None)


def first_line(error: BaseException) -> str:
    """The first non-empty line of an error message (libpq messages run over several lines)."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__


@contextmanager
def read_only(url: str, timeout_s: int = 30) -> Iterator[psycopg.Connection]:
    """A connection inside one read-only transaction with ``statement_timeout`` ``timeout_s``.

    The transaction is rolled back at the end. Raises:
        DatabaseError: the server cannot be reached or refuses the login (one-line message).

    """
    try:
        conn = psycopg.connect(url, connect_timeout=10)
    except (psycopg.Error, ValueError) as error:
        raise DatabaseError(f"cannot connect to the database: {first_line(error)}") from None
    try:
        conn.execute("SET TRANSACTION READ ONLY")
        conn.execute("SELECT set_config('statement_timeout', %s, true)", (str(timeout_s * 1000),))
        yield conn
    finally:
        try:
            conn.rollback()
        finally:
            conn.close()


_RELATIONS = """
SELECT c.oid::int8, n.nspname::text, c.relname::text, c.relkind::text, c.reltuples::float8,
       obj_description(c.oid, 'pg_class')
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind = ANY(%(kinds)s)
  AND (%(schemas)s::text[] IS NULL OR n.nspname = ANY(%(schemas)s::text[]))
  AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%%'
  AND NOT c.relispartition
  AND has_schema_privilege(n.oid, 'USAGE') AND has_table_privilege(c.oid, 'SELECT')
  AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass
                  AND d.objid = c.oid AND d.deptype = 'e')
ORDER BY n.nspname, c.relname
"""

_COLUMNS = """
SELECT a.attrelid::int8, a.attname::text, format_type(a.atttypid, a.atttypmod), t.typname::text,
       t.typcategory::text, a.attnotnull, col_description(a.attrelid, a.attnum)
FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
WHERE a.attrelid = ANY(%s::oid[]) AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attrelid, a.attnum
"""

_KEYS = """
SELECT con.conrelid::int8, con.contype::text,
       array(SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY k(n, i)
             JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.n ORDER BY k.i),
       fn.nspname::text, fc.relname::text,
       array(SELECT a.attname::text FROM unnest(con.confkey) WITH ORDINALITY k(n, i)
             JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.n ORDER BY k.i)
FROM pg_constraint con
LEFT JOIN pg_class fc ON fc.oid = con.confrelid
LEFT JOIN pg_namespace fn ON fn.oid = fc.relnamespace
WHERE con.conrelid = ANY(%s::oid[]) AND con.contype IN ('p', 'f')
ORDER BY con.conrelid, con.conname
"""

_UNIQUE_INDEXES = """
SELECT i.indrelid::int8,
       array(SELECT a.attname::text FROM unnest(i.indkey::int2[]) WITH ORDINALITY k(n, o)
             JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.n
             WHERE k.o <= i.indnkeyatts ORDER BY k.o)
FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
WHERE i.indrelid = ANY(%s::oid[]) AND i.indisunique AND NOT i.indisprimary
  AND i.indpred IS NULL AND i.indexprs IS NULL
ORDER BY i.indrelid, ic.relname
"""
"""Unique indexes on plain columns (no expression, not partial): UNIQUE constraints' own
indexes and ``CREATE UNIQUE INDEX`` alike; the primary key's index is left out."""


def postgis_schema(conn: psycopg.Connection) -> str | None:
    """The schema the ``postgis`` extension is installed in, or None without PostGIS."""
    row = conn.execute("SELECT extnamespace::regnamespace::text FROM pg_extension "
                       "WHERE extname = 'postgis'").fetchone()
    return None if row is None else str(row[0]).strip('"')


def relations(conn: psycopg.Connection, schemas: Sequence[str] | None = None) -> list[Relation]:
    """Every readable table/view of ``schemas`` (default: all non-system schemas).

    Relations that belong to an extension (``spatial_ref_sys``, ``geometry_columns``) and
    partitions are left out. Columns, keys and spatial columns are filled in.

    Raises:
        CatalogError: a requested schema does not exist or has no table the role can read.

    """
    rows = conn.execute(_RELATIONS, {"kinds": list(RELKINDS),
                                     "schemas": list(schemas) if schemas else None}).fetchall()
    found = [Relation(oid=r[0], schema=r[1], name=r[2], kind=RELKINDS[r[3]], reltuples=r[4],
                      comment=r[5]) for r in rows]
    if schemas:
        missing = sorted(set(schemas) - {r.schema for r in found})
        if missing:
            available = sorted({r.schema for r in relations(conn)})
            raise CatalogError(
                f"schema {', '.join(missing)} does not exist or has no table this role can read; "
                f"schemas with tables: {', '.join(available) or 'none'}")
    by_oid = {r.oid: r for r in found}
    oids = list(by_oid)
    for oid, name, type_, type_name, category, not_null, comment in conn.execute(
            _COLUMNS, (oids,)):
        by_oid[oid].columns.append(LiveColumn(name, type_, type_name, category, not_null, comment))
    for oid, contype, cols, ref_schema, ref_table, ref_cols in conn.execute(_KEYS, (oids,)):
        rel = by_oid[oid]
        if contype == "p":
            rel.primary_key = list(cols)
        elif contype == "f":
            rel.foreign_keys.append(ForeignKeyInfo(list(cols), ref_schema, ref_table,
                                                   list(ref_cols)))
    for oid, cols in conn.execute(_UNIQUE_INDEXES, (oids,)):
        if list(cols) not in by_oid[oid].unique:
            by_oid[oid].unique.append(list(cols))
    _add_spatial_columns(conn, found)
    return found


def _add_spatial_columns(conn: psycopg.Connection, found: list[Relation]) -> None:
    schema = postgis_schema(conn)
    if schema is None or not found:
        return
    by_name = {(r.schema, r.name): r for r in found}
    for kind, view, column in (("geometry", "geometry_columns", "f_geometry_column"),
                               ("geography", "geography_columns", "f_geography_column")):
        query = sql.SQL(
            "SELECT f_table_schema::text, f_table_name::text, {}::text, type, srid, "
            "coord_dimension FROM {}.{} WHERE f_table_schema = ANY(%s)"
        ).format(sql.Identifier(column), sql.Identifier(schema), sql.Identifier(view))
        for t_schema, t_name, col, gtype, srid, dims in conn.execute(
                query, (sorted({r.schema for r in found}),)):
            rel = by_name.get((t_schema, t_name))
            if rel is not None:
                rel.spatial[col] = SpatialColumn(kind, str(gtype).upper(), int(srid or 0),
                                                 int(dims or 2))


@dataclass(frozen=True)
class CrsInfo:
    """A CRS as ``spatial_ref_sys`` and pyproj describe it: ``units`` of the first axis."""

    authority: str
    name: str | None
    units: str | None


def crs_info(conn: psycopg.Connection, srid: int) -> CrsInfo:
    """Name and axis units (``degree``, ``metre``, ``US survey foot``) of SRID ``srid``.

    Read from ``spatial_ref_sys`` and parsed with pyproj (see :func:`pyproj_crs`). An SRID
    pyproj cannot parse gives None name/units; never raises for a missing SRID
    (``authority`` is then ``SRID:<n>``).
    """
    authority, crs = _crs(conn, srid)
    if crs is None:
        return CrsInfo(authority, None, None)
    units = crs.axis_info[0].unit_name if crs.axis_info else None
    return CrsInfo(authority, crs.name, units)


def pyproj_crs(conn: psycopg.Connection, srid: int) -> CRS | None:
    """The pyproj ``CRS`` of SRID ``srid`` of this database, or None if unknown/unparsable.

    ``CRS.from_epsg`` for EPSG codes of ``spatial_ref_sys``, else ``CRS.from_wkt`` of its
    ``srtext``.
    """
    return _crs(conn, srid)[1]


def _crs(conn: psycopg.Connection, srid: int) -> tuple[str, CRS | None]:
    from pyproj import CRS
    from pyproj.exceptions import CRSError

    schema = postgis_schema(conn)
    row = None
    if schema is not None and srid > 0:
        row = conn.execute(sql.SQL("SELECT auth_name, auth_srid, srtext FROM {}.spatial_ref_sys "
                                   "WHERE srid = %s").format(sql.Identifier(schema)),
                           (srid,)).fetchone()
    if row is None:
        return f"SRID:{srid}", None
    auth, code, wkt = row
    try:
        return f"{auth}:{code}", (CRS.from_epsg(code) if str(auth).upper() == "EPSG"
                                  else CRS.from_wkt(wkt))
    except CRSError:
        return f"{auth}:{code}", None


@dataclass(frozen=True)
class RasterFacts:
    """What ``raster_columns`` (``AddRasterConstraints``) says of a raster column.

    ``pixel_size`` ``(x, y)`` and ``extent`` ``(xmin, ymin, xmax, ymax)`` are in CRS units;
    ``width``/``height`` count the extent's pixels; ``tile_size`` is the blocking.
    """

    srid: int
    pixel_size: tuple[float, float]
    width: int
    height: int
    tile_size: tuple[int, int]
    extent: tuple[float, float, float, float]
    pixel_types: list[str]
    nodata: list[float | None]


def raster_facts(conn: psycopg.Connection, schema: str, table: str,
                 column: str) -> RasterFacts | None:
    """The constraints of ``schema.table.column`` from ``raster_columns``; None without them.

    None also when PostGIS raster is not installed or the SRID, scale, blocking or extent
    constraint is missing (a raster loaded without ``AddRasterConstraints``).
    """
    present = conn.execute("SELECT to_regclass('raster_columns') IS NOT NULL").fetchone()
    if not present or not present[0]:
        return None
    row = conn.execute(
        "SELECT srid, scale_x, scale_y, blocksize_x, blocksize_y, pixel_types, nodata_values, "
        "ST_XMin(extent), ST_YMin(extent), ST_XMax(extent), ST_YMax(extent) "
        "FROM raster_columns WHERE r_table_schema = %s AND r_table_name = %s "
        "AND r_raster_column = %s", (schema, table, column)).fetchone()
    if row is None or any(value is None for value in (*row[:5], *row[7:])):
        return None
    srid, sx, sy, bx, by, types, nodata, xmin, ymin, xmax, ymax = row
    size = (float(sx), abs(float(sy)))
    return RasterFacts(int(srid), size, round((xmax - xmin) / size[0]),
                       round((ymax - ymin) / size[1]), (int(bx), int(by)),
                       (float(xmin), float(ymin), float(xmax), float(ymax)), list(types or []),
                       list(nodata or [None] * len(types or [])))
