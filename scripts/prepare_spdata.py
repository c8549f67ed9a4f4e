"""Rebuild the spdata example database files in ``benchmark/databases/spdata/data/``.

Run (from the repository root, with the project virtualenv)::

    .venv/bin/python scripts/prepare_spdata.py                 # rebuild every file
    .venv/bin/python scripts/prepare_spdata.py --print-ranges  # also print measured ranges

The two Debian packages (``r-cran-spdata``, ``r-cran-terra``, bookworm) are fetched with
``apt-get download`` into a cache folder (default ``.geoask/spdata_cache``; works as any user,
R is not installed), their SHA-256 checked, and unpacked with ``dpkg-deb -x``. Every table keeps
its source's *native* CRS (UTM 18N, NAD27, WGS 84); nothing is reprojected. Rows are sorted by
key, so the output is deterministic for the same library versions.

Every transformation is described in ``benchmark/databases/spdata/PROVENANCE.md``; keep both in
step. Loading the files is the job of ``geoask db load-dataset benchmark/databases/spdata``.
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import warnings
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pyproj
import shapely
from prepare_demo_data import PrepareError, as_multipolygons, check, measured_ranges

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO_ROOT / "benchmark" / "databases" / "spdata" / "data"
DEFAULT_CACHE = REPO_ROOT / ".geoask" / "spdata_cache"

# package -> (archive name, SHA-256) of Debian 12 (bookworm)
DEBIAN_ARCHIVES = {
    "r-cran-spdata": ("r-cran-spdata_2.2.1-1_all.deb",
                      "cec45c198df2ad7dbbea61311067b09b1ffac79c062ffaa2f823b286811feaaf"),
    "r-cran-terra": ("r-cran-terra_1.7-3-1_amd64.deb",
                     "63dc65e665e51c0760e0b2996b429ebd2380e69a8b326bc65294f62237955f68"),
}
LIB = Path("usr/lib/R/site-library")
SOURCES = {
    "ny8": LIB / "spData/shapes/NY8_utm18.shp",
    "boston": LIB / "spData/shapes/boston_tracts.shp",
    "cycle_hire": LIB / "spData/shapes/cycle_hire.geojson",
    "lux": LIB / "terra/ex/lux.shp",
}
# source key -> the EPSG code its .prj (or RFC 7946 GeoJSON) denotes, checked below
NATIVE_EPSG = {"ny8": 32618, "boston": 4267, "cycle_hire": 4326, "lux": 4326}
# table -> sort key (the primary key where the table has one)
SORT_KEYS = {
    "ny8_tracts": ["areakey"], "ny8_leukemia": ["areakey"], "boston_tracts": ["poltract"],
    "lux_cantons": ["id_2"], "lux_districts": ["id_1"], "london_cycle_docks": ["id"],
}


def fetch_debian_packages(cache: Path, archives: dict[str, tuple[str, str]]) -> Path:
    """Download (if not cached), verify and unpack Debian packages; return the unpacked root.

    ``archives`` maps each package to its archive file name and SHA-256; an archive that
    differs (another version, another build) is refused.
    """
    cache.mkdir(parents=True, exist_ok=True)
    root = cache / "extracted"
    for package, (archive_name, sha256) in archives.items():
        archive = cache / archive_name
        if not archive.exists():
            subprocess.run(["apt-get", "download", package], cwd=cache, check=True)
        check(archive.exists(), f"apt-get download did not produce {archive} (another version?)")
        digest = hashlib.sha256(archive.read_bytes()).hexdigest()
        check(digest == sha256, f"{archive} has SHA-256 {digest}, expected {sha256}")
        subprocess.run(["dpkg-deb", "-x", str(archive), str(root)], check=True)
    return root


def fetch_debian_sources(cache: Path) -> dict[str, Path]:
    """Download (if not cached), verify and unpack the two packages; return source paths."""
    root = fetch_debian_packages(cache, DEBIAN_ARCHIVES)
    paths = {key: root / rel for key, rel in SOURCES.items()}
    for path in paths.values():
        check(path.exists(), f"{path} missing from the unpacked packages")
    return paths


def read_native(key: str, path: Path) -> gpd.GeoDataFrame:
    """Read ``path``, check its CRS is the expected EPSG code and label it with that code."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frame = gpd.read_file(path)
    epsg = frame.crs.to_epsg() if frame.crs is not None else None
    check(epsg == NATIVE_EPSG[key], f"{path.name}: CRS EPSG:{epsg}, expected {NATIVE_EPSG[key]}")
    return frame.set_crs(pyproj.CRS.from_epsg(NATIVE_EPSG[key]), allow_override=True)


def polygons(frame: gpd.GeoDataFrame) -> tuple[np.ndarray, int]:
    """The frame's geometries repaired (``make_valid``, structure method) and as MultiPolygons."""
    geoms = frame.geometry.to_numpy()
    invalid = ~shapely.is_valid(geoms)
    fixed = geoms.copy()
    if invalid.any():
        fixed[invalid] = shapely.make_valid(geoms[invalid], method="structure",
                                            keep_collapsed=False)
    return as_multipolygons(fixed), int(invalid.sum())


def with_geometry(frame: pd.DataFrame, geoms: np.ndarray, crs: object,
                  name: str) -> gpd.GeoDataFrame:
    """Attach ``geoms`` in ``crs`` as the last column ``name``."""
    return gpd.GeoDataFrame(frame.reset_index(drop=True), geometry=list(geoms),
                            crs=crs).rename_geometry(name)


