"""What the SQL guard checks against: spatial policy, answer contract, row cap, catalog names."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from geoask.catalog.columns import (
    declared_planar,
    declared_raster_bands,
    declared_srids,
    spatial_column_names,
)
from geoask.settings import Settings

if TYPE_CHECKING:
    from geoask.catalog.model import Catalog


class SpatialPolicy(StrEnum):
    """Where spatial computation happens (the query-computation separation).

    ``separated`` (default): SQL only selects rows and geometry columns; ST_* functions,
    geometry operators and geography casts are rejected and done in Python, except the
    bounding-box screens of filter-refine (:mod:`geoask.sql.screens`).
    ``postgis``: spatial computation in SQL is allowed (the +PostGIS variant).
    """

    SEPARATED = "separated"
    POSTGIS = "postgis"


class AnswerContract(StrEnum):
    """Shape promised by the step whose SQL is checked (from the plan's answer contract)."""

    NONE = "none"
    TOPK = "topk"


DEFAULT_GEOMETRY_COLUMNS: frozenset[str] = spatial_column_names(None)
"""Spatial column names assumed without a catalog (the catalog's conventional names)."""


@dataclass(frozen=True)
class GuardContext:
    """Inputs of one guard run.

    Attributes:
        policy: spatial policy, see :class:`SpatialPolicy`.
        contract: answer contract of the step; ``topk`` requires an outer ORDER BY and LIMIT.
        row_cap: most rows the query may return (the wrapper asks for ``row_cap + 1`` so that
            the executor can report truncation).
        geometry_columns: lower-case names of the catalog's spatial columns (geometry,
            geography, raster: :func:`geoask.catalog.columns.spatial_column_names`); an
            operator applied to one of them is spatial computation.
        case_sensitive_names: real catalog names (tables, columns, schemas) that contain
            upper-case letters and so must be quoted; unquoted references are quoted.
        column_names: lower-case names of the catalog's real columns; ``alias.name`` naming one
            is a column, otherwise a name of a function that takes a whole row is refused as
            a hidden call (see :func:`geoask.sql.functions.attribute_call_names`).
        declared_srids: the catalog's declared SRID per spatial column, for the export.
        declared_planar: the units of each column the catalog declares planar (SRID 0 in no
            named CRS: ``geo.crs: planar``), for the export.
        raster_bands: the catalog's band lines per raster column, for the export's preview
            (:func:`geoask.catalog.columns.declared_raster_bands`).
        columnar_rows: a vector result of at least this many rows is exported as GeoParquet
            instead of GeoJSON (setting ``sql_columnar_rows``); None: always GeoJSON.
        extension_functions: PostGIS functions the connected database's catalog offers
            read-only (:mod:`geoask.sql.catalog_functions`), allowed under ``postgis`` in
            addition to the hand-kept list.
        max_sql_chars: longest SQL text checked (characters); longer text is refused before
            any parsing (setting ``sql_max_chars``).
        max_result_mib: the result cap (setting ``sql_max_result_mib``), which also caps each
            raster the export decodes and their mosaic.
        screens: under ``separated``, bounding-box screens (:mod:`geoask.sql.screens`) are
            allowed; False for a run with no Python step to refine them (the BASE variant),
            where a screen's superset would become the answer.

    """

    policy: SpatialPolicy = SpatialPolicy.SEPARATED
    contract: AnswerContract = AnswerContract.NONE
    row_cap: int = 100_000
    geometry_columns: frozenset[str] = DEFAULT_GEOMETRY_COLUMNS
    case_sensitive_names: frozenset[str] = field(default_factory=frozenset)
    declared_srids: Mapping[str, int] = field(default_factory=dict, hash=False)
    declared_planar: Mapping[str, str] = field(default_factory=dict, hash=False)
    raster_bands: Mapping[str, tuple[str, ...]] = field(default_factory=dict, hash=False)
    columnar_rows: int | None = None
    column_names: frozenset[str] = field(default_factory=frozenset)
    extension_functions: frozenset[str] = field(default_factory=frozenset)
    max_sql_chars: int = 20_000
    max_result_mib: int = 256
    screens: bool = True

    def __post_init__(self) -> None:
        # Accept plain strings ("postgis", "topk") from the CLI, settings and fixture files.
        object.__setattr__(self, "policy", SpatialPolicy(self.policy))
        object.__setattr__(self, "contract", AnswerContract(self.contract))

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        *,
        policy: SpatialPolicy | str | None = None,
        contract: AnswerContract | str = AnswerContract.NONE,
        catalog: Catalog | None = None,
        derive_functions: bool | None = None,
    ) -> GuardContext:
        """Build a context from settings (``sql_policy``, ``sql_row_cap``...) and a catalog.

        The catalog's names (see :func:`catalog_names`) decide what is quoted and which
        columns are geometry; without one, nothing is quoted and the usual geometry names
        (:data:`DEFAULT_GEOMETRY_COLUMNS`) apply; its declared SRIDs go to the export. Under
        ``postgis`` the database's catalog adds its read-only PostGIS functions
        (:func:`~geoask.sql.catalog_functions.catalog_postgis_functions`): read when the policy
        is ``postgis``, or whatever the policy with ``derive_functions=True`` (a context whose
        policy is changed per program later); never with ``False``.
        """
        from geoask.sql.catalog_functions import catalog_postgis_functions

        chosen = SpatialPolicy(policy or settings.sql_policy)
        case_sensitive_names, geometry_columns = (
            catalog_names(catalog) if catalog is not None
            else (frozenset(), DEFAULT_GEOMETRY_COLUMNS)
        )
        return cls(
            policy=chosen,
            contract=AnswerContract(contract),
            row_cap=settings.sql_row_cap,
            geometry_columns=geometry_columns,
            case_sensitive_names=case_sensitive_names,
            declared_srids=declared_srids(catalog),
            declared_planar=declared_planar(catalog),
            raster_bands=declared_raster_bands(catalog),
            columnar_rows=settings.sql_columnar_rows,
            column_names=catalog_column_names(catalog) if catalog is not None else frozenset(),
            max_sql_chars=settings.sql_max_chars,
            max_result_mib=settings.sql_max_result_mib,
            extension_functions=(
                catalog_postgis_functions(settings)
                if (chosen is SpatialPolicy.POSTGIS if derive_functions is None
                    else derive_functions) else frozenset()),
        )


def catalog_names(catalog: Catalog) -> tuple[frozenset[str], frozenset[str]]:
    """``(case_sensitive_names, geometry_columns)`` of a semantic catalog for a GuardContext.

    Case-sensitive names are the schema (each table's own, :meth:`Catalog.schema_of`), table
    and column names holding upper-case letters;
    geometry columns are :func:`geoask.catalog.columns.spatial_column_names` of the catalog:
    the lower-cased names of its spatial columns, or the conventional names if it has none.
    """
    names = {catalog.schema_name}
    for table in catalog.tables:
        names.update((catalog.schema_of(table), table.name))
        names.update(column.name for column in table.columns)
    return (
        frozenset(name for name in names if name != name.lower()),
        spatial_column_names(catalog),
    )


def catalog_column_names(catalog: Catalog) -> frozenset[str]:
    """Lower-case names of every column of every table of ``catalog``."""
    return frozenset(
        column.name.lower() for table in catalog.tables for column in table.columns
    )
