"""The benchmark and ``bench verify`` build their run from settings like every other entry point.

Before the composition root, the benchmark's SQL runner dropped ``GEOASK_SQL_MAX_RESULT_MIB``;
these tests give every run setting a non-default value and check that it reaches the parts -
and that the result-size cap really stops a large result in a benchmark run's runner.
"""

from __future__ import annotations

import pytest

import geoask.bench.runs
from geoask.bench.runs import shared_parts
from geoask.errors import QueryExecutionError
from geoask.run.composition import program_runner
from geoask.settings import Settings
from geoask.sql.context import GuardContext
from geoask.sql.step import run_statement

pytestmark = pytest.mark.db

CHANGED = {
    "statement_timeout_s": 7,
    "sql_max_result_mib": 1,
    "sql_row_cap": 1234,
    "sandbox_timeout_s": 9.5,
    "sandbox_memory_mib": 777,
    "sandbox_cpu_s": 11,
}


@pytest.fixture
def changed(run_settings: Settings) -> Settings:
    return run_settings.model_copy(update=CHANGED)


def test_benchmark_question_parts_honour_every_run_setting(database, changed, monkeypatch):
    monkeypatch.setattr(geoask.bench.runs, "_SHARED", {})
    parts = shared_parts(changed)
    assert parts.sql_runner.statement_timeout_s == 7
    assert parts.sql_runner.max_result_bytes == 1 * 1024 * 1024
    limits = parts.sandbox.default_limits
    assert (limits.timeout_s, limits.memory_mib, limits.cpu_s) == (9.5, 777, 11)


def test_benchmark_result_size_cap_stops_a_large_result(database, changed, monkeypatch, tmp_path):
    monkeypatch.setattr(geoask.bench.runs, "_SHARED", {})
    runner = shared_parts(changed).sql_runner
    context = GuardContext.from_settings(changed, policy="postgis")
    with pytest.raises(QueryExecutionError) as caught:
        run_statement("SELECT a.geom, b.geom AS g2 FROM demo.us_states a, demo.us_states b",
                      context, runner, str(tmp_path))
    assert caught.value.kind == "result_too_large"
    assert not list(tmp_path.iterdir())  # nothing half-written


def test_bench_verify_runner_honours_every_run_setting(database, changed):
    runner = program_runner(changed)
    assert runner.guard.row_cap == 1234
    assert runner.sql_runner.statement_timeout_s == 7
    assert runner.sql_runner.max_result_bytes == 1 * 1024 * 1024
    assert runner.sandbox.default_limits.timeout_s == 9.5
