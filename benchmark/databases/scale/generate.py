"""Generate the scale benchmark database: seeded GeoParquet files and their dataset.yaml.

Run::

    GEOASK_HOME=... python benchmark/databases/scale/generate.py [--size 2000000] [--seed 29]
        [--tables 260] [--out <GEOASK_HOME>/scale-build/<size>] [--database geoask_scale]
    geoask db load-dataset <out>

``--size`` is the number of points of interest; parcels are size/10, road segments size/20
(at least 100 and 50), so 2,000,000 gives 2M points, 200k parcels and 100k road segments.
Schema ``scale`` holds the big tables (``poi`` EPSG:4326, ``parcels`` EPSG:32617, ``roads``
EPSG:2264 in US feet, ``districts`` and ``airports`` EPSG:4326); the municipal schemas
(utilities, transport, parks, facilities, permits, public_safety, finance, reference) hold
``--tables`` minus 5 small tables. The same seed gives the same files at every run.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
import yaml
from pyproj import Transformer

sys.path.insert(0, str(Path(__file__).resolve().parent))
import regions as rg
from municipal import TableSpec, municipal_tables, reference_tables

SCHEMA = "scale"
CORE_TABLES = 5
"""poi, parcels, roads, districts, airports."""
ALL_TABLES = CORE_TABLES + len(municipal_tables()) + len(reference_tables())


def sizes(points: int) -> dict[str, int]:
    """Rows of the big tables for ``points`` points of interest."""
    if points < 100:
        raise SystemExit(f"--size must be at least 100 points, got {points}")
    return {"poi": points, "parcels": max(points // 10, 100), "roads": max(points // 20, 50)}


def _rng(seed: int, table: str) -> np.random.Generator:
    """One generator per table, so a table's rows do not depend on the others'."""
    return np.random.default_rng([seed, *table.encode()])


def _cluster_xy(
    rng: np.random.Generator, n: int, sigma_deg: float, background: float
) -> tuple[np.ndarray, np.ndarray]:
    """Lon/lat of ``n`` points: a share around the weighted cities, the rest uniform."""
    xmin, ymin, xmax, ymax = rg.EXTENT
    weights = np.array([c[3] for c in rg.CITIES])
    city = rng.choice(len(rg.CITIES), size=n, p=weights / weights.sum())
    lon = np.array([c[1] for c in rg.CITIES])[city] + rng.normal(0, sigma_deg, n)
    lat = np.array([c[2] for c in rg.CITIES])[city] + rng.normal(0, sigma_deg * 0.8, n)
    uniform = rng.random(n) < background
    lon[uniform] = rng.uniform(xmin, xmax, uniform.sum())
    lat[uniform] = rng.uniform(ymin, ymax, uniform.sum())
    return np.clip(lon, xmin, xmax), np.clip(lat, ymin, ymax)


def _choice(rng: np.random.Generator, shares: dict[str, float], n: int) -> np.ndarray:
    names = list(shares)
    p = np.array([shares[k] for k in names])
    return np.array(names, dtype=object)[rng.choice(len(names), size=n, p=p / p.sum())]


def poi(seed: int, n: int) -> gpd.GeoDataFrame:
    """Points of interest with an OSM-like category skew, EPSG:4326."""
    rng = _rng(seed, "poi")
    lon, lat = _cluster_xy(rng, n, 0.18, 0.30)
    return gpd.GeoDataFrame(
        {
            "poi_id": np.arange(1, n + 1, dtype=np.int64),
            "category": _choice(rng, rg.POI_CATEGORIES, n),
        },
        geometry=gpd.points_from_xy(lon, lat),
        crs=rg.POI_SRID,
    )


def parcels(seed: int, n: int) -> gpd.GeoDataFrame:
    """Rectangular parcels with a land-use class and stated area, EPSG:32617 (metres)."""
    rng = _rng(seed, "parcels")
    lon, lat = _cluster_xy(rng, n, 0.10, 0.15)
    x, y = Transformer.from_crs(4326, rg.PARCEL_SRID, always_xy=True).transform(lon, lat)
    use = _choice(rng, {k: v[0] for k, v in rg.LAND_USES.items()}, n)
    side = np.array([rg.LAND_USES[u][1] for u in use]) * rng.lognormal(0, 0.35, n)
    aspect = rng.uniform(0.6, 1.6, n)
    w, h = side * np.sqrt(aspect), side / np.sqrt(aspect)
    geom = shapely.box(x - w / 2, y - h / 2, x + w / 2, y + h / 2)
    value = np.round(w * h * rng.lognormal(5.0, 0.6, n), -2)
    return gpd.GeoDataFrame(
        {
            "parcel_id": np.arange(1, n + 1, dtype=np.int64),
            "land_use": use,
            "area_m2": np.round(w * h, 1),
            "assessed_value_usd": value,
        },
        geometry=geom,
        crs=rg.PARCEL_SRID,
    )


def roads(seed: int, n: int) -> gpd.GeoDataFrame:
    """Three-vertex road segments with a class and speed limit, EPSG:2264 (US feet)."""
    rng = _rng(seed, "roads")
    lon, lat = _cluster_xy(rng, n, 0.20, 0.25)
    x, y = Transformer.from_crs(4326, rg.ROAD_SRID, always_xy=True).transform(lon, lat)
    cls = _choice(rng, {k: v[0] for k, v in rg.ROAD_CLASSES.items()}, n)
    length_ft = np.array([rg.ROAD_CLASSES[c][1] for c in cls]) * rng.uniform(0.5, 1.5, n) / 0.3048
    angle = rng.uniform(0, np.pi, n)
    dx, dy = np.cos(angle) * length_ft / 2, np.sin(angle) * length_ft / 2
    bend = rng.normal(0, 0.1, n) * length_ft
    coords = np.stack(
        [
            np.stack([x - dx, y - dy], 1),
            np.stack([x - dy / length_ft * bend, y + dx / length_ft * bend], 1),
            np.stack([x + dx, y + dy], 1),
        ],
        1,
    )
    geom = shapely.linestrings(coords)
    speed = np.array([rg.ROAD_CLASSES[c][2] for c in cls], dtype=np.int32)
    return gpd.GeoDataFrame(
        {
            "segment_id": np.arange(1, n + 1, dtype=np.int64),
            "road_class": cls,
            "speed_limit_mph": speed,
        },
        geometry=geom,
        crs=rg.ROAD_SRID,
    )


def districts() -> gpd.GeoDataFrame:
    """The twelve districts: a 4 x 3 grid of rectangles over the region, EPSG:4326."""
    xmin, ymin, xmax, ymax = rg.EXTENT
    cols, rows = rg.DISTRICT_GRID
    dx, dy = (xmax - xmin) / cols, (ymax - ymin) / rows
    boxes = [
        shapely.box(xmin + c * dx, ymax - (r + 1) * dy, xmin + (c + 1) * dx, ymax - r * dy)
        for r in range(rows)
        for c in range(cols)
    ]
    return gpd.GeoDataFrame(
        {"district_id": np.arange(1, len(boxes) + 1, dtype=np.int64), "name": rg.DISTRICT_NAMES},
        geometry=boxes,
        crs=4326,
    )


def airports() -> gpd.GeoDataFrame:
    """Six airports with their IATA code, EPSG:4326."""
    return gpd.GeoDataFrame(
        {"code": [a[0] for a in rg.AIRPORTS], "name": [a[1] for a in rg.AIRPORTS]},
        geometry=gpd.points_from_xy([a[2] for a in rg.AIRPORTS], [a[3] for a in rg.AIRPORTS]),
        crs=4326,
    )


_TEXT_VALUES = {
    "condition": ["good", "fair", "poor", "critical"],
    "result": ["pass", "fail", "needs_repair"],
    "priority": ["low", "normal", "high", "emergency"],
    "media": ["image/jpeg", "application/pdf"],
    "owner": [
        "Public Utilities",
        "Transportation",
        "Parks and Recreation",
        "General Services",
        "Planning",
        "Fire",
        "Finance",
    ],
}


def _column(rng: np.random.Generator, kind: str, name: str, n: int) -> object:
    if kind == "int":
        return rng.integers(1, 41, n, dtype=np.int64)
    if kind == "date":
        days = rng.integers(0, 3650, n)
        return (pd.Timestamp("2015-01-01") + pd.to_timedelta(days, unit="D")).date
    if kind == "money":
        return np.round(rng.lognormal(6, 1, n), 2)
    values = _TEXT_VALUES.get(kind)
    if values is not None:
        return np.array(values, dtype=object)[rng.integers(0, len(values), n)]
    return np.array([f"{name}-{i}" for i in range(1, n + 1)], dtype=object)


def municipal_frame(seed: int, spec: TableSpec) -> pd.DataFrame:
    """A few rows of one municipal table (points EPSG:4326, lines EPSG:2264)."""
    rng = _rng(seed, f"{spec.schema}.{spec.name}")
    n = int(rng.integers(3, 41))
    data = {c.name: _column(rng, c.kind, c.name, n) for c in spec.columns}
    data[spec.columns[0].name] = np.arange(1, n + 1, dtype=np.int64)  # the primary key
    if spec.geometry == "none":
        return pd.DataFrame(data)
    lon, lat = _cluster_xy(rng, n, 0.05, 0.1)
    if spec.geometry == "point":
        return gpd.GeoDataFrame(data, geometry=gpd.points_from_xy(lon, lat), crs=4326)
    x, y = Transformer.from_crs(4326, rg.ROAD_SRID, always_xy=True).transform(lon, lat)
    lines = shapely.linestrings(np.stack([np.stack([x, y], 1), np.stack([x + 300, y + 200], 1)], 1))
    return gpd.GeoDataFrame(data, geometry=lines, crs=rg.ROAD_SRID)


GEOMETRY_TYPES = {"point": "Point", "line": "LineString"}


def municipal_specs(tables: int) -> list[TableSpec]:
    """The first ``tables - CORE_TABLES`` municipal and reference tables."""
    specs = [*municipal_tables(), *reference_tables()]
    wanted = tables - CORE_TABLES
    if not 0 < wanted <= len(specs):
        raise SystemExit(
            f"--tables must be between {CORE_TABLES + 1} and "
            f"{CORE_TABLES + len(specs)}, got {tables}"
        )
    return specs[:wanted]


def _entry(
    schema: str,
    name: str,
    key: str,
    comment: str,
    geometry: tuple[str, int] | None,
    column_comments: dict[str, str],
) -> dict[str, object]:
    entry: dict[str, object] = {
        "name": name,
        "schema": schema,
        "file": f"data/{schema}.{name}.parquet",
        "primary_key": [key],
        "comment": comment,
        "column_comments": column_comments,
    }
    if geometry is not None:
        entry["geometry"] = {"column": "geom", "type": geometry[0], "srid": geometry[1]}
    return entry


CORE_ENTRIES = [
    (
        "poi",
        "poi_id",
        "Points of interest (shops, schools, pharmacies, ...) with their category.",
        ("Point", rg.POI_SRID),
        {"category": "Kind of place: restaurant, pharmacy, school, ..."},
    ),
    (
        "parcels",
        "parcel_id",
        "Land parcels (cadastre) with land-use class, area and assessed value.",
        ("Polygon", rg.PARCEL_SRID),
        {
            "land_use": "Land-use class: residential, commercial, ...",
            "area_m2": "Parcel area in square metres (UTM 17N).",
            "assessed_value_usd": "Assessed value in US dollars.",
        },
    ),
    (
        "roads",
        "segment_id",
        "Road network segments with road class and speed limit.",
        ("LineString", rg.ROAD_SRID),
        {
            "road_class": "interstate, primary, secondary or residential",
            "speed_limit_mph": "Posted speed limit in miles per hour.",
        },
    ),
    (
        "districts",
        "district_id",
        "The twelve planning districts of the region, with names.",
        ("Polygon", 4326),
        {"name": "District name, e.g. Triangle or Cape Fear."},
    ),
    (
        "airports",
        "code",
        "Commercial airports with IATA code and name.",
        ("Point", 4326),
        {"code": "IATA airport code, e.g. RDU.", "name": "Airport name."},
    ),
]


def write(out: Path, size: int, seed: int, tables: int, database: str) -> dict[str, float]:
    """Write every table and ``dataset.yaml`` into ``out``; returns seconds per stage."""
    (out / "data").mkdir(parents=True, exist_ok=True)
    rows = sizes(size)
    frames = {
        "poi": lambda: poi(seed, rows["poi"]),
        "parcels": lambda: parcels(seed, rows["parcels"]),
        "roads": lambda: roads(seed, rows["roads"]),
        "districts": districts,
        "airports": airports,
    }
    timings: dict[str, float] = {}
    entries = []
    for name, key, comment, geometry, cols in CORE_ENTRIES:
        start = time.perf_counter()
        frame = frames[name]().rename_geometry("geom")
        frame.to_parquet(out / f"data/{SCHEMA}.{name}.parquet", index=False)
        timings[name] = time.perf_counter() - start
        entries.append(_entry(SCHEMA, name, key, comment, geometry, cols))
    start = time.perf_counter()
    for spec in municipal_specs(tables):
        frame = municipal_frame(seed, spec)
        if isinstance(frame, gpd.GeoDataFrame):
            frame = frame.rename_geometry("geom")
        frame.to_parquet(out / f"data/{spec.schema}.{spec.name}.parquet", index=False)
        geometry = (
            None
            if spec.geometry == "none"
            else (GEOMETRY_TYPES[spec.geometry], 4326 if spec.geometry == "point" else rg.ROAD_SRID)
        )
        entries.append(
            _entry(
                spec.schema,
                spec.name,
                spec.columns[0].name,
                spec.comment,
                geometry,
                {c.name: c.comment for c in spec.columns},
            )
        )
    timings["municipal"] = time.perf_counter() - start
    manifest = {
        "version": 1,
        "database": database,
        "description": f"Synthetic scale benchmark (seed {seed}, {size} points).",
        "tables": entries,
    }
    (out / "dataset.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False), encoding="utf-8")
    return timings


def default_out(size: int) -> Path:
    """``<GEOASK_HOME>/scale-build/<size>``."""
    from geoask.settings import get_settings

    return Path(get_settings().home) / "scale-build" / str(size)


def main(argv: list[str] | None = None) -> int:
    """Parse the options, generate, print rows and timings."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=2_000_000, help="points of interest")
    parser.add_argument("--seed", type=int, default=29)
    parser.add_argument("--tables", type=int, default=ALL_TABLES)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--database", default="geoask_scale")
    args = parser.parse_args(argv)
    out = args.out or default_out(args.size)
    start = time.perf_counter()
    timings = write(out, args.size, args.seed, args.tables, args.database)
    print(
        f"wrote {out} ({args.tables} tables, sizes {sizes(args.size)}) in "
        f"{time.perf_counter() - start:.1f} s: "
        + ", ".join(f"{k} {v:.1f} s" for k, v in timings.items())
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
