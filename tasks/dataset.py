"""Tasks that load a dataset manifest's GeoParquet/Parquet files into their own database.

Thin wrappers of :mod:`geoask.db.dataset` (manifest, DDL from the Parquet schema) and
:mod:`geoask.db.loading` (staging, COPY, verification, atomic publish, fingerprint).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import psycopg
import pyproj
from prefect import task
from psycopg import sql

from geoask.db import dataset as ds
from geoask.db import loading
from geoask.db.cluster import EmbeddedCluster
from geoask.db.loading import TableCheck
from geoask.db.urls import DatasetTarget, dataset_target
from geoask.errors import DatasetError
from geoask.settings import Settings
from tasks.options import RETRIED_TASK, TASK


def staging(schema: str) -> str:
    """The staging schema of ``schema``."""
    return f"{schema}_staging"


@task(name="prepare-database", **RETRIED_TASK)
def prepare_database(settings: Settings, database: str, owner: str | None) -> DatasetTarget:
    """Create the dataset's database if needed (embedded) and return how to reach it."""
    return dataset_target(settings, database, owner)


@task(name="drop-new-database", **TASK)
def drop_new_database(settings: Settings, database: str) -> None:
    """Drop the database a failed first load created (embedded cluster), so none is left."""
    EmbeddedCluster(settings).drop_database(database)


@task(name="loaded-fingerprints", **RETRIED_TASK)
def loaded_fingerprints(owner_url: str, schemas: list[str]) -> list[str | None]:
    """The fingerprint last published into each of ``schemas`` (None: never loaded).

    Raises:
        DatasetError: a schema exists but geoask never loaded it (a load would replace it).

    """
    fingerprints = [loading.loaded_fingerprint(owner_url, s) for s in schemas]
    loading.refuse_foreign_schemas(owner_url, [s for s, f in zip(schemas, fingerprints, strict=True)
                                               if f is None])
    return fingerprints


@task(name="define-spatial-ref-sys", **TASK)
def define_spatial_ref_sys(owner_url: str, dataset: ds.Dataset) -> None:
    """Insert the manifest's own CRSs into ``spatial_ref_sys`` (kept when already the same).

    Raises:
        DatasetError: the database defines one of those SRIDs otherwise, or the owner role may
            not insert into ``spatial_ref_sys``.

    """
    with psycopg.connect(owner_url) as conn:
        for srs in dataset.spatial_ref_sys:
            insert, read = ds.define_srs(srs)
            try:
                conn.execute(insert)
            except psycopg.Error as error:
                raise DatasetError(f"SRID {srs.srid} could not be added to spatial_ref_sys: "
                                   f"{str(error).splitlines()[0]} (grant the loading role "
                                   "INSERT on spatial_ref_sys)") from None
            problem = ds.srs_conflict(srs, conn.execute(read).fetchone())
            if problem:
                raise DatasetError(problem)


@task(name="create-staging-schemas", **TASK)
def create_staging_schemas(owner_url: str, dataset: ds.Dataset, base: Path) -> None:
    """(Re)create one empty staging schema per target schema, with the tables' columns."""
    for schema in dataset.schemas:
        tables = [t for t in dataset.tables if t.schema_name == schema]
        loading.recreate_schema(owner_url, staging(schema), [
            ds.create_table(staging(schema), t, ds.column_types(base / t.file, t))
            for t in tables])


@task(name="copy-table", **RETRIED_TASK)
def copy_table(owner_url: str, table: ds.DatasetTable, path: Path,
               definitions: dict[int, pyproj.CRS] | None = None) -> int:
    """COPY the rows of ``path`` into the staging table; returns the number of rows.

    ``definitions`` holds the CRSs of the manifest's own SRIDs (the file must carry them).
    """
    names = [name for name, _ in ds.column_types(path, table)]
    geometry = {table.geometry.column: table.geometry.srid} if table.geometry else {}
    rows = loading.read_rows(path, names, geometry, definitions)
    return loading.copy_rows(owner_url, staging(table.schema_name), table.name, names, rows)


@task(name="add-keys", **TASK)
def add_keys(owner_url: str, dataset: ds.Dataset) -> None:
    """Primary keys, GiST indexes and comments on the staged tables, then ANALYZE."""
    statements: list[sql.Composed | sql.SQL] = []
    for table in dataset.tables:
        statements += ds.keys_and_comments(staging(table.schema_name), table)
    loading.run_and_analyze(owner_url, statements)


@task(name="verify-dataset", **TASK)
def verify_dataset(url: str, dataset: ds.Dataset, base: Path, staged: bool) -> list[TableCheck]:
    """Check row counts (against the files), SRIDs, validity and geometry types; count views.

    Raises:
        DataValidationError: listing every difference found.

    """
    checks = loading.verify_tables(url, [
        loading.TableTarget(staging(t.schema_name) if staged else t.schema_name, t.name,
                            ds.expected_rows(base / t.file), t.geometry_spec,
                            f"{t.schema_name}.{t.name}")
        for t in dataset.tables], f"dataset {dataset.database}")
    if not staged:  # views are counted, not verified
        with psycopg.connect(url) as conn:
            for view in dataset.views:
                check = loading.check_table(conn, view.schema_name, view.name, -1, None)
                checks.append(replace(check, table=f"{view.schema_name}.{view.name}",
                                      expected_rows=check.rows))
    return checks


@task(name="drop-staging", **TASK)
def drop_staging(owner_url: str, dataset: ds.Dataset) -> None:
    """Drop every staging schema of the dataset."""
    loading.drop_schemas(owner_url, [staging(s) for s in dataset.schemas])


@task(name="publish-dataset", **TASK)
def publish_dataset(owner_url: str, dataset: ds.Dataset, fingerprint: str,
                    reader_role: str) -> None:
    """Swap every staging schema in, create the views, grant the reader, record, atomically."""
    views = [statement for view in dataset.views for statement in ds.create_view(view)]
    loading.publish(owner_url, [(staging(s), s) for s in dataset.schemas], fingerprint,
                    reader_role, then=views)
