"""Prefect server start time and the overhead of a run through the API over a direct run.

Run (the demo database must be up: ``geoask db up && geoask db load``; run as root for the
sandbox)::

    .venv/bin/python benchmark/service_overhead.py [--starts 3] [--repeats 5]

It starts ``geoask server`` as a subprocess (its own PREFECT_HOME and Prefect database in the
embedded PostgreSQL cluster) ``--starts`` times
and prints, per start, the time until ``/api/health`` answered and until the deployment
``answer-question`` was registered. Then, on one running server whose ``answer-question`` is
the scripted-model flow of tests/service/scripted_flow.py, it answers two demo questions
(SQL only; SQL then Python) ``--repeats`` times each way, alternating:

- direct: the flow called in this (warm) process, as ``geoask ask`` does;
- via API: :func:`geoask.service.client.run_deployment_and_wait` from this process (create the
  flow run, the served runner picks it up and runs it in a fresh subprocess, poll every 0.5 s,
  read the persisted result);
- and, once per question, both as fresh CLI processes: ``run_direct.py`` vs
  ``geoask ask --via-api`` (interpreter start-up and imports included).

Times are wall-clock seconds; the table shows median, min and max.
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
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "service")]

import geoask  # noqa: E402,F401  (offline environment before Prefect is imported)


def describe(values: list[float]) -> str:
    """``median (min-max)`` in seconds."""
    return f"{statistics.median(values):7.2f} ({min(values):.2f}-{max(values):.2f})"


def main() -> None:
    """Measure and print start times and the API overhead."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    import harness

    print("server start (geoask server -> /api/health, -> deployment registered), s")
    for number in range(args.starts):
        served = harness.acquire()
        print(f"  start {number + 1}: healthy {served.healthy_after_s:.1f}, "
              f"deployments ready {served.ready_after_s:.1f}")
        if number < args.starts - 1:
            harness.release()
    try:
        measure_runs(served, args.repeats)
    finally:
        harness.release()


def measure_runs(served, repeats: int) -> None:  # type: ignore[no-untyped-def]
    """Direct vs via-API runs of two demo questions on the running ``served`` server."""
    os.environ.update({k: v for k, v in served.environment.items() if k.startswith("GEOASK_")})
    os.environ["PREFECT_API_URL"] = served.api_url
    import harness
    from scripted_flow import QUESTIONS, answer_question

    from geoask.service.client import ask_via_api
    from geoask.settings import get_settings

    get_settings.cache_clear()
    settings = get_settings().model_copy(update={"server_api_url": served.api_url})
    print(f"\nrun times, s (median (min-max) of {repeats})")
    print(f"{'question':<18}{'direct':>22}{'via API':>22}{'overhead (median)':>20}")
    for name in ("filter_rank", "buffer_topology"):
        question = QUESTIONS[name]
        answer_question(question)  # warm-up: imports, schema index, sandbox runtime
        direct: list[float] = []
        via_api: list[float] = []
        phases: list[tuple[float, float]] = []
        for _ in range(repeats):
            begin = time.perf_counter()
            local = answer_question(question)
            direct.append(time.perf_counter() - begin)
            begin = time.perf_counter()
            remote = ask_via_api(question, settings=settings)
            via_api.append(time.perf_counter() - begin)
            assert local.answer == remote.answer, "the API run answered differently"
            phases.append(run_phases(settings, remote.flow_run_id))
        overhead = statistics.median(via_api) - statistics.median(direct)
        print(f"{name:<18}{describe(direct):>22}{describe(via_api):>22}{overhead:>20.2f}")
        print(f"{'':<18}via API: created -> flow started "
              f"{describe([p[0] for p in phases])}, flow started -> ended "
              f"{describe([p[1] for p in phases])}")
    print("\nfresh CLI processes, s (one run each)")
    for name in ("filter_rank", "buffer_topology"):
        environment = {**served.environment, "PREFECT_API_URL": served.api_url,
                       "GEOASK_SERVER_API_URL": served.api_url}
        direct_s = timed([sys.executable, str(ROOT / "tests" / "service" / "run_direct.py"),
                          QUESTIONS[name]], environment)
        api_s = timed([harness.GEOASK, "ask", QUESTIONS[name], "--via-api", "--json"],
                      environment)
        print(f"{name:<18} direct process {direct_s:6.2f}   geoask ask --via-api {api_s:6.2f}"
              f"   overhead {api_s - direct_s:6.2f}")


def run_phases(settings, flow_run_id) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """Seconds from the flow run's creation to its start, and from start to end (server times)."""
    from prefect import get_client

    from geoask.service.client import api_settings

    with api_settings(settings), get_client(sync_client=True) as client:
        run = client.read_flow_run(flow_run_id)
    assert run.start_time and run.end_time and run.created
    return ((run.start_time - run.created).total_seconds(),
            (run.end_time - run.start_time).total_seconds())


def timed(command: list[str], environment: dict[str, str]) -> float:
    """Wall time of ``command`` (which must succeed)."""
    begin = time.perf_counter()
    subprocess.run(command, env=environment, check=True, capture_output=True, timeout=900)
    return time.perf_counter() - begin


if __name__ == "__main__":
    main()
