"""The semantic catalog: typed model of ``geoask/catalog/catalog.yaml``.

The catalog is the one source of truth about a database: the agents retrieve from it, the guard
and the prompts take schema-qualified names from it (:meth:`Catalog.schema_of`), and ``geoask
catalog check`` compares it with the live database. The shipped ``catalog.yaml`` describes the
demo database (its loader creates tables, keys and ``COMMENT ON`` texts from it; geometries in
EPSG:4326); a column's ``type`` and ``geo`` facts give any other SRID.

A catalog drafted from another database by ``geoask catalog draft`` has the same shape. Fields
a person must fill in hold the :data:`TODO` marker (theme, title, source, column meanings and
units, granularities the data cannot tell); :meth:`Catalog.todos` lists them. The optional
fields a draft adds (a table's ``schema``, ``kind``, ``rows_estimated``, ``unique`` keys and
``notes``, a column's ``geo`` facts and ``abbreviation_candidates``, a join path's ``inferred``,
``predicate``, ``match_share`` and ``cardinality``) default to what the demo catalog means
without them.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import Annotated, Final, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    model_validator,
)

from geoask.base.capped_input import MAX_DOCUMENT_CHARS, read_capped_text
from geoask.base.yamlio import load_yaml
from geoask.catalog.granularity import COMMON_SPATIAL_GRANULARITIES as COMMON_SPATIAL_GRANULARITIES
from geoask.catalog.granularity import SpatialGranularity, TemporalGranularity
from geoask.catalog.join_path import Cardinality, JoinPath, cardinality
from geoask.catalog.labels import Labels
from geoask.catalog.review import FROM_DATABASE, path_label, table_todos, unreviewed_lines
from geoask.catalog.review import TODO as TODO
from geoask.catalog.review import Todo as Todo
from geoask.catalog.spatial import SpatialKind, spatial_kind
from geoask.errors import CatalogError, validation_problems

CATALOG_PATH = Path(__file__).with_name("catalog.yaml")



PLANAR: Final = "planar"
"""``geo.crs`` of planar coordinates in no named CRS (with ``geo.units``)."""

DECLARED_CRS_PATTERN = r"^(EPSG:[1-9][0-9]*|planar)$"
"""A declared ``geo.crs``: ``EPSG:<code>`` or ``planar``."""

PlanarUnits = Literal["metre", "foot", "unknown"]
"""Units of planar coordinates a catalog declares (``unknown``: measure in the data's units)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class GeoInfo(_Strict):
    """Facts about a geometry or geography column measured by ``geoask catalog draft``.

    ``extent`` is ``[xmin, ymin, xmax, ymax]`` in the column's own CRS units (degrees for
    EPSG:4326, metres for UTM); ``valid_share`` is the share (0-1) of ``ST_IsValid`` geometries
    in a sample of ``sampled`` non-NULL values.

    ``crs`` declares the CRS of a column whose database SRID is 0 (unknown): ``EPSG:<code>``,
    or :data:`PLANAR` with ``units`` (``metre``, ``foot`` or ``unknown``) for planar coordinates
    in no named CRS; a draft writes ``TODO`` and its observation of the coordinates in
    ``crs_note``. geoask never guesses an SRID 0 column's CRS (:mod:`geoask.sql.crs`).
    """

    geometry_type: str
    srid: int
    crs_name: str | None = None
    crs_units: str | None = None
    crs: Annotated[str, StringConstraints(pattern=DECLARED_CRS_PATTERN)] | Todo | None = Field(
        default=None, description="CRS of an SRID 0 column: 'EPSG:<code>' or 'planar'.")
    units: PlanarUnits | None = Field(
        default=None, description="Units of a planar column: metre, foot or unknown.")
    crs_note: str | None = Field(
        default=None, description="Drafts: what the coordinates suggest; a hint, not a CRS.")
    extent: tuple[float, float, float, float] | None = None
    valid_share: float | None = Field(default=None, ge=0.0, le=1.0)
    sampled: int | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _units_only_with_planar(self) -> GeoInfo:
        if (self.crs == PLANAR) != (self.units is not None):
            raise ValueError("geo.units is required with geo.crs: planar and allowed only then")
        return self

    @property
    def declared_epsg(self) -> int | None:
        """The EPSG code ``crs`` declares, or None (planar, TODO, none)."""
        declared = self.crs or ""
        return int(declared[5:]) if declared.startswith("EPSG:") else None


class RasterBand(_Strict):
    """One band of a raster column: its 1-based index, meaning, unit, pixel type and nodata."""

    index: int = Field(ge=1, description="1-based band number, as ST_Value(rast, band, ...) takes.")
    name: str
    description: Annotated[str, Field(min_length=10)] | Todo
    unit: str | None = None
    pixel_type: str = Field(description="PostGIS pixel type, e.g. '16BSI', '8BUI', '32BF'.")
    nodata: float | None = Field(default=None,
                                 description="Nodata value; None: every pixel is data.")


class RasterInfo(_Strict):
    """Facts about a ``raster`` column: CRS, pixel size, tiling, extent and bands.

    ``pixel_size`` is ``[x, y]`` and ``extent`` ``[xmin, ymin, xmax, ymax]``, both in the CRS
    units (degrees for EPSG:4326, metres for UTM); ``width``/``height`` count the pixels of the
    whole coverage, ``tile_size`` those of one row (tile) at most. The loader checks them against
    ``raster_columns`` (``AddRasterConstraints``).
    """

    srid: int = Field(gt=0)
    pixel_size: tuple[float, float]
    width: int = Field(gt=0)
    height: int = Field(gt=0)
    tile_size: tuple[int, int]
    extent: tuple[float, float, float, float]
    bands: list[RasterBand] = Field(min_length=1)


class Column(_Strict):
    """One column: PostgreSQL type, meaning, unit, allowed values or range, abbreviations."""

    name: str
    type: str = Field(description="PostgreSQL type, e.g. 'char(2)', 'geometry(MultiPolygon,4326)'.")
    description: Annotated[str, Field(min_length=10)] | Todo
    nullable: bool = True
    unit: str | None = None
    values: list[str | int] | None = Field(default=None, description="Allowed values, if few.")
    range: tuple[int | float | str, int | float | str] | None = Field(
        default=None, description="Inclusive [min, max] of the loaded data."
    )
    abbreviations: dict[str, str] = Field(default_factory=dict)
    abbreviation_candidates: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Drafts: abbreviated pieces of the name -> possible expansions "
        "(geoask.catalog.abbreviations); a person confirms them into abbreviations.",
    )
    range_sampled: bool = Field(
        default=False, description="Drafts: range is from pg_stats or a sample of a big "
        "relation, approximate; catalog check does not report it as a difference.")
    from_database: dict[Literal["description"], str] = Field(
        default_factory=dict, description=FROM_DATABASE)
    example: str | None = None
    geo: GeoInfo | None = Field(
        default=None, description="Measured facts of a geometry/geography column (drafts)."
    )
    raster: RasterInfo | None = Field(
        default=None, description="Bands, CRS, resolution, nodata and extent of a raster column."
    )

    @model_validator(mode="after")
    def _raster_facts_on_raster_columns(self) -> Column:
        if self.raster is not None and self.spatial is not SpatialKind.RASTER:
            raise ValueError(f"column {self.name}: raster facts on a {self.type} column")
        return self

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
    ref_schema: str | None = Field(
        default=None, description="Schema of ref_table when not the referencing table's."
    )