def as_integers(series: pd.Series) -> pd.Series:
    """A float column whose values are all whole numbers, as int64 (checked)."""
    check(bool((series.dropna() % 1 == 0).all()), f"{series.name}: not whole numbers")
    check(not series.isna().any(), f"{series.name}: has missing values")
    return series.astype("int64")


def build_ny8(path: Path) -> tuple[gpd.GeoDataFrame, pd.DataFrame, int]:
    """NY8 tracts split into geometry (``ny8_tracts``) and attributes (``ny8_leukemia``)."""
    src = read_native("ny8", path)
    check(src["AREAKEY"].is_unique and len(src) == 281, "NY8: expected 281 unique AREAKEYs")
    geoms, repaired = polygons(src)
    tracts = with_geometry(pd.DataFrame({"areakey": src["AREAKEY"].astype(str),
                                         "areaname": src["AREANAME"].astype(str)}),
                           geoms, src.crs, "geom")
    leukemia = pd.DataFrame({
        "areakey": src["AREAKEY"].astype(str),
        "pop8": as_integers(src["POP8"]),
        **{c.lower(): src[c].astype("float64") for c in
           ["TRACTCAS", "PROPCAS", "PCTOWNHOME", "PCTAGE65P", "Z", "AVGIDIST", "PEXPOSURE",
            "Cases"]},
    })
    return tracts, leukemia, repaired


BOSTON_DROPPED = ["B", "BB"]  # see PROVENANCE.md


def build_boston(path: Path) -> tuple[gpd.GeoDataFrame, int]:
    """Boston tracts with lower-cased source column names, native NAD27 geometry."""
    src = read_native("boston", path)
    check(src["poltract"].is_unique and len(src) == 506, "boston: expected 506 unique tracts")
    geoms, repaired = polygons(src)
    attrs = src.drop(columns=["geometry", *BOSTON_DROPPED])
    for column in ["TOWNNO", "TRACT", "RAD", "TAX"]:
        attrs[column] = as_integers(attrs[column])
    attrs = attrs.astype({c: "int64" for c in attrs.columns if attrs[c].dtype == "int32"})
    attrs = attrs.astype({c: str for c in ["poltract", "TOWN", "CHAS", "censored"]})
    attrs.columns = [c.lower() for c in attrs.columns]
    return with_geometry(attrs, geoms, src.crs, "wkb_geometry"), repaired


def build_lux(path: Path) -> tuple[gpd.GeoDataFrame, pd.DataFrame, int]:
    """Luxembourg cantons (``lux_cantons``) and their districts split off (``lux_districts``)."""
    src = read_native("lux", path)
    geoms, repaired = polygons(src)
    cantons = with_geometry(pd.DataFrame({
        "id_2": as_integers(src["ID_2"]), "name_2": src["NAME_2"].astype(str),
        "id_1": as_integers(src["ID_1"]), "area": src["AREA"].astype("float64"),
        "pop": src["POP"].astype("int64"),
    }), geoms, src.crs, "geom")
    districts = (pd.DataFrame({"id_1": cantons["id_1"], "name_1": src["NAME_1"].astype(str)})
                 .drop_duplicates())
    check(districts["id_1"].is_unique, "lux: a district id with two names")
    return cantons, districts, repaired


def build_cycle_docks(path: Path) -> gpd.GeoDataFrame:
    """London cycle-hire docking stations, points in WGS 84."""
    src = read_native("cycle_hire", path)
    check(set(src.geom_type) == {"Point"} and src["id"].is_unique, "cycle_hire: unexpected")
    attrs = pd.DataFrame({"id": src["id"].astype("int64"), "name": src["name"].astype(str),
                          "area": src["area"].astype(str),
                          "nbikes": src["nbikes"].astype("int64"),
                          "nempty": src["nempty"].astype("int64")})
    return with_geometry(attrs, src.geometry.to_numpy(), src.crs, "geom")


def build_all(paths: dict[str, Path]) -> tuple[dict[str, pd.DataFrame], dict[str, int]]:
    """Every table, and the number of geometries ``make_valid`` repaired per source."""
    tracts, leukemia, ny8_fixed = build_ny8(paths["ny8"])
    boston, boston_fixed = build_boston(paths["boston"])
    cantons, districts, lux_fixed = build_lux(paths["lux"])
    tables = {"ny8_tracts": tracts, "ny8_leukemia": leukemia, "boston_tracts": boston,
              "lux_cantons": cantons, "lux_districts": districts,
              "london_cycle_docks": build_cycle_docks(paths["cycle_hire"])}
    return tables, {"ny8": ny8_fixed, "boston": boston_fixed, "lux": lux_fixed}


def write_table(name: str, frame: pd.DataFrame, out: Path) -> Path:
    """Sort ``frame`` by its key and write ``<out>/<name>.parquet`` (zstd)."""
    frame = frame.sort_values(SORT_KEYS[name], kind="stable").reset_index(drop=True)
    path = out / f"{name}.parquet"
    frame.to_parquet(path, index=False, compression="zstd")
    return path


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the process exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="apt download folder")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder")
    parser.add_argument("--print-ranges", action="store_true", help="print measured ranges")
    args = parser.parse_args(argv)
    try:
        tables, repaired = build_all(fetch_debian_sources(args.cache))
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
