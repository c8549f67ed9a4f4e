"""The supply of sandboxes started before they are needed (:mod:`sandbox.ready`).

A run taken from it is a sandbox started ahead like any other (fresh process, uid and folder,
the step's limits); runs with other limits are never served; a dead one is replaced; closing
the supply leaves no process, uid, mount or folder; ``GEOASK_SANDBOX_READY=0`` starts nothing.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from geoask.settings import Settings
from sandbox import host
from sandbox.bubblewrap import BubblewrapSandbox
from sandbox.host import uid_pids
from sandbox.models import SandboxLimits
from sandbox.ready import READY

pytestmark = pytest.mark.sandbox

LIMITS = SandboxLimits(memory_mib=1536, cpu_s=7)
PROBE = """
import json, os, sys
seen = sorted(os.listdir("/scratch")) + [p for p in ["/tmp/mine.txt"] if os.path.exists(p)]
open("/scratch/mine.txt", "w").write("x")
open("/tmp/mine.txt", "w").write("x")
limits = [l for l in open("/proc/self/limits") if "address" in l or "cpu time" in l]
with open("/proc/self/stat") as stat:
    host_pid_hidden = stat.read().split()[0] == "1"
print(json.dumps({"status": "success", "summary": "probed", "result": {
    "seen": seen, "limits": limits, "uid": os.getuid(), "pid1": host_pid_hidden,
    "preloaded": "geopandas" in sys.modules}}))
"""


def until(condition: Callable[[], bool], what: str, within_s: float = 30.0) -> None:
    """Wait for ``condition`` (the supply works in its own thread); fail naming ``what``."""
    deadline = time.monotonic() + within_s
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"waited {within_s} s for {what}")
        time.sleep(0.05)


@pytest.fixture
def supplied(sandbox_settings: Settings, tmp_path_factory) -> Iterator[BubblewrapSandbox]:
    """A sandbox keeping one run ready per limits, in its own work folder; closed after."""
    READY.close()  # the supply is the process's: runs earlier tests' sandboxes left on it go
    work = Path("/tmp") / f"geoask-ready-tests-{os.getpid()}-{time.monotonic_ns()}"
    sandbox = BubblewrapSandbox.from_settings(sandbox_settings.model_copy(update={
        "sandbox_work_dir": work, "sandbox_ready": 1}))
    yield sandbox
    READY.close()
    assert not list(work.iterdir()), "a ready run's folder was left"
    work.rmdir()


def warm(sandbox: BubblewrapSandbox, limits: SandboxLimits = LIMITS) -> None:
    """Ask twice for ``limits`` (the supply starts spares from the second request), then wait."""
    for _ in range(2):
        with sandbox.start(limits):
            pass
    until(lambda: READY.ready_count() == 1, "a ready run")


def ready_uids(sandbox: BubblewrapSandbox) -> set[int]:
    """The uids of the runs in ``sandbox``'s work folder (each run's rw folder is its uid's)."""
    return {(folder / "rw").stat().st_uid for folder in sandbox.work_dir.iterdir()}


def test_a_ready_run_runs_the_script_with_the_steps_limits(supplied):
    warm(supplied)
    with supplied.start(LIMITS) as started:
        assert READY.ready_count() == 0  # this one was taken: it waited, warm
        result = started.run(PROBE).protocol.result
    fresh = supplied.run(PROBE, limits=LIMITS).protocol.result
    assert result["limits"] == fresh["limits"]
    assert str(1536 * 1024 * 1024) in "".join(result["limits"])
    assert result["preloaded"] and result["pid1"] and result["seen"] == []
    until(lambda: READY.ready_count() == 1, "the taken run's replacement")


