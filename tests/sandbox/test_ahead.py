"""A sandbox started ahead of its script (:mod:`sandbox.ahead`): isolated, limited and single-use
exactly like a fresh run, reading the inputs as they are when the script is handed over.

Also the bootstrap's fast exit (:func:`sandbox.bootstrap._leave`): what a script's end must do
(flush a file it left open, run ``atexit`` functions, keep its exit status) still happens.
"""

from __future__ import annotations

import gzip
import json
import os
import time
from pathlib import Path

import fsspec
import pytest

from geoask.compute.step import run_compute
from geoask.errors import SandboxError
from sandbox.bubblewrap import BubblewrapSandbox
from sandbox.host import uid_pids
from sandbox.models import SandboxLimits, StartedSandbox

pytestmark = pytest.mark.sandbox

PROBE = """
import json, os, socket, sys
def attempt(action):
    try:
        action()
        return "allowed"
    except Exception as error:
        return type(error).__name__
def connect():
    socket.create_connection(("127.0.0.1", 55432), timeout=1)
limits = [line for line in open("/proc/self/limits") if line.startswith(("Max address",
          "Max cpu", "Max file size", "Max open", "Max processes"))]
print(json.dumps({"status": "success", "summary": "probed", "result": {
    "fork": attempt(os.fork), "connect": attempt(connect),
    "etc": attempt(lambda: open("/etc/passwd").read()),
    "write_input": attempt(lambda: open("/input/data.txt", "w").write("x")),
    "uid": os.getuid(), "limits": limits, "preloaded": "geopandas" in sys.modules,
    "data": open("/input/data.txt").read()}}))
"""


def probe(outcome) -> dict:
    assert outcome.status == "success", outcome.model_dump_json(indent=1)
    return outcome.protocol.result


def test_isolation_limits_and_inputs_are_those_of_a_fresh_run(real_sandbox, tmp_path):
    data = tmp_path / "data.txt"
    data.write_text("fresh")
    fresh = probe(real_sandbox.run(PROBE, [data]))
    with real_sandbox.start() as started:
        assert isinstance(started, StartedSandbox)
        data.write_text("written by the SQL step after the start")
        ahead = probe(run_compute(PROBE, [data], started).outcome)
    assert ahead["data"] == "written by the SQL step after the start"
    assert fresh["data"] == "fresh"
    for key in ("fork", "connect", "etc", "write_input", "uid", "limits"):
        assert ahead[key] == fresh[key], key
    assert fresh["fork"] != "allowed" and fresh["connect"] != "allowed"
    assert fresh["etc"] != "allowed" and fresh["write_input"] != "allowed"
    assert (fresh["preloaded"], ahead["preloaded"]) == (False, True)


def test_a_started_sandbox_runs_once_and_leaves_nothing(real_sandbox, tmp_path):
    started = real_sandbox.start()
    uid, folder = started.uid, started.run_dir
    assert folder.is_dir()
    outcome = started.run('print(\'{"status": "success", "summary": "one", "result": {}}\')')
    assert outcome.status == "success"
    with pytest.raises(SandboxError, match="runs one script"):
        started.run("print(1)")
    assert not folder.exists() and uid_pids(uid) == []


def test_a_started_sandbox_nobody_used_is_ended_at_close(real_sandbox):
    with real_sandbox.start() as started:
        uid, folder = started.uid, started.run_dir
        time.sleep(0.5)
        assert uid_pids(uid)  # it is running, waiting for its script
    assert not folder.exists() and uid_pids(uid) == []
    assert not list(real_sandbox.work_dir.iterdir())


def test_the_wall_clock_counts_from_the_hand_over(sandbox_settings):
    sandbox = BubblewrapSandbox.from_settings(sandbox_settings)
    limits = sandbox.default_limits.model_copy(update={"timeout_s": 2.0})
    with sandbox.start(limits) as started:
        time.sleep(2.5)  # longer than the wall clock: waiting for the script does not count
        quick = started.run('print(\'{"status": "success", "summary": "ok", "result": {}}\')')
    assert quick.status == "success"
    with sandbox.start(limits) as started:
        endless = started.run("while True:\n    pass\n")
    assert endless.status == "timeout"


