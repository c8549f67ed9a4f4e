"""geoask.service.watch: a command ends in one line, exit 5, when its API or database is gone."""

from __future__ import annotations

import socket
import subprocess
import sys

import psutil
import pytest

from geoask.service import watch
from geoask.service.server import free_port

WATCHED = """
import logging, subprocess, sys, time
from geoask.base.interrupt import run_until_stopped
from geoask.service.watch import api_probe, watch_infrastructure
child = subprocess.Popen(["sleep", "120"])
print(child.pid, flush=True)

def work():  # a benchmark whose server went away: its questions fail noisily
    while True:
        logging.getLogger("prefect").error("Unable to acquire concurrency slots")
        print("Traceback (most recent call last): ...", file=sys.stderr, flush=True)
        time.sleep(0.05)

with watch_infrastructure([api_probe("http://127.0.0.1:%d/api")]):
    run_until_stopped(work, lambda: "3 of 9 questions finished and kept; rerun to resume")
"""


def test_a_refused_api_ends_the_command_in_one_line_with_exit_5():
    port = free_port()  # nothing listens there: every probe is refused
    process = subprocess.run([sys.executable, "-c", WATCHED % port], capture_output=True,
                             text=True, timeout=60, check=False)
    child = int(process.stdout.splitlines()[0])
    assert process.returncode == 5, process.stderr
    last = process.stderr.strip().splitlines()[-1]
    assert last.endswith(f"stopped: the Prefect API at http://127.0.0.1:{port}/api refuses "
                         "connections: 3 of 9 questions finished and kept; rerun to resume")
    after = process.stderr.split("stopped: the Prefect API")[1]
    assert "Traceback" not in after and "concurrency" not in after  # nothing after the line
    assert (not psutil.pid_exists(child)
            or psutil.Process(child).status() == psutil.STATUS_ZOMBIE)


def _failing(error: Exception) -> watch.Probe:
    def check() -> None:
        raise error

    return watch.Probe("the thing", check)


def test_a_refused_probe_is_gone_sooner_than_a_silent_one():
    refused, silent = _failing(watch.Refused("refused")), _failing(TimeoutError("slow"))
    assert not refused.gone(100.0) and not silent.gone(100.0)
    assert refused.gone(100.0 + watch.REFUSED_FOR_S) and refused.refused
    assert not silent.gone(100.0 + watch.REFUSED_FOR_S)
    assert silent.gone(100.0 + watch.SILENT_FOR_S) and not silent.refused


def test_an_answer_resets_the_failure_clock():
    answers = iter([watch.Refused("down"), None, watch.Refused("down"), watch.Refused("down")])

    def check() -> None:
        if (error := next(answers)) is not None:
            raise error

    probe = watch.Probe("the thing", check)
    assert not probe.gone(0.0) and not probe.gone(1.0)  # refused, then answered
    assert not probe.gone(2.5)  # refused again: the clock starts over
    assert probe.gone(2.5 + watch.REFUSED_FOR_S)


def test_the_database_probe_accepts_a_listener_and_refuses_a_closed_port():
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        watch.database_probe("127.0.0.1", listener.getsockname()[1]).check()
    with pytest.raises(watch.Refused):
        watch.database_probe("127.0.0.1", free_port()).check()
    with pytest.raises(watch.Refused):
        watch.database_probe("/nonexistent-socket-dir", 5432).check()


def test_a_stopped_geoask_server_is_gone_at_once_by_its_record(tmp_path):
    import os

    from geoask.service import state_file
    from geoask.settings import Settings

    settings = Settings(home=tmp_path)
    record = state_file.ServerState(api_url="http://127.0.0.1:1/api", pid=os.getpid(), port=1,
                                    mode="background", log_path="x", database="sqlite")
    state_file.write_state(settings, record)
    probes = watch.infrastructure_probes(settings, record.api_url, None)
    assert [p.name for p in probes] == ["the Prefect API at http://127.0.0.1:1/api",
                                        f"the geoask Prefect server (pid {os.getpid()})"]
    kept = probes[1]
    assert not kept.gone(10.0)  # the record names it
    state_file.remove_state(settings)  # what `geoask server` does first when stopped
    assert kept.gone(11.0)  # no grace: the server is going
    assert kept.gone_text == f"the geoask Prefect server (pid {os.getpid()}) was stopped"
    assert len(watch.infrastructure_probes(settings, "http://elsewhere:4200/api", None)) == 1
