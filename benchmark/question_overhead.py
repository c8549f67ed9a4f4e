"""Framework overhead of one CLI question over its model time, beside a trivial flow's floor.

Run (the demo database must be up: ``geoask db up && geoask db load``; as root for the
sandbox)::

    .venv/bin/python benchmark/question_overhead.py [--per-route 20] [--floor-runs 10]

For the first ``--per-route`` SQL-only and SQL+Python cases of benchmark/cases
(``requires_sandbox``) it runs ``geoask ask QUESTION --model reference --json`` as a fresh
process - interpreter start, imports, the flow run on geoask's long-lived Prefect server and
everything the question's stages do, all included - and reads the run's execution log:

- wall: the process's wall time (s);
- model: the time spent inside model calls (the reference model's replay), summed over the
  log's ``model_calls``;
- overhead: wall minus model.

The floor is a fresh process that imports geoask, connects to the same server
(:func:`geoask.service.local.prefect_api`) and runs a flow of as many trivial tasks as the
question had stages, measured ``--floor-runs`` times per stage count. It prints the median of
each figure per route and the target of issue 16: overhead <= floor + 0.5 s. The server is
started first when none runs, so no row pays for its start.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]
GEOASK = str(Path(sys.executable).parent / "geoask")

FLOOR = """
import sys
import geoask  # offline environment before Prefect is imported
from prefect import flow, task
from geoask.service.local import prefect_api
from geoask.settings import get_settings

@task
def stage(number: int) -> int:
    return number

@flow(name="overhead-floor")
def trivial(stages: int) -> int:
    return sum(stage(number) for number in range(stages))

with prefect_api(get_settings()):
    trivial(int(sys.argv[1]))
"""


def timed(command: list[str]) -> tuple[float, str]:
    """Wall time (s) and standard output of ``command``; exits on a failure."""
    begin = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - begin
    if done.returncode != 0:  # geoask ask exits 0 only when the question was answered
        sys.exit(f"{' '.join(command[:3])} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return seconds, done.stdout


def question_row(question: str) -> tuple[float, float, int]:
    """``(wall s, model s, stages)`` of one fresh ``geoask ask`` of ``question``."""
    wall, output = timed([GEOASK, "ask", question, "--model", "reference", "--json"])
    result = json.loads(output)
    log = json.loads((Path(result["artifact_folder"]) / "execution_log.json").read_text())
    model_s = sum(call["duration_ms"] for call in log["model_calls"]) / 1000
    return wall, model_s, len(log["stages"])


def median(values: list[float]) -> float:
    """The median of ``values`` (nan when empty)."""
    return statistics.median(values) if values else float("nan")


def main() -> None:
    """Measure and print (see the module docstring)."""
    from geoask.cases.loader import load_cases
    from geoask.service.local import ensure_server
    from geoask.settings import get_settings

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-route", type=int, default=20, help="questions per route")
    parser.add_argument("--floor-runs", type=int, default=10, help="floor runs per stage count")
    args = parser.parse_args()
    settings = get_settings()
    ensure_server(settings)
    cases = [loaded.case for loaded in load_cases(ROOT / "benchmark" / "cases")]
    routes = {"sql_only": [c for c in cases if not c.requires_sandbox][:args.per_route],
              "sql_then_python": [c for c in cases if c.requires_sandbox][:args.per_route]}
    rows: dict[str, list[tuple[float, float, int]]] = {}
    for route, chosen in routes.items():
        rows[route] = [question_row(case.question) for case in chosen]
    floors: dict[int, float] = {}
    for stages in sorted({row[2] for route_rows in rows.values() for row in route_rows}):
        floors[stages] = median([timed([sys.executable, "-c", FLOOR, str(stages)])[0]
                                 for _ in range(args.floor_runs)])
    print(f"{'route':<16}{'n':>4}{'wall s':>9}{'model s':>9}{'overhead':>10}{'floor':>8}"
          f"{'over-floor':>12}   (medians; target over-floor <= 0.5 s)")
    for route, route_rows in rows.items():
        overheads = [wall - model for wall, model, _ in route_rows]
        excess = [wall - model - floors[stages] for wall, model, stages in route_rows]
        print(f"{route:<16}{len(route_rows):>4}{median([r[0] for r in route_rows]):>9.2f}"
              f"{median([r[1] for r in route_rows]):>9.3f}{median(overheads):>10.2f}"
              f"{median([floors[r[2]] for r in route_rows]):>8.2f}{median(excess):>12.2f}")
    print("floor (trivial flow, fresh process) by task count: "
          + ", ".join(f"{stages}: {seconds:.2f} s" for stages, seconds in floors.items()))


if __name__ == "__main__":
    main()
