"""Write the scale benchmark's case file from question templates (``cases/scale.yaml``).

Run: ``python benchmark/databases/scale/build_cases.py [--out cases/scale.yaml]`` then
``geoask bench fill --reference-policy postgis --tasks-file <out>``. Every reference program
screens candidates in SQL with index-backed bounding-box tests only (``geom && ST_Expand(...)``
or ``geom && ST_MakeEnvelope(...)``) and does the exact predicate, distance or area in Python;
every cross-check computes the same answer with exact PostGIS predicates (policy postgis).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml
from pyproj import Transformer

sys.path.insert(0, str(Path(__file__).resolve().parent))
import regions as rg

GEOD = "from pyproj import Geod\nimport numpy as np\nimport geopandas as gpd\nimport json\n"


def _district_box(name: str, srid: int, pad: float) -> str:
    """ST_MakeEnvelope of district ``name``'s bounding box in ``srid``, padded by ``pad``."""
    xmin, ymin, xmax, ymax = rg.EXTENT
    cols, rows = rg.DISTRICT_GRID
    i = rg.DISTRICT_NAMES.index(name)
    r, c = divmod(i, cols)
    dx, dy = (xmax - xmin) / cols, (ymax - ymin) / rows
    lon = [xmin + c * dx, xmin + (c + 1) * dx]
    lat = [ymax - (r + 1) * dy, ymax - r * dy]
    xs, ys = Transformer.from_crs(4326, srid, always_xy=True).transform(
        [lon[0], lon[0], lon[1], lon[1]], [lat[0], lat[1], lat[0], lat[1]]
    )
    return (
        f"ST_MakeEnvelope({min(xs) - pad:.0f}, {min(ys) - pad:.0f}, {max(xs) + pad:.0f}, "
        f"{max(ys) + pad:.0f}, {srid})"
    )


def _case(
    cid: str,
    question: str,
    category: str,
    measurement: str,
    steps: list[dict],
    answer: dict,
    tolerance: dict,
    method: str,
    check_sql: str,
    check_name: str,
) -> dict:
    return {
        "id": cid,
        "question": question,
        "difficulty": "medium",
        "category": category,
        "scenario": "scale",
        "requires_sandbox": True,
        "measurement": measurement,
        "reference": {"steps": steps},
        "answer": answer,
        "expected": {"tolerance": tolerance, "value": None},
        "cross_check": {
            "method": method,
            "policy": "postgis",
            "program": {
                "steps": [
                    {
                        "kind": "sql",
                        "objective": "Compute the same answer with exact PostGIS predicates.",
                        "statements": [{"name": check_name, "sql": check_sql}],
                    }
                ]
            },
        },
    }


def _sql(name: str, objective: str, sql: str) -> dict:
    return {"kind": "sql", "objective": objective, "statements": [{"name": name, "sql": sql}]}


def _py(name: str, objective: str, inputs: list[str], script: str) -> dict:
    return {
        "kind": "python",
        "name": name,
        "objective": objective,
        "inputs": inputs,
        "script": GEOD + script,
    }


AIRPORT_SQL = "SELECT code, geom FROM scale.airports WHERE code = '{code}'"
SCREEN = "geom && ST_Expand((SELECT geom FROM scale.airports WHERE code = '{code}'), {deg})"
GEODESIC = "Geodesic distance on the WGS 84 ellipsoid (pyproj.Geod); PostGIS geography agrees."


