"""The metric CRS that fits a WGS 84 extent: one UTM zone, else an equal-area CRS for areas.

:func:`metric_crs_for_extent` is the one place that chooses the CRS a script should ``to_crs()``
to when the data's own CRS is not metric (the export's ``metric_crs``,
:mod:`geoask.sql.crs`), and the CRS answer maps are drawn in (:mod:`geoask.maps.answer_map`):

- the UTM zone at the extent's centre when the whole extent fits that 6-degree zone (within
  :data:`UTM_TOLERANCE_DEG`) and UTM's latitudes (-80 to 84 degrees): areas and distances in
  it (basis :data:`UTM_BASIS`, as ``GeoDataFrame.estimate_utm_crs()``);
- else an equal-area CRS, good for areas only, distances then geodesic (``pyproj.Geod``): the
  first of :data:`CONTINENTAL_EQUAL_AREA` whose area of use in PROJ's EPSG database covers the
  extent (within :data:`AREA_OF_USE_TOLERANCE_DEG`), else :data:`GLOBAL_EQUAL_AREA`.

An extent from -180 to 180 degrees of longitude (global data, or data crossing the antimeridian,
which the bounding box cannot tell apart) is given the global equal-area CRS, never a guessed
zone; so is an extent beyond UTM's latitudes (polar data).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from pyproj import CRS

from geoask.errors import CrsError

UTM_SOUTH_LAT: Final = -80.0
UTM_NORTH_LAT: Final = 84.0
UTM_ZONE_WIDTH_DEG: Final = 6.0
UTM_TOLERANCE_DEG: Final = 0.5
"""How far (degrees of longitude) an extent may reach past its UTM zone's edges and still fit."""
AREA_OF_USE_TOLERANCE_DEG: Final = 1.0
"""How far an extent may reach past an equal-area CRS's area of use (e.g. coastal waters)."""
CONTINENTAL_EQUAL_AREA: Final = (
    5070,   # NAD83 / Conus Albers
    3338,   # NAD83 / Alaska Albers (its area of use crosses the antimeridian)
    3035,   # ETRS89-extended / LAEA Europe
    3577,   # GDA94 / Australian Albers
    10603,  # WGS 84 / GLANCE South America (Lambert azimuthal equal-area)
    10592,  # WGS 84 / GLANCE Africa
    10594,  # WGS 84 / GLANCE Asia
)
"""EPSG codes of continental equal-area CRSs, tried in this order (first covering one wins)."""
GLOBAL_EQUAL_AREA: Final = 8857
"""WGS 84 / Equal Earth Greenwich: equal-area over the whole globe, poles included."""
UTM_BASIS: Final = "estimated UTM zone"
GEODESIC_DISTANCES: Final = "distances: geodesic (pyproj.Geod)"
"""Ends the basis of an equal-area choice: its CRS is for areas, distances are geodesic."""
Bounds = Iterable[float]


@dataclass(frozen=True)
class MetricCrs:
    """The metric CRS chosen for an extent, and why.

    Attributes:
        crs: the pyproj CRS (axes in metres).
        basis: why it was chosen, e.g. ``estimated UTM zone`` or ``extent spans 4 UTM zones:
            equal-area EPSG:5070 for areas; distances: geodesic (pyproj.Geod)``.

    """

    crs: CRS
    basis: str

    @property
    def code(self) -> str:
        """``EPSG:<code>`` of :attr:`crs`."""
        return epsg_code(self.crs)

    @property
    def geodesic_distances(self) -> bool:
        """True when the CRS is for areas only and distances must be measured geodesically."""
        return distances_are_geodesic(self.basis)


def distances_are_geodesic(basis: str | None) -> bool:
    """Whether a recorded metric basis says distances are geodesic (an equal-area choice).

    >>> distances_are_geodesic("estimated UTM zone"), distances_are_geodesic(None)
    (False, False)
    """
    return basis is not None and basis.endswith(GEODESIC_DISTANCES)


def metric_crs_for_extent(bounds_wgs84: Bounds) -> MetricCrs:
    """The metric CRS for data with WGS 84 bounds ``(west, south, east, north)`` (see module).

    >>> metric_crs_for_extent((-79.0, 35.5, -78.2, 36.1)).crs.name
    'WGS 84 / UTM zone 17N'
    >>> metric_crs_for_extent((-124.8, 24.4, -66.9, 49.4)).basis
    'extent spans 10 UTM zones: equal-area EPSG:5070 for areas; distances: geodesic (pyproj.Geod)'

    Raises:
        CrsError: the bounds are not finite WGS 84 longitudes/latitudes with west <= east and
            south <= north.

    """
    west, south, east, north = _checked(bounds_wgs84)
    zone = utm_epsg((west + east) / 2, (south + north) / 2)
    if zone is not None and _fits_zone(zone, west, south, east, north):
        return MetricCrs(crs_from_epsg(zone), UTM_BASIS)
    code = next((code for code in CONTINENTAL_EQUAL_AREA
                 if _covers(crs_from_epsg(code), west, south, east, north)), GLOBAL_EQUAL_AREA)
    return MetricCrs(crs_from_epsg(code), f"{_why_not_utm(west, south, east, north)}: "
                                          f"equal-area EPSG:{code} for areas; {GEODESIC_DISTANCES}")


