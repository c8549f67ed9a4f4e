"""The one mechanism that loads GeoParquet/Parquet files into PostGIS through staging schemas.

Used by the demo loader (``geoask db load``, driven by the semantic catalog) and the dataset
loader (``geoask db load-dataset``, driven by a ``dataset.yaml`` manifest). Tables are created
empty in a staging schema, filled with COPY, given keys and indexes, verified (row counts,
SRIDs, geometry validity and types), then swapped in for the published schemas in one
transaction, so readers never see a half-loaded schema. A fingerprint of the description file
and the data files, kept per schema in ``geoask_meta.load_state`` of the target database, makes
a repeated load a no-op.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import psycopg
import pyarrow.parquet as pq
import pyproj
import shapely
from psycopg import sql

from geoask.errors import DatasetError, DataValidationError

META_SCHEMA = "geoask_meta"


@dataclass(frozen=True)
class GeometrySpec:
    """The expected geometry of a column: PostGIS type name (``MultiPolygon``) and SRID."""

    column: str
    geometry_type: str
    srid: int


@dataclass(frozen=True)
class TableCheck:
    """Verification result of one loaded table (row count, SRIDs, validity, geometry types)."""

    table: str
    rows: int
    expected_rows: int
    srids: list[int]
    invalid_geometries: int
    geometry_types: list[str]

    def problems(self, expected: GeometrySpec | None) -> list[str]:
        """Describe every way this table differs from what was expected; empty when right."""
        out = []
        if self.rows != self.expected_rows:
            out.append(f"{self.table}: {self.rows} rows, catalog expects {self.expected_rows}")
        if expected is not None:
            if self.srids != [expected.srid]:
                out.append(f"{self.table}: SRIDs {self.srids}, expected [{expected.srid}]")
            if self.invalid_geometries:
                out.append(f"{self.table}: {self.invalid_geometries} invalid geometries")
            kind = expected.geometry_type.upper()
            if self.geometry_types != [kind]:
                out.append(f"{self.table}: geometry types {self.geometry_types}, "
                           f"expected [{kind}]")
        return out


def fingerprint(description: Path, data_files: Iterable[Path]) -> str:
    """SHA-256 (hex) over the description file, then each data file's name and bytes, sorted."""
    digest = hashlib.sha256(description.read_bytes())
    for path in sorted(data_files, key=lambda p: p.name):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def loaded_fingerprint(owner_url: str, schema: str) -> str | None:
    """Fingerprint of the data last published into ``schema`` of that database, or None."""
    with psycopg.connect(owner_url) as conn:
        present = conn.execute(
            "SELECT to_regclass(%s) IS NOT NULL", (f"{META_SCHEMA}.load_state",)
        ).fetchone()
        if not present or not present[0]:
            return None
        row = conn.execute(
            sql.SQL("SELECT fingerprint FROM {}.load_state WHERE schema_name = %s").format(
                sql.Identifier(META_SCHEMA)), (schema,),
        ).fetchone()
        return row[0] if row else None


def refuse_foreign_schemas(owner_url: str, schemas: Sequence[str]) -> None:
    """Refuse to load into an existing schema that geoask never loaded (it would be replaced).

    Raises:
        DatasetError: one of ``schemas`` exists in that database without a load record.

    """
    with psycopg.connect(owner_url) as conn:
        for schema in schemas:
            found = conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s",
                                 (schema,)).fetchone()
            if found:
                raise DatasetError(
                    f"schema {schema} already exists in that database and was not loaded by "
                    "geoask; a load replaces its schemas whole, so name another schema in the "
                    "manifest (or drop this one yourself)")


def recreate_schema(owner_url: str, schema: str,
                    statements: Sequence[sql.Composed | sql.SQL]) -> None:
    """Drop ``schema`` if it exists, create it empty, then run ``statements`` (CREATE TABLE)."""
    with psycopg.connect(owner_url) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
        for statement in statements:
            conn.execute(statement)


def drop_schemas(owner_url: str, schemas: Sequence[str]) -> None:
    """Drop each of ``schemas`` and everything in it, if it exists."""
    with psycopg.connect(owner_url) as conn:
        for schema in schemas:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(
                sql.Identifier(schema)))


def read_rows(path: Path, columns: Sequence[str], geometry: Mapping[str, int],
              definitions: Mapping[int, pyproj.CRS] | None = None) -> list[tuple[object, ...]]:
    """Read ``path`` into tuples in ``columns`` order; geometry columns as hex EWKB.

    ``geometry`` maps each geometry column to its expected SRID; the file's GeoParquet CRS
    (absent: OGC:CRS84, i.e. EPSG:4326) must be that EPSG code, the CRS ``definitions`` gives
    an SRID the database defines itself, or none at all (``"crs": null``) for SRID 0.

    Raises:
        DataValidationError: the file lacks a column or a geometry column's CRS differs.

    """
    parquet = pq.read_table(path)
    missing = sorted(set(columns) - set(parquet.column_names))
    if missing:
        raise DataValidationError(f"{path.name} lacks columns {missing}")
    out: list[list[object]] = []
    for name in columns:
        values = parquet.column(name).to_pylist()
        if name in geometry:
            srid = geometry[name]
            check_geoparquet_crs(path, parquet.schema.metadata or {}, name, srid,
                                 (definitions or {}).get(srid))
            geoms = shapely.set_srid(shapely.from_wkb(values), srid)
            values = list(shapely.to_wkb(geoms, hex=True, include_srid=True))
        out.append(values)
    return list(zip(*out, strict=True))


