"""Recompute the scale cases' expected values from the GeoParquet files, without PostGIS.

Run::

    GEOASK_HOME=... python benchmark/databases/scale/crosscheck.py [--size 2000000]
        [--build <GEOASK_HOME>/scale-build/<size>] [--cases cases/scale.yaml]

An independent check of ``geoask bench fill``: it reads the build folder's GeoParquet files
with geopandas, finds candidates with shapely STRtree queries (exact predicates, no bounding-box
SQL), measures with pyproj (geodesic on WGS 84) or planar in the stored CRS, and compares each
value with the case file's filled ``expected.value`` within the case's tolerance. Prints one
line per case and the agreement; exit 1 on any disagreement or unfilled case.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import geopandas as gpd
import numpy as np
import shapely
import yaml
from pyproj import Geod

sys.path.insert(0, str(Path(__file__).resolve().parent))
import build_cases as bc
import regions as rg

WGS84 = Geod(ellps="WGS84")
FEET_TO_KM = 1200 / 3937 / 1000
"""US survey feet to kilometres."""


class Files:
    """The build folder's big tables, read once (the districts as polygons by name)."""

    def __init__(self, build: Path) -> None:
        """Read the GeoParquet files of ``build``."""
        data = build / "data"
        self.poi = gpd.read_parquet(data / "scale.poi.parquet")
        self.parcels = gpd.read_parquet(data / "scale.parcels.parquet")
        self.roads = gpd.read_parquet(data / "scale.roads.parquet")
        self.districts = gpd.read_parquet(data / "scale.districts.parquet").set_index("name")
        self.airports = gpd.read_parquet(data / "scale.airports.parquet").set_index("code")

    def district(self, name: str, srid: int) -> shapely.Geometry:
        """District ``name``'s polygon in ``srid`` (vertices transformed, as ST_Transform)."""
        return self.districts.to_crs(srid).geometry[name]

    def category(self, categories: list[str]) -> gpd.GeoDataFrame:
        """The points of interest of ``categories``."""
        return self.poi[self.poi["category"].isin(categories)]


def _distances(files: Files, code: str, points: gpd.GeoDataFrame) -> np.ndarray:
    """Geodesic distances (m, WGS 84) from airport ``code`` to ``points``."""
    a = files.airports.geometry[code]
    n = len(points)
    _, _, d = WGS84.inv(
        np.full(n, a.x), np.full(n, a.y), points.geometry.x.to_numpy(), points.geometry.y.to_numpy()
    )
    return d


def near_count(files: Files, code: str, cat: str, km: int) -> int:
    """Points of ``cat`` within ``km`` of ``code``: STRtree box query, then geodesic distance."""
    points = files.category([cat])
    a = files.airports.geometry[code]
    dlat = km / 110.0 * 1.5
    dlon = dlat / math.cos(math.radians(a.y))
    tree = shapely.STRtree(points.geometry.to_numpy())
    hits = tree.query(shapely.box(a.x - dlon, a.y - dlat, a.x + dlon, a.y + dlat))
    return int((_distances(files, code, points.iloc[hits]) <= km * 1000).sum())


def nearest(files: Files, code: str, cat: str, k: int) -> list[dict]:
    """The ``k`` geodesically nearest points of ``cat`` (every point of it measured)."""
    points = files.category([cat]).copy()
    points["d"] = _distances(files, code, points)
    top = points.sort_values(["d", "poi_id"]).head(k)
    return [{"id": int(r.poi_id), "value": float(r.d)} for r in top.itertuples()]


def parcel_area(files: Files, district: str) -> list[dict]:
    """km2 per land use of parcels whose centroid the district (UTM 17N) contains."""
    d = files.district(district, rg.PARCEL_SRID)
    tree = shapely.STRtree(files.parcels.geometry.centroid.to_numpy())
    inside = files.parcels.iloc[tree.query(d, predicate="contains")]
    g = (inside.geometry.area / 1e6).groupby(inside["land_use"]).sum().sort_index()
    return [{"land_use": k, "area_km2": float(v)} for k, v in g.items()]


def road_length(files: Files, district: str, cls: str) -> float:
    """Kilometres of ``cls`` segments the district (EPSG:2264) contains."""
    roads = files.roads[files.roads["road_class"] == cls]
    tree = shapely.STRtree(roads.geometry.to_numpy())
    inside = roads.iloc[tree.query(files.district(district, rg.ROAD_SRID), predicate="contains")]
    return float(inside.geometry.length.sum() * FEET_TO_KM)


