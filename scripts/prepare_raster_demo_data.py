"""Rebuild the raster demo data (and the Luxembourg cantons) from Debian's r-cran-terra/-stars.

Run: ``.venv/bin/python scripts/prepare_raster_demo_data.py [--root DIR]``

``--root`` is a folder the two packages were extracted into without installing R::

    apt-get download r-cran-terra r-cran-stars
    for f in r-cran-*.deb; do dpkg -x "$f" /tmp/rdeb; done
    .venv/bin/python scripts/prepare_raster_demo_data.py --root /tmp/rdeb

Writes into ``geoask/demo_data/``: ``lux_elevation.tif`` and ``landsat_etm.tif`` (the source
GeoTIFFs byte for byte; the demo loader tiles them into PostGIS) and ``lux_cantons.parquet``
(GeoParquet, EPSG:4326). Each source file's SHA-256 is checked. See PROVENANCE.md.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import sys
from pathlib import Path

import geopandas as gpd
import shapely

R_LIBRARY = Path("usr/lib/R/site-library")
SOURCES = {
    "elev.tif": ("terra/ex/elev.tif",
                 "c6a4967fe5b720499e75a3453e9814f00a416167b8e0926a4c55f5100ae4ddb2"),
    "lux.shp": ("terra/ex/lux.shp",
                "a0f1fe6b93ef28cf817484a1ead6dfe606431a8da45ffec05aa9f4d62a7c716f"),
    "lux.dbf": ("terra/ex/lux.dbf",
                "34456896de4ff2f0d0f27d5150503e28eeb9e0860e047c7dc9364994b5162e0b"),
    "L7_ETMs.tif": ("stars/tif/L7_ETMs.tif",
                    "3b722bf4470144b6691bf720bac08f47c99464acff4dd258252891c06312678e"),
}
DEFAULT_OUT = Path(__file__).resolve().parents[1] / "geoask" / "demo_data"


def source(root: Path, key: str) -> Path:
    """Path of a checked source file under ``root``; exits with a message when wrong."""
    relative, digest = SOURCES[key]
    path = root / R_LIBRARY / relative
    if not path.is_file():
        sys.exit(f"error: {path} not found; extract r-cran-terra and r-cran-stars (see --help)")
    found = hashlib.sha256(path.read_bytes()).hexdigest()
    if found != digest:
        sys.exit(f"error: {path} has SHA-256 {found}, expected {digest}")
    return path


def build_lux_cantons(shp: Path) -> gpd.GeoDataFrame:
    """The 12 cantons: id, name, district, area and population as in lux.dbf, MultiPolygons."""
    frame = gpd.read_file(shp)
    assert frame.crs is not None and frame.crs.to_epsg() == 4326, frame.crs
    out = gpd.GeoDataFrame({
        "canton_id": frame["ID_2"].astype("int32"),
        "canton_name": frame["NAME_2"].astype(str),
        "district_name": frame["NAME_1"].astype(str),
        "area_km2": frame["AREA"].astype("float64"),
        "population": frame["POP"].astype("int32"),
        "geom": gpd.GeoSeries(shapely.multipolygons(
            [shapely.get_parts(g) for g in frame.geometry.to_numpy()]), crs="EPSG:4326"),
    }, geometry="geom", crs="EPSG:4326")
    assert out.is_valid.all() and out["canton_id"].is_unique
    return out.sort_values("canton_id").reset_index(drop=True)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path("/"),
                        help="folder holding usr/lib/R/site-library (default /)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    for key in ("lux.dbf",):
        source(args.root, key)
    shutil.copyfile(source(args.root, "elev.tif"), args.out / "lux_elevation.tif")
    shutil.copyfile(source(args.root, "L7_ETMs.tif"), args.out / "landsat_etm.tif")
    cantons = build_lux_cantons(source(args.root, "lux.shp"))
    cantons.to_parquet(args.out / "lux_cantons.parquet", index=False, compression="zstd")
    for name in ("lux_elevation.tif", "landsat_etm.tif", "lux_cantons.parquet"):
        print(f"wrote {name}: {(args.out / name).stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
