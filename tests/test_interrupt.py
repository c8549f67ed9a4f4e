"""geoask.base.interrupt: a stopped command exits 130/143 at once, keeps and ends children."""

from __future__ import annotations

import contextvars
import signal
import subprocess
import sys
import time

import psutil
import pytest

from geoask.base.interrupt import run_until_stopped

STOPPABLE = """
import logging, subprocess, sys, time
from geoask.base.interrupt import add_stop_hook, run_until_stopped
child = subprocess.Popen(["sleep", "120"])
print(child.pid, flush=True)

def work():  # fails noisily all the time, as a question does once its sandbox is killed
    while True:
        logging.getLogger("work").error("a step failed")
        time.sleep(0.02)

add_stop_hook(lambda name: time.sleep(0.3))  # a slow hook: the work logs on meanwhile
run_until_stopped(work, lambda: "3 of 9 things kept; rerun to resume")
"""


def test_work_result_and_errors_come_back_to_the_caller():
    assert run_until_stopped(lambda: 42, lambda: "nothing") == 42
    with pytest.raises(ZeroDivisionError):
        run_until_stopped(lambda: 1 / 0, lambda: "nothing")


def test_work_runs_in_the_callers_context():
    # geoask bench enters prefect_api() and then runs the flow in the worker thread: without
    # the caller's context there, Prefect fell back to a temporary SQLite server.
    from prefect.settings import PREFECT_API_URL, temporary_settings

    marker: contextvars.ContextVar[str] = contextvars.ContextVar("marker", default="unset")
    token = marker.set("caller")
    try:
        with temporary_settings(updates={PREFECT_API_URL: "http://127.0.0.1:4999/api"}):
            seen = run_until_stopped(lambda: (marker.get(), PREFECT_API_URL.value()),
                                     lambda: "nothing")
    finally:
        marker.reset(token)
    assert seen == ("caller", "http://127.0.0.1:4999/api")


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_ends_the_process_and_its_children_at_once(signum):
    process = subprocess.Popen([sys.executable, "-c", STOPPABLE], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None
    child = int(process.stdout.readline())
    time.sleep(0.5)  # the worker thread is asleep in its work
    begin = time.monotonic()
    process.send_signal(signum)
    _, errors = process.communicate(timeout=30)
    elapsed = time.monotonic() - begin
    assert process.returncode == 128 + signum, errors
    assert elapsed < 5.0
    name = signal.Signals(signum).name
    assert errors.strip().splitlines()[-1] == (
        f"stopped by {name}: 3 of 9 things kept; rerun to resume")
    assert (not psutil.pid_exists(child)
            or psutil.Process(child).status() == psutil.STATUS_ZOMBIE)


def test_a_stop_spares_detached_servers_and_ends_other_children():
    # Ctrl-C on the `geoask ask` that started the background server killed it (attack 3).
    from geoask.base import interrupt
    server = subprocess.Popen(["sleep", "60"], start_new_session=True)
    sandbox = subprocess.Popen(["sleep", "60"])
    try:
        interrupt.detach(server.pid)
        interrupt.end_child_processes(grace_s=5)
        sandbox.wait(timeout=5)  # ended (psutil reaped it, so no return code is left here)
        assert server.poll() is None
    finally:
        interrupt._detached.discard(server.pid)
        for process in (server, sandbox):
            process.kill()
            process.wait()
