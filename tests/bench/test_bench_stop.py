"""`geoask bench` stopped by SIGTERM: ends in seconds, keeps what finished, nothing half-written.

A real `geoask bench` subprocess (reference model, real PostGIS and sandbox, the session's
Prefect test server) is sent SIGTERM as soon as its first question is saved. Before issue 16 the
process hung on connection errors after its temporary server was killed (SIGKILL needed).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from geoask.bench.runs import CaseRun

pytestmark = [pytest.mark.db, pytest.mark.sandbox]
GEOASK = str(Path(sys.executable).with_name("geoask"))
QUESTIONS = 8


def test_sigterm_ends_bench_within_seconds_keeping_finished_runs(database, tmp_path):
    from prefect.settings import PREFECT_API_URL

    out, logs = tmp_path / "out", tmp_path / "logs"
    logs.mkdir()
    env = {**os.environ, "PREFECT_API_URL": str(PREFECT_API_URL.value()),
           "GEOASK_BENCH_CONCURRENCY": "2"}
    with (logs / "stdout").open("w") as stdout, (logs / "stderr").open("w") as stderr:
        process = subprocess.Popen([GEOASK, "bench", "--limit", str(QUESTIONS), "--out", str(out)],
                                   env=env, stdout=stdout, stderr=stderr)
        try:
            deadline = time.monotonic() + 400
            while not list((out / "runs").rglob("*.json")):
                assert process.poll() is None, (logs / "stderr").read_text()[-3000:]
                assert time.monotonic() < deadline, "no question finished in time"
                time.sleep(0.1)
            process.send_signal(signal.SIGTERM)
            begin = time.monotonic()
            process.wait(timeout=60)
            elapsed = time.monotonic() - begin
        finally:
            if process.poll() is None:
                process.kill()
    messages = (logs / "stderr").read_text()
    assert elapsed < 5.0, f"SIGTERM took {elapsed:.1f} s to end geoask bench"
    assert process.returncode == 128 + signal.SIGTERM, messages[-3000:]
    stops = [line for line in messages.splitlines() if line.startswith("stopped by SIGTERM")]
    assert len(stops) == 1 and "kept under" in stops[0], messages[-3000:]
    files = [path for path in out.rglob("*") if path.is_file()]
    assert not [path for path in files if ".tmp-" in path.name]  # nothing half-written
    kept = [CaseRun.model_validate_json(path.read_text()) for path in files]
    assert 1 <= len(kept) < QUESTIONS  # really stopped, and what finished is kept
    assert {run.status for run in kept} == {"answered"}  # none in flight recorded as failed
    assert not (out / "report.json").exists()
    # The runs it had started do not stay Running on the server (geoask.run.stops).
    benchmark_run, *_ = _flow_runs("run-benchmark")
    assert benchmark_run.state.is_crashed(), benchmark_run.state
    assert "stopped by SIGTERM" in (benchmark_run.state.message or "")
    questions = _flow_runs("answer-question", benchmark_run.start_time)
    assert questions and not [run.name for run in questions if run.state.is_running()]
    assert {run.state.type.value for run in questions} <= {"COMPLETED", "CRASHED"}


def _flow_runs(flow_name, started_after=None):
    """The flow runs of ``flow_name`` (newest first), started after ``started_after``."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (
        FlowFilter,
        FlowFilterName,
        FlowRunFilter,
        FlowRunFilterStartTime,
    )
    from prefect.client.schemas.sorting import FlowRunSort

    runs_filter = (FlowRunFilter(start_time=FlowRunFilterStartTime(after_=started_after))
                   if started_after else None)
    with get_client(sync_client=True) as client:
        return client.read_flow_runs(
            flow_filter=FlowFilter(name=FlowFilterName(any_=[flow_name])),
            flow_run_filter=runs_filter, sort=FlowRunSort.START_TIME_DESC, limit=50)
