"""The view of an answer map: its drawing CRS, padded limits and scale-bar arithmetic.

The PNG map (:mod:`geoask.maps.answer_map`) is drawn in the metric CRS that fits the extent
(:func:`geoask.sql.metric_crs.metric_crs_for_extent`: its UTM zone, else a continental or
global equal-area CRS), zoomed to the extent plus a margin; planar layers (SRID 0) are drawn
as they are.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

import geopandas as gpd
from pyproj import Proj

from geoask.sql.crs import PLANAR
from geoask.sql.metric_crs import metric_crs_for_extent

MARGIN_SHARE: Final = 0.15
MIN_MARGIN_M: Final = 2000.0
Bounds = tuple[float, float, float, float]


def nice_scale_length(max_length_m: float) -> float:
    """Largest 1, 2 or 5 × 10^k metres not above ``max_length_m`` (a scale bar's length).

    >>> nice_scale_length(3700.0)
    2000.0

    Raises:
        ValueError: ``max_length_m`` is not positive.

    """
    if not max_length_m > 0:
        raise ValueError(f"a scale bar needs a positive length, got {max_length_m}")
    power = 10.0 ** math.floor(math.log10(max_length_m))
    for step in (5.0, 2.0, 1.0):
        if step * power <= max_length_m * (1 + 1e-9):
            return step * power
    return power  # unreachable: 1 × 10^floor(log10(x)) <= x


def scale_label(length_m: float) -> str:
    """``length_m`` as a scale-bar label: metres below 1 km, else kilometres.

    >>> scale_label(500.0), scale_label(20000.0)
    ('500 m', '20 km')
    """
    return f"{length_m:g} m" if length_m < 1000 else f"{length_m / 1000:g} km"


def map_crs(bounds_wgs84: Bounds) -> tuple[str, float]:
    """The drawing CRS and its map units per ground metre at the map centre.

    The metric CRS of the extent (:func:`geoask.sql.metric_crs.metric_crs_for_extent`): the
    UTM zone it fits (1 unit per metre), else the equal-area CRS chosen for it, whose scale
    along the parallel through the map centre (pyproj's projection factors) sizes the scale bar.
    """
    chosen = metric_crs_for_extent(bounds_wgs84)
    if not chosen.geodesic_distances:
        return chosen.code, 1.0
    west, south, east, north = bounds_wgs84
    factors = Proj(chosen.crs).get_factors((west + east) / 2, (south + north) / 2)
    return chosen.code, float(factors.parallel_scale)


@dataclass(frozen=True)
class MapView:
    """What the PNG map shows: its CRS, map units per ground metre, and padded limits.

    Attributes:
        crs: the drawing CRS (``"EPSG:326xx"``/``"EPSG:327xx"`` or an equal-area one such as
            ``"EPSG:5070"``).
        units_per_metre: map units per ground metre at the centre (1 in UTM).
        limits: ``(xmin, ymin, xmax, ymax)`` in map units: the extent plus a margin of
            :data:`MARGIN_SHARE` per side, at least :data:`MIN_MARGIN_M` metres.

    """

    crs: str
    units_per_metre: float
    limits: tuple[float, float, float, float]


def planar_view(bounds: Bounds) -> MapView:
    """The view of planar coordinates ``(xmin, ymin, xmax, ymax)``: drawn as they are.

    >>> planar_view((0.0, 0.0, 100.0, 50.0)).limits
    (-15.0, -15.0, 115.0, 65.0)
    """
    west, south, east, north = bounds
    pad = max(east - west, north - south, 1e-9) * MARGIN_SHARE
    return MapView(PLANAR, 1.0, (west - pad, south - pad, east + pad, north + pad))


def map_view(bounds_wgs84: Bounds) -> MapView:
    """The view of an extent ``(west, south, east, north)`` in degrees (see :class:`MapView`)."""
    extent = gpd.GeoDataFrame(geometry=gpd.GeoSeries.from_xy(
        [bounds_wgs84[0], bounds_wgs84[2]], [bounds_wgs84[1], bounds_wgs84[3]], crs=4326))
    crs, units_per_metre = map_crs(bounds_wgs84)
    west, south, east, north = (float(v) for v in extent.to_crs(crs).total_bounds)
    margin = MIN_MARGIN_M * units_per_metre
    pad_x = max((east - west) * MARGIN_SHARE, margin)
    pad_y = max((north - south) * MARGIN_SHARE, margin)
    return MapView(crs, units_per_metre, (west - pad_x, south - pad_y, east + pad_x,
                                          north + pad_y))


def plain_text(text: str) -> str:
    r"""``text`` as matplotlib draws it literally: ``$`` escaped, so no mathtext is parsed.

    An unbalanced ``$`` in a question or a label ("fees between $20 and $30") made matplotlib
    raise, or draw the span between two of them in math italics.

    >>> plain_text("fees between $20 and $30")
    'fees between \\$20 and \\$30'
    """
    return text.replace("$", r"\$")
