"""Storage CRSs of exported geometry: resolve each value's SRID, reproject, pick a metric CRS.

The export writes RFC 7946 GeoJSON, so every geometry leaves geoask in WGS 84 longitude/latitude
(EPSG:4326) whatever CRS the database stores it in; what it was stored in is recorded per
geometry column as a :class:`NativeCrs` (the export's metadata: the GeoJSON foreign member
``native_crs`` and the preview), together with the CRS a GeoPandas script should project to
for areas and distances.

Rules:

- each SRID is read with the definition the database gives it in ``spatial_ref_sys``
  (:attr:`~geoask.sql.executor.QueryResult.crs_definitions`, :mod:`geoask.sql.srs`): EPSG when
  the row is an EPSG code pyproj knows, else its WKT or PROJ string - so a custom SRID (a
  national or municipal grid) is transformed too, recorded as ``spatial_ref_sys:<srid>`` with
  its authority and WKT; a result built without definitions reads an SRID as an EPSG code;
- each value is transformed from its *own* SRID, so a column mixing SRIDs is exported correctly
  feature by feature; its metadata lists every SRID;
- SRID 0 (unknown) is never guessed: it takes what the catalog declares for the source column
  (an EPSG code: :func:`geoask.catalog.columns.declared_srids`; or planar coordinates in
  metres, feet or unknown units: :func:`~geoask.catalog.columns.declared_planar`), and without a
  declaration the export fails with one :class:`~geoask.errors.CrsError` naming the catalog
  field to set (``geo.crs`` of ``schema.table.column``) - a data problem no agent can repair;
- planar values stay in their own coordinates (no lon/lat exists for them): the GeoJSON says
  so in a top-level ``crs`` member, scripts measure in the declared units and no metric CRS in
  metres is offered;
- the metric CRS is the native CRS when it is an EPSG CRS projected in metres or feet
  (Mercator-family projections such as Web Mercator excepted: their scale varies with
  latitude), else the one :func:`geoask.sql.metric_crs.metric_crs_for_extent` chooses from the
  data's WGS 84 bounds (always for a CRS defined only by the database, which scripts cannot
  build from a code): the UTM zone the extent fits, else an equal-area CRS for areas with
  geodesic distances.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import shapely
from pyproj import CRS, Transformer
from pyproj.exceptions import CRSError
from shapely.geometry.base import BaseGeometry

from geoask.catalog.model import PLANAR as PLANAR
from geoask.errors import CrsError
from geoask.sql.executor import QueryResult, ResultColumn
from geoask.sql.metric_crs import distances_are_geodesic, epsg_code, metric_crs_for_extent
from geoask.sql.srs import SpatialRefSys, crs_from_definition

WGS84_SRID = 4326
UNKNOWN_SRID = 0
"""``NativeCrs.crs`` of SRID 0 values the catalog declares planar (in no named CRS)."""
PLANAR_MARKER = "planar coordinates in"
"""Opens the description of planar data in a preview's ``crs of`` line (:func:`planar_text`)."""
METRIC_UNITS = frozenset({"metre", "foot", "US survey foot"})
"""Axis units of a projected CRS that scripts may measure in directly."""
Definitions = Mapping[int, SpatialRefSys]


