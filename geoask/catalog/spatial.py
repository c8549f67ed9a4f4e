"""What makes a column spatial: one notion for the catalog, the SQL guard, agents and export.

A column is *spatial* when its PostgreSQL type is one of the PostGIS value types named by
:class:`SpatialKind`: ``geometry`` and ``geography`` (vector features, loaded with shapely
from EWKB) and ``raster`` (a grid of pixels in bands: the export writes it as a GeoTIFF,
:mod:`geoask.sql.raster_export`; the catalog describes its bands, CRS and resolution in a
column's ``raster`` facts). A spatial column's CRS is its SRID type modifier, e.g.
``geometry(Point,4326)`` is EPSG:4326 and ``geometry(MultiPolygon,32618)`` UTM zone 18N: a
catalog may use any SRID (:func:`geoask.catalog.columns.declared_srids`); ``geography`` is
always on an ellipsoid (SRID 4326 unless stated); a raster's SRID is in its ``raster`` facts.

Everything here is pure text handling: no database is asked which types exist.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from enum import StrEnum


class SpatialKind(StrEnum):
    """The kind of value a spatial column holds; the value is the PostgreSQL type name."""

    GEOMETRY = "geometry"
    GEOGRAPHY = "geography"
    RASTER = "raster"

    @property
    def is_vector(self) -> bool:
        """True for ``geometry`` and ``geography``: features shapely loads from EWKB.

        >>> SpatialKind.GEOGRAPHY.is_vector, SpatialKind.RASTER.is_vector
        (True, False)
        """
        return self is not SpatialKind.RASTER


VECTOR_KINDS: frozenset[SpatialKind] = frozenset(k for k in SpatialKind if k.is_vector)
"""The kinds whose values are vector features (geometry, geography)."""

POSTGIS_HELPER_TYPE_NAMES = frozenset({"box2d", "box3d", "box2df", "gidx"})
"""PostGIS bounding-box and index types: spatial values, though never a column's kind."""

POSTGIS_TYPE_NAMES: frozenset[str] = frozenset(SpatialKind) | POSTGIS_HELPER_TYPE_NAMES
"""Every type name PostGIS adds (lower case): the spatial kinds and the helper types."""

CONVENTIONAL_COLUMN_NAMES: Mapping[str, SpatialKind] = {
    "geom": SpatialKind.GEOMETRY,  # shp2pgsql -g default, geopandas to_postgis
    "geometry": SpatialKind.GEOMETRY,
    "the_geom": SpatialKind.GEOMETRY,  # shp2pgsql's historical default
    "wkb_geometry": SpatialKind.GEOMETRY,  # ogr2ogr's default
    "geog": SpatialKind.GEOGRAPHY,
}
"""Names loaders give spatial columns; stand in for a catalog when there is none."""

_KIND_NAMES = frozenset(kind.value for kind in SpatialKind)
_IDENTIFIER = r'(?:"[^"]+"|[a-z_][a-z0-9_$]*)'
_TYPE_NAME = re.compile(
    rf"^(?:{_IDENTIFIER}\s*\.\s*)?(?P<name>{_IDENTIFIER})\s*(?:\((?P<modifiers>[^()]*)\))?$"
)


def postgis_type_name(type_name: str) -> str | None:
    """The PostGIS type ``type_name`` spells (lower case), or None if it is no PostGIS type.

    ``type_name`` is a PostgreSQL type as written in DDL or reported by ``format_type``:
    case-insensitive, optionally schema-qualified (``public.geometry``), optionally quoted
    (quoted names are compared case-insensitively too, erring towards spatial), optionally
    with type modifiers (``geometry(Point,4326)``: the modifiers are not checked). Arrays
    (``geometry[]``, ``_geometry``) and composite types such as ``geometry_dump`` are no PostGIS
    value type and give None. Never raises.

    >>> postgis_type_name("public.GEOMETRY(Point, 4326)"), postgis_type_name("box2d")
    ('geometry', 'box2d')
    >>> postgis_type_name("geometry[]") is None
    True
    """
    match = _TYPE_NAME.match(type_name.strip().lower())
    if match is None:
        return None
    name = match.group("name").strip('"')
    return name if name in POSTGIS_TYPE_NAMES else None


def spatial_kind(type_name: str) -> SpatialKind | None:
    """The :class:`SpatialKind` of a column of PostgreSQL type ``type_name``; None if not spatial.

    Accepts what :func:`postgis_type_name` accepts; the SRID modifier (the CRS) does not change
    the kind. The helper types (``box2d``...) are not column kinds and give None, as do arrays
    of spatial values and every non-PostGIS type. Never raises.

    >>> spatial_kind("geometry(MultiPolygon,4326)"), spatial_kind("Geography(Point,4326)")
    (<SpatialKind.GEOMETRY: 'geometry'>, <SpatialKind.GEOGRAPHY: 'geography'>)
    >>> spatial_kind("raster"), spatial_kind("text"), spatial_kind("geometry[]")
    (<SpatialKind.RASTER: 'raster'>, None, None)
    """
    name = postgis_type_name(type_name)
    return SpatialKind(name) if name is not None and name in _KIND_NAMES else None


def names_vector_column(name: str, known: Collection[str] | None = None) -> bool:
    """True if a result column called ``name`` holds, judging by the name, vector features.

    For checks on SQL text, where only output names are known: ``name`` is one of ``known``
    (lower-case spatial column names; default the :data:`CONVENTIONAL_COLUMN_NAMES` of the
    vector kinds) or an alias ending in ``geom`` (``centroid_geom``). Case-insensitive;
    ``*`` is not judged here. Never raises.

    >>> names_vector_column("GEOM"), names_vector_column("route_geom"), names_vector_column("id")
    (True, True, False)
    """
    lowered = name.lower()
    names = known if known is not None else frozenset(
        column for column, kind in CONVENTIONAL_COLUMN_NAMES.items() if kind in VECTOR_KINDS)
    return lowered in names or lowered.endswith("geom")


_MODIFIED_TYPE = re.compile(r"^(geometry|geography)\((\w+)(?:,\s*(\d+))?\)$", re.I)


def spatial_modifiers(type_name: str) -> tuple[str, int] | None:
    """``(GEOMETRYTYPE, srid)`` of ``geometry(Type,SRID)``/``geography(...)``; None otherwise.

    A missing SRID is 0 for geometry and 4326 for geography (PostGIS's defaults).

    >>> spatial_modifiers("geometry(MultiPolygon,32618)"), spatial_modifiers("text")
    (('MULTIPOLYGON', 32618), None)
    """
    match = _MODIFIED_TYPE.match(type_name.strip())
    if match is None:
        return None
    default = 4326 if match.group(1).lower() == "geography" else 0
    return match.group(2).upper(), int(match.group(3) or default)
