"""DDL generated from the semantic catalog: tables, keys, GiST indexes and ``COMMENT ON`` texts.

A ``raster`` column gets a GiST index on ``ST_ConvexHull(rast)`` and ``AddRasterConstraints``
(SRID, scale, blocking, band count, pixel types, nodata, extent), so ``raster_columns`` - and
``geoask catalog check`` - can read its resolution, nodata and extent.

The catalog is version-controlled and trusted, but column types are still checked against a
small grammar before they are spliced into SQL. Statements are ``psycopg.sql`` objects.
"""

from __future__ import annotations

import re

from psycopg import sql

from geoask.catalog.model import Column, Table
from geoask.errors import CatalogError

_TYPE = re.compile(
    r"^(?:text|integer|bigint|smallint|double precision|real|boolean|date|time|"
    r"char\(\d+\)|varchar\(\d+\)|numeric\(\d+,\s*\d+\)|"
    r"geometry\((?:Point|LineString|Polygon|MultiPoint|MultiLineString|MultiPolygon),4326\)|"
    r"raster)$",
    re.IGNORECASE,
)


def column_type(column: Column) -> sql.SQL:
    """Return the column's PostgreSQL type as SQL; raises CatalogError for an unknown type."""
    if not _TYPE.match(column.type):
        raise CatalogError(f"column {column.name}: unsupported type {column.type!r}")
    return sql.SQL(column.type)


def create_table(schema: str, table: Table) -> sql.Composed:
    """``CREATE TABLE schema.table (...)`` with types and NOT NULL, without keys or indexes."""
    columns = [
        sql.SQL("{} {}{}").format(
            sql.Identifier(c.name), column_type(c), sql.SQL("" if c.nullable else " NOT NULL")
        )
        for c in table.columns
    ]
    return sql.SQL("CREATE TABLE {}.{} ({})").format(
        sql.Identifier(schema), sql.Identifier(table.name), sql.SQL(", ").join(columns)
    )


def constraints(schema: str, table: Table) -> list[sql.Composed]:
    """Primary key, foreign keys, a GiST index on the geometry column, raster constraints."""
    target = sql.SQL("{}.{}").format(sql.Identifier(schema), sql.Identifier(table.name))
    out = [
        sql.SQL("ALTER TABLE {} ADD CONSTRAINT {} PRIMARY KEY ({})").format(
            target, sql.Identifier(f"{table.name}_pkey"),
            sql.SQL(", ").join(map(sql.Identifier, table.primary_key)),
        )
    ]
    for fk in table.foreign_keys:
        out.append(
            sql.SQL(
                "ALTER TABLE {} ADD CONSTRAINT {} FOREIGN KEY ({}) REFERENCES {}.{} ({})"
            ).format(
                target, sql.Identifier(f"{table.name}_{'_'.join(fk.columns)}_fkey"),
                sql.SQL(", ").join(map(sql.Identifier, fk.columns)),
                sql.Identifier(schema), sql.Identifier(fk.ref_table),
                sql.SQL(", ").join(map(sql.Identifier, fk.ref_columns)),
            )
        )
    geom = table.geometry_column
    if geom is not None:
        out.append(
            sql.SQL("CREATE INDEX {} ON {} USING gist ({})").format(
                sql.Identifier(f"{table.name}_{geom.name}_gist"), target, sql.Identifier(geom.name)
            )
        )
    rast = table.raster_column
    if rast is not None:
        out.append(sql.SQL("CREATE INDEX {} ON {} USING gist (ST_ConvexHull({}))").format(
            sql.Identifier(f"{table.name}_{rast.name}_gist"), target, sql.Identifier(rast.name)))
        out.append(sql.SQL("SELECT AddRasterConstraints({}::name, {}::name, {}::name)").format(
            sql.Literal(schema), sql.Literal(table.name), sql.Literal(rast.name)))
    return out


def table_comment(table: Table) -> str:
    """The ``COMMENT ON TABLE`` text: title, theme, granularity, coverage and source."""
    coverage = (
        f"{table.temporal_coverage.start} to {table.temporal_coverage.end}"
        if table.temporal_coverage else "none"
    )
    return (
        f"{table.title}. {table.theme} Spatial granularity: {table.spatial_granularity}. "
        f"Temporal granularity: {table.temporal_granularity}; coverage: {coverage}. "
        f"Source: {table.source}"
    )


def column_comment(column: Column) -> str:
    """The ``COMMENT ON COLUMN`` text: meaning, unit, allowed values or range, abbreviations."""
    parts = [column.description]
    if column.unit:
        parts.append(f"Unit: {column.unit}.")
    if column.values:
        parts.append("Values: " + ", ".join(map(str, column.values)) + ".")
    if column.range:
        parts.append(f"Range: {column.range[0]} to {column.range[1]}.")
    if column.abbreviations:
        parts.append(
            "Abbreviations: " + "; ".join(f"{k} = {v}" for k, v in column.abbreviations.items())
            + "."
        )
    return " ".join(parts)


def comments(schema: str, table: Table) -> list[sql.Composed]:
    """``COMMENT ON`` statements for the table and each of its columns."""
    target = sql.SQL("{}.{}").format(sql.Identifier(schema), sql.Identifier(table.name))
    out = [sql.SQL("COMMENT ON TABLE {} IS {}").format(target, sql.Literal(table_comment(table)))]
    out += [
        sql.SQL("COMMENT ON COLUMN {}.{} IS {}").format(
            target, sql.Identifier(c.name), sql.Literal(column_comment(c))
        )
        for c in table.columns
    ]
    return out