class TemporalCoverage(_Strict):
    """First and last period covered (ISO date or year, inclusive)."""

    start: str
    end: str


class Table(_Strict):
    """One table of the data schema with its theme, granularity, coverage, keys and columns."""

    name: str
    schema_name: str | None = Field(
        default=None, alias="schema", description="Schema of the table; default: the catalog's."
    )
    kind: Literal["table", "view", "materialized_view", "foreign_table"] = "table"
    title: str
    theme: Annotated[str, Field(min_length=20)] | Todo = Field(
        description="Theme summary used for retrieval."
    )
    spatial_granularity: SpatialGranularity | Todo
    temporal_granularity: TemporalGranularity | Todo
    temporal_coverage: TemporalCoverage | None = None
    source: str = Field(description="Provenance in one line (details in a PROVENANCE note).")
    expected_rows: Annotated[int, Field(gt=0)] | Todo
    rows_estimated: bool = Field(
        default=False, description="expected_rows is a planner estimate (big table), not a count."
    )
    primary_key: list[str]
    unique: list[list[str]] = Field(
        default_factory=list,
        description="Column lists of UNIQUE constraints and unique indexes (not the primary "
        "key); a join onto one of them is many_to_one.",
    )
    foreign_keys: list[ForeignKey] = Field(default_factory=list)
    columns: list[Column]
    labels: Labels | None = Field(default=None, description="The column naming rows for "
                                  "people and the code columns it names (geoask.catalog.labels).")
    notes: list[str] = Field(
        default_factory=list,
        description="Drafts: what the draft could not measure (e.g. sampling stopped after "
        "5 s); listed as TODOs until a person deletes them.",
    )
    from_database: dict[Literal["title", "theme"], str] = Field(
        default_factory=dict, description=FROM_DATABASE)

    @model_validator(mode="after")
    def _keys_name_columns(self) -> Table:
        names = {c.name for c in self.columns}
        used = set(self.primary_key) | {c for fk in self.foreign_keys for c in fk.columns}
        used |= {c for key in self.unique for c in key} | (self.labels.columns if self.labels
                                                           else set())
        missing = sorted(used - names)
        if missing:
            raise ValueError(f"table {self.name}: key columns {missing} are not declared")
        return self

    @property
    def geometry_column(self) -> Column | None:
        """The (first) ``geometry`` column, if the table has one."""
        return next((c for c in self.columns if c.is_geometry), None)

    @property
    def raster_column(self) -> Column | None:
        """The (first) ``raster`` column, if the table has one."""
        return next((c for c in self.columns if c.spatial is SpatialKind.RASTER), None)

    @property
    def spatial_columns(self) -> list[Column]:
        """The columns with a :class:`~geoask.catalog.spatial.SpatialKind`, in table order."""
        return [c for c in self.columns if c.spatial is not None]

    def is_unique(self, columns: list[str]) -> bool:
        """Whether ``columns`` hold a primary key or UNIQUE key, so their values never repeat."""
        keys = [self.primary_key, *self.unique] if self.primary_key else self.unique
        return any(key and set(key) <= set(columns) for key in keys)

    def column(self, name: str) -> Column:
        """Return the column called ``name``; raises KeyError if there is none."""
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(f"{self.name}.{name}")


