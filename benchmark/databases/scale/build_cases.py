"""Write the scale benchmark's case file from question templates (``cases/scale.yaml``).

Run: ``python benchmark/databases/scale/build_cases.py [--out cases/scale.yaml]`` then
``geoask bench fill --tasks-file <out>``. Every reference program
screens candidates in SQL with index-backed bounding-box tests only (``geom && ST_Expand(...)``
or ``geom && ST_MakeEnvelope(<constants>)``) and does the exact predicate, distance or area in
Python; every cross-check computes the same answer with exact PostGIS predicates (policy
postgis). The templates are in ``case_points.py`` and here (parcels and roads).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Final

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import case_parts as cp
import regions as rg
from case_points import district_counts, near_count, nearest, top_districts


def _district_sql(district: str) -> dict:
    return cp.sql_step(
        "district",
        "Fetch the district.",
        f"SELECT name, geom FROM scale.districts WHERE name = '{district}'",
    )


def parcel_area(cid: str, district: str) -> dict:
    """Parcel area (km2, UTM 17N) by land use for parcels whose centroid is in ``district``."""
    script = (
        "d = read('district').to_crs(32617).geometry.iloc[0]\n"
        "p = read('cand').to_crs(32617)\n"
        "p = p[p.geometry.centroid.within(d)]\n"
        "p['area_km2'] = p.geometry.area / 1e6\n"
        "g = p.groupby('land_use')['area_km2'].sum().sort_index()\n"
        "rows = [{'land_use': k, 'area_km2': float(v)} for k, v in g.items()]\n"
        + cp.result_line("'areas'", "rows")
    )
    box = cp.district_box([district], rg.PARCEL_SRID, 500)
    steps = [
        _district_sql(district),
        cp.sql_step(
            "cand",
            "Screen parcels by the district's bounding box in UTM 17N.",
            f"SELECT parcel_id, land_use, geom FROM scale.parcels WHERE geom && {box}",
        ),
        cp.python_step(
            "areas",
            "Keep parcels whose centroid is in the district; sum UTM areas by class.",
            ["district", "cand"],
            script,
        ),
    ]
    check = (
        "SELECT p.land_use, sum(ST_Area(p.geom)) / 1e6 AS area_km2 "
        "FROM scale.parcels p, scale.districts d "
        f"WHERE d.name = '{district}' "
        "AND ST_Within(ST_Centroid(p.geom), ST_Transform(d.geom, 32617)) "
        "GROUP BY p.land_use ORDER BY p.land_use"
    )
    return cp.case(
        cid,
        f"What is the total parcel area in square kilometres per land-use class for the parcels "
        f"whose centroid lies in the {district} district (planar area in UTM zone 17N)?",
        "Planar area in WGS 84 / UTM zone 17N (EPSG:32617, metres).",
        steps,
        {
            "answer_type": "records",
            "projection": {"key_fields": ["land_use"], "value_fields": ["area_km2"]},
        },
        {"rel": 1e-6},
        ("PostGIS ST_Area and ST_Within on the stored UTM geometries.", "areas_postgis", check),
    )


def road_length(cid: str, district: str, cls: str) -> dict:
    """Length (km, EPSG:2264) of ``cls`` road segments lying wholly in ``district``."""
    script = (
        "d = read('district').to_crs(2264).geometry.iloc[0]\n"
        "r = read('cand').to_crs(2264)\n"
        "r = r[r.geometry.within(d)]\n"
        "km = float(r.geometry.length.sum() * 1200 / 3937 / 1000)\n"
        + cp.result_line("f'{km:.1f} km'", "{'length_km': km}")
    )
    box = cp.district_box([district], rg.ROAD_SRID, 2000)
    steps = [
        _district_sql(district),
        cp.sql_step(
            "cand",
            "Screen road segments by the district's bounding box in EPSG:2264.",
            f"SELECT segment_id, geom FROM scale.roads WHERE road_class = '{cls}' "
            f"AND geom && {box}",
        ),
        cp.python_step(
            "length",
            "Keep segments within the district; sum their planar length in km.",
            ["district", "cand"],
            script,
        ),
    ]
    check = (
        "SELECT sum(ST_Length(r.geom)) * 1200 / 3937 / 1000 AS length_km "
        "FROM scale.roads r, scale.districts d "
        f"WHERE d.name = '{district}' AND r.road_class = '{cls}' "
        "AND ST_Within(r.geom, ST_Transform(d.geom, 2264))"
    )
    return cp.case(
        cid,
        f"What is the total length in kilometres of {cls} road segments lying wholly inside the "
        f"{district} district (planar length in NAD83 / North Carolina, EPSG:2264)?",
        "Planar length in NAD83 / North Carolina (EPSG:2264, US survey feet to km).",
        steps,
        {"answer_type": "scalar", "projection": {"value_field": "length_km", "unit": "km"}},
        {"rel": 1e-5},
        (
            "PostGIS ST_Length and ST_Within on the stored EPSG:2264 geometries.",
            "length_postgis",
            check,
        ),
    )


Maker = Callable[[str], dict]

NORTH_ROW = rg.DISTRICT_NAMES[0:4]
MIDDLE_ROW = rg.DISTRICT_NAMES[4:8]
SOUTH_ROW = rg.DISTRICT_NAMES[8:12]


NEAR: Final = [
    ("RDU", "pharmacy", 10),
    ("CLT", "school", 5),
    ("GSO", "bank", 8),
    ("ILM", "restaurant", 3),
    ("AVL", "gas_station", 15),
    ("OAJ", "place_of_worship", 12),
    ("RDU", "hospital", 25),
    ("CLT", "library", 20),
]
"""near_count cases: airport, category, km."""
RANKED: Final = [
    ("RDU", "pharmacy", 5, 0.25),
    ("CLT", "hospital", 3, 0.6),
    ("AVL", "school", 5, 0.6),
    ("ILM", "fire_station", 3, 0.6),
    ("GSO", "museum", 1, 0.6),
    ("OAJ", "post_office", 3, 0.6),
]
"""nearest cases: airport, category, k, screen half-width in degrees."""
PARCEL_DISTRICTS: Final = ["Triangle", "Albemarle", "Cape Fear", "Triad"]
"""parcel_area cases: district."""
ROADS: Final = [
    ("Triangle", "residential"),
    ("Metrolina", "primary"),
    ("Coastal Plain", "interstate"),
    ("Blue Ridge", "secondary"),
    ("Triad", "residential"),
]
"""road_length cases: district, road class."""
COUNTS: Final = [
    ("Triangle", ["hospital", "museum", "police_station"]),
    ("Cape Fear", ["fire_station", "library", "post_office"]),
    ("High Country", ["bank", "pharmacy", "school"]),
]
"""district_counts cases: district, categories."""
TOPS: Final = [
    ("hospital", 3, NORTH_ROW),
    ("museum", 3, MIDDLE_ROW),
    ("fire_station", 2, SOUTH_ROW),
    ("library", 2, NORTH_ROW),
]
"""top_districts cases: category, how many, the districts ranked."""


def _makers() -> list[Maker]:
    """One maker per case, in case-number order (the parameter lists above, in order)."""
    return [
        *[lambda i, a=a, c=c, k=k: near_count(i, a, c, k) for a, c, k in NEAR],
        *[lambda i, a=a, c=c, k=k, g=g: nearest(i, a, c, k, g) for a, c, k, g in RANKED],
        *[lambda i, d=d: parcel_area(i, d) for d in PARCEL_DISTRICTS],
        *[lambda i, d=d, c=c: road_length(i, d, c) for d, c in ROADS],
        *[lambda i, d=d, c=c: district_counts(i, d, c) for d, c in COUNTS],
        *[lambda i, c=c, k=k, n=n: top_districts(i, c, k, n) for c, k, n in TOPS],
    ]


def all_cases() -> list[dict]:
    """The 30 cases, numbered scale-001 ..."""
    return [make(f"scale-{n:03d}") for n, make in enumerate(_makers(), 1)]


def main(argv: list[str] | None = None) -> int:
    """Write the case file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "cases" / "scale.yaml")
    parser.add_argument("--catalog", default="../catalog.yaml")
    parser.add_argument("--database", default="geoask_scale")
    args = parser.parse_args(argv)
    doc = {"catalog": args.catalog, "database": args.database, "cases": all_cases()}
    args.out.write_text(yaml.safe_dump(doc, sort_keys=False, width=100), encoding="utf-8")
    print(f"wrote {len(doc['cases'])} cases to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
