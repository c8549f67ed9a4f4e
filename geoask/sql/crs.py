"""Storage CRSs of exported geometry: resolve each value's SRID, reproject, pick a metric CRS.

The export writes RFC 7946 GeoJSON, so every geometry leaves geoask in WGS 84 longitude/latitude
(EPSG:4326) whatever CRS the database stores it in; what it was stored in is recorded per
geometry column as a :class:`NativeCrs` (the export's metadata: the GeoJSON foreign member
``native_crs`` and the preview), together with the CRS a GeoPandas script should project to
for areas and distances.

Rules (CRS definitions from pyproj's EPSG database; an SRID is read as an EPSG code):

- each value is transformed from its *own* SRID, so a column mixing SRIDs is exported correctly
  feature by feature; its metadata lists every SRID;
- SRID 0 (unknown) takes the SRID the catalog declares for the source column
  (:func:`geoask.catalog.columns.declared_srids`); without one, values whose coordinates all
  lie within longitude/latitude range are taken to be EPSG:4326 (recorded in ``note``), and
  any other value is refused with :class:`~geoask.errors.CrsError` asking for the SRID to be set
  (a data problem no agent can repair: the question flow ends with it);
- the metric CRS is the native CRS when it is projected in metres or feet (Mercator-family
  projections such as Web Mercator excepted: their scale varies with latitude), else the one
  :func:`geoask.sql.metric_crs.metric_crs_for_extent` chooses from the data's WGS 84 bounds:
  the UTM zone the extent fits, else an equal-area CRS for areas with geodesic distances.
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

from geoask.errors import CrsError
from geoask.sql.executor import QueryResult, ResultColumn
from geoask.sql.metric_crs import distances_are_geodesic, epsg_code, metric_crs_for_extent

WGS84_SRID = 4326
UNKNOWN_SRID = 0
METRIC_UNITS = frozenset({"metre", "foot", "US survey foot"})
"""Axis units of a projected CRS that scripts may measure in directly."""


@dataclass(frozen=True)
class NativeCrs:
    """The storage CRS of one exported geometry column.

    Attributes:
        column: result column name.
        source: ``schema.table.column`` it comes from, or None for a computed value.
        srids: distinct SRIDs of its non-empty values after resolving SRID 0, ascending
            (more than one: a mixed column, each feature transformed from its own SRID).
        crs: ``EPSG:<srid>`` of the single native CRS; None if mixed or empty.
        crs_name: that CRS's name (pyproj), e.g. ``WGS 84 / UTM zone 18N``.
        units: its first axis's unit: ``metre``, ``US survey foot``, ``degree``.
        metric_crs: ``EPSG:<code>`` to ``to_crs()`` to for areas and distances; None if empty.
        metric_crs_name: its name.
        metric_units: its axis unit (``metre`` or a foot).
        metric_basis: ``native``, ``estimated UTM zone``, or why an equal-area CRS was chosen,
            ending ``distances: geodesic (pyproj.Geod)``
            (:func:`geoask.sql.metric_crs.distances_are_geodesic`).
        note: how SRID 0 was resolved, if it occurred.

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

    def to_dict(self) -> dict[str, Any]:
        """The description as JSON-ready data."""
        return asdict(self)

    def to_text(self) -> str:
        """One line for a prompt or the terminal."""
        stored = (f"{self.crs} ({self.crs_name}; {self.units})" if self.crs
                  else "mixed SRIDs " + ", ".join(f"EPSG:{s}" for s in self.srids)
                  if self.srids else "no non-empty values")
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


def reproject_result(
    result: QueryResult, declared_srids: Mapping[str, int] | None = None
) -> tuple[QueryResult, list[NativeCrs]]:
    """``result`` with every geometry in EPSG:4326, and the native CRS of each geometry column.

    ``declared_srids`` maps ``schema.table.column`` to the catalog's SRID (used for SRID 0).

    Raises:
        CrsError: a value has SRID 0 and no declared SRID, and coordinates outside lon/lat
            range; or an SRID is no EPSG code pyproj knows.

    """
    if not result.geometry_columns:
        return result, []
    columns = [list(column) for column in zip(*result.rows, strict=True)] if result.rows else []
    described = []
    for index in result.geometry_columns:
        values = np.array(columns[index] if columns else [], dtype=object)
        wgs84, native = _reproject_column(values, result.columns[index], declared_srids or {})
        if columns:
            columns[index] = list(wgs84)
        described.append(native)
    rows = [tuple(row) for row in zip(*columns, strict=True)] if columns else []
    return dataclasses.replace(result, rows=rows), described