def check_geoparquet_crs(path: Path, metadata: Mapping[bytes, bytes], column: str,
                         srid: int, definition: pyproj.CRS | None = None) -> None:
    """Raise DataValidationError unless ``column``'s GeoParquet CRS is that of ``srid``.

    That is EPSG:``srid``; ``definition`` when the database defines ``srid`` itself; and no
    CRS (``"crs": null``, GeoParquet's "unknown") for SRID 0, planar data in no named CRS.
    """
    geo = json.loads(metadata.get(b"geo", b"{}"))
    meta = geo.get("columns", {}).get(column, {})
    crs = meta.get("crs", pyproj.CRS.from_epsg(4326).to_json_dict())  # absent = OGC:CRS84
    if srid == 0 or crs is None:
        if srid != 0 or crs is not None:
            raise DataValidationError(
                f"{path.name}: geometry CRS of {column} is {'none' if crs is None else 'set'}, "
                f"expected {'none (SRID 0)' if srid == 0 else f'SRID {srid}'}")
        return
    found = pyproj.CRS.from_json_dict(crs)
    if definition is not None:
        if not found.equals(definition, ignore_axis_order=True):
            raise DataValidationError(f"{path.name}: geometry CRS of {column} is "
                                      f"{found.name}, expected SRID {srid} "
                                      f"({definition.name}) as the manifest declares it")
        return
    epsg = found.to_epsg()
    if epsg != srid:
        raise DataValidationError(
            f"{path.name}: geometry CRS of {column} is EPSG:{epsg}, expected EPSG:{srid}")


def copy_rows(owner_url: str, schema: str, table: str, columns: Sequence[str],
              rows: Sequence[tuple[object, ...]]) -> int:
    """Empty ``schema.table`` and COPY ``rows`` into ``columns``; returns the number of rows."""
    target = sql.SQL("{}.{}").format(sql.Identifier(schema), sql.Identifier(table))
    statement = sql.SQL("COPY {} ({}) FROM STDIN").format(
        target, sql.SQL(", ").join(map(sql.Identifier, columns)))
    with psycopg.connect(owner_url) as conn, conn.cursor() as cur:
        cur.execute(sql.SQL("TRUNCATE {}").format(target))
        with cur.copy(statement) as copy:
            for row in rows:
                copy.write_row(row)
    return len(rows)


def run_and_analyze(owner_url: str, statements: Sequence[sql.Composed | sql.SQL]) -> None:
    """Run ``statements`` in one transaction (keys, indexes, comments), then ANALYZE."""
    with psycopg.connect(owner_url) as conn:
        for statement in statements:
            conn.execute(statement)
    with psycopg.connect(owner_url, autocommit=True) as conn:
        conn.execute("ANALYZE")


def check_table(conn: psycopg.Connection, schema: str, table: str, expected_rows: int,
                geometry: GeometrySpec | None) -> TableCheck:
    """Count the rows of ``schema.table``; with ``geometry`` also measure its geometry column.

    Measured: distinct SRIDs, invalid geometries (``ST_IsValid`` false or NULL) and distinct
    geometry types as ``GeometryType()`` spells them (``MULTIPOLYGON``).
    """
    target = sql.SQL("{}.{}").format(sql.Identifier(schema), sql.Identifier(table))
    rows = conn.execute(sql.SQL("SELECT count(*) FROM {}").format(target)).fetchone()
    srids: list[int] = []
    invalid = 0
    types: list[str] = []
    if geometry is not None:
        g = sql.Identifier(geometry.column)
        stats = conn.execute(sql.SQL(
            "SELECT array_agg(DISTINCT ST_SRID({g})), "
            "count(*) FILTER (WHERE NOT ST_IsValid({g}) OR {g} IS NULL), "
            "array_agg(DISTINCT GeometryType({g})) FROM {t}").format(g=g, t=target)).fetchone()
        assert stats is not None
        srids, invalid, types = sorted(stats[0] or []), stats[1], sorted(stats[2] or [])
    return TableCheck(table, rows[0] if rows else 0, expected_rows, srids, invalid, types)


@dataclass(frozen=True)
class TableTarget:
    """One table to verify: location, expected rows (-1: any), geometry, and its label.

    ``label`` names it in checks and messages (the table may sit in a staging schema).
    """

    schema: str
    table: str
    expected_rows: int
    geometry: GeometrySpec | None
    label: str