def near_count(cid: str, code: str, cat: str, km: int) -> dict:
    """Count POIs of ``cat`` within ``km`` of airport ``code``."""
    deg = round(km / 80 + 0.02, 2)
    script = (
        f"a = gpd.read_file('/input/airport.geojson').geometry.iloc[0]\n"
        f"p = gpd.read_file('/input/cand.geojson')\n"
        f"_, _, d = Geod(ellps='WGS84').inv(np.full(len(p), a.x), np.full(len(p), a.y), p.geometry.x.to_numpy(), p.geometry.y.to_numpy())\n"
        f"n = int((d <= {km * 1000}).sum())\n"
        f"print(json.dumps({{'status': 'success', 'summary': f'{{n}} places', 'result': {{'poi_count': n}}}}))\n"
    )
    steps = [
        _sql("airport", "Fetch the airport.", AIRPORT_SQL.format(code=code)),
        _sql(
            "cand",
            f"Screen {cat} candidates by bounding box around {code}.",
            f"SELECT poi_id, geom FROM scale.poi WHERE category = '{cat}' AND "
            + SCREEN.format(code=code, deg=deg),
        ),
        _py(
            "near", f"Keep the candidates within {km} km geodesically.", ["airport", "cand"], script
        ),
    ]
    check = (
        f"SELECT count(*) AS poi_count FROM scale.poi p, scale.airports a WHERE a.code = '{code}' "
        f"AND p.category = '{cat}' AND ST_DWithin(p.geom::geography, a.geom::geography, {km * 1000}, false)"
    )
    return _case(
        cid,
        f"How many points of interest of category {cat} lie within {km} km of airport "
        f"{code}, measured geodesically on the WGS 84 ellipsoid?",
        "spatial",
        GEODESIC,
        steps,
        {"answer_type": "scalar", "projection": {"value_field": "poi_count", "unit": "count"}},
        {"abs": 0},
        "PostGIS ST_DWithin on geography (sphere off: ellipsoid).",
        check,
        "near_postgis",
    )


def nearest(cid: str, code: str, cat: str, k: int) -> dict:
    """The ``k`` nearest POIs of ``cat`` to airport ``code`` with distances."""
    script = (
        f"a = gpd.read_file('/input/airport.geojson').geometry.iloc[0]\n"
        f"p = gpd.read_file('/input/cand.geojson')\n"
        f"_, _, d = Geod(ellps='WGS84').inv(np.full(len(p), a.x), np.full(len(p), a.y), p.geometry.x.to_numpy(), p.geometry.y.to_numpy())\n"
        f"p['distance_m'] = d\n"
        f"top = p.sort_values(['distance_m', 'poi_id']).head({k})\n"
        f"rows = [{{'poi_id': int(r.poi_id), 'distance_m': float(r.distance_m)}} for r in top.itertuples()]\n"
        f"print(json.dumps({{'status': 'success', 'summary': 'nearest', 'result': rows}}))\n"
    )
    steps = [
        _sql("airport", "Fetch the airport.", AIRPORT_SQL.format(code=code)),
        _sql(
            "cand",
            f"Screen {cat} candidates by bounding box around {code}.",
            f"SELECT poi_id, geom FROM scale.poi WHERE category = '{cat}' AND "
            + SCREEN.format(code=code, deg=0.6),
        ),
        _py(
            "nearest",
            f"Rank candidates by geodesic distance; keep {k}.",
            ["airport", "cand"],
            script,
        ),
    ]
    check = (
        f"SELECT p.poi_id, ST_Distance(p.geom::geography, a.geom::geography, true) AS distance_m "
        f"FROM scale.poi p, scale.airports a WHERE a.code = '{code}' AND p.category = '{cat}' "
        f"ORDER BY distance_m, p.poi_id LIMIT {k}"
    )
    return _case(
        cid,
        f"Which are the {k} points of interest of category {cat} nearest to airport {code}"
        ", with their geodesic distance in metres (WGS 84 ellipsoid), nearest first?",
        "spatial",
        GEODESIC,
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
        "PostGIS ST_Distance on geography, ordered in SQL.",
        check,
        "nearest_postgis",
    )


