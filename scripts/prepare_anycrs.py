"""Rebuild the anycrs example database files in ``benchmark/databases/anycrs/data/``.

Run (from the repository root, with the project virtualenv; ``rdata`` reads spatstat's R
lazy-load database and is needed here only, never by geoask)::

    .venv/bin/pip install rdata                                # preparation only
    .venv/bin/python scripts/prepare_anycrs.py                 # rebuild every file
    .venv/bin/python scripts/prepare_anycrs.py --print-ranges  # also print measured ranges

Two Debian 12 (bookworm) packages, ``r-cran-spdep`` and ``r-cran-spatstat.data``, are fetched
with ``apt-get download`` into a cache folder (default ``.geoask/anycrs_cache``), their
SHA-256 checked and unpacked with ``dpkg-deb -x``. Every table keeps the coordinates its source
has, in every kind of CRS a database holds: a CRS the database defines itself (Irish counties
in UTM zone 30 in *kilometres* on the Airy ellipsoid, SRID 990030 of the manifest's
``spatial_ref_sys``), planar data in unknown units (Columbus, SRID 0), planar data in feet
(Lansing Woods, SRID 0) and longitude/latitude degrees (Belo Horizonte, EPSG:4674). Nothing
is reprojected; rows are sorted by key.

Every transformation is described in ``benchmark/databases/anycrs/PROVENANCE.md``; keep both
in step. Loading is ``geoask db load-dataset benchmark/databases/anycrs``.
"""

from __future__ import annotations

import argparse
import gzip
import subprocess
import sys
import warnings
import zlib
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import pyproj
import shapely
from prepare_demo_data import PrepareError, check, measured_ranges
from prepare_spdata import fetch_debian_packages, polygons, with_geometry, write_table

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO_ROOT / "benchmark" / "databases" / "anycrs" / "data"
DEFAULT_CACHE = REPO_ROOT / ".geoask" / "anycrs_cache"

# package -> (archive name, SHA-256) of Debian 12 (bookworm)
DEBIAN_ARCHIVES = {
    "r-cran-spdep": ("r-cran-spdep_1.2-7+dfsg-1_amd64.deb",
                     "7dae4bbb049f2758331d4a84f5cdc9ee5efcf6a6bbd8045b7239bd00909bdcaa"),
    "r-cran-spatstat.data": ("r-cran-spatstat.data_3.0-0-1_all.deb",
                             "51fb43790f2c7aa0e40b6b17a0c7640b0001d16ce7f09e027b267b136910f84e"),
}
LIB = Path("usr/lib/R/site-library")
SOURCES = {
    "eire": LIB / "spdep/etc/shapes/eire.shp",
    "columbus": LIB / "spdep/etc/shapes/columbus.shp",
    "bhicv": LIB / "spdep/etc/shapes/bhicv.shp",
    "spatstat": LIB / "spatstat.data/data/Rdata.rdb",
}
EIRE_PROJ = "+proj=utm +zone=30 +ellps=airy +units=km +no_defs"
"""spdep's help page ``eire``: ``st_crs(eire) <- "+proj=utm +zone=30 +ellps=airy +units=km"``."""
BHICV_EPSG = 4674  # SIRGAS 2000 longitude/latitude; the .shp has no .prj (PROVENANCE.md)
LANSING_FEET = 924.0  # spatstat's lansing: unit square, unitname multiplier 924 feet
SORT_KEYS = {
    "eire_counties": ["name"], "eire_county_statistics": ["name"],
    "columbus_neighbourhoods": ["polyid"], "bh_municipalities": ["id"],
    "lansing_trees": ["tree_id"],
}


def read_shapes(path: Path) -> gpd.GeoDataFrame:
    """A shapefile without ``.prj``: read it, check it has no CRS (set below, documented)."""
    check(not path.with_suffix(".prj").exists(), f"{path.name}: a .prj appeared; revisit")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frame = gpd.read_file(path)
    check(frame.crs is None, f"{path.name}: unexpected CRS {frame.crs}")
    return frame


def as_integers(series: pd.Series) -> pd.Series:
    """A float column whose values are all whole numbers, as int64 (checked)."""
    check(not series.isna().any(), f"{series.name}: has missing values")
    check(bool((series % 1 == 0).all()), f"{series.name}: not whole numbers")
    return series.astype("int64")


EIRE_STATISTICS = {"A": "a", "towns": "towns", "size": "size", "ROADACC": "roadacc",
                   "OWNCONS": "owncons", "POPCHG": "popchg", "RETSALE": "retsale",
                   "INCOME": "income"}


def build_eire(path: Path) -> tuple[gpd.GeoDataFrame, pd.DataFrame, int]:
    """Irish counties (name, pale, outline) and their statistics split off (no key declared)."""
    src = read_shapes(path)
    check(len(src) == 26 and src["names"].is_unique, "eire: expected 26 unique county names")
    check(set(src["pale"]) <= {0, 1}, "eire: pale is not 0/1")
    geoms, repaired = polygons(src)
    counties = with_geometry(pd.DataFrame({"name": src["names"].astype(str),
                                           "pale": src["pale"].astype(bool)}),
                             geoms, pyproj.CRS.from_proj4(EIRE_PROJ), "geom")
    stats = pd.DataFrame({"name": src["names"].astype(str),
                          **{new: src[old].astype("float64")
                             for old, new in EIRE_STATISTICS.items()}})
    for column in ["size", "roadacc", "popchg", "retsale", "income"]:
        stats[column] = as_integers(stats[column])
    return counties, stats, repaired


