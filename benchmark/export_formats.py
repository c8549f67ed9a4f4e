"""Run: ``.venv/bin/python benchmark/export_formats.py [--sizes 1000 10000 100000] [--runs 3]``.

(Root, sandbox runtime built; ``--no-sandbox`` reads with the runtime's Python, no isolation.)

Measures, for the same generated result exported as GeoJSON and as GeoParquet
(:func:`geoask.sql.export.export_result` with ``columnar_rows`` None and 1: reprojection,
preview, writer, atomic write to a temporary folder), at each of ``--sizes`` rows of points
and of 10-vertex polygons (``id``, ``name``, ``value`` numeric, ``geom`` stored in UTM 18N,
EPSG:32618, as the executor returns them: shapely geometries with their SRID; the database's
time is not in the numbers): the export's wall time, the file size, and the time a sandbox
script takes to read the file (``geopandas.read_file`` / ``geopandas.read_parquet``, timed
inside the script, so the sandbox's start-up is not in it). Prints the median of ``--runs``
per cell (after one warm-up export) and the GeoJSON/GeoParquet ratios;
``GEOASK_SQL_COLUMNAR_ROWS`` is set from them. ``--memory ROWS`` instead prints how much the
export of ROWS polygons raises the process's peak resident memory per format (a fresh process
each, Linux ``/proc``: the peak is reset after the result is built, then read after export).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path

import numpy as np
import shapely
from pyproj import Transformer

from geoask.base.formats import GEOJSON, GEOPARQUET, ExportFormat
from geoask.settings import get_settings
from geoask.sql.executor import QueryResult, ResultColumn
from geoask.sql.export import export_result
from sandbox.bubblewrap import BubblewrapSandbox, sandbox_environment

SRID = 32618
READERS = {GEOJSON.name: "geopandas.read_file", GEOPARQUET.name: "geopandas.read_parquet"}
READ_SCRIPT = """\
import json, sys, time
import geopandas
started = time.perf_counter()
frame = {reader}({path!r})
elapsed = time.perf_counter() - started
print(json.dumps({{"status": "success", "summary": "read",
                  "result": {{"seconds": elapsed, "rows": len(frame)}}}}))