def parcel_area(cid: str, district: str) -> dict:
    """Parcel area (km2, UTM 17N) by land use for parcels whose centroid is in ``district``."""
    script = (
        "d = gpd.read_file('/input/district.geojson').to_crs(32617).geometry.iloc[0]\n"
        "p = gpd.read_file('/input/cand.geojson').to_crs(32617)\n"
        "p = p[p.geometry.centroid.within(d)]\n"
        "p['area_km2'] = p.geometry.area / 1e6\n"
        "g = p.groupby('land_use')['area_km2'].sum().sort_index()\n"
        "rows = [{'land_use': k, 'area_km2': float(v)} for k, v in g.items()]\n"
        "print(json.dumps({'status': 'success', 'summary': 'areas', 'result': rows}))\n"
    )
    steps = [
        _sql(
            "district",
            "Fetch the district.",
            f"SELECT name, geom FROM scale.districts WHERE name = '{district}'",
        ),
        _sql(
            "cand",
            "Screen parcels by the district's bounding box in UTM 17N.",
            f"SELECT parcel_id, land_use, geom FROM scale.parcels WHERE geom && {_district_box(district, 32617, 500)}",
        ),
        _py(
            "areas",
            "Keep parcels whose centroid is in the district; sum UTM areas by class.",
            ["district", "cand"],
            script,
        ),
    ]
    check = (
        "SELECT p.land_use, sum(ST_Area(p.geom)) / 1e6 AS area_km2 FROM scale.parcels p, scale.districts d "
        f"WHERE d.name = '{district}' AND ST_Within(ST_Centroid(p.geom), ST_Transform(d.geom, 32617)) "
        "GROUP BY p.land_use ORDER BY p.land_use"
    )
    return _case(
        cid,
        f"What is the total parcel area in square kilometres per land-use class for the parcels "
        f"whose centroid lies in the {district} district (planar area in UTM zone 17N)?",
        "spatial",
        "Planar area in WGS 84 / UTM zone 17N (EPSG:32617, metres).",
        steps,
        {
            "answer_type": "records",
            "projection": {"key_fields": ["land_use"], "value_fields": ["area_km2"]},
        },
        {"rel": 1e-6},
        "PostGIS ST_Area and ST_Within on the stored UTM geometries.",
        check,
        "areas_postgis",
    )


def road_length(cid: str, district: str, cls: str) -> dict:
    """Length (km, EPSG:2264) of ``cls`` road segments lying wholly in ``district``."""
    script = (
        "d = gpd.read_file('/input/district.geojson').to_crs(2264).geometry.iloc[0]\n"
        "r = gpd.read_file('/input/cand.geojson').to_crs(2264)\n"
        "r = r[r.geometry.within(d)]\n"
        "km = float(r.geometry.length.sum() * 1200 / 3937 / 1000)\n"
        "print(json.dumps({'status': 'success', 'summary': f'{km:.1f} km', 'result': {'length_km': km}}))\n"
    )
    steps = [
        _sql(
            "district",
            "Fetch the district.",
            f"SELECT name, geom FROM scale.districts WHERE name = '{district}'",
        ),
        _sql(
            "cand",
            "Screen road segments by the district's bounding box in EPSG:2264.",
            f"SELECT segment_id, geom FROM scale.roads WHERE road_class = '{cls}' AND geom && {_district_box(district, 2264, 2000)}",
        ),
        _py(
            "length",
            "Keep segments within the district; sum their planar length in km.",
            ["district", "cand"],
            script,
        ),
    ]
    check = (
        "SELECT sum(ST_Length(r.geom)) * 1200 / 3937 / 1000 AS length_km FROM scale.roads r, scale.districts d "
        f"WHERE d.name = '{district}' AND r.road_class = '{cls}' AND ST_Within(r.geom, ST_Transform(d.geom, 2264))"
    )
    return _case(
        cid,
        f"What is the total length in kilometres of {cls} road segments lying wholly inside the "
        f"{district} district (planar length in NAD83 / North Carolina, EPSG:2264)?",
        "spatial",
        "Planar length in NAD83 / North Carolina (EPSG:2264, US survey feet to km).",
        steps,
        {"answer_type": "scalar", "projection": {"value_field": "length_km", "unit": "km"}},
        {"rel": 1e-5},
        "PostGIS ST_Length and ST_Within on the stored EPSG:2264 geometries.",
        check,
        "length_postgis",
    )


