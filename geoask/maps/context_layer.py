"""The offline context layer of lon/lat answer maps: Natural Earth 1:110m countries, coastline.

``geoask/maps/context/natural_earth_110m.parquet`` (public domain, about 150 KB; built by
``scripts/prepare_map_context.py``, provenance in ``context/PROVENANCE.md``) holds the 177
admin-0 country outlines and the coastline of the 1:110m Natural Earth release. Both answer maps
draw it under the run's layers, so a map is readable without tiles or network. Planar (SRID 0)
maps never get it: their coordinates have no place on the Earth.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Final

import geopandas as gpd
from shapely.geometry import box

CONTEXT_FILE: Final = Path(__file__).resolve().parent / "context" / "natural_earth_110m.parquet"
CONTEXT_SOURCE: Final = "Natural Earth 1:110m (public domain)"
ADMIN0: Final = "admin0"
COASTLINE: Final = "coastline"
Bounds = tuple[float, float, float, float]


@cache
def natural_earth() -> gpd.GeoDataFrame:
    """The shipped context layer (columns ``kind``, ``name``, geometry; EPSG:4326).

    Raises:
        FileNotFoundError: the shipped file is missing (a broken install).

    """
    return gpd.read_parquet(CONTEXT_FILE)


def context_features(bounds: Bounds, grow: float = 1.0) -> gpd.GeoDataFrame:
    """The context features meeting ``bounds`` grown by ``grow`` times its size on each side.

    Geometries are clipped to that box (so an HTML page carries only what its view can show),
    at least 2 degrees wide and high, within -180..180 and -90..90.

    >>> sorted(set(context_features((-74.3, 40.5, -73.7, 40.9))["kind"]))  # New York
    ['admin0', 'coastline']
    """
    west, south, east, north = bounds
    pad_x = max((east - west) * grow, 1.0)
    pad_y = max((north - south) * grow, 1.0)
    window = box(max(west - pad_x, -180.0), max(south - pad_y, -90.0),
                 min(east + pad_x, 180.0), min(north + pad_y, 90.0))
    frame = natural_earth()
    clipped = frame.clip(window)
    return clipped[~clipped.geometry.is_empty].reset_index(drop=True)
