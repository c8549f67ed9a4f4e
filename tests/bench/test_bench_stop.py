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
