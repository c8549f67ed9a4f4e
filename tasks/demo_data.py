"""Tasks that load the committed demo data (GeoParquet/Parquet) into PostGIS.

Loading goes through a staging schema: tables are created from the catalog, filled with COPY,
given their keys, indexes and comments, verified, and only then swapped in for the data schema
in one transaction, so readers never see a half-loaded schema. A fingerprint of the catalog and
the data files, kept in ``geoask_meta.load_state``, makes a repeated load a no-op.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pyarrow.parquet as pq
import pyproj
import shapely
from prefect import task
from prefect.cache_policies import NO_CACHE
from psycopg import sql

from geoask.catalog import ddl
from geoask.catalog.model import Catalog, Table
from geoask.db.cluster import READER_ROLE
from geoask.errors import DataValidationError
from geoask.retry import TRANSIENT_RETRIES

META_SCHEMA = "geoask_meta"


@dataclass(frozen=True)
class TableCheck:
    """Verification result of one loaded table (row count, SRIDs, validity, geometry types)."""

    table: str
    rows: int
    expected_rows: int
    srids: list[int]
    invalid_geometries: int
    geometry_types: list[str]

    def problems(self, expected_type: str | None) -> list[str]:
        """Describe every way this table differs from the catalog; empty when it is right."""
        out = []
        if self.rows != self.expected_rows:
            out.append(f"{self.table}: {self.rows} rows, catalog expects {self.expected_rows}")
        if expected_type is not None:
            if self.srids != [4326]:
                out.append(f"{self.table}: SRIDs {self.srids}, expected [4326]")
            if self.invalid_geometries:
                out.append(f"{self.table}: {self.invalid_geometries} invalid geometries")
            if self.geometry_types != [expected_type]:
                out.append(f"{self.table}: geometry types {self.geometry_types}, "
                           f"expected [{expected_type}]")
        return out


def data_fingerprint(data_dir: Path, catalog_path: Path) -> str:
    """SHA-256 over the catalog file and every ``*.parquet`` file in ``data_dir`` (hex)."""
    digest = hashlib.sha256(catalog_path.read_bytes())
    for path in sorted(data_dir.glob("*.parquet")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


@task(name="loaded-fingerprint", **TRANSIENT_RETRIES)
def loaded_fingerprint(owner_url: str, schema: str) -> str | None:
    """Fingerprint of the data last published into ``schema``, or None."""
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


@task(name="drop-schema", cache_policy=NO_CACHE)
def drop_schema(owner_url: str, schema: str) -> None:
    """Drop ``schema`` and everything in it, if it exists."""
    with psycopg.connect(owner_url) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


@task(name="create-staging", cache_policy=NO_CACHE)
def create_staging(owner_url: str, staging: str, catalog: Catalog) -> None:
    """(Re)create the staging schema with every catalog table, empty and without keys."""
    with psycopg.connect(owner_url) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(staging)))
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(staging)))
        for table in catalog.tables:
            conn.execute(ddl.create_table(staging, table))


def read_rows(path: Path, table: Table) -> list[tuple[object, ...]]:
    """Read ``path`` into tuples in the catalog's column order; geometry as hex EWKB (SRID 4326).

    Raises:
        DataValidationError: the file lacks a catalog column or its geometry CRS is not EPSG:4326.

    """
    parquet = pq.read_table(path)
    names = [c.name for c in table.columns]
    missing = sorted(set(names) - set(parquet.column_names))
    if missing:
        raise DataValidationError(f"{path.name} lacks catalog columns {missing}")
    columns: list[list[object]] = []
    for column in table.columns:
        values = parquet.column(column.name).to_pylist()
        if column.is_geometry:
            _check_geoparquet_crs(path, parquet.schema.metadata or {}, column.name)
            geoms = shapely.set_srid(shapely.from_wkb(values), 4326)
            values = list(shapely.to_wkb(geoms, hex=True, include_srid=True))
        columns.append(values)
    return list(zip(*columns, strict=True))


def _check_geoparquet_crs(path: Path, metadata: dict[bytes, bytes], name: str) -> None:
    geo = json.loads(metadata.get(b"geo", b"{}"))
    crs = geo.get("columns", {}).get(name, {}).get("crs")
    epsg = pyproj.CRS.from_json_dict(crs).to_epsg() if crs else 4326  # absent = OGC:CRS84
    if epsg != 4326:
        raise DataValidationError(f"{path.name}: geometry CRS is EPSG:{epsg}, expected EPSG:4326")


@task(name="copy-table", cache_policy=NO_CACHE, **TRANSIENT_RETRIES)
def copy_table(owner_url: str, staging: str, table: Table, path: Path) -> int:
    """COPY the rows of ``path`` into ``staging.table``; returns the number of rows."""
    rows = read_rows(path, table)
    statement = sql.SQL("COPY {}.{} ({}) FROM STDIN").format(
        sql.Identifier(staging), sql.Identifier(table.name),
        sql.SQL(", ").join(sql.Identifier(c.name) for c in table.columns),
    )
    with psycopg.connect(owner_url) as conn, conn.cursor() as cur:
        cur.execute(sql.SQL("TRUNCATE {}.{}").format(sql.Identifier(staging),
                                                      sql.Identifier(table.name)))
        with cur.copy(statement) as copy:
            for row in rows:
                copy.write_row(row)
    return len(rows)


@task(name="add-keys-and-comments", cache_policy=NO_CACHE)
def add_keys_and_comments(owner_url: str, staging: str, catalog: Catalog) -> None:
    """Primary and foreign keys, GiST indexes, COMMENT ON texts, then ANALYZE."""
    with psycopg.connect(owner_url) as conn:
        for table in catalog.tables:
            for statement in ddl.constraints(staging, table) + ddl.comments(staging, table):
                conn.execute(statement)
        conn.execute(sql.SQL("COMMENT ON SCHEMA {} IS {}").format(
            sql.Identifier(staging), sql.Literal(catalog.description)))
    with psycopg.connect(owner_url, autocommit=True) as conn:
        conn.execute("ANALYZE")


@task(name="verify-schema", cache_policy=NO_CACHE)
def verify_schema(url: str, schema: str, catalog: Catalog) -> list[TableCheck]:
    """Check row counts, SRIDs, geometry validity and types against the catalog.

    Raises:
        DataValidationError: listing every difference found.

    """
    checks: list[TableCheck] = []
    problems: list[str] = []
    with psycopg.connect(url) as conn:
        for table in catalog.tables:
            target = sql.SQL("{}.{}").format(sql.Identifier(schema), sql.Identifier(table.name))
            rows = conn.execute(sql.SQL("SELECT count(*) FROM {}").format(target)).fetchone()
            geom = table.geometry_column
            srids: list[int] = []
            invalid = 0
            types: list[str] = []
            if geom is not None:
                g = sql.Identifier(geom.name)
                stats = conn.execute(sql.SQL(
                    "SELECT array_agg(DISTINCT ST_SRID({g})), "
                    "count(*) FILTER (WHERE NOT ST_IsValid({g}) OR {g} IS NULL), "
                    "array_agg(DISTINCT GeometryType({g})) FROM {t}").format(g=g, t=target)
                ).fetchone()
                assert stats is not None
                srids, invalid, types = sorted(stats[0] or []), stats[1], sorted(stats[2] or [])
            expected = table.expected_rows if isinstance(table.expected_rows, int) else -1
            check = TableCheck(table.name, rows[0] if rows else 0, expected,
                               srids, invalid, types)
            expected_type = _geometry_type(geom.type) if geom is not None else None
            problems += check.problems(expected_type)
            checks.append(check)
    if problems:
        raise DataValidationError("demo data failed verification: " + "; ".join(problems))
    return checks


def _geometry_type(type_name: str) -> str:
    """'geometry(MultiPolygon,4326)' -> 'MULTIPOLYGON' (as PostGIS GeometryType() reports)."""
    return type_name.split("(", 1)[1].split(",", 1)[0].upper()


@task(name="publish-schema", cache_policy=NO_CACHE)
def publish_schema(owner_url: str, staging: str, schema: str, fingerprint: str) -> None:
    """Swap the verified staging schema in for ``schema`` and record the fingerprint, atomically."""
    s, st, meta = sql.Identifier(schema), sql.Identifier(staging), sql.Identifier(META_SCHEMA)
    reader = sql.Identifier(READER_ROLE)
    with psycopg.connect(owner_url) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(meta))
        conn.execute(sql.SQL(
            "CREATE TABLE IF NOT EXISTS {}.load_state (schema_name text PRIMARY KEY, "
            "fingerprint text NOT NULL, loaded_at timestamptz NOT NULL DEFAULT now())"
        ).format(meta))
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(s))
        conn.execute(sql.SQL("ALTER SCHEMA {} RENAME TO {}").format(st, s))
        conn.execute(sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(s, reader))
        conn.execute(sql.SQL("GRANT SELECT ON ALL TABLES IN SCHEMA {} TO {}").format(s, reader))
        conn.execute(sql.SQL(
            "INSERT INTO {}.load_state (schema_name, fingerprint) VALUES (%s, %s) "
            "ON CONFLICT (schema_name) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, "
            "loaded_at = now()").format(meta), (schema, fingerprint),
        )