def _counts_in(points: gpd.GeoDataFrame, polygon: shapely.Geometry) -> gpd.GeoDataFrame:
    tree = shapely.STRtree(points.geometry.to_numpy())
    return points.iloc[tree.query(polygon, predicate="contains")]


def district_counts(files: Files, district: str, cats: list[str]) -> list[dict]:
    """Points per category of ``cats`` that the district contains."""
    inside = _counts_in(files.category(cats), files.district(district, rg.POI_SRID))
    g = inside.groupby("category").size().sort_index()
    return [{"category": k, "poi_count": int(v)} for k, v in g.items()]


def top_districts(files: Files, cat: str, top: int, names: list[str]) -> list[dict]:
    """The ``top`` districts of ``names`` by points of ``cat`` they contain."""
    points = files.category([cat])
    counts = [(len(_counts_in(points, files.district(n, rg.POI_SRID))), n) for n in names]
    ranked = sorted((c for c in counts if c[0] > 0), key=lambda c: (-c[0], c[1]))[:top]
    return [{"id": n, "value": c} for c, n in ranked]


def computations() -> list[Callable[[Files], object]]:
    """One computation per case, in the case file's order (build_cases' parameter lists)."""
    return [
        *[lambda f, a=a, c=c, k=k: near_count(f, a, c, k) for a, c, k in bc.NEAR],
        *[lambda f, a=a, c=c, k=k: nearest(f, a, c, k) for a, c, k, _ in bc.RANKED],
        *[lambda f, d=d: parcel_area(f, d) for d in bc.PARCEL_DISTRICTS],
        *[lambda f, d=d, c=c: road_length(f, d, c) for d, c in bc.ROADS],
        *[lambda f, d=d, c=c: district_counts(f, d, c) for d, c in bc.COUNTS],
        *[lambda f, c=c, k=k, n=n: top_districts(f, c, k, n) for c, k, n in bc.TOPS],
    ]


def close(got: object, expected: object, tolerance: dict) -> bool:
    """Whether ``got`` equals ``expected``: numbers within the tolerance, ids exact, same order."""
    if isinstance(expected, int | float) and not isinstance(expected, bool):
        if not isinstance(got, int | float):
            return False
        allowed = tolerance.get("abs", 0.0) + tolerance.get("rel", 0.0) * abs(expected)
        return abs(got - expected) <= allowed
    if isinstance(expected, list):
        return (
            isinstance(got, list)
            and len(got) == len(expected)
            and all(close(g, e, tolerance) for g, e in zip(got, expected, strict=True))
        )
    if isinstance(expected, dict):
        return (
            isinstance(got, dict)
            and set(got) == set(expected)
            and all(
                got[k] == v if k == "id" else close(got[k], v, tolerance)
                for k, v in expected.items()
            )
        )
    return got == expected


def main(argv: list[str] | None = None) -> int:
    """Compare every case's file-computed value with its filled expected value."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=2_000_000)
    parser.add_argument("--build", type=Path, default=None)
    parser.add_argument("--cases", type=Path, default=Path(__file__).parent / "cases/scale.yaml")
    args = parser.parse_args(argv)
    home = Path(os.environ.get("GEOASK_HOME", Path.home() / ".geoask"))
    build = args.build or home / "scale-build" / str(args.size)
    cases = yaml.safe_load(args.cases.read_text(encoding="utf-8"))["cases"]
    steps = computations()
    if len(steps) != len(cases):
        raise SystemExit(f"{len(cases)} cases but {len(steps)} computations; rebuild the cases")
    started = time.perf_counter()
    files = Files(build)
    agree = 0
    for case, compute in zip(cases, steps, strict=True):
        expected = case["expected"]
        if expected["value"] is None:
            print(f"UNFILLED {case['id']}")
            continue
        got = compute(files)
        ok = close(got, expected["value"], expected["tolerance"])
        agree += ok
        print(f"{'ok  ' if ok else 'DIFF'} {case['id']}" + ("" if ok else f": files give {got}"))
    seconds = time.perf_counter() - started
    print(f"\n{agree}/{len(cases)} cases agree with the files ({build}, {seconds:.1f} s)")
    return 0 if agree == len(cases) else 1


if __name__ == "__main__":
    sys.exit(main())
