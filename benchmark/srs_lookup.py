"""Run: ``GEOASK_HOME=... .venv/bin/python benchmark/srs_lookup.py [--runs 30]``.

Measures what reading the ``spatial_ref_sys`` definitions of a result's SRIDs costs the
executor (:func:`geoask.sql.srs.read_definitions`, one query in the query's read-only
transaction, :meth:`geoask.sql.executor.PostgresSqlRunner.run_text`): the wall time of
``run_text`` on the demo database for a small and a larger geometry result, with the lookup and
with it replaced by a no-op, runs alternating so that drift in load hits both equally; and the
lookup query alone on an open connection. Also the first and the cached build of a CRS from a
custom definition (:func:`geoask.sql.srs.crs_from_definition`, WKT). Prints p50/min in ms.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import psycopg
from pyproj import CRS
from pyproj.enums import WktVersion

from geoask.settings import get_settings
from geoask.sql import executor, srs
from geoask.sql.executor import PostgresSqlRunner

QUERIES = {
    "1 row": "SELECT state_fips, geom FROM {s}.us_states LIMIT 1",
    "all states": "SELECT state_fips, geom FROM {s}.us_states",
}


def _timed(call: Callable[[], Any], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        begin = time.perf_counter()
        call()
        times.append((time.perf_counter() - begin) * 1000)
    return times


def _line(label: str, times: list[float]) -> str:
    return f"{label:<34} p50 {statistics.median(times):8.3f} ms   min {min(times):8.3f} ms"


def main() -> None:
    """Print the measurements."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    settings = get_settings()
    runner = PostgresSqlRunner.from_settings(settings)
    schema = settings.data_schema or "demo"
    real = executor.read_definitions
    for label, query in QUERIES.items():
        sql = query.format(s=schema)
        with_lookup: list[float] = []
        without: list[float] = []
        for _ in range(args.runs):
            executor.read_definitions = real
            with_lookup += _timed(lambda sql=sql: runner.run_text(sql, 100_000), 1)
            executor.read_definitions = lambda connection, srids: {}
            without += _timed(lambda sql=sql: runner.run_text(sql, 100_000), 1)
        executor.read_definitions = real
        rows = runner.run_text(sql, 100_000).row_count
        print(_line(f"run_text {label} ({rows} rows), lookup", with_lookup))
        print(_line(f"run_text {label} ({rows} rows), none", without))
    with psycopg.connect(runner.url) as connection:
        alone = _timed(lambda: srs.read_definitions(connection, [4326]), args.runs)
    print(_line("spatial_ref_sys query alone", alone))
    wkt = CRS.from_proj4("+proj=utm +zone=18 +datum=WGS84 +units=km").to_wkt(
        WktVersion.WKT1_GDAL)
    first = _timed(lambda: srs.crs_from_definition(srs.SpatialRefSys(900914, srtext=wkt)), 1)
    cached = _timed(lambda: srs.crs_from_definition(srs.SpatialRefSys(900914, srtext=wkt)),
                    args.runs)
    print(_line("CRS from a WKT definition, first", first))
    print(_line("CRS from a WKT definition, cached", cached))


if __name__ == "__main__":
    main()