@dataclass(frozen=True)
class NativeCrs:
    """The storage CRS of one exported geometry column.

    Attributes:
        column: result column name.
        source: ``schema.table.column`` it comes from, or None for a computed value.
        srids: distinct SRIDs of its non-empty values after resolving SRID 0, ascending
            (more than one: a mixed column, each feature transformed from its own SRID).
        crs: ``EPSG:<code>`` of the single native CRS, ``spatial_ref_sys:<srid>`` for one the
            database defines otherwise, :data:`PLANAR` for declared planar coordinates; None if
            mixed or empty.
        crs_name: that CRS's name (pyproj), e.g. ``WGS 84 / UTM zone 18N``.
        units: its first axis's unit: ``metre``, ``US survey foot``, ``degree`` (planar:
            ``metre``, ``foot`` or ``unknown`` as declared).
        metric_crs: ``EPSG:<code>`` to ``to_crs()`` to for areas and distances; None if empty
            or planar.
        metric_crs_name: its name.
        metric_units: its axis unit (``metre`` or a foot).
        metric_basis: ``native``, ``estimated UTM zone``, or why an equal-area CRS was chosen,
            ending ``distances: geodesic (pyproj.Geod)``
            (:func:`geoask.sql.metric_crs.distances_are_geodesic`).
        note: how SRID 0 was resolved, if it occurred.
        authority: ``auth_name:auth_srid`` of the database's ``spatial_ref_sys`` row, if any.
        crs_wkt: the WKT of a CRS the database defines otherwise than by an EPSG code.

    """

    column: str
    source: str | None
    srids: list[int]
    crs: str | None
    crs_name: str | None
    units: str | None
    metric_crs: str | None
    metric_crs_name: str | None
    metric_units: str | None
    metric_basis: str | None
    note: str | None = None
    authority: str | None = None
    crs_wkt: str | None = None

    @property
    def is_planar(self) -> bool:
        """True for declared planar coordinates, exported as they are (not in lon/lat)."""
        return self.crs == PLANAR

    def to_dict(self) -> dict[str, Any]:
        """The description as JSON-ready data."""
        return asdict(self)

    def to_text(self) -> str:
        """One line for a prompt or the terminal."""
        if self.is_planar:
            return f"crs of {self.column}: {planar_text(self.units)}; {self.note}"
        stored = (f"{self.crs} ({self.crs_name}; {self.units})" if self.crs
                  else "mixed SRIDs " + ", ".join(f"EPSG:{s}" for s in self.srids)
                  if self.srids else "no non-empty values")
        if self.crs_wkt:
            stored += " defined by the database's spatial_ref_sys"
        line = f"crs of {self.column}: stored in {stored}; exported in WGS 84 lon/lat (EPSG:4326)"
        if self.metric_crs and distances_are_geodesic(self.metric_basis):
            line += (f"; areas: to_crs(\"{self.metric_crs}\") ({self.metric_crs_name}; "
                     f"{self.metric_units}; {self.metric_basis})")
        elif self.metric_crs:
            line += (f"; areas/distances: to_crs(\"{self.metric_crs}\") ({self.metric_crs_name}; "
                     f"{self.metric_units}; {self.metric_basis}) or pyproj.Geod")
        elif self.srids:
            line += "; areas/distances: geodesically with pyproj.Geod (no UTM zone fits)"
        return line + (f"; {self.note}" if self.note else "")


def planar_text(units: str | None) -> str:
    """How planar coordinates are exported and measured, for prompts and maps.

    >>> planar_text("foot")[:60]
    'planar coordinates in foot (no named CRS), exported as they '
    """
    measure = ("measure areas and distances directly in them (units unknown: report them as "
               "units of the data)" if units in (None, "unknown")
               else f"measure areas and distances directly in {units}")
    return (f"{PLANAR_MARKER} {units or 'unknown'} (no named CRS), exported as they are, not "
            f"lon/lat; {measure}; read it with set_crs(None, allow_override=True) and never "
            "to_crs()")


def reproject_result(
    result: QueryResult, declared_srids: Mapping[str, int] | None = None,
    declared_planar: Mapping[str, str] | None = None,
) -> tuple[QueryResult, list[NativeCrs]]:
    """``result`` with every geometry in EPSG:4326, and the native CRS of each geometry column.

    ``declared_srids`` maps ``schema.table.column`` to the catalog's SRID, ``declared_planar``
    to the units of a column declared planar (both used for SRID 0 only); planar values are
    kept in their own coordinates (SRID 0). Each SRID is read with the result's
    ``crs_definitions`` (see module).

    Raises:
        CrsError: a value has SRID 0 and the catalog declares no CRS for its column; an SRID
            is neither defined by the database nor an EPSG code pyproj knows; a column mixes
            planar and other values.

    """
    if not result.geometry_columns:
        return result, []
    columns = [list(column) for column in zip(*result.rows, strict=True)] if result.rows else []
    declared = _Declared(declared_srids or {}, declared_planar or {})
    described = []
    for index in result.geometry_columns:
        values = np.array(columns[index] if columns else [], dtype=object)
        wgs84, native = _reproject_column(values, result.columns[index], declared,
                                          result.crs_definitions)
        if columns:
            columns[index] = list(wgs84)
        described.append(native)
    rows = [tuple(row) for row in zip(*columns, strict=True)] if columns else []
    return dataclasses.replace(result, rows=rows), described