def utm_epsg(lon: float, lat: float) -> int | None:
    """EPSG code of the WGS 84 UTM zone holding ``(lon, lat)`` degrees; None beyond UTM.

    Zones are the standard 6-degree bands from 180 degrees W (zone 1), 326xx north of the
    equator and 327xx south of it, for latitudes -80 to 84 degrees (the areas of use that
    PROJ's database gives EPSG:32601-32760; arithmetic instead of ``query_utm_crs_info``, which
    costs about 50 ms per call). A point on a zone boundary takes the eastern zone.

    >>> utm_epsg(-78.8, 35.8), utm_epsg(151.2, -33.9), utm_epsg(0.0, 85.0)
    (32617, 32756, None)
    """
    if not UTM_SOUTH_LAT <= lat <= UTM_NORTH_LAT or not -180.0 <= lon <= 180.0:
        return None
    return (32600 if lat >= 0 else 32700) + _zone_number(lon)


@lru_cache(maxsize=128)
def crs_from_epsg(code: int) -> CRS:
    """The pyproj CRS ``EPSG:<code>`` (cached: building one costs about a millisecond)."""
    return CRS.from_epsg(code)


def epsg_code(crs: CRS) -> str:
    """``AUTHORITY:<code>`` of ``crs`` (``EPSG:5070``), or its PROJ string without one."""
    authority = crs.to_authority()
    return f"{authority[0]}:{authority[1]}" if authority else crs.to_string()


def _zone_number(lon: float) -> int:
    return min(int((lon + 180.0) // UTM_ZONE_WIDTH_DEG) + 1, 60)


def _checked(bounds: Bounds) -> tuple[float, float, float, float]:
    west, south, east, north = (float(value) for value in bounds)
    valid = (all(math.isfinite(v) for v in (west, south, east, north))
             and -180.0 <= west <= east <= 180.0 and -90.0 <= south <= north <= 90.0)
    if not valid:
        raise CrsError(f"extent (west {west:.6g}, south {south:.6g}, east {east:.6g}, north "
                       f"{north:.6g}) is no WGS 84 longitude/latitude box, so no metric CRS can be "
                       "chosen; check the geometries' SRID and coordinates")
    return west, south, east, north


def _fits_zone(zone: int, west: float, south: float, east: float, north: float) -> bool:
    zone_west = -180.0 + (zone % 100 - 1) * UTM_ZONE_WIDTH_DEG
    return (zone_west - UTM_TOLERANCE_DEG <= west
            and east <= zone_west + UTM_ZONE_WIDTH_DEG + UTM_TOLERANCE_DEG
            and _within_utm_latitudes(south, north))


def _within_utm_latitudes(south: float, north: float) -> bool:
    return south >= UTM_SOUTH_LAT and north <= UTM_NORTH_LAT


def _covers(crs: CRS, west: float, south: float, east: float, north: float) -> bool:
    """Whether ``crs``'s area of use (PROJ's EPSG database) covers the extent, with tolerance."""
    area = crs.area_of_use
    if area is None:
        return False
    tolerance = AREA_OF_USE_TOLERANCE_DEG
    if not (area.south - tolerance <= south and north <= area.north + tolerance):
        return False
    if area.west <= area.east:
        return area.west - tolerance <= west and east <= area.east + tolerance
    # the area of use crosses the antimeridian; the extent lies in its eastern or western part
    return area.west - tolerance <= west or east <= area.east + tolerance


def _why_not_utm(west: float, south: float, east: float, north: float) -> str:
    if not _within_utm_latitudes(south, north):
        return (f"extent reaches latitude {south if south < UTM_SOUTH_LAT else north:g}, beyond "
                f"UTM's {UTM_SOUTH_LAT:g} to {UTM_NORTH_LAT:g}")
    if west <= -180.0 + AREA_OF_USE_TOLERANCE_DEG and east >= 180.0 - AREA_OF_USE_TOLERANCE_DEG:
        return ("extent spans longitudes -180 to 180 (global data, or data crossing the "
                "antimeridian)")
    return f"extent spans {_zone_number(east) - _zone_number(west) + 1} UTM zones"
