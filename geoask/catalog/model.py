"""The semantic catalog: typed model of ``geoask/catalog/catalog.yaml``.

The catalog is the one source of truth about the demo database: the loader creates tables,
keys and ``COMMENT ON`` texts from it, the agents retrieve from it, and a test checks it against
the live database. Geometries are stored in EPSG:4326 (WGS 84 longitude/latitude).
"""

from __future__ import annotations

from enum import StrEnum
from functools import cached_property
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from geoask.catalog.spatial import SpatialKind, spatial_kind
from geoask.errors import CatalogError

CATALOG_PATH = Path(__file__).with_name("catalog.yaml")


class SpatialGranularity(StrEnum):
    """The spatial unit one row of a table describes."""

    STATE = "state"
    COUNTY = "county"
    GRID_CELL = "grid_cell"
    POINT = "point"
    LINE = "line"
    COUNTRY = "country"
    NONE = "none"


class TemporalGranularity(StrEnum):
    """The time step one row of a table describes (``static``: no time dimension)."""

    STATIC = "static"
    ANNUAL = "annual"
    DECADAL = "decadal"
    MONTHLY = "monthly"
    DAILY = "daily"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Column(_Strict):
    """One column: PostgreSQL type, meaning, unit, allowed values or range, abbreviations."""

    name: str
    type: str = Field(description="PostgreSQL type, e.g. 'char(2)', 'geometry(MultiPolygon,4326)'.")
    description: str = Field(min_length=10)
    nullable: bool = True
    unit: str | None = None
    values: list[str | int] | None = Field(default=None, description="Allowed values, if few.")
    range: tuple[float | str, float | str] | None = Field(
        default=None, description="Inclusive [min, max] of the loaded data."
    )
    abbreviations: dict[str, str] = Field(default_factory=dict)
    example: str | None = None

    @property
    def spatial(self) -> SpatialKind | None:
        """The column's :class:`~geoask.catalog.spatial.SpatialKind`; None if not spatial.

        Decided by :func:`~geoask.catalog.spatial.spatial_kind` from ``type`` alone, so
        ``geometry(Point,4326)`` is ``GEOMETRY`` whatever its SRID; arrays are not spatial.
        """
        return spatial_kind(self.type)

    @property
    def is_geometry(self) -> bool:
        """True for a PostGIS ``geometry`` column (not ``geography`` or ``raster``)."""
        return self.spatial is SpatialKind.GEOMETRY


class ForeignKey(_Strict):
    """A foreign key: ``columns`` of this table reference ``ref_columns`` of ``ref_table``."""

    columns: list[str]
    ref_table: str
    ref_columns: list[str]


class TemporalCoverage(_Strict):
    """First and last period covered (ISO date or year, inclusive)."""

    start: str
    end: str


class Table(_Strict):
    """One table of the data schema with its theme, granularity, coverage, keys and columns."""

    name: str
    title: str
    theme: str = Field(min_length=20, description="Theme summary used for retrieval.")
    spatial_granularity: SpatialGranularity
    temporal_granularity: TemporalGranularity
    temporal_coverage: TemporalCoverage | None = None
    source: str = Field(description="Provenance in one line; details in demo_data/PROVENANCE.md.")
    expected_rows: int = Field(gt=0)
    primary_key: list[str]
    foreign_keys: list[ForeignKey] = Field(default_factory=list)
    columns: list[Column]

    @model_validator(mode="after")
    def _keys_name_columns(self) -> Table:
        names = {c.name for c in self.columns}
        used = set(self.primary_key) | {c for fk in self.foreign_keys for c in fk.columns}
        missing = sorted(used - names)
        if missing:
            raise ValueError(f"table {self.name}: key columns {missing} are not declared")
        return self

    @property
    def geometry_column(self) -> Column | None:
        """The (first) ``geometry`` column, if the table has one."""
        return next((c for c in self.columns if c.is_geometry), None)

    @property
    def spatial_columns(self) -> list[Column]:
        """The columns with a :class:`~geoask.catalog.spatial.SpatialKind`, in table order."""
        return [c for c in self.columns if c.spatial is not None]

    def column(self, name: str) -> Column:
        """Return the column called ``name``; raises KeyError if there is none."""
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(f"{self.name}.{name}")


class JoinPath(_Strict):
    """A documented way to relate two tables (by key, by shared attribute, or spatially)."""

    left: str = Field(description="'table.column' or 'table' for spatial joins.")
    right: str
    kind: Literal["foreign_key", "attribute", "spatial"]
    description: str


class Catalog(_Strict):
    """The whole semantic catalog of one data schema."""

    version: int
    schema_name: str = Field(alias="schema")
    description: str
    tables: list[Table]
    join_paths: list[JoinPath] = Field(default_factory=list)

    @model_validator(mode="after")
    def _references_resolve(self) -> Catalog:
        by_name = {t.name: t for t in self.tables}
        for t in self.tables:
            for fk in t.foreign_keys:
                target = by_name.get(fk.ref_table)
                if target is None:
                    raise ValueError(f"{t.name}: foreign key to unknown table {fk.ref_table}")
                for col in fk.ref_columns:
                    target.column(col)
        for jp in self.join_paths:
            for end in (jp.left, jp.right):
                table, _, col = end.partition(".")
                if table not in by_name:
                    raise ValueError(f"join path {jp.left} ~ {jp.right}: unknown table {table}")
                if col:
                    by_name[table].column(col)
        return self

    @cached_property
    def by_name(self) -> dict[str, Table]:
        """Tables keyed by name."""
        return {t.name: t for t in self.tables}

    def table(self, name: str) -> Table:
        """Return the table ``name``; raises :class:`CatalogError` naming the known tables."""
        try:
            return self.by_name[name]
        except KeyError:
            known = ", ".join(sorted(self.by_name))
            raise CatalogError(f"no table {name!r} in the catalog; known tables: {known}") from None


def load_catalog(path: Path = CATALOG_PATH) -> Catalog:
    """Read and validate the catalog YAML at ``path``.

    Raises:
        CatalogError: the file is missing, is not YAML, or does not match the model.

    """
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        return Catalog.model_validate(raw)
    except FileNotFoundError:
        raise CatalogError(f"catalog file {path} does not exist") from None
    except (yaml.YAMLError, ValidationError, KeyError) as error:
        raise CatalogError(f"catalog {path} is invalid: {error}") from None
