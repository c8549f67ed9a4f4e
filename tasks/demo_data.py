"""Tasks that load the committed demo data (GeoParquet/Parquet) into PostGIS.

Thin wrappers of :mod:`geoask.db.loading` (staging schema, COPY, verification, atomic publish,
fingerprint), with the catalog as the description of every table: tables, keys, indexes and
``COMMENT ON`` texts come from it, and every geometry must be EPSG:4326. A table with a
``raster`` column is loaded from ``<table>.tif`` (tiled, SRID kept) instead of Parquet.
"""

from __future__ import annotations

from pathlib import Path

from prefect import task
from psycopg import sql

from geoask.catalog import ddl
from geoask.catalog.model import Catalog, Table
from geoask.catalog.spatial import spatial_modifiers
from geoask.db import loading
from geoask.db.cluster import READER_ROLE
from geoask.db.loading import GeometrySpec, TableCheck
from geoask.errors import DataValidationError
from tasks.options import RETRIED_TASK, TASK

DEMO_SRID = 4326


def data_fingerprint(data_dir: Path, catalog_path: Path) -> str:
    """SHA-256 over the catalog file and every ``*.parquet``/``*.tif`` file in ``data_dir``."""
    return loading.fingerprint(catalog_path, [*data_dir.glob("*.parquet"),
                                              *data_dir.glob("*.tif")])


def data_file(data_dir: Path, table: Table) -> Path:
    """The file a table is loaded from: ``<name>.tif`` for a raster table, else Parquet."""
    return data_dir / f"{table.name}.{'tif' if table.raster_column is not None else 'parquet'}"


@task(name="loaded-fingerprint", **RETRIED_TASK)
def loaded_fingerprint(owner_url: str, schema: str) -> str | None:
    """Fingerprint of the data last published into ``schema``, or None."""
    return loading.loaded_fingerprint(owner_url, schema)


@task(name="drop-schema", **TASK)
def drop_schema(owner_url: str, schema: str) -> None:
    """Drop ``schema`` and everything in it, if it exists."""
    loading.drop_schemas(owner_url, [schema])


@task(name="create-staging", **TASK)
def create_staging(owner_url: str, staging: str, catalog: Catalog) -> None:
    """(Re)create the staging schema with every catalog table, empty and without keys."""
    loading.recreate_schema(owner_url, staging,
                            [ddl.create_table(staging, t) for t in catalog.tables])


def _geometry(table: Table) -> GeometrySpec | None:
    geom = table.geometry_column
    modifiers = spatial_modifiers(geom.type) if geom is not None else None
    if geom is None or modifiers is None:
        return None
    return GeometrySpec(geom.name, modifiers[0], DEMO_SRID)


@task(name="copy-table", **RETRIED_TASK)
def copy_table(owner_url: str, staging: str, table: Table, path: Path) -> int:
    """COPY the rows of ``path`` into ``staging.table``; returns the number of rows."""
    names = [c.name for c in table.columns]
    rast = table.raster_column
    if rast is not None and rast.raster is not None:
        rows = loading.read_raster_rows(path, rast.raster.tile_size)
        return loading.copy_rows(owner_url, staging, table.name, names, rows)
    rows = loading.read_rows(path, names, {c.name: DEMO_SRID for c in table.columns
                                           if c.is_geometry})
    return loading.copy_rows(owner_url, staging, table.name, names, rows)


@task(name="add-keys-and-comments", **TASK)
def add_keys_and_comments(owner_url: str, staging: str, catalog: Catalog) -> None:
    """Primary and foreign keys, GiST indexes, COMMENT ON texts, then ANALYZE."""
    statements: list[sql.Composed | sql.SQL] = []
    for table in catalog.tables:
        statements += ddl.constraints(staging, table) + ddl.comments(staging, table)
    statements.append(sql.SQL("COMMENT ON SCHEMA {} IS {}").format(
        sql.Identifier(staging), sql.Literal(catalog.description)))
    loading.run_and_analyze(owner_url, statements)


@task(name="verify-schema", **TASK)
def verify_schema(url: str, schema: str, catalog: Catalog) -> list[TableCheck]:
    """Check row counts, SRIDs, geometry validity and types against the catalog.

    Raises:
        DataValidationError: listing every difference found.

    """
    checks = loading.verify_tables(url, [
        loading.TableTarget(schema, table.name,
                            table.expected_rows if isinstance(table.expected_rows, int) else -1,
                            _geometry(table), table.name)
        for table in catalog.tables], "demo data")
    problems = loading.verify_rasters(url, [
        loading.RasterSpec(schema, table.name, column.name, column.raster.srid,
                           column.raster.pixel_size, len(column.raster.bands),
                           tuple(band.nodata for band in column.raster.bands))
        for table in catalog.tables for column in table.columns if column.raster is not None])
    if problems:
        raise DataValidationError("demo data failed verification: " + "; ".join(problems))
    return checks


@task(name="publish-schema", **TASK)
def publish_schema(owner_url: str, staging: str, schema: str, fingerprint: str) -> None:
    """Swap the verified staging schema in for ``schema`` and record the fingerprint, atomically."""
    loading.publish(owner_url, [(staging, schema)], fingerprint, READER_ROLE)
