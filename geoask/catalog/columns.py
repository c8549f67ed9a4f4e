"""What a catalog declares about its spatial columns: names, SRIDs, planar CRSs, raster bands.

The notion of a spatial column itself (its :class:`~geoask.catalog.spatial.SpatialKind`, from the
type alone) is :mod:`geoask.catalog.spatial`; these read it over a whole :class:`Catalog`.
"""

from __future__ import annotations

from collections.abc import Collection

from geoask.catalog.model import PLANAR, Catalog, PlanarUnits
from geoask.catalog.spatial import (
    CONVENTIONAL_COLUMN_NAMES,
    VECTOR_KINDS,
    SpatialKind,
    spatial_kind,
    spatial_modifiers,
)


def spatial_column_names(
    catalog: Catalog | None = None, kinds: Collection[SpatialKind] = tuple(SpatialKind)
) -> frozenset[str]:
    """Lower-case names of the catalog's spatial columns of ``kinds`` (default: every kind).

    Each table column whose ``type`` :func:`spatial_kind` places in ``kinds`` counts. With no
    catalog, or one without such a column, the :data:`CONVENTIONAL_COLUMN_NAMES` of ``kinds``
    stand in, so a caller never gets an empty set by accident. Never raises.

    >>> sorted(spatial_column_names())
    ['geog', 'geom', 'geometry', 'the_geom', 'wkb_geometry']
    >>> sorted(spatial_column_names(kinds=[SpatialKind.GEOGRAPHY]))
    ['geog']
    """
    wanted = frozenset(kinds)
    found = frozenset(
        column.name.lower()
        for table in (catalog.tables if catalog is not None else ())
        for column in table.columns
        if spatial_kind(column.type) in wanted
    )
    return found or frozenset(
        name for name, kind in CONVENTIONAL_COLUMN_NAMES.items() if kind in wanted
    )


def declared_srids(catalog: Catalog | None) -> dict[str, int]:
    """The SRID the catalog declares per vector column, keyed ``schema.table.column``.

    Taken from the column type's modifier (``geometry(MultiPolygon,2263)``) or, when the type
    has none, from the measured ``geo.srid`` of a draft, else from a declared ``geo.crs:
    EPSG:<code>``; SRID 0 (unknown) is left out, so the mapping only holds real CRSs. The export
    uses it for values that arrive with SRID 0 (:mod:`geoask.sql.crs`). No catalog gives an
    empty mapping. Never raises.
    """
    found: dict[str, int] = {}
    if catalog is None:
        return found
    for table in catalog.tables:
        schema = catalog.schema_of(table)
        for column in table.columns:
            if spatial_kind(column.type) not in VECTOR_KINDS:
                continue
            modifiers = spatial_modifiers(column.type)
            srid = modifiers[1] if modifiers is not None else 0
            if srid == 0 and column.geo is not None:
                srid = column.geo.srid or column.geo.declared_epsg or 0
            if srid > 0:
                found[f"{schema}.{table.name}.{column.name}"] = srid
    return found


def declared_planar(catalog: Catalog | None) -> dict[str, PlanarUnits]:
    """The units of each vector column the catalog declares planar, keyed ``schema.table.column``.

    A column declares ``geo.crs: planar`` with ``geo.units`` (``metre``, ``foot``, ``unknown``)
    when its database SRID is 0 and its coordinates are in no named CRS; the export keeps them
    in their own coordinates (:mod:`geoask.sql.crs`). No catalog gives an empty mapping.
    """
    if catalog is None:
        return {}
    return {f"{catalog.schema_of(table)}.{table.name}.{column.name}": column.geo.units
            for table in catalog.tables for column in table.columns
            if column.geo is not None and column.geo.crs == PLANAR
            and column.geo.units is not None}


def declared_raster_bands(catalog: Catalog | None) -> dict[str, tuple[str, ...]]:
    """One line per band of each raster column the catalog describes, ``schema.table.column``.

    A line reads ``"1 elevation (m): Elevation above sea level ..."``: index, name, unit and
    meaning from the column's ``raster`` facts. The export adds them to a raster preview, so
    the compute agent learns what each band holds. No catalog gives an empty mapping.
    """
    found: dict[str, tuple[str, ...]] = {}
    if catalog is None:
        return found
    for table in catalog.tables:
        for column in table.columns:
            if column.raster is not None:
                found[f"{catalog.schema_of(table)}.{table.name}.{column.name}"] = tuple(
                    f"{b.index} {b.name}" + (f" ({b.unit})" if b.unit else "")
                    + f": {b.description}" for b in column.raster.bands)
    return found
