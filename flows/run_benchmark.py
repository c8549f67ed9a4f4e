"""The benchmark flow: every case a question subflow run, concurrently, resumable, reported.

Run it with ``geoask bench [--model M] [--variant V|all] [--tasks-file F] [--limit N]
[--repeat K] [--out DIR]`` or ``run_benchmark(...)``. Each (variant, repeat, case) is one
``benchmark-case`` task that runs the ``answer-question`` flow as a subflow (inspectable in the
UI, named ``<case id>-<variant>-r<repeat>``) and persists the run under ``<out>/runs/``; the
task runner is a ``ThreadPoolTaskRunner`` (``GEOASK_BENCH_CONCURRENCY`` threads) or, with
``GEOASK_BENCH_TASK_RUNNER=dask``, prefect-dask's ``DaskTaskRunner``. Runs already persisted
are not redone, so an interrupted benchmark resumes (unless ``dated``: then the run writes
into a new ``<out>/<UTC date-time>`` folder of its own and measures every question afresh, as
the nightly schedule does); a question whose task could not even run
(a Prefect API error such as 503) is resubmitted up to twice, then saved as an
``infrastructure`` failure. Runs that ended on an infrastructure failure (database, model
endpoint, sandbox, Prefect API) are scored with that root cause and redone on resume. The
report (SSA, FEPSR and routing accuracy with bootstrap 95% intervals over cases, tool calls,
retries, time, tokens, per difficulty and category; ``geoask.bench.metrics``/
``geoask.bench.report``) is written as report.json, report.md, report.csv, scores.csv,
ssa_by_difficulty.png and variants.png under ``<out>`` and
published as the Prefect table ``benchmark-report`` and markdown ``benchmark-summary``
artifacts.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger
from prefect.futures import as_completed
from prefect.task_runners import TaskRunner, ThreadPoolTaskRunner

from flows.benchmark_case import answer_case
from geoask.bench.parameters import (
    CaseLimit,
    Repeat,
    default_out_dir,
    load_benchmark_run,
    parse_variants,
)
from geoask.bench.runs import (
    CaseRun,
    RunKey,
    infrastructure_run,
    pending_runs,
    run_keys,
    save_run,
)
from geoask.db.urls import configured_database_name
from geoask.models.served import check_served_model, check_served_paths, in_deployment_run
from geoask.run.stops import run_started
from geoask.settings import Settings, get_settings
from tasks.benchmark import report_benchmark

ProgressListener = Callable[[int, int, CaseRun | None], None]
"""``(finished, total, run)``: told after each question run of the current benchmark."""

_listeners: list[ProgressListener] = []
ORCHESTRATION_RETRIES = 2
"""Rounds in which questions whose task could not run (Prefect API errors) are resubmitted."""


def add_progress_listener(listener: ProgressListener) -> None:
    """Be told about each finished question (the CLI's progress bar)."""
    _listeners.append(listener)


def remove_progress_listener(listener: ProgressListener) -> None:
    """Stop telling ``listener``."""
    if listener in _listeners:
        _listeners.remove(listener)


def dated_folder(parent: Path) -> Path:
    """A new folder ``<parent>/<UTC date-time, e.g. 20261204T020000Z>`` (``-2``... if taken)."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    parent.mkdir(parents=True, exist_ok=True)
    for suffix in ("", *(f"-{n}" for n in range(2, 100))):
        try:
            (folder := parent / f"{stamp}{suffix}").mkdir()
        except FileExistsError:
            continue
        return folder
    raise FileExistsError(f"no free dated folder under {parent} for {stamp}")


def task_runner_for(settings: Settings) -> TaskRunner[Any]:
    """The task runner the settings choose: threads, or Dask (a cluster address or local).

    The local Dask cluster runs its workers as threads of this process
    (``GEOASK_BENCH_DASK_WORKERS`` workers, ``GEOASK_BENCH_CONCURRENCY`` threads each).
    """
    if settings.bench_task_runner == "dask":
        from prefect_dask import DaskTaskRunner

        if settings.bench_dask_address:
            return DaskTaskRunner(address=settings.bench_dask_address)
        return DaskTaskRunner(cluster_kwargs={
            "n_workers": settings.bench_dask_workers, "processes": False,
            "threads_per_worker": settings.bench_concurrency, "dashboard_address": None,
        })
    return ThreadPoolTaskRunner(max_workers=settings.bench_concurrency)


@flow(name="run-benchmark", validate_parameters=False)
def run_benchmark(
    model: str = "reference",
    variant: str = "FULL",
    tasks_file: str | None = None,
    limit: CaseLimit | None = None,
    repeat: Repeat = 1,
    out_dir: str | None = None,
    dated: bool = False,
) -> dict[str, Any]:
    """Run the benchmark; see the module docstring. Returns the report as JSON data.

    Args:
        model: ``reference``, ``reference-faulty`` or a model string for every agent.
        variant: a variant, a comma-separated list, or ``all``.
        tasks_file: a case file or folder in the documented schema (default benchmark/cases);
            its ``catalog:``/``database:`` (one of each per run) choose what the cases run on.
        limit: only the first N cases.
        repeat: runs per case and variant, 1 to ``MAX_REPEAT`` (mean and bootstrap 95%
            interval are reported).
        out_dir: folder of persisted runs and report files (default: :func:`default_out_dir`).
        dated: write into a new dated sub-folder of ``out_dir`` (:func:`dated_folder`), so
            nothing is resumed: every question is measured afresh (the nightly schedule).

    Raises:
        GeoaskError: the cases cannot be read, or a parameter or model setting is invalid
            (in a run started from a deployment: a ``model`` the server does not offer, or a
            ``tasks_file``/``out_dir`` outside its folders).

    """
    run_started()  # the run exists: a stop's sweep finds it (geoask.run.stops)
    started = time.perf_counter()
    settings = get_settings()
    if in_deployment_run():  # API callers get only configured models and the server's folders
        check_served_model(model, settings)
        check_served_paths(tasks_file, out_dir, settings)
    cases, target = load_benchmark_run(tasks_file, limit)
    folder = Path(out_dir) if out_dir else default_out_dir(model, settings)
    if dated:
        folder = dated_folder(folder)
    keys = run_keys(model, parse_variants(variant), repeat, cases)
    todo = pending_runs(keys, folder)
    by_id = {case.id: case for case in cases}
    finished = len(keys) - len(todo)
    for listener in _listeners:
        listener(finished, len(keys), None)
    crashed: dict[RunKey, BaseException] = dict.fromkeys(todo, RuntimeError("not run"))
    for _attempt in range(1 + ORCHESTRATION_RETRIES):
        futures = {answer_case.submit(by_id[key.case_id], key, str(folder), target): key
                   for key in crashed}
        crashed = {}
        for future in as_completed(list(futures)):
            try:
                run = future.result()
            except Exception as error:  # orchestration failed (e.g. API 503): try again
                get_run_logger().warning("question %s did not run (%s); it is tried again",
                                         futures[future].case_id, error)
                crashed[futures[future]] = error
                continue
            finished += 1
            for listener in _listeners:
                listener(finished, len(keys), run)
        if not crashed:
            break
    for key, failure in crashed.items():  # kept as infrastructure failures, redone on resume
        save_run(infrastructure_run(key, failure), folder)
    meta = {"model": model, "variant": variant, "cases": len(cases), "repeat": repeat,
            "catalog": str(target.catalog or settings.catalog_path),
            "database": target.database or configured_database_name(settings),
            "ran": len(todo), "resumed": len(keys) - len(todo), "out_dir": str(folder),
            "wall_time_s": time.perf_counter() - started}
    return report_benchmark(cases, keys, str(folder), meta)


def benchmark_flow(settings: Settings | None = None) -> Any:
    """``run_benchmark`` with the task runner the settings choose."""
    return run_benchmark.with_options(task_runner=task_runner_for(settings or get_settings()))
