"""Every geoask task is never cached and never persists its result (tasks/options.py)."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import pytest
from prefect import Task, flow, task
from prefect.cache_policies import NO_CACHE
from prefect.settings import (
    PREFECT_LOCAL_STORAGE_PATH,
    PREFECT_RESULTS_PERSIST_BY_DEFAULT,
    temporary_settings,
)

import tasks
from tasks.options import TASK


def _geoask_tasks() -> list[Task]:
    found = []
    for module_info in pkgutil.iter_modules(tasks.__path__):
        module = importlib.import_module(f"tasks.{module_info.name}")
        found += [value for value in vars(module).values()
                  if isinstance(value, Task) and value.__module__ == module.__name__]
    return found


def test_every_task_of_the_tasks_package_uses_the_shared_options() -> None:
    found = _geoask_tasks()
    assert len(found) >= 20  # intent ... answer, sql, python, react, benchmark, loading
    offenders = [t.name for t in found if t.persist_result is not False
                 or t.cache_policy is not NO_CACHE]
    assert offenders == []


@pytest.mark.usefixtures("prefect_harness")
def test_only_the_flow_result_is_written_where_results_persist_by_default(tmp_path: Path) -> None:
    """As in ``geoask server``'s processes: the flow's result is stored, no task's is."""
    def add_one(number: int) -> int:
        return number + 1

    shared = task(name="with-options", **TASK)(add_one)
    plain = task(name="without-options")(add_one)

    @flow(name="persist-check")
    def run(with_plain: bool) -> int:
        return shared(1) + (plain(1) if with_plain else 0)

    for with_plain, store in ((False, tmp_path / "shared"), (True, tmp_path / "plain")):
        with temporary_settings(updates={PREFECT_RESULTS_PERSIST_BY_DEFAULT: True,
                                         PREFECT_LOCAL_STORAGE_PATH: store}):
            run(with_plain)
    assert len(list((tmp_path / "shared").iterdir())) == 1  # the flow run's result
    assert len(list((tmp_path / "plain").iterdir())) == 2  # ... and the plain task's