"""


def geometries(count: int, kind: str) -> list[shapely.Geometry]:
    """``count`` points or 10-vertex polygons (500 m radius) on a grid, in EPSG:32618."""
    side = int(np.ceil(np.sqrt(count)))
    lon, lat = np.meshgrid(np.linspace(-76.0, -72.5, side), np.linspace(40.0, 42.0, side))
    x, y = Transformer.from_crs(4326, SRID, always_xy=True).transform(
        lon.ravel()[:count], lat.ravel()[:count])
    if kind == "points":
        return list(shapely.set_srid(shapely.points(x, y), SRID))
    angles = np.linspace(0, 2 * np.pi, 10, endpoint=False)
    rings = [np.column_stack([cx + 500 * np.cos(angles), cy + 500 * np.sin(angles)])
             for cx, cy in zip(x, y, strict=True)]
    return list(shapely.set_srid(shapely.polygons(rings), SRID))


def result(count: int, kind: str) -> QueryResult:
    """A query result of ``count`` rows ``(id, name, value, geom)``."""
    rows = [(i, f"feature {i}", Decimal(i) / 4, g)
            for i, g in enumerate(geometries(count, kind))]
    columns = (ResultColumn("id", "integer"), ResultColumn("name", "text"),
               ResultColumn("value", "numeric"),
               ResultColumn("geom", "geometry", True, "bench.features.geom"))
    return QueryResult(columns, rows, count, "SELECT id, name, value, geom FROM t")


def export_once(data: QueryResult, fmt: ExportFormat, folder: str) -> tuple[float, Path]:
    """Seconds to export ``data`` as ``fmt`` into ``folder``, and the file written."""
    started = time.perf_counter()
    exported = export_result(data, folder, name="features",
                             columnar_rows=1 if fmt is GEOPARQUET else None)
    elapsed = time.perf_counter() - started
    if exported.format != fmt.name:
        raise SystemExit(f"expected {fmt.name}, the export wrote {exported.format}")
    return elapsed, Path(exported.data_path)


def read_seconds(path: Path, fmt: ExportFormat, sandbox: BubblewrapSandbox | None,
                 python: Path) -> float:
    """Seconds a sandbox script takes to read ``path`` (timed inside the script)."""
    if sandbox is not None:
        script = READ_SCRIPT.format(reader=READERS[fmt.name], path=f"/input/{path.name}")
        outcome = sandbox.run(script, [path])
        if outcome.status != "success":
            raise SystemExit(f"sandboxed read failed: {outcome.model_dump_json(indent=1)}")
        if outcome.protocol is None or not isinstance(outcome.protocol.result, dict):
            raise SystemExit("the sandboxed read printed no protocol result")
        return float(outcome.protocol.result["seconds"])
    script = READ_SCRIPT.format(reader=READERS[fmt.name], path=str(path))
    completed = subprocess.run([str(python), "-I", "-c", script], capture_output=True,
                               text=True, check=True, env=sandbox_environment())
    return float(json.loads(completed.stdout.strip().splitlines()[-1])["result"]["seconds"])


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise SystemExit(f"/proc/self/status has no {field}")


def export_peak_mib(rows: int, name: str) -> float:
    """MiB the export of ``rows`` polygons as format ``name`` adds to peak resident memory."""
    data = result(rows, "polygons")
    fmt = GEOPARQUET if name == GEOPARQUET.name else GEOJSON
    Path("/proc/self/clear_refs").write_text("5")  # reset the peak (VmHWM) to the current RSS
    before = _status_kib("VmRSS")
    with tempfile.TemporaryDirectory() as folder:
        export_once(data, fmt, folder)
    return (_status_kib("VmHWM") - before) / 1024


def print_memory(rows: int) -> None:
    """Run :func:`export_peak_mib` for each format in a fresh process and print the results."""
    for fmt in (GEOJSON, GEOPARQUET):
        code = ("import sys; sys.path.insert(0, 'benchmark'); import export_formats as b; "
                f"print(b.export_peak_mib({rows}, {fmt.name!r}))")
        completed = subprocess.run([sys.executable, "-c", code], capture_output=True,
                                   text=True, check=True)
        peak = float(completed.stdout.strip().splitlines()[-1])
        print(f"polygons {rows:>8} {fmt.name:<11} export raises peak memory by {peak:.0f} MiB")


def main() -> None:
    """Measure every size, kind and format; print one row each and the ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-sandbox", action="store_true")
    parser.add_argument("--memory", type=int, metavar="ROWS")
    args = parser.parse_args()
    if args.memory:
        print_memory(args.memory)
        return
    settings = get_settings()
    sandbox = None if args.no_sandbox else BubblewrapSandbox.from_settings(settings)
    python = settings.sandbox_runtime_path / "bin" / "python"
    with tempfile.TemporaryDirectory() as folder:  # warm-up: first imports and CRS look-ups
        for fmt in (GEOJSON, GEOPARQUET):
            export_once(result(100, "points"), fmt, folder)
    print(f"{'kind':<9}{'rows':>8} {'format':<11}{'export s':>9}{'MB':>8}{'read s':>8}")
    for kind in ("points", "polygons"):
        for size in args.sizes:
            data = result(size, kind)
            cells: dict[str, tuple[float, float, float]] = {}
            for fmt in (GEOJSON, GEOPARQUET):
                exports, reads, size_mb = [], [], 0.0
                for _ in range(args.runs):
                    with tempfile.TemporaryDirectory() as folder:
                        seconds, path = export_once(data, fmt, folder)
                        exports.append(seconds)
                        size_mb = path.stat().st_size / 1e6
                        reads.append(read_seconds(path, fmt, sandbox, python))
                cells[fmt.name] = (statistics.median(exports), size_mb,
                                   statistics.median(reads))
                print(f"{kind:<9}{size:>8} {fmt.name:<11}{cells[fmt.name][0]:>9.3f}"
                      f"{size_mb:>8.2f}{cells[fmt.name][2]:>8.3f}")
            ratios = [j / p if p else float("nan") for j, p in
                      zip(cells[GEOJSON.name], cells[GEOPARQUET.name], strict=True)]
            print(f"{'':<17} GeoJSON/GeoParquet: export x{ratios[0]:.1f}, size x{ratios[1]:.1f},"
                  f" read x{ratios[2]:.1f}")


if __name__ == "__main__":
    main()