def test_a_missing_input_is_refused_and_the_run_ended(real_sandbox, tmp_path):
    started = real_sandbox.start()
    with pytest.raises(SandboxError, match="does not exist"):
        started.run("print(1)", [tmp_path / "absent.geojson"])
    assert not started.run_dir.exists() and uid_pids(started.uid) == []


@pytest.fixture(params=["fresh", "ahead"])
def run_to_its_end(real_sandbox, request):
    """Runs a script in a fresh sandbox, or in one started ahead; its outcome."""
    def run(script: str):
        if request.param == "fresh":
            return real_sandbox.run(script)
        with real_sandbox.start() as started:
            return started.run(script)
    return run


def test_the_fast_exit_keeps_what_a_scripts_end_does(real_sandbox, run_to_its_end):
    script = (
        "import atexit, json, sys\n"
        "left_open = open('/scratch/unclosed.txt', 'w')\n"
        "left_open.write('kept ' * 1000)\n"
        "atexit.register(lambda: open('/scratch/atexit.txt', 'w').write('ran'))\n"
        "print(json.dumps({'status': 'success', 'summary': 's', 'result': {}}))\n"
        "sys.stderr.write('written before the stream was replaced')\n"
        "sys.stderr = open('/scratch/quiet.log', 'w')  # e.g. silencing a noisy library\n"
    )
    outcome = run_to_its_end(script)
    assert outcome.status == "success"
    sizes = {artifact.name: artifact.size_bytes for artifact in outcome.artifacts}
    assert sizes == {"unclosed.txt": 5000, "atexit.txt": 3, "quiet.log": 0}
    assert outcome.stderr.text.endswith("written before the stream was replaced")
    assert real_sandbox.run("import sys\nsys.exit(3)\n").exit_code == 3


def test_a_compressed_writer_left_open_in_a_cycle_is_complete(run_to_its_end):
    script = (
        "import gzip, json\n"
        "class Holder:\n"
        "    pass\n"
        "holder = Holder()\n"
        "holder.me = holder  # a reference cycle: releasing the globals does not free it\n"
        "holder.out = gzip.open('/scratch/rows.csv.gz', 'wt')\n"
        "holder.out.write('id,value\\n' + ''.join(f'{i},{i * i}\\n' for i in range(2000)))\n"
        "print(json.dumps({'status': 'success', 'summary': 's', 'result': {}}))\n"
    )
    outcome = run_to_its_end(script)
    assert outcome.status == "success"
    (artifact,) = outcome.artifacts
    with fsspec.open(artifact.uri, "rb") as handle:
        lines = gzip.decompress(handle.read()).decode().splitlines()
    assert lines[0] == "id,value" and lines[-1] == "1999,3996001" and len(lines) == 2001


def test_a_broken_seccomp_program_stops_the_run_before_the_script(real_sandbox, monkeypatch):
    from sandbox import seccomp

    monkeypatch.setattr(seccomp, "machine_program", lambda: b"")
    outcome = real_sandbox.run("open('/scratch/ran.txt', 'w').write('the script ran')\n")
    assert outcome.status != "success" and not outcome.artifacts
    assert "seccomp" in outcome.stderr.text


def test_limits_given_at_the_start_apply(sandbox_settings):
    sandbox = BubblewrapSandbox.from_settings(sandbox_settings)
    limits = SandboxLimits(memory_mib=1536, cpu_s=7)
    script = ("import json\nrows = [l for l in open('/proc/self/limits') if 'address' in l or "
              "'cpu time' in l]\nprint(json.dumps({'status': 'success', 'summary': 'l', "
              "'result': {'rows': rows}}))\n")
    with sandbox.start(limits) as started:
        rows = started.run(script).protocol.result["rows"]
    text = "".join(rows)
    assert str(1536 * 1024 * 1024) in text and " 7 " in text
    assert json.dumps(rows) == json.dumps(sandbox.run(script, limits=limits).protocol.result[
        "rows"])
    assert os.geteuid() == 0 and Path(sandbox.work_dir).is_dir()
