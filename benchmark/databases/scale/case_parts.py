"""Building blocks of the scale benchmark's case templates (used by ``build_cases.py``).

A case is a reference program (bounding-box screening in SQL, the exact predicate, distance or
area in Python) and a PostGIS cross-check computing the same answer with exact predicates.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

from pyproj import Transformer

sys.path.insert(0, str(Path(__file__).resolve().parent))
import regions as rg

GEOD = (
    "import glob\nfrom pathlib import Path\nfrom pyproj import Geod\nimport numpy as np\n"
    "import geopandas as gpd\nimport json\n\n"
    "# an export of GEOASK_SQL_COLUMNAR_ROWS rows or more is GeoParquet, a smaller one GeoJSON\n"
    "INPUTS = {Path(p).stem: Path(p) for p in glob.glob('/input/*')\n"
    "          if p.endswith(('.geojson', '.parquet'))}\n\n\n"
    "def read(name):\n"
    "    path = INPUTS[name]\n"
    "    return gpd.read_parquet(path) if path.suffix == '.parquet' else gpd.read_file(path)\n\n\n"
)
"""What every reference script starts with: the imports, and ``read(name)``, the input
``name`` as a GeoDataFrame in whichever format the export chose by its size (GeoParquet from
``GEOASK_SQL_COLUMNAR_ROWS`` rows, else GeoJSON); the inputs are found by globbing ``/input``,
which the compute agent's check accepts as reading every input."""

AIRPORT_SQL = "SELECT code, geom FROM scale.airports WHERE code = '{code}'"
SCREEN = "geom && ST_Expand((SELECT geom FROM scale.airports WHERE code = '{code}'), {deg})"
GEODESIC = "Geodesic distance on the WGS 84 ellipsoid (pyproj.Geod); PostGIS geography agrees."
GEOD_DISTANCES = (
    "_, _, d = Geod(ellps='WGS84').inv(\n"
    "    np.full(len(p), a.x), np.full(len(p), a.y),\n"
    "    p.geometry.x.to_numpy(), p.geometry.y.to_numpy())\n"
)
"""Script lines: geodesic distances ``d`` (m) from airport point ``a`` to points ``p``."""


def district_lonlat_box(names: list[str]) -> tuple[float, float, float, float]:
    """Lon/lat bounding box (EPSG:4326) of the union of the districts ``names``."""
    xmin, ymin, xmax, ymax = rg.EXTENT
    cols, rows = rg.DISTRICT_GRID
    dx, dy = (xmax - xmin) / cols, (ymax - ymin) / rows
    cells = [divmod(rg.DISTRICT_NAMES.index(name), cols) for name in names]
    return (
        xmin + min(c for _, c in cells) * dx,
        ymax - (max(r for r, _ in cells) + 1) * dy,
        xmin + (max(c for _, c in cells) + 1) * dx,
        ymax - min(r for r, _ in cells) * dy,
    )


def district_box(names: list[str], srid: int, pad: float) -> str:
    """ST_MakeEnvelope of the districts' bounding box in ``srid``, padded by ``pad``.

    Projected boxes are rounded outwards to whole units; lon/lat boxes keep 4 decimals.
    """
    x0, y0, x1, y1 = district_lonlat_box(names)
    xs, ys = Transformer.from_crs(4326, srid, always_xy=True).transform(
        [x0, x0, x1, x1], [y0, y1, y0, y1]
    )
    digits = 4 if srid == rg.POI_SRID else 0
    scale = 10**digits
    low = [math.floor((min(v) - pad) * scale) / scale for v in (xs, ys)]
    high = [math.ceil((max(v) + pad) * scale) / scale for v in (xs, ys)]
    x0s, y0s, x1s, y1s = (f"{v:.{digits}f}" for v in (*low, *high))
    return f"ST_MakeEnvelope({x0s}, {y0s}, {x1s}, {y1s}, {srid})"


def sql_step(name: str, objective: str, sql: str) -> dict:
    """A reference SQL step of one named statement."""
    return {"kind": "sql", "objective": objective, "statements": [{"name": name, "sql": sql}]}


def python_step(name: str, objective: str, inputs: list[str], script: str) -> dict:
    """A reference Python step reading ``inputs`` (the GEOD imports come first)."""
    return {
        "kind": "python",
        "name": name,
        "objective": objective,
        "inputs": inputs,
        "script": GEOD + script,
    }


def result_line(summary: str, result: str) -> str:
    """The script's last line: print the outcome JSON with ``summary`` and ``result``."""
    return f"print(json.dumps({{'status': 'success', 'summary': {summary}, 'result': {result}}}))\n"


def case(
    cid: str,
    question: str,
    measurement: str,
    steps: list[dict],
    answer: dict,
    tolerance: dict,
    check: tuple[str, str, str],
) -> dict:
    """One case: ``check`` is the cross-check's (method, statement name, SQL)."""
    method, check_name, check_sql = check
    return {
        "id": cid,
        "question": question,
        "difficulty": "medium",
        "category": "spatial",
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
                    sql_step(
                        check_name,
                        "Compute the same answer with exact PostGIS predicates.",
                        check_sql,
                    )
                ]
            },
        },
    }