@dataclass(frozen=True)
class _Declared:
    srids: Mapping[str, int]
    planar: Mapping[str, str]


def _reproject_column(values: np.ndarray, column: ResultColumn, declared: _Declared,
                      definitions: Definitions) -> tuple[np.ndarray, NativeCrs]:
    present = shapely.is_geometry(values) & ~shapely.is_empty(values)
    srids = shapely.get_srid(values[present]).astype(int) if present.any() else np.array([], int)
    note = None
    if (srids == UNKNOWN_SRID).any():
        if (column.source or "") in declared.planar:
            return values, _planar(column, srids, declared.planar[column.source or ""])
        srid, note = _srid_for_unknown(column, declared.srids)
        srids[srids == UNKNOWN_SRID] = srid
    out = values.copy()
    kept = out[present]
    for srid in np.unique(srids):
        chosen = srids == srid
        if not _is_wgs84(int(srid), definitions):
            kept[chosen] = shapely.set_srid(_transform(kept[chosen], int(srid), definitions),
                                            WGS84_SRID)
    out[present] = kept
    bounds = shapely.total_bounds(kept) if len(kept) else None
    return out, describe_column(column, sorted(int(s) for s in np.unique(srids)), bounds, note,
                                definitions)


def describe_column(column: ResultColumn, srids: list[int], bounds_wgs84: np.ndarray | None,
                    note: str | None, definitions: Definitions) -> NativeCrs:
    """The :class:`NativeCrs` of a (non-planar) geometry column.

    ``srids`` are its values' distinct SRIDs after resolving SRID 0, ``bounds_wgs84`` the
    bounds of its values in EPSG:4326 (None: no non-empty value), from which the metric CRS is
    chosen; a streamed export (:mod:`geoask.sql.stream_export`) gathers both batch by batch.
    """
    definition = definitions.get(srids[0]) if len(srids) == 1 else None
    native = crs_for(srids[0], definitions) if len(srids) == 1 else None
    custom = definition is not None and not definition.is_epsg
    metric, basis = (_metric_crs(None if custom else native, bounds_wgs84)
                     if bounds_wgs84 is not None else (None, None))
    return NativeCrs(
        column=column.name, source=column.source, srids=srids,
        crs=(definition.label if definition else f"EPSG:{srids[0]}") if native else None,
        crs_name=native.name if native else None, units=axis_units(native) if native else None,
        metric_crs=epsg_code(metric) if metric else None,
        metric_crs_name=metric.name if metric else None,
        metric_units=axis_units(metric) if metric else None, metric_basis=basis, note=note,
        authority=definition.authority if definition else None,
        crs_wkt=native.to_wkt() if custom and native is not None else None,
    )


def _is_wgs84(srid: int, definitions: Definitions) -> bool:
    definition = definitions.get(srid)
    if definition is None:
        return srid == WGS84_SRID
    return definition.is_epsg and definition.auth_srid == WGS84_SRID


def _planar(column: ResultColumn, srids: np.ndarray, units: str) -> NativeCrs:
    """The description of a column the catalog declares planar; its values stay as they are."""
    if (srids != UNKNOWN_SRID).any():
        raise CrsError(f"column {column.name} ({column.source}) mixes SRID 0 values the catalog "
                       "declares planar with values in a CRS; select one kind at a time")
    return NativeCrs(
        column=column.name, source=column.source, srids=[UNKNOWN_SRID] if len(srids) else [],
        crs=PLANAR, crs_name=f"planar coordinates in {units}", units=units, metric_crs=None,
        metric_crs_name=None, metric_units=units,
        metric_basis="planar: measure in its own units", note=(
            f"SRID 0 in the database; planar in {units} as the catalog declares (geo.crs of "
            f"{column.source})"),
    )


