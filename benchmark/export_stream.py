"""Run: ``python benchmark/export_stream.py [--rows 100000 1000000] [--database geoask_scale]``.

Peak memory and time of exporting a large query result: for each ``--rows`` N, a fresh
process runs ``SELECT poi_id, category, geom FROM scale.poi ORDER BY poi_id LIMIT N`` on the
scale database (``benchmark/databases/scale/``, loaded by ``benchmark/scale.py``) through
:func:`geoask.sql.step.run_statement` - guard, read-only executor, export (GeoParquet past
``GEOASK_SQL_COLUMNAR_ROWS``) - with the row cap and size cap raised to fit N, and prints the
wall time, the process's peak resident memory (its own ``ru_maxrss``, so the interpreter
and its imports are in it: ``--baseline`` prints that of a process that only imports), the
file's size and format. ``--cap-refusal`` also times a refusal: the same query with the row
cap at N-1 (the file must not exist afterwards).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from typing import Any

CHILD = """\
import json, os, resource, sys, time
from geoask.settings import get_settings
from geoask.db.urls import reader_url_for_database
from geoask.sql.context import GuardContext
from geoask.sql.executor import PostgresSqlRunner
from geoask.sql.step import run_statement
from geoask.errors import QueryExecutionError

rows, cap, database, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
settings = get_settings()
context = GuardContext.from_settings(settings, policy="postgis", derive_functions=False)
context = context.__class__(**{**context.__dict__, "row_cap": cap})
runner = PostgresSqlRunner(reader_url_for_database(settings, database), statement_timeout_s=600,
                           max_result_mib=65536)
sql = f"SELECT poi_id, category, geom FROM scale.poi ORDER BY poi_id LIMIT {rows}"
started = time.perf_counter()
try:
    run = run_statement(sql, context, runner, out, name="poi")
    outcome = {"format": run.exported.format, "rows": run.exported.preview.row_count,
               "bytes": os.path.getsize(run.exported.data_path)}
except QueryExecutionError as error:
    outcome = {"refused": error.kind, "files": sorted(os.listdir(out))}
outcome["seconds"] = time.perf_counter() - started
outcome["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(outcome))
"""


def measure(rows: int, cap: int, database: str) -> dict[str, Any]:
    """Export ``rows`` rows under row cap ``cap`` in a fresh process; its figures."""
    with tempfile.TemporaryDirectory() as folder:
        done = subprocess.run([sys.executable, "-c", CHILD, str(rows), str(cap), database,
                               folder], capture_output=True, text=True, check=False)
        if done.returncode:
            raise SystemExit(done.stderr.strip().splitlines()[-1])
        outcome: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        return outcome


def baseline_mib() -> float:
    """Peak resident memory of a process that only imports the export's modules."""
    code = ("import resource, geoask.sql.step, geoask.sql.executor, geoask.settings; "
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    return float(done.stdout.strip())


def main() -> None:
    """Print one line per size (and per refusal with ``--cap-refusal``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--database", default="geoask_scale")
    parser.add_argument("--cap-refusal", action="store_true")
    parser.add_argument("--baseline", action="store_true")
    args = parser.parse_args()
    if args.baseline:
        print(f"imports only: peak RSS {baseline_mib():.0f} MiB")
    print(f"{'rows':>9} {'format':>10} {'seconds':>8} {'peak RSS MiB':>13} {'file MiB':>9}")
    for rows in args.rows:
        got = measure(rows, rows, args.database)
        print(f"{rows:>9} {got.get('format', '-'):>10} {got['seconds']:>8.2f} "
              f"{got['peak_rss_mib']:>13.0f} {int(got.get('bytes', 0)) / 2**20:>9.1f}")
        if args.cap_refusal:
            refused = measure(rows, rows - 1, args.database)
            print(f"{rows:>9} {'refused':>10} {refused['seconds']:>8.2f} "
                  f"{refused['peak_rss_mib']:>13.0f}  {refused.get('refused')}, files left: "
                  f"{refused.get('files')}")


if __name__ == "__main__":
    main()
