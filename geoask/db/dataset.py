"""A dataset manifest (``dataset.yaml``): GeoParquet/Parquet files to load into a database.

The manifest says which database to load into, and for each table its file (relative to the
manifest), schema, name, primary key (optional), geometry column with its geometry type and
*native* SRID (nothing is reprojected; 0 for planar data in no named CRS) and an optional
``COMMENT ON`` text; views as SQL over the published tables; and the database's own CRSs
(``spatial_ref_sys``): an SRID that is not an EPSG code (a national or local grid, UTM in
kilometres) is declared once with its PROJ definition and inserted before the tables are
created. Column names and types come from the Parquet schema
(:func:`column_types`). Foreign keys are never declared: a manifest describes data as it is
found, and ``geoask catalog draft`` infers the join paths. Example::

    version: 1
    database: spdata
    tables:
      - {name: ny8_tracts, schema: us_census, file: data/ny8_tracts.parquet,
         primary_key: [areakey], geometry: {column: geom, type: MultiPolygon, srid: 32618}}
    views:
      - {name: ny8_tract_rates, schema: us_census, sql: "SELECT ... FROM us_census.ny8_tracts"}
    spatial_ref_sys:    # only SRIDs that are not EPSG codes
      - {srid: 990030, auth_name: spdep, auth_srid: 990030, name: UTM zone 30N (km, Airy),
         proj4text: "+proj=utm +zone=30 +ellps=airy +units=km +no_defs"}

Loading goes through :mod:`geoask.db.loading` (flow ``load_dataset``, ``geoask db
load-dataset``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import pyarrow as pa
import pyarrow.parquet as pq
import pyproj
import sqlglot
import yaml
from psycopg import sql
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pyproj.exceptions import CRSError
from sqlglot import exp

from geoask.base.yamlio import load_yaml
from geoask.db.loading import GeometrySpec
from geoask.errors import DatasetError, validation_problems

MANIFEST_NAME = "dataset.yaml"
_IDENTIFIER = r"^[a-z_][a-z0-9_]{0,62}$"
_RESERVED_DATABASES = {"postgres", "template0", "template1"}
_RESERVED_SCHEMAS = {"public", "information_schema", "geoask_meta"}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class GeometryColumn(_Strict):
    """The geometry column of a table: its name, PostGIS geometry type and native SRID."""

    column: str = Field(pattern=_IDENTIFIER)
    type: Literal["Point", "LineString", "Polygon", "MultiPoint", "MultiLineString",
                  "MultiPolygon"]
    srid: int = Field(ge=0, description="EPSG code or SRID of the manifest's spatial_ref_sys "
                      "the file's GeoParquet CRS must match; 0: planar, the file has no CRS.")


class DatasetTable(_Strict):
    """One table: Parquet file, target schema and name, optional primary key and geometry."""

    name: str = Field(pattern=_IDENTIFIER)
    schema_name: str = Field(alias="schema", pattern=_IDENTIFIER)
    file: str = Field(description="Parquet/GeoParquet file, relative to the manifest.")
    primary_key: list[str] = Field(default_factory=list)
    geometry: GeometryColumn | None = None
    comment: str | None = Field(default=None, description="COMMENT ON TABLE text.")
    column_comments: dict[str, str] = Field(default_factory=dict,
                                            description="COMMENT ON COLUMN text per column.")

    @property
    def geometry_spec(self) -> GeometrySpec | None:
        """The geometry column as :class:`~geoask.db.loading.GeometrySpec`, if any."""
        g = self.geometry
        return GeometrySpec(g.column, g.type, g.srid) if g is not None else None


class DatasetView(_Strict):
    """A view created over the published tables: one ``SELECT`` (schema-qualified names)."""

    name: str = Field(pattern=_IDENTIFIER)
    schema_name: str = Field(alias="schema", pattern=_IDENTIFIER)
    sql: str
    comment: str | None = None

    @model_validator(mode="after")
    def _one_select(self) -> DatasetView:
        try:
            statements = [s for s in sqlglot.parse(self.sql, read="postgres") if s is not None]
        except sqlglot.errors.ParseError as error:
            raise ValueError(f"view {self.name}: SQL does not parse: "
                             f"{str(error).splitlines()[0]}") from None
        if len(statements) != 1 or not isinstance(statements[0], exp.Query):
            raise ValueError(f"view {self.name}: sql must be exactly one SELECT statement")
        return self


LOCAL_SRIDS = (1, 998999)
"""SRIDs ``spatial_ref_sys`` accepts (PostGIS's ``SRID_USR_MAX``); use 900000 and above."""


class DatasetSrs(_Strict):
    """A CRS the database defines itself: one ``spatial_ref_sys`` row the load inserts.

    ``srtext`` (OGC WKT, as PostGIS keeps it) is derived from ``proj4text`` with pyproj, so a
    definition is stated once. An EPSG code is never declared here: PostGIS ships those.
    """

    srid: int = Field(ge=LOCAL_SRIDS[0], le=LOCAL_SRIDS[1])
    auth_name: str = Field(min_length=1, description="Who defines it, e.g. the data's source.")
    auth_srid: int = Field(ge=1, description="That authority's code for it.")
    proj4text: str = Field(min_length=1, description="The PROJ string defining the CRS.")
    name: str | None = Field(default=None, min_length=1,
                             description="The CRS's name in srtext (a PROJ string has none).")

    @model_validator(mode="after")
    def _a_crs_pyproj_reads(self) -> DatasetSrs:
        if self.auth_name.upper() == "EPSG":
            raise ValueError(f"SRID {self.srid}: EPSG codes come with PostGIS; declare here "
                             "only a CRS that is not an EPSG code")
        try:
            pyproj.CRS.from_proj4(self.proj4text)
        except CRSError as error:
            raise ValueError(f"SRID {self.srid}: proj4text is not a CRS pyproj reads: "
                             f"{str(error).splitlines()[0]}") from None
        return self

    @property
    def crs(self) -> pyproj.CRS:
        """The CRS as pyproj builds it from ``proj4text``, named ``name`` when given."""
        crs = pyproj.CRS.from_proj4(self.proj4text)
        if self.name is None:
            return crs
        return pyproj.CRS.from_json_dict({**crs.to_json_dict(), "name": self.name})

    @property
    def srtext(self) -> str:
        """The OGC WKT (GDAL flavour of WKT 1, as in PostGIS's own rows)."""
        return str(self.crs.to_wkt(pyproj.enums.WktVersion.WKT1_GDAL))


class Dataset(_Strict):
    """A whole manifest: target database, tables (in one or more schemas), views, own CRSs."""

    version: Literal[1]
    database: str = Field(pattern=_IDENTIFIER)
    description: str | None = None
    tables: list[DatasetTable] = Field(min_length=1)
    views: list[DatasetView] = Field(default_factory=list)
    spatial_ref_sys: list[DatasetSrs] = Field(default_factory=list)

    @model_validator(mode="after")
    def _srids_are_declared_once(self) -> Dataset:
        own = [s.srid for s in self.spatial_ref_sys]
        if len(set(own)) != len(own):
            raise ValueError("spatial_ref_sys declares an SRID twice")
        for table in self.tables:
            srid = table.geometry.srid if table.geometry else 0
            if srid and srid not in own and not _epsg_known(srid):
                raise ValueError(f"table {table.name}: SRID {srid} is not an EPSG code; "
                                 "declare it under spatial_ref_sys")
        return self

    @property
    def definitions(self) -> dict[int, pyproj.CRS]:
        """The CRS of each SRID the manifest defines itself (EPSG codes and 0 are not here)."""
        return {s.srid: s.crs for s in self.spatial_ref_sys}

    @model_validator(mode="after")
    def _names_are_sound(self) -> Dataset:
        if self.database in _RESERVED_DATABASES:
            raise ValueError(f"database {self.database} is reserved; name the dataset's own")
        seen: set[tuple[str, str]] = set()
        relations: list[DatasetTable | DatasetView] = [*self.tables, *self.views]
        for rel in relations:
            key = (rel.schema_name, rel.name)
            if key in seen:
                raise ValueError(f"{rel.schema_name}.{rel.name} is declared twice")
            seen.add(key)
            if rel.schema_name in _RESERVED_SCHEMAS or rel.schema_name.startswith("pg_") or \
                    rel.schema_name.endswith("_staging"):
                raise ValueError(f"{rel.schema_name}.{rel.name}: schema {rel.schema_name} is "
                                 "reserved (public, pg_*, geoask_meta, *_staging)")
        for view in self.views:
            if view.schema_name not in self.schemas:
                raise ValueError(f"view {view.name}: schema {view.schema_name} has no table; "
                                 "a view goes in a schema the manifest loads")
        return self

    @property
    def schemas(self) -> list[str]:
        """The schemas the tables go into, in manifest order."""
        return list(dict.fromkeys(t.schema_name for t in self.tables))


def _epsg_known(code: int) -> bool:
    try:
        pyproj.CRS.from_epsg(code)
    except CRSError:
        return False
    return True


def manifest_path(path: Path) -> Path:
    """``path`` itself, or ``path/dataset.yaml`` when ``path`` is a folder."""
    return path / MANIFEST_NAME if path.is_dir() else path


def load_dataset(path: Path) -> Dataset:
    """Read and validate the manifest at ``path`` (a file, or a folder with ``dataset.yaml``).

    Raises:
        DatasetError: the file is missing or not YAML, does not match the model, or a table's
            data file is missing (each message names the field or file).

    """
    path = manifest_path(path)
    try:
        dataset = Dataset.model_validate(load_yaml(path.read_text(encoding="utf-8")))
    except FileNotFoundError:
        raise DatasetError(f"dataset manifest {path} does not exist") from None
    except yaml.YAMLError as error:
        raise DatasetError(f"dataset manifest {path} is not YAML: {error}") from None
    except ValidationError as error:
        raise DatasetError(f"dataset manifest {path} is invalid: "
                           f"{validation_problems(error)}") from None
    folder = path.parent.resolve()
    for table in dataset.tables:
        if not (path.parent / table.file).resolve().is_relative_to(folder):
            raise DatasetError(f"dataset manifest {path}: table {table.name}: file {table.file} "
                               f"lies outside the manifest's folder {folder}; keep the data "
                               "files beside the manifest")
        if not (path.parent / table.file).is_file():
            raise DatasetError(f"dataset manifest {path}: table {table.name}: file {table.file} "
                               "not found "
                               f"(relative to {path.parent})")
    return dataset


_ARROW_TYPES: list[tuple[object, str]] = [
    (pa.types.is_int16, "smallint"), (pa.types.is_int32, "integer"),
    (pa.types.is_int64, "bigint"), (pa.types.is_float32, "real"),
    (pa.types.is_float64, "double precision"), (pa.types.is_boolean, "boolean"),
    (pa.types.is_string, "text"), (pa.types.is_large_string, "text"),
    (pa.types.is_date32, "date"), (pa.types.is_time, "time"),
]


def column_types(path: Path, table: DatasetTable) -> list[tuple[str, str]]:
    """``(column, PostgreSQL type)`` for each column of the file, in file order.

    The geometry column becomes ``geometry(Type,SRID)`` from the manifest; other types map
    from Arrow (int64 -> bigint, float64 -> double precision, string -> text, timestamp with a
    zone -> timestamptz, ...).

    Raises:
        DatasetError: a key or geometry column is not in the file, a column name is not a
            lower-case identifier, or an Arrow type has no mapping.

    """
    schema = pq.read_schema(path)
    names = set(schema.names)
    needed = [*table.primary_key, *([table.geometry.column] if table.geometry else []),
              *table.column_comments]
    missing = [c for c in needed if c not in names]
    if missing:
        raise DatasetError(f"table {table.name}: {path.name} has no column {missing[0]}")
    out = []
    for field in schema:
        if field.name.startswith("__index_level_"):
            continue  # a pandas index written by mistake is not data
        if not _identifier(field.name):
            raise DatasetError(f"table {table.name}: column name {field.name!r} must be a "
                               "lower-case identifier (rename it in the file)")
        if table.geometry is not None and field.name == table.geometry.column:
            out.append((field.name, f"geometry({table.geometry.type},{table.geometry.srid})"))
        elif pa.types.is_timestamp(field.type):
            out.append((field.name, "timestamptz" if field.type.tz else "timestamp"))
        else:
            pg = next((name for test, name in _ARROW_TYPES if test(field.type)), None)  # type: ignore[operator]
            if pg is None:
                raise DatasetError(f"table {table.name}: column {field.name} has Parquet type "
                                   f"{field.type}, which has no PostgreSQL mapping here")
            out.append((field.name, pg))
    return out


def _identifier(name: str) -> bool:
    return name.isidentifier() and name == name.lower() and len(name) <= 63


def create_table(schema: str, table: DatasetTable,
                 columns: Sequence[tuple[str, str]]) -> sql.Composed:
    """``CREATE TABLE schema.name (...)``; key and geometry columns NOT NULL, no constraints."""
    required = set(table.primary_key) | ({table.geometry.column} if table.geometry else set())
    parts = [sql.SQL("{} {}{}").format(sql.Identifier(name), sql.SQL(type_),
                                       sql.SQL(" NOT NULL" if name in required else ""))
             for name, type_ in columns]
    return sql.SQL("CREATE TABLE {}.{} ({})").format(
        sql.Identifier(schema), sql.Identifier(table.name), sql.SQL(", ").join(parts))


def keys_and_comments(schema: str, table: DatasetTable) -> list[sql.Composed]:
    """The primary key (if any), a GiST index on the geometry column and the comments."""
    target = sql.SQL("{}.{}").format(sql.Identifier(schema), sql.Identifier(table.name))
    out = []
    if table.primary_key:
        out.append(sql.SQL("ALTER TABLE {} ADD CONSTRAINT {} PRIMARY KEY ({})").format(
            target, sql.Identifier(f"{table.name}_pkey"),
            sql.SQL(", ").join(map(sql.Identifier, table.primary_key))))
    if table.geometry is not None:
        out.append(sql.SQL("CREATE INDEX {} ON {} USING gist ({})").format(
            sql.Identifier(f"{table.name}_{table.geometry.column}_gist"), target,
            sql.Identifier(table.geometry.column)))
    if table.comment:
        out.append(sql.SQL("COMMENT ON TABLE {} IS {}").format(target,
                                                              sql.Literal(table.comment)))
    out.extend(sql.SQL("COMMENT ON COLUMN {}.{} IS {}").format(target, sql.Identifier(column),
                                                               sql.Literal(text))
               for column, text in table.column_comments.items())
    return out


def create_view(view: DatasetView) -> list[sql.Composed]:
    """``CREATE VIEW schema.name AS <sql>`` and its comment (the SQL is the manifest's own)."""
    target = sql.SQL("{}.{}").format(sql.Identifier(view.schema_name), sql.Identifier(view.name))
    out = [sql.SQL("CREATE VIEW {} AS {}").format(target, sql.SQL(view.sql.strip().rstrip(";")))]
    if view.comment:
        out.append(sql.SQL("COMMENT ON VIEW {} IS {}").format(target, sql.Literal(view.comment)))
    return out


def define_srs(srs: DatasetSrs) -> tuple[sql.Composed, sql.Composed]:
    """Insert ``srs`` into ``spatial_ref_sys`` unless present; then read the row back.

    The second statement returns the row's ``auth_name, auth_srid, srtext, proj4text`` for
    :func:`srs_conflict` (an SRID the database already defines otherwise is never replaced).
    """
    insert = sql.SQL("INSERT INTO spatial_ref_sys (srid, auth_name, auth_srid, srtext, proj4text) "
                     "VALUES ({}, {}, {}, {}, {}) ON CONFLICT (srid) DO NOTHING").format(
        *map(sql.Literal, (srs.srid, srs.auth_name, srs.auth_srid, srs.srtext, srs.proj4text)))
    read = sql.SQL("SELECT auth_name, auth_srid, srtext, proj4text FROM spatial_ref_sys "
                   "WHERE srid = {}").format(sql.Literal(srs.srid))
    return insert, read


def srs_conflict(srs: DatasetSrs, row: tuple[object, ...] | None) -> str | None:
    """Why the database's row for ``srs.srid`` is not the manifest's, or None when it is."""
    if row is None:
        return f"SRID {srs.srid} was not inserted into spatial_ref_sys"
    if tuple(row) != (srs.auth_name, srs.auth_srid, srs.srtext, srs.proj4text):
        return (f"SRID {srs.srid} is already defined otherwise in that database's "
                f"spatial_ref_sys ({row[0]}:{row[1]}, {row[3]!r}); declare another SRID")
    return None


def expected_rows(path: Path) -> int:
    """The number of rows of a Parquet file, from its footer."""
    return int(pq.read_metadata(path).num_rows)