COLUMBUS_KEPT = ["POLYID", "NEIG", "HOVAL", "INC", "CRIME", "OPEN", "PLUMB", "DISCBD", "X",
                 "Y", "NSA", "NSB", "EW", "CP"]


def build_columbus(path: Path) -> tuple[gpd.GeoDataFrame, int]:
    """Columbus (OH) neighbourhoods, planar coordinates in unknown units (SRID 0)."""
    src = read_shapes(path)
    check(len(src) == 49 and src["POLYID"].is_unique, "columbus: expected 49 POLYIDs")
    geoms, repaired = polygons(src)
    attrs = src[COLUMBUS_KEPT].copy()
    for column in ["POLYID", "NEIG", "NSA", "NSB", "EW", "CP"]:
        attrs[column] = as_integers(attrs[column].astype("float64"))
    attrs.columns = [c.lower() for c in attrs.columns]
    return with_geometry(attrs, geoms, None, "geom"), repaired


def build_bhicv(path: Path) -> tuple[gpd.GeoDataFrame, int]:
    """Municipalities of the Belo Horizonte region, longitude/latitude (EPSG:4674)."""
    src = read_shapes(path)
    check(len(src) == 98 and src["Id"].is_unique, "bhicv: expected 98 unique ids")
    bounds = src.total_bounds
    check(bounds[0] >= -180 and bounds[2] <= 180 and bounds[1] >= -90 and bounds[3] <= 90,
          "bhicv: coordinates are not longitude/latitude")
    geoms, repaired = polygons(src)
    attrs = pd.DataFrame({"id": src["Id"].astype("int64"), "name": src["Name"].astype(str),
                          "population": as_integers(src["Population"]),
                          **{c.lower(): src[c].astype("float64")
                             for c in ["HLCI", "ELCI", "CLCI"]},
                          "eclci": src["ELCI_1"].astype("float64")})
    return with_geometry(attrs, geoms, pyproj.CRS.from_epsg(BHICV_EPSG), "geom"), repaired


def read_spatstat(rdb: Path, name: str) -> Any:
    """One object of spatstat.data's R lazy-load database (``Rdata.rdb`` + ``Rdata.rdx``)."""
    try:
        import rdata
    except ImportError:
        raise PrepareError("the R reader is missing: pip install rdata (preparation only)") \
            from None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # spatstat's classes have no Python constructor
        index = rdata.conversion.convert(rdata.parser.parse_data(
            gzip.decompress(rdb.with_suffix(".rdx").read_bytes())))
        offset, length = (int(x) for x in index["variables"][name])
        blob = rdb.read_bytes()[offset + 4: offset + length]  # 4 bytes: uncompressed size
        return rdata.conversion.convert(rdata.parser.parse_data(zlib.decompress(blob)),
                                        default_encoding="utf8")


def build_lansing(rdb: Path) -> gpd.GeoDataFrame:
    """Lansing Woods trees: spatstat's unit square scaled to feet (SRID 0), species mark."""
    ppp = read_spatstat(rdb, "lansing")
    window, units = ppp["window"], ppp["window"]["units"]
    check(list(window["xrange"]) == [0, 1] and list(window["yrange"]) == [0, 1],
          "lansing: window is not the unit square")
    check(str(units["plural"][0]) == "feet" and float(units["multiplier"][0]) == LANSING_FEET,
          "lansing: unit is not 924 feet")
    check(int(ppp["n"][0]) == 2251, "lansing: expected 2251 trees")
    x = np.asarray(ppp["x"], dtype="float64") * LANSING_FEET
    y = np.asarray(ppp["y"], dtype="float64") * LANSING_FEET
    attrs = pd.DataFrame({"tree_id": np.arange(1, len(x) + 1, dtype="int64"),
                          "species": np.asarray(ppp["marks"]).astype(str)})
    return with_geometry(attrs, shapely.points(x, y), None, "geom")


def build_all(root: Path) -> tuple[dict[str, pd.DataFrame], dict[str, int]]:
    """Every table, and the number of geometries ``make_valid`` repaired per source."""
    counties, stats, eire_fixed = build_eire(root / SOURCES["eire"])
    columbus, columbus_fixed = build_columbus(root / SOURCES["columbus"])
    bhicv, bhicv_fixed = build_bhicv(root / SOURCES["bhicv"])
    tables = {"eire_counties": counties, "eire_county_statistics": stats,
              "columbus_neighbourhoods": columbus, "bh_municipalities": bhicv,
              "lansing_trees": build_lansing(root / SOURCES["spatstat"])}
    return tables, {"eire": eire_fixed, "columbus": columbus_fixed, "bhicv": bhicv_fixed}


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the process exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="apt download folder")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder")
    parser.add_argument("--print-ranges", action="store_true", help="print measured ranges")
    args = parser.parse_args(argv)
    try:
        root = fetch_debian_packages(args.cache, DEBIAN_ARCHIVES)
        tables, repaired = build_all(root)
    except (PrepareError, subprocess.CalledProcessError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    for name, frame in tables.items():
        path = write_table(name, frame, args.out)
        print(f"wrote {path.name}: {len(frame)} rows, {path.stat().st_size} bytes")
        if args.print_ranges:
            print(measured_ranges(name, frame))
    print(f"geometries repaired with make_valid: {repaired}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