def _srid_for_unknown(column: ResultColumn, declared: Mapping[str, int]) -> tuple[int, str]:
    """The SRID the catalog declares for a column's SRID-0 values, and a note (see module).

    Raises:
        CrsError: the catalog declares none: one line naming the field to set.

    """
    srid = declared.get(column.source or "")
    if srid:
        return srid, (f"SRID 0 in the database; EPSG:{srid} as the catalog declares for "
                      f"{column.source}")
    if column.source is None:
        raise CrsError(
            f"column {column.name} (a computed value) has SRID 0 (no CRS in the database) and "
            "geoask never guesses a CRS; set the SRID in the SQL (ST_SetSRID(..., <srid>)) or "
            "take the column straight from its table so the catalog's geo.crs applies")
    raise CrsError(
        f"column {column.name} ({column.source}) has SRID 0 (no CRS in the database) and the "
        f"catalog declares none; set geo.crs of {column.source} in the catalog (EPSG:<code>, "
        "or planar with geo.units metre|foot|unknown), or set the SRID in the database "
        "(ALTER TABLE ... ALTER COLUMN ... TYPE geometry(<type>,<srid>) USING "
        "ST_SetSRID(<column>, <srid>))"
    )


def _transform(geometries: np.ndarray, srid: int, definitions: Definitions) -> np.ndarray:
    transformer = _transformer(definitions.get(srid) or srid)

    def project(coords: np.ndarray) -> np.ndarray:
        x, y = transformer.transform(coords[:, 0], coords[:, 1])
        return np.column_stack([x, y])

    return np.asarray(shapely.transform(geometries, project))


def to_wgs84(geometry: BaseGeometry | None) -> BaseGeometry | None:
    """One ``geometry`` in EPSG:4326 lon/lat, from its own SRID read as an EPSG code.

    SRID 0 is returned unchanged: callers with a whole result use :func:`reproject_result`,
    which resolves SRID-0 values first (and keeps declared planar ones as they are).

    Raises:
        CrsError: the SRID is no EPSG code pyproj knows.

    """
    if geometry is None:
        return None
    srid = int(shapely.get_srid(geometry))
    if srid in (UNKNOWN_SRID, WGS84_SRID):
        return geometry
    return shapely.set_srid(_transform(np.array([geometry], dtype=object), srid, {})[0],
                            WGS84_SRID)


def crs_for(srid: int, definitions: Definitions) -> CRS:
    """The pyproj CRS of ``srid``: the database's definition if given, else ``EPSG:<srid>``.

    Raises:
        CrsError: neither gives a CRS pyproj can build.

    """
    definition = definitions.get(srid)
    return crs_from_definition(definition) if definition else crs_for_srid(srid)


@lru_cache(maxsize=64)
def crs_for_srid(srid: int) -> CRS:
    """The pyproj CRS of ``srid`` read as ``EPSG:<srid>``.

    Raises:
        CrsError: pyproj's EPSG database has no such code.

    """
    try:
        return CRS.from_epsg(srid)
    except CRSError:
        raise CrsError(f"SRID {srid} is not an EPSG code geoask can transform from, nor defined "
                       "in the database's spatial_ref_sys; store the geometry in a CRS the "
                       "database defines or transform it in SQL (ST_Transform)") from None


@lru_cache(maxsize=64)
def _transformer(source: SpatialRefSys | int) -> Transformer:
    """Keyed by the whole definition (or an EPSG code): databases never share a transform."""
    crs = crs_from_definition(source) if isinstance(source, SpatialRefSys) \
        else crs_for_srid(source)
    return Transformer.from_crs(crs, WGS84_SRID, always_xy=True)


def axis_units(crs: CRS) -> str | None:
    """The unit of ``crs``'s first axis (``metre``, ``US survey foot``, ``degree``), if any."""
    return crs.axis_info[0].unit_name if crs.axis_info else None


def _metric_crs(native: CRS | None, bounds_wgs84: np.ndarray) -> tuple[CRS, str]:
    if native is not None and native.is_projected and axis_units(native) in METRIC_UNITS:
        method = native.coordinate_operation.method_name if native.coordinate_operation else ""
        if "Mercator" not in method or "Transverse" in method:
            return native, "native"
    chosen = metric_crs_for_extent(bounds_wgs84)
    return chosen.crs, chosen.basis