def verify_tables(url: str, targets: Sequence[TableTarget], what: str) -> list[TableCheck]:
    """Check every target (:func:`check_table`) in one connection; all problems in one error.

    Raises:
        DataValidationError: ``"<what> failed verification: problem; problem ..."``.

    """
    checks: list[TableCheck] = []
    problems: list[str] = []
    with psycopg.connect(url) as conn:
        for target in targets:
            check = check_table(conn, target.schema, target.table, target.expected_rows,
                                target.geometry)
            check = replace(check, table=target.label)
            problems += check.problems(target.geometry)
            checks.append(check)
    if problems:
        raise DataValidationError(f"{what} failed verification: " + "; ".join(problems))
    return checks


def publish(owner_url: str, swaps: Sequence[tuple[str, str]], fingerprint: str,
            reader_role: str, then: Sequence[sql.Composed | sql.SQL] = ()) -> None:
    """Swap each verified ``(staging, schema)`` in, run ``then`` (views), grant, record.

    In one transaction: every published ``schema`` is dropped and its staging schema renamed to
    it; ``then`` runs (e.g. ``CREATE VIEW`` over the published names); ``reader_role`` gets
    USAGE and SELECT on every table and view; the fingerprint is recorded per schema.

    Raises:
        DatasetError: a statement of ``then`` fails (the message is PostgreSQL's first line);
            the transaction is rolled back, so the published schemas stay as they were.

    """
    meta, reader = sql.Identifier(META_SCHEMA), sql.Identifier(reader_role)
    with psycopg.connect(owner_url) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(meta))
        conn.execute(sql.SQL(
            "CREATE TABLE IF NOT EXISTS {}.load_state (schema_name text PRIMARY KEY, "
            "fingerprint text NOT NULL, loaded_at timestamptz NOT NULL DEFAULT now())"
        ).format(meta))
        for staging, schema in swaps:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(
                sql.Identifier(schema)))
            conn.execute(sql.SQL("ALTER SCHEMA {} RENAME TO {}").format(
                sql.Identifier(staging), sql.Identifier(schema)))
        for statement in then:
            try:
                conn.execute(statement)
            except psycopg.Error as error:  # the transaction rolls back: nothing is published
                raise DatasetError(f"{str(error).splitlines()[0]}; nothing was published") \
                    from None
        for _, schema in swaps:
            s = sql.Identifier(schema)
            conn.execute(sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(s, reader))
            conn.execute(sql.SQL("GRANT SELECT ON ALL TABLES IN SCHEMA {} TO {}").format(
                s, reader))
            conn.execute(sql.SQL(
                "INSERT INTO {}.load_state (schema_name, fingerprint) VALUES (%s, %s) "
                "ON CONFLICT (schema_name) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, "
                "loaded_at = now()").format(meta), (schema, fingerprint))


def read_raster_rows(path: Path, tile_size: tuple[int, int]) -> list[tuple[object, ...]]:
    """Tile the GeoTIFF at ``path`` into ``(rid, hex raster WKB)`` rows, rid 1.. row by row.

    Tiles are at most ``tile_size`` ``(width, height)`` pixels and keep the file's SRID (its
    EPSG code), pixel grid and nodata (:mod:`geoask.base.raster`).

    Raises:
        DataValidationError: the file cannot be read or has no EPSG-coded CRS.

    """
    from geoask.base.raster import read_geotiff, tile_raster, to_wkb

    tiles = tile_raster(read_geotiff(path), *tile_size)
    return [(rid, to_wkb(tile).hex()) for rid, tile in enumerate(tiles, start=1)]


@dataclass(frozen=True)
class RasterSpec:
    """What ``raster_columns`` must say of a loaded raster column (its AddRasterConstraints)."""

    schema: str
    table: str
    column: str
    srid: int
    pixel_size: tuple[float, float]
    band_count: int
    nodata: tuple[float | None, ...]


def verify_rasters(url: str, specs: Sequence[RasterSpec]) -> list[str]:
    """Compare each raster column's ``raster_columns`` row with its spec; problems, one each."""
    problems: list[str] = []
    with psycopg.connect(url) as conn:
        for spec in specs:
            row = conn.execute(
                "SELECT srid, scale_x, scale_y, num_bands, nodata_values FROM raster_columns "
                "WHERE r_table_schema = %s AND r_table_name = %s AND r_raster_column = %s",
                (spec.schema, spec.table, spec.column)).fetchone()
            where = f"{spec.table}.{spec.column}"
            if row is None:
                problems.append(f"{where}: no raster_columns row (AddRasterConstraints missing)")
                continue
            srid, sx, sy, bands, nodata = row
            if srid != spec.srid:
                problems.append(f"{where}: SRID {srid}, catalog says {spec.srid}")
            if sx is None or sy is None or \
                    not math.isclose(sx, spec.pixel_size[0], rel_tol=1e-8) or \
                    not math.isclose(-sy, spec.pixel_size[1], rel_tol=1e-8):
                problems.append(f"{where}: pixel size {sx}, {sy}, catalog says {spec.pixel_size}")
            if bands != spec.band_count:
                problems.append(f"{where}: {bands} bands, catalog says {spec.band_count}")
            if list(nodata or [None] * (bands or 0)) != list(spec.nodata):
                problems.append(f"{where}: nodata {nodata}, catalog says {list(spec.nodata)}")
    return problems