def test_each_take_gets_a_fresh_process_uid_and_folder(supplied):
    warm(supplied)
    with supplied.start(LIMITS) as first:
        first_uid, first_dir, first_pid = first.uid, first.run_dir, first._process.pid
        assert first.run(PROBE).status == "success"
    until(lambda: READY.ready_count() == 1, "the replacement")
    with supplied.start(LIMITS) as second:
        assert (second.uid, second.run_dir) != (first_uid, first_dir)
        assert second._process.pid != first_pid
        result = second.run(PROBE).protocol.result
    assert result["seen"] == []  # nothing of the first run's /scratch or /tmp
    assert not first_dir.exists() and uid_pids(first_uid) == []


def test_a_run_with_other_limits_is_not_served_from_the_supply(supplied):
    warm(supplied)
    waiting = ready_uids(supplied)
    other = LIMITS.model_copy(update={"cpu_s": 9})
    with supplied.start(other) as started:
        assert started.uid not in waiting and started.limits == other
        limits = "".join(started.run(PROBE).protocol.result["limits"])
    assert " 9 " in limits and " 7 " not in limits
    assert ready_uids(supplied) == waiting  # the ready run for LIMITS still waits


def test_a_ready_run_that_died_is_replaced_not_handed_out(supplied):
    warm(supplied)
    (dead_uid,) = ready_uids(supplied)
    for pid in uid_pids(dead_uid):
        os.kill(pid, signal.SIGKILL)
    until(lambda: not uid_pids(dead_uid), "the killed run's processes to end")
    with supplied.start(LIMITS) as started:
        assert started.uid != dead_uid
        assert started.run(PROBE).status == "success"
    until(lambda: dead_uid not in ready_uids(supplied), "the dead run's folder to go")


def test_close_leaves_no_process_uid_mount_or_folder(supplied):
    warm(supplied)
    uids = ready_uids(supplied)
    READY.close()
    assert READY.ready_count() == 0
    assert not list(supplied.work_dir.iterdir())
    for uid in uids:
        assert uid_pids(uid) == [] and uid not in host._UIDS_IN_USE
    assert str(supplied.work_dir) not in Path("/proc/self/mounts").read_text()


def test_setting_zero_starts_each_run_itself_and_keeps_none(sandbox_settings):
    sandbox = BubblewrapSandbox.from_settings(sandbox_settings.model_copy(
        update={"sandbox_ready": 0}))
    for _ in range(3):
        with sandbox.start(LIMITS) as started:
            assert started.run(PROBE).status == "success"
    time.sleep(1.0)  # a supply would have started a spare by now
    assert READY.ready_count() == 0 and not list(sandbox.work_dir.iterdir())


WARMING = """
import sys, time
from geoask.base.interrupt import run_until_stopped
from geoask.settings import get_settings
from sandbox.bubblewrap import BubblewrapSandbox
from sandbox.ready import READY

def work():
    sandbox = BubblewrapSandbox.from_settings(get_settings())
    for _ in range(2):
        sandbox.start().close()
    while READY.ready_count() < 1:
        time.sleep(0.05)
    (folder,) = sandbox.work_dir.iterdir()
    print((folder / "rw").stat().st_uid, flush=True)
    if sys.argv[1] == "wait":
        time.sleep(120)

run_until_stopped(work, lambda: "nothing")
"""


@pytest.mark.parametrize("ending", ["exit", "SIGTERM"])
def test_a_process_that_ends_leaves_no_ready_run(sandbox_settings, ending):
    work = Path("/tmp") / f"geoask-ready-{ending}-{os.getpid()}"
    environment = {**os.environ, "GEOASK_SANDBOX_WORK_DIR": str(work),
                   "GEOASK_SANDBOX_READY": "1",
                   "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    process = subprocess.Popen(
        [sys.executable, "-c", WARMING, "wait" if ending == "SIGTERM" else "exit"],
        env=environment, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert process.stdout is not None
    uid = int(process.stdout.readline())
    if ending == "SIGTERM":
        process.terminate()
    assert process.wait(timeout=60) == (143 if ending == "SIGTERM" else 0)
    assert uid_pids(uid) == [] and not list(work.iterdir())
    assert str(work) not in Path("/proc/self/mounts").read_text()
    work.rmdir()
