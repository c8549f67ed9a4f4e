"""Run: ``.venv/bin/python benchmark/raster_measure.py [--runs 5]`` (PostGIS up, sandbox set up).

Two measurements of the raster support, printed as tables:

1. **Export.** For a few raster statements of the demo database (the whole elevation model,
   the model clipped to one canton and to all cantons, the six-band Landsat image as raster
   tiles and as ``ST_AsTIFF`` bytes, one band clipped to a box), the time to execute the
   statement as the reader role (guard included) and the time of
   :func:`geoask.sql.export.export_result` (WKB decoding, mosaicking, GeoTIFF encoding, preview,
   atomic writes), median and minimum over ``--runs`` runs, with the GeoTIFF's size in bytes.
2. **Cross-check agreement.** For every case of ``benchmark/cases/luxembourg_dem.yaml`` and
   ``landsat_olinda.yaml``: the reference program (policy ``separated``: GeoTIFF export, then
   rasterio/rasterstats/numpy in the sandbox) and its cross-check (PostGIS raster functions, or
   rasterstats on the unclipped raster) are both run, and the largest absolute and relative
   difference between their numeric answers is printed, next to the case's tolerance.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from geoask.bench.verify import cross_check_answer, reference_answer
from geoask.cases.loader import load_cases
from geoask.run.composition import program_runner
from geoask.settings import get_settings
from geoask.sql.export import export_result
from geoask.sql.guard import check_sql

CASE_FILES = ("luxembourg_dem.yaml", "landsat_olinda.yaml")
STATEMENTS = {
    "DEM, 16 tiles": "SELECT rid, rast FROM demo.lux_elevation",
    "DEM clipped to Clervaux": (
        "SELECT ST_Clip(e.rast, c.geom) AS rast FROM demo.lux_elevation e "
        "CROSS JOIN demo.lux_cantons c WHERE c.canton_name = 'Clervaux'"),
    "DEM clipped to 12 cantons": (
        "SELECT c.canton_name, ST_Clip(e.rast, c.geom) AS rast FROM demo.lux_elevation e "
        "CROSS JOIN demo.lux_cantons c"),
    "Landsat 6 bands, 16 tiles": "SELECT rid, rast FROM demo.landsat_etm",
    "Landsat as ST_AsTIFF bytes": "SELECT rid, ST_AsTIFF(rast) AS tiff FROM demo.landsat_etm",
}


def measure_exports(runs: int) -> None:
    """Print execute/export times and GeoTIFF sizes of :data:`STATEMENTS`."""
    runner = program_runner(get_settings())
    print(f"Raster export ({runs} runs; ms median / min)")
    print(f"{'statement':<28} {'rows':>5} {'execute ms':>15} {'export ms':>15} {'GeoTIFF B':>10}"
          f" {'pixels':>12}")
    for label, sql in STATEMENTS.items():
        execute, export, size, rows, pixels = [], [], 0, 0, ""
        for _ in range(runs):
            with tempfile.TemporaryDirectory() as folder:
                started = time.perf_counter()
                result = runner.sql_runner.run(check_sql(sql, runner.guard))
                middle = time.perf_counter()
                exported = export_result(result, folder, name="r")
                done = time.perf_counter()
                execute.append((middle - started) * 1000)
                export.append((done - middle) * 1000)
                size, rows = Path(exported.data_path).stat().st_size, result.row_count
                facts = exported.preview.raster or {}
                pixels = f"{facts.get('width')}x{facts.get('height')}x{facts.get('band_count')}"
        print(f"{label:<28} {rows:>5} {_timing(execute):>15} {_timing(export):>15} {size:>10}"
              f" {pixels:>12}")


def _timing(values: list[float]) -> str:
    return f"{statistics.median(values):.1f} / {min(values):.1f}"


def numbers(value: Any) -> list[float]:
    """Every number in a projected answer, in a stable order (ids and text skipped)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return []
    if isinstance(value, int | float):
        return [float(value)]
    if isinstance(value, dict):
        return [n for key in sorted(value) if key != "id" for n in numbers(value[key])]
    if isinstance(value, list):
        return [n for item in value for n in numbers(item)]
    return []


def measure_agreement() -> None:
    """Print, per raster case, how far the reference and the cross-check answers lie apart."""
    folder = Path(__file__).parent / "cases"
    runner = program_runner(get_settings())
    print("\nCross-check agreement (reference vs. independent cross-check)")
    print(f"{'case':<12} {'numbers':>7} {'max |diff|':>12} {'max rel':>10} {'tolerance':>22}")
    worst = 0.0
    for name in CASE_FILES:
        for loaded in load_cases(folder / name):
            case = loaded.case
            with tempfile.TemporaryDirectory() as work:
                ref = numbers(reference_answer(case, runner, Path(work)))
                check = numbers(cross_check_answer(case, runner, Path(work)))
            if len(ref) != len(check):
                print(f"{case.id:<12} answers differ in shape: {len(ref)} vs {len(check)}")
                continue
            diffs = [abs(a - b) for a, b in zip(ref, check, strict=True)]
            rels = [d / abs(a) for d, a in zip(diffs, ref, strict=True) if a]
            worst = max([worst, *rels])
            tolerance = case.expected.tolerance.model_dump(exclude_defaults=True) or {"abs": 0}
            print(f"{case.id:<12} {len(ref):>7} {max(diffs, default=0):>12.3g} "
                  f"{max(rels, default=0):>10.3g} {tolerance!s:>22}")
    print(f"largest relative difference over all numbers: {worst:.3g}")


def main() -> None:
    """Parse the options and print both measurements."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    measure_exports(args.runs)
    measure_agreement()


if __name__ == "__main__":
    main()
