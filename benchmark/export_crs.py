"""Run: ``.venv/bin/python benchmark/export_crs.py [--polygons 10000] [--runs 5]``.

Measures the wall time of :func:`geoask.sql.export.export_result` (reprojection to WGS 84,
GeoJSON and preview serialisation, atomic writes to a temporary folder) for the same
``--polygons`` polygons (10-vertex rings, 1 km across, on a grid over north-eastern US/
Long Island) stored in EPSG:4326, EPSG:32618 (UTM 18N metres) and EPSG:2263 (NY Long Island
US survey feet). The polygons are built in memory as a :class:`~geoask.sql.executor.QueryResult`
(as the executor returns them, SRID attached), so the database's time is not in the numbers.
Runs alternate between the CRSs so that drift in machine load hits all equally; prints
p50/min per CRS and the projected/4326 ratio, for the whole export and for the reprojection
alone (:func:`geoask.sql.crs.reproject_result`).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

import numpy as np
import shapely
from pyproj import Transformer

from geoask.sql.crs import reproject_result
from geoask.sql.executor import QueryResult, ResultColumn
from geoask.sql.export import export_result

SRIDS = (4326, 32618, 2263)


def polygons(count: int, srid: int) -> list[shapely.Polygon]:
    """``count`` 10-vertex polygons around points of a lon/lat grid, in ``srid``."""
    side = int(np.ceil(np.sqrt(count)))
    lon, lat = np.meshgrid(np.linspace(-74.2, -72.8, side), np.linspace(40.5, 41.0, side))
    lon, lat = lon.ravel()[:count], lat.ravel()[:count]
    to_native = Transformer.from_crs(4326, srid, always_xy=True)
    x, y = to_native.transform(lon, lat)
    radius = 500.0 if srid == 32618 else (1640.0 if srid == 2263 else 0.005)
    angles = np.linspace(0, 2 * np.pi, 10, endpoint=False)
    rings = [np.column_stack([cx + radius * np.cos(angles), cy + radius * np.sin(angles)])
             for cx, cy in zip(x, y, strict=True)]
    return list(shapely.set_srid(shapely.polygons(rings), srid))


def result(count: int, srid: int) -> QueryResult:
    """A query result of ``count`` rows ``(id, name, geom)``."""
    rows = [(i, f"parcel {i}", geometry) for i, geometry in enumerate(polygons(count, srid))]
    columns = (ResultColumn("id", "integer"), ResultColumn("name", "text"),
               ResultColumn("geom", "geometry", True, "bench.parcels.geom"))
    return QueryResult(columns, rows, False, count, "SELECT id, name, geom FROM bench.parcels")


def main() -> None:
    """Time the export of the same polygons stored in each CRS and print the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--polygons", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    results = {srid: result(args.polygons, srid) for srid in SRIDS}
    export: dict[int, list[float]] = {srid: [] for srid in SRIDS}
    reproject: dict[int, list[float]] = {srid: [] for srid in SRIDS}
    reproject_result(results[4326])  # warm pyproj's caches (UTM zone look-up) outside timing
    with tempfile.TemporaryDirectory() as folder:
        for run in range(args.runs):
            for srid in SRIDS:
                begin = time.perf_counter()
                reproject_result(results[srid])
                reproject[srid].append(time.perf_counter() - begin)
                begin = time.perf_counter()
                export_result(results[srid], f"{folder}/{srid}", name=f"run{run}")
                export[srid].append(time.perf_counter() - begin)
    print(f"{args.polygons:,} polygons (10 vertices each), {args.runs} runs")
    for label, times in (("export_result", export), ("reprojection", reproject)):
        base = statistics.median(times[4326])
        for srid in SRIDS:
            p50 = statistics.median(times[srid])
            print(f"  {label:<13} EPSG:{srid:<6} p50 {p50 * 1000:8.1f} ms  "
                  f"min {min(times[srid]) * 1000:8.1f} ms  ({p50 / base:.2f}x EPSG:4326)")


if __name__ == "__main__":
    main()
