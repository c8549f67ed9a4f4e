"""Run: ``.venv/bin/python benchmark/session_overhead.py [--sessions 10] [--cells 200]`` (root).

Measures the persistent sandbox session (issue 19) against one-shot sandboxed scripts, with
the real :class:`sandbox.bubblewrap.BubblewrapSandbox` and the configured limits:

- **startup**: ``open_session()`` until the cell loop is ready (bwrap, limits, seccomp,
  interpreter start), and ``close()`` (process ended, uid checked, folders removed), over
  ``--sessions`` sessions; next to it a one-shot ``run`` of an empty script (the cost a
  session pays once instead of per step);
- **per cell, after warm-up**, in one session: a trivial cell (``x = 1``), a cell printing the
  result protocol, and a GeoPandas cell (buffer and area of 100 points) once ``geopandas`` was
  imported by an earlier cell - each ``--cells`` times, wall time seen by the caller of
  ``run_cell`` (framing, exec, output files, protocol parsing included);
- the same GeoPandas work as a one-shot script (import included), which is what each Python
  step costs without a session.

Prints p50/p95 and the target of issue 19: a trivial cell after warm-up costs <= 20 ms at p50.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from geoask.settings import get_settings
from sandbox.bubblewrap import BubblewrapSandbox
from sandbox.models import SandboxOutcome

TRIVIAL_CELL = "x = 1"
PROTOCOL_CELL = (
    "print(json.dumps({'status': 'success', 'summary': 'n', 'result': {'n': x}}))"
)
IMPORT_CELL = "import json\nimport geopandas\nimport shapely"
GEO_CELL = (
    "points = geopandas.GeoSeries(shapely.points(range(100), range(100)), crs=3857)\n"
    "area = float(points.buffer(10).area.sum())\n"
    "print(json.dumps({'status': 'success', 'summary': 'area', 'result': {'area': area}}))"
)
GEO_SCRIPT = IMPORT_CELL + "\n" + GEO_CELL
EMPTY_SCRIPT = (
    "import json\nprint(json.dumps({'status': 'success', 'summary': 'nothing', 'result': {}}))"
)


def percentile(values: list[float], fraction: float) -> float:
    """Nearest-rank percentile of ``values`` (``fraction`` in 0..1)."""
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


def timed(call: Callable[[], SandboxOutcome]) -> float:
    """Seconds ``call`` took; exits when its outcome is not a success."""
    started = time.perf_counter()
    outcome = call()
    elapsed = time.perf_counter() - started
    if outcome.status != "success":
        raise SystemExit(f"run failed: {outcome.model_dump_json(indent=1)}")
    return elapsed


def main() -> None:
    """Measure startup, teardown and per-cell costs and print the table and the verdict."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10, help="sessions to start (10)")
    parser.add_argument("--cells", type=int, default=200, help="cells per kind (200)")
    args = parser.parse_args()
    sandbox = BubblewrapSandbox.from_settings(get_settings())

    starts: list[float] = []
    closes: list[float] = []
    one_shot_empty: list[float] = []
    sandbox.run(EMPTY_SCRIPT)  # warm the page cache
    for _ in range(args.sessions):
        started = time.perf_counter()
        session = sandbox.open_session()
        starts.append(time.perf_counter() - started)
        session.run_cell(TRIVIAL_CELL)
        started = time.perf_counter()
        session.close()
        closes.append(time.perf_counter() - started)
        if session.leftover_processes:
            raise SystemExit(f"{session.leftover_processes} processes were left running")
        one_shot_empty.append(timed(lambda: sandbox.run(EMPTY_SCRIPT)))

    trivial: list[float] = []
    protocol: list[float] = []
    geo: list[float] = []
    with sandbox.open_session() as session:
        import_s = timed(lambda: session.run_cell(IMPORT_CELL))
        for _ in range(5):  # warm-up
            session.run_cell(TRIVIAL_CELL)
            session.run_cell(GEO_CELL)
        for _ in range(args.cells):
            trivial.append(timed(lambda: session.run_cell(TRIVIAL_CELL)))
            protocol.append(timed(lambda: session.run_cell(PROTOCOL_CELL)))
            geo.append(timed(lambda: session.run_cell(GEO_CELL)))
    one_shot_geo = [timed(lambda: sandbox.run(GEO_SCRIPT)) for _ in range(args.sessions)]

    rows = [
        ("open_session (startup)", starts), ("close (teardown)", closes),
        ("one-shot run, empty script", one_shot_empty),
        ("cell: x = 1", trivial), ("cell: protocol object", protocol),
        ("cell: geopandas buffer/area", geo),
        ("one-shot run: same geopandas work", one_shot_geo),
    ]
    print(f"persistent session vs one-shot sandbox: {args.sessions} sessions, "
          f"{args.cells} cells per kind")
    print(f"{'measurement':<36}{'n':>5}{'p50 ms':>10}{'p95 ms':>10}{'mean ms':>10}")
    for name, values in rows:
        print(f"{name:<36}{len(values):>5}{percentile(values, 0.5) * 1000:>10.2f}"
              f"{percentile(values, 0.95) * 1000:>10.2f}{statistics.mean(values) * 1000:>10.2f}")
    print(f"first cell importing geopandas and shapely: {import_s * 1000:.0f} ms (once per "
          "session)")
    p50 = percentile(trivial, 0.5) * 1000
    print(f"trivial cell after warm-up at p50: {p50:.2f} ms (target <= 20 ms: "
          f"{'met' if p50 <= 20 else 'MISSED'})")


if __name__ == "__main__":
    main()