def per_district(cid: str, cat: str, top: int | None) -> dict:
    """POIs of ``cat`` per district (point-in-polygon join); the ``top`` first if given."""
    head = f".head({top})" if top else ""
    script = (
        "d = gpd.read_file('/input/districts.geojson')\n"
        "p = gpd.read_file('/input/cand.geojson')\n"
        "j = gpd.sjoin(p, d[['name', 'geometry']], predicate='within')\n"
        "c = j.groupby('name').size().reset_index(name='poi_count')\n"
        f"c = c.sort_values(['poi_count', 'name'], ascending=[False, True]){head}\n"
        "rows = [{'name': r.name, 'poi_count': int(r.poi_count)} for r in c.itertuples()]\n"
        "print(json.dumps({'status': 'success', 'summary': 'counts', 'result': rows}))\n"
    )
    steps = [
        _sql("districts", "Fetch the districts.", "SELECT name, geom FROM scale.districts"),
        _sql(
            "cand",
            f"Fetch the {cat} points.",
            f"SELECT poi_id, geom FROM scale.poi WHERE category = '{cat}'",
        ),
        _py(
            "counts",
            "Join points to districts and count per district.",
            ["districts", "cand"],
            script,
        ),
    ]
    check = (
        "SELECT d.name, count(*) AS poi_count FROM scale.poi p JOIN scale.districts d ON ST_Within(p.geom, d.geom) "
        f"WHERE p.category = '{cat}' GROUP BY d.name ORDER BY poi_count DESC, d.name"
        + (f" LIMIT {top}" if top else "")
    )
    if top:
        q = f"Which {top} districts hold the most points of interest of category {cat}? Give counts, most first, ties by name."
        answer = {
            "answer_type": "ranked_list",
            "projection": {
                "entity_field": "name",
                "value_field": "poi_count",
                "unit": "count",
                "order": "descending",
            },
        }
    else:
        q = f"How many points of interest of category {cat} lie in each district (districts without any omitted)?"
        answer = {
            "answer_type": "records",
            "projection": {"key_fields": ["name"], "value_fields": ["poi_count"]},
        }
    return _case(
        cid,
        q,
        "spatial",
        "Point-in-polygon on the EPSG:4326 coordinates (shapely within).",
        steps,
        answer,
        {"abs": 0},
        "PostGIS ST_Within join in SQL.",
        check,
        "counts_postgis",
    )


def all_cases() -> list[dict]:
    """The 30 cases, numbered scale-001 ..."""
    makers = [
        *[
            lambda i, a=a, c=c, k=k: near_count(i, a, c, k)
            for a, c, k in [
                ("RDU", "pharmacy", 10),
                ("CLT", "school", 5),
                ("GSO", "bank", 8),
                ("ILM", "restaurant", 3),
                ("AVL", "gas_station", 15),
                ("OAJ", "place_of_worship", 12),
                ("RDU", "hospital", 25),
                ("CLT", "library", 20),
            ]
        ],
        *[
            lambda i, a=a, c=c, k=k: nearest(i, a, c, k)
            for a, c, k in [
                ("RDU", "pharmacy", 5),
                ("CLT", "hospital", 3),
                ("AVL", "school", 5),
                ("ILM", "fire_station", 3),
                ("GSO", "museum", 1),
                ("OAJ", "post_office", 3),
            ]
        ],
        *[
            lambda i, d=d: parcel_area(i, d)
            for d in ["Triangle", "Metrolina", "Cape Fear", "Triad"]
        ],
        *[
            lambda i, d=d, c=c: road_length(i, d, c)
            for d, c in [
                ("Triangle", "residential"),
                ("Metrolina", "primary"),
                ("Coastal Plain", "interstate"),
                ("Blue Ridge", "secondary"),
                ("Triad", "residential"),
            ]
        ],
        *[
            lambda i, c=c: per_district(i, c, None)
            for c in ["hospital", "museum", "police_station"]
        ],
        *[
            lambda i, c=c: per_district(i, c, 3)
            for c in ["hospital", "museum", "fire_station", "library"]
        ],
    ]
    return [make(f"scale-{n:03d}") for n, make in enumerate(makers, 1)]


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
