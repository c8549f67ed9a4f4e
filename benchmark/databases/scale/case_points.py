"""Scale case templates on the points of interest: near an airport, nearest, per district."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import case_parts as cp
import regions as rg


def screened_candidates(code: str, cat: str, deg: float) -> dict:
    """The SQL step screening ``cat`` points by a box of ``deg`` degrees around airport ``code``."""
    return cp.sql_step(
        "cand",
        f"Screen {cat} candidates by bounding box around {code}.",
        f"SELECT poi_id, geom FROM scale.poi WHERE category = '{cat}' AND "
        + cp.SCREEN.format(code=code, deg=deg),
    )


def near_count(cid: str, code: str, cat: str, km: int) -> dict:
    """Count POIs of ``cat`` within ``km`` of airport ``code``."""
    deg = round(km / 80 + 0.02, 2)
    script = (
        "a = read('airport').geometry.iloc[0]\n"
        "p = read('cand')\n"
        + cp.GEOD_DISTANCES
        + f"n = int((d <= {km * 1000}).sum())\n"
        + cp.result_line("f'{n} places'", "{'poi_count': n}")
    )
    steps = [
        cp.sql_step("airport", "Fetch the airport.", cp.AIRPORT_SQL.format(code=code)),
        screened_candidates(code, cat, deg),
        cp.python_step(
            "near", f"Keep the candidates within {km} km geodesically.", ["airport", "cand"], script
        ),
    ]
    check = (
        f"SELECT count(*) AS poi_count FROM scale.poi p, scale.airports a WHERE a.code = '{code}' "
        f"AND p.category = '{cat}' "
        f"AND ST_DWithin(p.geom::geography, a.geom::geography, {km * 1000}, true)"
    )
    return cp.case(
        cid,
        f"How many points of interest of category {cat} lie within {km} km of airport "
        f"{code}, measured geodesically on the WGS 84 ellipsoid?",
        cp.GEODESIC,
        steps,
        {"answer_type": "scalar", "projection": {"value_field": "poi_count", "unit": "count"}},
        {"abs": 0},
        (
            "PostGIS ST_DWithin on geography (use_spheroid true: the WGS 84 ellipsoid).",
            "near_postgis",
            check,
        ),
    )


def nearest(cid: str, code: str, cat: str, k: int, deg: float) -> dict:
    """The ``k`` nearest POIs of ``cat`` to airport ``code``, screened ``deg`` around it."""
    script = (
        "a = read('airport').geometry.iloc[0]\n"
        "p = read('cand')\n"
        + cp.GEOD_DISTANCES
        + "p['distance_m'] = d\n"
        + f"top = p.sort_values(['distance_m', 'poi_id']).head({k})\n"
        + "rows = [{'poi_id': int(r.poi_id), 'distance_m': float(r.distance_m)}\n"
        + "        for r in top.itertuples()]\n"
        + cp.result_line("'nearest'", "rows")
    )
    steps = [
        cp.sql_step("airport", "Fetch the airport.", cp.AIRPORT_SQL.format(code=code)),
        screened_candidates(code, cat, deg),
        cp.python_step(
            "nearest",
            f"Rank candidates by geodesic distance; keep {k}.",
            ["airport", "cand"],
            script,
        ),
    ]
    check = (
        "SELECT p.poi_id, ST_Distance(p.geom::geography, a.geom::geography, true) AS distance_m "
        f"FROM scale.poi p, scale.airports a WHERE a.code = '{code}' AND p.category = '{cat}' "
        f"ORDER BY distance_m, p.poi_id LIMIT {k}"
    )
    return cp.case(
        cid,
        f"Which are the {k} points of interest of category {cat} nearest to airport {code}"
        ", with their geodesic distance in metres (WGS 84 ellipsoid), nearest first?",
        cp.GEODESIC,
        steps,
        {
            "answer_type": "ranked_list",
            "projection": {
                "entity_field": "poi_id",
                "value_field": "distance_m",
                "unit": "m",
                "order": "ascending",
            },
        },
        {"abs": 1.0},
        ("PostGIS ST_Distance on geography, ordered in SQL.", "nearest_postgis", check),
    )


PIP = "Point-in-polygon on the EPSG:4326 coordinates (shapely within)."


def district_counts(cid: str, district: str, cats: list[str]) -> dict:
    """POIs of each category in ``cats`` inside ``district`` (screened by its known box)."""
    listed = ", ".join(f"'{c}'" for c in cats)
    script = (
        "d = read('district').geometry.iloc[0]\n"
        "p = read('cand')\n"
        "p = p[p.geometry.within(d)]\n"
        "g = p.groupby('category').size().sort_index()\n"
        "rows = [{'category': k, 'poi_count': int(v)} for k, v in g.items()]\n"
        + cp.result_line("'counts'", "rows")
    )
    steps = [
        cp.sql_step(
            "district",
            "Fetch the district.",
            f"SELECT name, geom FROM scale.districts WHERE name = '{district}'",
        ),
        cp.sql_step(
            "cand",
            "Screen the points by the district's bounding box (EPSG:4326).",
            f"SELECT poi_id, category, geom FROM scale.poi WHERE category IN ({listed}) "
            f"AND geom && {cp.district_box([district], rg.POI_SRID, 0.001)}",
        ),
        cp.python_step(
            "counts",
            "Keep points within the district; count per category.",
            ["district", "cand"],
            script,
        ),
    ]
    check = (
        "SELECT p.category, count(*) AS poi_count FROM scale.poi p "
        "JOIN scale.districts d ON ST_Within(p.geom, d.geom) "
        f"WHERE d.name = '{district}' AND p.category IN ({listed}) "
        "GROUP BY p.category ORDER BY p.category"
    )
    return cp.case(
        cid,
        f"How many points of interest of each of the categories {', '.join(cats)} lie in the "
        f"{district} district (categories without any omitted)?",
        PIP,
        steps,
        {
            "answer_type": "records",
            "projection": {"key_fields": ["category"], "value_fields": ["poi_count"]},
        },
        {"abs": 0},
        ("PostGIS ST_Within join in SQL.", "counts_postgis", check),
    )


def top_districts(cid: str, cat: str, top: int, names: list[str]) -> dict:
    """The ``top`` districts among ``names`` by POIs of ``cat`` (screened by their box)."""
    listed = ", ".join(f"'{n}'" for n in names)
    script = (
        "d = read('districts')\n"
        "p = read('cand')\n"
        "j = gpd.sjoin(p, d[['name', 'geometry']], predicate='within')\n"
        "c = j.groupby('name').size().reset_index(name='poi_count')\n"
        "c = c.sort_values(['poi_count', 'name'], ascending=[False, True])"
        f".head({top})\n"
        "rows = [{'name': r.name, 'poi_count': int(r.poi_count)} for r in c.itertuples()]\n"
        + cp.result_line("'counts'", "rows")
    )
    steps = [
        cp.sql_step(
            "districts",
            "Fetch the districts.",
            f"SELECT name, geom FROM scale.districts WHERE name IN ({listed})",
        ),
        cp.sql_step(
            "cand",
            f"Screen the {cat} points by the districts' bounding box (EPSG:4326).",
            f"SELECT poi_id, geom FROM scale.poi WHERE category = '{cat}' "
            f"AND geom && {cp.district_box(names, rg.POI_SRID, 0.001)}",
        ),
        cp.python_step(
            "counts",
            "Join points to districts and count per district.",
            ["districts", "cand"],
            script,
        ),
    ]
    check = (
        "SELECT d.name, count(*) AS poi_count FROM scale.poi p "
        "JOIN scale.districts d ON ST_Within(p.geom, d.geom) "
        f"WHERE p.category = '{cat}' AND d.name IN ({listed}) "
        f"GROUP BY d.name ORDER BY poi_count DESC, d.name LIMIT {top}"
    )
    return cp.case(
        cid,
        f"Which {top} of the districts {', '.join(names)} hold the most points of interest of "
        f"category {cat}? Give counts, most first, ties by name.",
        PIP,
        steps,
        {
            "answer_type": "ranked_list",
            "projection": {
                "entity_field": "name",
                "value_field": "poi_count",
                "unit": "count",
                "order": "descending",
            },
        },
        {"abs": 0},
        ("PostGIS ST_Within join in SQL.", "counts_postgis", check),
    )
