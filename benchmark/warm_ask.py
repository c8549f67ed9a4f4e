"""Time from ``geoask ask`` to the printed answer: the warm worker against an in-process run.

Run with ``geoask server`` running (same settings and code as this checkout; the demo database
up and loaded)::

    .venv/bin/python benchmark/warm_ask.py [--runs 10] [--case states-006] [--case airports-001]

For each benchmark case it runs ``geoask ask QUESTION --model reference`` as a fresh process
(the console script a person types: interpreter start-up and imports included) ``--runs``
times each way, alternating:

- warm: handed to the server's warm question worker (``GEOASK_SERVER_WORKER`` true, the
  default); the benchmark first checks that the worker takes this checkout's questions
  (:func:`geoask.service.worker.ask_worker`; a stale worker answers 409 and the CLI would
  silently answer in-process instead);
- in-process: ``GEOASK_SERVER_WORKER=false``, the flow run in the CLI's own process (on the
  same Prefect server).

It prints, per case and way, p50 and p95 of the time until the answer's first line was
printed and until the process exited (the in-process run waits for its GeoPackage), in
seconds, and exits 1 when a run did not answer.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]
GEOASK = [sys.executable, "-m", "geoask"]


def timed_ask(question: str, worker: bool) -> tuple[float, float]:
    """Seconds to the first printed line and to exit of one fresh ``geoask ask``."""
    env = {**os.environ, "GEOASK_SERVER_WORKER": "true" if worker else "false"}
    begin = time.perf_counter()
    with subprocess.Popen([*GEOASK, "ask", question, "--model", "reference"], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) as ask:
        assert ask.stdout is not None
        first = ask.stdout.readline()
        printed = time.perf_counter() - begin
        rest = ask.stdout.read()
    if ask.returncode != 0 or "artifacts:" not in first + rest:
        raise SystemExit(f"geoask ask exited {ask.returncode}: {(first + rest)[-300:]}")
    return printed, time.perf_counter() - begin


def percentile(values: list[float], share: float) -> float:
    """The ``share`` percentile (0-1) of ``values``, linearly interpolated."""
    ordered = sorted(values)
    position = share * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def worker_takes_questions(question: str) -> bool:
    """Whether the running server's warm worker answers this checkout's questions."""
    from geoask.service.worker import ask_worker
    from geoask.settings import get_settings

    return ask_worker(get_settings(), question, model="reference") is not None


def main() -> None:
    """Measure and print the two ways' p50/p95 per case."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--case", action="append", dest="cases")
    args = parser.parse_args()
    from geoask.cases.loader import load_cases

    cases = args.cases or ["states-006", "airports-001"]
    loaded = {item.case.id: item.case.question for item in
              load_cases(ROOT / "benchmark" / "cases", only=cases)}
    if not worker_takes_questions(loaded[cases[0]]):
        raise SystemExit("no warm worker takes this checkout's questions: start `geoask "
                         "server` with the same settings and code, then run this again")
    load = os.getloadavg()[0]
    print(f"{args.runs} fresh `geoask ask --model reference` runs per case and way "
          f"(load average {load:.1f}); seconds, p50 / p95")
    print(f"{'case':<14}{'way':<12}{'answer printed':>18}{'process exit':>18}")
    for case in cases:
        times: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
        for _ in range(args.runs):
            for worker in (True, False):
                times[worker].append(timed_ask(loaded[case], worker))
        for worker, label in ((True, "warm"), (False, "in-process")):
            printed = [t[0] for t in times[worker]]
            ended = [t[1] for t in times[worker]]
            print(f"{case:<14}{label:<12}"
                  f"{percentile(printed, 0.5):>9.2f} / {percentile(printed, 0.95):<6.2f}"
                  f"{percentile(ended, 0.5):>9.2f} / {percentile(ended, 0.95):<6.2f}")
        warm, cold = (statistics.median(t[0] for t in times[w]) for w in (True, False))
        print(f"{'':<14}{'in-process / warm':<20}{cold / warm:>5.1f}x")


if __name__ == "__main__":
    main()
