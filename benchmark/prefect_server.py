"""The reference benchmark and one CLI question under geoask's Prefect server: times and 503s.

Run (the demo database must be up: ``geoask db up && geoask db load``; as root for the
sandbox)::

    .venv/bin/python benchmark/prefect_server.py [--limit 200] [--question-only] [--label L]

It prints, each as measured on this machine:

- ``geoask bench --model reference --variant FULL --fresh`` (a fresh ``--out`` folder under
  /tmp) as one CLI process: wall time (s), the 503 responses its Prefect client received
  (Prefect's client logs each retried 503 at DEBUG on ``prefect.client``; this script counts
  those records in the benchmark process) and the questions that did not run, plus the
  questions whose wall time exceeds 3x the sum of their stage times (``CaseRun.time_s`` over
  the execution log's stage ``duration_ms``) and the slowest such ratio;
- the floor: a fresh process runs a parent flow that calls ``--floor-runs`` subflow runs of
  as many trivial Prefect tasks as a question has stages (the median count of the benchmark's
  runs), on the same server right after the benchmark, one at a time; it prints their median
  and minimum wall time and the questions whose stage time is below half the minimum: those
  exceed 3x their stage time whatever geoask does (wall >= stage time + floor), a lower bound
  of the figure above set by Prefect's per-run cost;
- ``geoask ask "<question>" --model reference`` wall time cold (``geoask server stop`` first:
  the command starts the server) and warm (the server left running by the cold run).

Before issue 16 each CLI process started Prefect's temporary SQLite server; run the script
with ``PYTHONPATH=<an older checkout> GEOASK_HOME=<this .geoask>`` to measure that code.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GEOASK = str(Path(sys.executable).parent / "geoask")
QUESTION = "How many airports in the table are located in Texas (state abbreviation TX)?"
COUNTS_ENV = "GEOASK_MEASURE_503_FILE"

import geoask  # noqa: E402,F401  (offline environment before Prefect is imported)


class StatusCounter(logging.Handler):
    """Counts Prefect client records that report a retried 503 response."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        """Count ``record`` when it reports a 503."""
        if "status code 503" in record.getMessage():
            self.count += 1


def child(arguments: list[str]) -> None:
    """Run ``geoask <arguments>`` in this process, counting the 503s its client receives."""
    import atexit

    import prefect  # noqa: F401  (sets up Prefect's logging, which the counter joins)

    from geoask.app.cli import main as geoask_main

    counter = StatusCounter()
    client_logger = logging.getLogger("prefect.client")
    client_logger.setLevel(logging.DEBUG)
    client_logger.addHandler(counter)
    atexit.register(lambda: Path(os.environ[COUNTS_ENV]).write_text(str(counter.count)))
    sys.argv = ["geoask", *arguments]
    geoask_main()


def run_benchmark(limit: int) -> list[tuple[float, int]]:
    """Time one fresh reference benchmark, print its 503s and slow questions.

    Returns per question (sum of stage times in s, number of stages).
    """
    out = Path(tempfile.mkdtemp(prefix="geoask-bench-measure-", dir="/tmp"))
    counts = out / "503.txt"
    command = [sys.executable, __file__, "--child", "bench", "--model", "reference",
               "--variant", "FULL", "--limit", str(limit), "--fresh", "--out", str(out)]
    begin = time.perf_counter()
    done = subprocess.run(command, env={**os.environ, COUNTS_ENV: str(counts)},
                          capture_output=True, text=True, check=False)
    wall_s = time.perf_counter() - begin
    if done.returncode != 0:
        sys.exit(f"the benchmark failed ({done.returncode}):\n{done.stderr[-3000:]}")
    summary = json.loads((out / "report.json").read_text()).get("meta", {})
    ratios: list[tuple[float, str]] = []
    stage_times: list[tuple[float, int]] = []
    statuses: dict[str, int] = {}
    mentions_503 = 0
    for path in sorted((out / "runs").rglob("*.json")):
        run = json.loads(path.read_text())
        statuses[run["status"]] = statuses.get(run["status"], 0) + 1
        mentions_503 += "503" in run.get("message", "")
        stages_s = sum(s["duration_ms"] for s in (run.get("log") or {}).get("stages", [])) / 1000
        ratios.append((run["time_s"] / stages_s if stages_s else float("inf"), run["case_id"]))
        stage_times.append((stages_s, len((run.get("log") or {}).get("stages", []))))
    slow = [item for item in ratios if item[0] > 3]
    print(f"bench --model reference --variant FULL, {limit} questions: wall {wall_s:.1f} s "
          f"(flow {summary.get('wall_time_s', float('nan')):.1f} s)")
    print(f"  statuses {statuses}; not run: {len(summary.get('not_run', []))}")
    print(f"  503 responses received by the client: {counts.read_text().strip() or '?'}; "
          f"runs whose message names a 503: {mentions_503}")
    worst = max(ratios) if ratios else (0.0, "-")
    print(f"  questions with wall > 3x stage time: {len(slow)} of {len(ratios)} "
          f"(worst {worst[0]:.1f}x, {worst[1]})")
    shutil.rmtree(out, ignore_errors=True)
    return stage_times


FLOOR = """
import json, statistics, sys, time
import geoask  # offline environment before Prefect is imported
from prefect import flow, task
from geoask.service.local import prefect_api
from geoask.settings import get_settings

