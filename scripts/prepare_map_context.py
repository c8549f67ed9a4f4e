"""Build the answer maps' offline context layer: Natural Earth 1:110m countries and coastlines.

Reads Natural Earth's ``naturalearth_lowres`` (1:110m admin-0 countries, public domain) from
the pinned geopandas 0.14.4 wheel (the same archive and SHA-256 as ``prepare_demo_data.py``)
and writes ``geoask/maps/context/natural_earth_110m.parquet``: one GeoParquet (EPSG:4326) with
a row per country (``kind = "admin0"``, its outline) and one coastline row (``kind =
"coastline"``: the boundary of the union of the countries, i.e. the 1:110m land outline).
Vertices are kept as published (x clamped to +/-180, as in ``world_countries``).

    python scripts/prepare_map_context.py --cache /tmp/wheels   # needs PyPI (pip download) once
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import geopandas as gpd
import numpy as np
import shapely

sys.path.insert(0, str(Path(__file__).resolve().parent))
from prepare_demo_data import DEFAULT_CACHE, PYPI_SOURCES, REPO_ROOT, check

OUT = REPO_ROOT / "geoask" / "maps" / "context" / "natural_earth_110m.parquet"


def natural_earth(cache: Path, workdir: Path) -> gpd.GeoDataFrame:
    """The 1:110m countries of the pinned geopandas wheel (downloaded into ``cache`` once)."""
    source = PYPI_SOURCES["geopandas"]
    archive = cache / source.archive_name
    if not archive.exists():
        cache.mkdir(parents=True, exist_ok=True)
        subprocess.run(source.pip_command(cache), check=True)
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    check(digest == source.sha256, f"{archive} has SHA-256 {digest}, expected {source.sha256}")
    with zipfile.ZipFile(archive) as zipped:
        for key, member in source.members.items():
            (workdir / f"naturalearth_lowres{key[2:]}").write_bytes(zipped.read(member))
    return gpd.read_file(workdir / "naturalearth_lowres.shp")


def context_layer(countries: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
    """Country outlines and the coastline (boundary of their union) in one frame."""
    clamped = shapely.transform(
        countries.geometry.to_numpy(),
        lambda xy: np.column_stack((np.clip(xy[:, 0], -180.0, 180.0), xy[:, 1])))
    outlines = shapely.make_valid(clamped)
    coastline = shapely.union_all(outlines).boundary
    return gpd.GeoDataFrame(
        {"kind": ["admin0"] * len(outlines) + ["coastline"],
         "name": [*countries["name"].astype(str), ""]},
        geometry=[*outlines, coastline], crs=4326)


def main(argv: list[str] | None = None) -> int:
    """Write the context layer; print its size."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as workdir:
        frame = context_layer(natural_earth(args.cache, Path(workdir)))
    frame.to_parquet(args.out, compression="zstd", index=False)
    print(f"{args.out}: {len(frame)} rows, {args.out.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