class Catalog(_Strict):
    """The whole semantic catalog of one data schema (tables may name another ``schema``)."""

    version: int
    schema_name: str = Field(alias="schema")
    description: str
    tables: list[Table]
    join_paths: list[JoinPath] = Field(default_factory=list)
    from_database: dict[Literal["description"], str] = Field(
        default_factory=dict, description=FROM_DATABASE)

    @model_validator(mode="after")
    def _references_resolve(self) -> Catalog:
        names = [t.name for t in self.tables]
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:  # plans and retrieval name tables without their schema
            raise ValueError(f"table names must be unique across schemas: {repeated}")
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

    def join_cardinality(self, path: JoinPath) -> Cardinality | None:
        """The path's stated ``cardinality``, else derived from the keys of its column ends.

        A join onto a primary key, UNIQUE constraint or unique index is ``many_to_one``
        (:func:`~geoask.catalog.join_path.cardinality`); spatial paths and ends without a column
        give None.
        """
        if path.cardinality is not None or path.kind == "spatial":
            return path.cardinality
        ends = [end.partition(".") for end in (path.left, path.right)]
        if any(not column for _, _, column in ends):
            return None
        (left, _, lcol), (right, _, rcol) = ends
        return cardinality(self.table(left).is_unique([lcol]), self.table(right).is_unique([rcol]))

    def schema_of(self, table: Table) -> str:
        """The schema ``table`` lives in: its own ``schema`` or the catalog's."""
        return table.schema_name or self.schema_name

    def qualified_name(self, table: Table) -> str:
        """``schema.table`` as the SQL agent writes it, e.g. ``us_census.ny8_tracts``."""
        return f"{self.schema_of(table)}.{table.name}"

    def todos(self) -> list[str]:
        """Every :data:`TODO`, unreviewed database comment, abbreviation candidate, inferred join.

        One line each: ``table: field``, ``table.column: field`` or ``left ~ right: ...``,
        names with control characters quoted; an empty list means a person has filled in the
        draft. Never raises.
        """
        lines: list[str] = []
        if self.description == TODO:
            lines.append("catalog: description is TODO")
        lines += unreviewed_lines("catalog", self.from_database.items())
        for t in self.tables:
            lines += table_todos(t)
        lines += [f"{path_label(j)}: inferred join path; confirm it (inferred: false) or "
                  "delete it" for j in self.join_paths if j.inferred]
        lines += [f"{path_label(j)}: description is TODO"
                  for j in self.join_paths if j.description == TODO]
        return lines

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
        raw = load_yaml(read_capped_text(path, MAX_DOCUMENT_CHARS, what=f"catalog file {path}"))
        return Catalog.model_validate(raw)
    except FileNotFoundError:
        raise CatalogError(f"catalog file {path} does not exist") from None
    except IsADirectoryError:
        raise CatalogError(f"catalog {path} is a folder; name the catalog YAML file") from None
    except yaml.YAMLError as error:
        raise CatalogError(f"catalog {path} is not YAML: {str(error).splitlines()[0]}") from None
    except ValidationError as error:
        raise CatalogError(f"catalog {path} is invalid: {validation_problems(error)}") from None
    except KeyError as error:
        raise CatalogError(f"catalog {path} is invalid: a join path names column "
                           f"{error.args[0]}, which its table does not list") from None
