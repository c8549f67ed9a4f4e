"""Run: ``.venv/bin/python benchmark/metric_crs_area.py``.

Measures how well the export's metric CRS keeps areas for data spanning the contiguous US
(bounding box -124.85..-66.88 E, 24.39..49.38 N): for 1-degree cells at the edges and the
centre of that extent, the planar area in the old choice (the UTM zone at the extent's centre,
EPSG:32615) and in the new one (:func:`geoask.sql.metric_crs.metric_crs_for_extent`: Conus
Albers, EPSG:5070), each against the cell's geodesic area on the WGS 84 ellipsoid
(``pyproj.Geod.geometry_area_perimeter``). Cell edges are densified to 0.01 degree so that
the projected polygon follows the curved parallels. Prints one row per cell: the geodesic area
in km² and the relative error (%) of each CRS, then the largest absolute error of each.
"""

from __future__ import annotations

import numpy as np
import shapely
from pyproj import CRS, Geod, Transformer

from geoask.sql.metric_crs import crs_from_epsg, metric_crs_for_extent, utm_epsg

CONUS = (-124.85, 24.39, -66.88, 49.38)
CELLS = {  # south-west corner of each 1-degree cell
    "north-west (WA)": (-124.8, 48.0),
    "south-west (CA/MX)": (-118.0, 32.0),
    "south (FL Keys)": (-82.0, 24.4),
    "north-east (ME)": (-68.0, 46.0),
    "centre (KS)": (-98.0, 38.0),
}
GEOD = Geod(ellps="WGS84")


def planar_area(cell: shapely.Polygon, crs: CRS) -> float:
    """Area in m² of the lon/lat ``cell`` after projecting it to ``crs``."""
    transformer = Transformer.from_crs(4326, crs, always_xy=True)

    def project(coords: np.ndarray) -> np.ndarray:
        return np.column_stack(transformer.transform(coords[:, 0], coords[:, 1]))

    return float(shapely.transform(cell, project).area)


def main() -> None:
    """Print the area error of the old and the new metric CRS per cell."""
    zone = utm_epsg((CONUS[0] + CONUS[2]) / 2, (CONUS[1] + CONUS[3]) / 2)
    if zone is None:
        raise SystemExit("the extent's centre is beyond UTM's latitudes")
    old = crs_from_epsg(zone)
    new = metric_crs_for_extent(CONUS)
    print(f"extent {CONUS}: old {old.to_epsg()} ({old.name}), new {new.code} ({new.crs.name})")
    print(f"new basis: {new.basis}")
    print(f"{'cell':22} {'geodesic km2':>13} {'old UTM err %':>14} {'new err %':>10}")
    worst = [0.0, 0.0]
    for name, (west, south) in CELLS.items():
        cell = shapely.box(west, south, west + 1.0, south + 1.0).segmentize(0.01)
        geodesic = abs(GEOD.geometry_area_perimeter(cell)[0])
        errors = [100 * (planar_area(cell, crs) / geodesic - 1) for crs in (old, new.crs)]
        worst = [max(w, abs(e)) for w, e in zip(worst, errors, strict=True)]
        print(f"{name:22} {geodesic / 1e6:13.1f} {errors[0]:14.3f} {errors[1]:10.1e}")
    print(f"largest |error|: old {worst[0]:.3f} %, new {worst[1]:.1e} %")


if __name__ == "__main__":
    main()