def _reproject_column(values: np.ndarray, column: ResultColumn, declared: Mapping[str, int]
                      ) -> tuple[np.ndarray, NativeCrs]:
    present = shapely.is_geometry(values) & ~shapely.is_empty(values)
    srids = shapely.get_srid(values[present]).astype(int) if present.any() else np.array([], int)
    note = None
    if (srids == UNKNOWN_SRID).any():
        srid, note = _srid_for_unknown(values[present][srids == UNKNOWN_SRID], column, declared)
        srids[srids == UNKNOWN_SRID] = srid
    out = values.copy()
    kept = out[present]
    for srid in np.unique(srids):
        chosen = srids == srid
        if srid != WGS84_SRID:
            kept[chosen] = shapely.set_srid(_transform(kept[chosen], int(srid)), WGS84_SRID)
    out[present] = kept
    distinct = sorted(int(s) for s in np.unique(srids))
    native = crs_for_srid(distinct[0]) if len(distinct) == 1 else None
    metric, basis = (_metric_crs(native, shapely.total_bounds(kept)) if len(kept)
                     else (None, None))
    return out, NativeCrs(
        column=column.name, source=column.source, srids=distinct,
        crs=f"EPSG:{distinct[0]}" if native else None,
        crs_name=native.name if native else None, units=axis_units(native) if native else None,
        metric_crs=epsg_code(metric) if metric else None,
        metric_crs_name=metric.name if metric else None,
        metric_units=axis_units(metric) if metric else None, metric_basis=basis, note=note,
    )


def _srid_for_unknown(values: np.ndarray, column: ResultColumn, declared: Mapping[str, int]
                      ) -> tuple[int, str]:
    """The SRID for a column's SRID-0 values and a note on how it was chosen (see module)."""
    where = column.source or "a computed value"
    srid = declared.get(column.source or "")
    if srid:
        return srid, f"SRID 0 in the database; EPSG:{srid} as the catalog declares for {where}"
    minx, miny, maxx, maxy = shapely.total_bounds(values)
    if max(abs(minx), abs(maxx)) <= 180 and max(abs(miny), abs(maxy)) <= 90:
        return WGS84_SRID, "SRID 0 in the database; lon/lat coordinates taken as EPSG:4326"
    raise CrsError(
        f"column {column.name} ({where}) has SRID 0 (unknown CRS) and coordinates outside "
        f"longitude/latitude range (x {minx:.6g} to {maxx:.6g}, y {miny:.6g} to {maxy:.6g}), "
        "so geoask cannot tell its CRS; set the SRID: in the catalog (column type "
        "geometry(<type>,<srid>)), or in the database (ALTER TABLE ... ALTER COLUMN ... TYPE "
        "geometry(<type>,<srid>) USING ST_SetSRID(<column>, <srid>))"
    )


def _transform(geometries: np.ndarray, srid: int) -> np.ndarray:
    if srid == WGS84_SRID:
        return geometries
    transformer = _transformer(srid)

    def project(coords: np.ndarray) -> np.ndarray:
        x, y = transformer.transform(coords[:, 0], coords[:, 1])
        return np.column_stack([x, y])

    return np.asarray(shapely.transform(geometries, project))


def to_wgs84(geometry: BaseGeometry | None) -> BaseGeometry | None:
    """One ``geometry`` in EPSG:4326 lon/lat, from its own SRID.

    SRID 0 is returned unchanged (taken to be lon/lat already): callers with a whole result
    use :func:`reproject_result`, which checks SRID-0 values first.

    Raises:
        CrsError: the SRID is no EPSG code pyproj knows.

    """
    if geometry is None:
        return None
    srid = int(shapely.get_srid(geometry))
    if srid in (UNKNOWN_SRID, WGS84_SRID):
        return geometry
    return shapely.set_srid(_transform(np.array([geometry], dtype=object), srid)[0], WGS84_SRID)


@lru_cache(maxsize=64)
def crs_for_srid(srid: int) -> CRS:
    """The pyproj CRS of ``srid`` read as ``EPSG:<srid>``.

    Raises:
        CrsError: pyproj's EPSG database has no such code.

    """
    try:
        return CRS.from_epsg(srid)
    except CRSError:
        raise CrsError(f"SRID {srid} is not an EPSG code geoask can transform from; store the "
                       "geometry in an EPSG CRS or transform it in SQL (ST_Transform)") from None


@lru_cache(maxsize=64)
def _transformer(srid: int) -> Transformer:
    return Transformer.from_crs(crs_for_srid(srid), WGS84_SRID, always_xy=True)


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