@task
def stage(number: int) -> int:
    return number

@flow(name="floor-question")
def question(stages: int) -> int:
    return sum(stage(number) for number in range(stages))

@flow(name="floor-benchmark")
def benchmark(stages: int, runs: int) -> list[float]:
    walls = []
    for run in range(runs):
        begin = time.perf_counter()
        question.with_options(flow_run_name=f"floor-{run}")(stages)
        walls.append(time.perf_counter() - begin)
    return walls

with prefect_api(get_settings()):
    print(json.dumps(benchmark(int(sys.argv[1]), int(sys.argv[2]))))
"""


def run_floor(stage_times: list[tuple[float, int]], runs: int) -> None:
    """Print the subflow floor and the questions its minimum alone puts over 3x.

    ``stage_times``: per question, (sum of stage times in s, number of stages).
    """
    stages = int(statistics.median(count for _, count in stage_times))
    done = subprocess.run([sys.executable, "-c", FLOOR, str(stages), str(runs)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"the floor flow failed ({done.returncode}):\n{done.stderr[-3000:]}")
    walls = json.loads(done.stdout.strip().splitlines()[-1])
    floor = min(walls)
    bound = sum(1 for seconds, _ in stage_times if seconds < floor / 2)
    print(f"floor: subflow run of {stages} trivial tasks, {runs} runs one at a time: median "
          f"{statistics.median(walls):.2f} s, min {floor:.2f} s; questions with stage time "
          f"< min/2 (over 3x at any geoask overhead): {bound} of {len(stage_times)}")


def timed_ask() -> float:
    """Wall time of one ``geoask ask`` of :data:`QUESTION` (which must be answered)."""
    begin = time.perf_counter()
    done = subprocess.run([GEOASK, "ask", QUESTION, "--model", "reference"],
                          capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - begin
    if done.returncode != 0:
        sys.exit(f"geoask ask failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return seconds


def run_ask() -> None:
    """Print ``geoask ask`` wall times, cold (no server running) and warm."""
    subprocess.run([GEOASK, "server", "stop"], capture_output=True, check=False)
    cold = timed_ask()
    warm = [timed_ask() for _ in range(2)]
    print(f"geoask ask (reference model): cold {cold:.1f} s; warm "
          f"{', '.join(f'{w:.1f}' for w in warm)} s")


def main() -> None:
    """Measure and print (see the module docstring)."""
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=200, help="benchmark questions")
    parser.add_argument("--question-only", action="store_true", help="only geoask ask")
    parser.add_argument("--floor-runs", type=int, default=20, help="floor subflow runs")
    parser.add_argument("--label", default="", help="printed first (e.g. before/after)")
    args = parser.parse_args()
    if args.label:
        print(f"== {args.label}")
    if not args.question_only:
        run_floor(run_benchmark(args.limit), args.floor_runs)
    run_ask()


if __name__ == "__main__":
    main()
