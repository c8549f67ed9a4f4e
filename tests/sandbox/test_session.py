"""The persistent sandbox session: the contract (fake and real alike) and the real one's bounds.

The contract tests run against :class:`sandbox.fake.FakeSandbox`'s session and the bubblewrap
one, so the fake that other components' unit tests use behaves like the real session.
"""

from __future__ import annotations

import json
from pathlib import Path

import fsspec
import pytest

from geoask.errors import SandboxError
from geoask.settings import Settings
from sandbox.bubblewrap import BubblewrapSandbox
from sandbox.fake import FakeSandbox
from sandbox.host import uid_pids
from sandbox.models import Sandbox, SandboxLimits

RESULT = "import json\nprint(json.dumps({{'status': 'success', 'summary': 's', 'result': {}}}))"


@pytest.fixture(params=["fake", pytest.param("bubblewrap", marks=pytest.mark.sandbox)])
def any_sandbox(request: pytest.FixtureRequest) -> Sandbox:
    if request.param == "fake":
        return FakeSandbox()
    sandbox: BubblewrapSandbox = request.getfixturevalue("real_sandbox")
    return sandbox


def test_state_persists_and_a_result_is_optional(any_sandbox: Sandbox) -> None:
    with any_sandbox.open_session() as session:
        prepared = session.run_cell("values = [3, 4]\nprint('prepared')")
        grown = session.run_cell("values.append(5)")
        result = session.run_cell(RESULT.format("{'total': sum(values)}"))
        printed = session.run_cell("print('first')\nprint('second')")
    assert prepared.status == "success" and prepared.protocol is None
    assert prepared.stdout.text == "prepared\n"
    assert grown.status == "success" and grown.stdout.text == ""  # only the cell's own output
    assert result.ok and result.protocol is not None and result.protocol.result == {"total": 12}
    assert printed.stdout.text == "first\nsecond\n" and printed.failure_detail() is None


def test_a_failing_cell_is_classified_with_cell_lines_and_the_session_survives(
    any_sandbox: Sandbox,
) -> None:
    with any_sandbox.open_session() as session:
        failed = session.run_cell("row = {'name': 'x'}\n\nrow['population']")
        syntax = session.run_cell("x = (\n")
        missing = session.run_cell("import no_such_library_here")
        reported = session.run_cell(
            "import json\nprint(json.dumps({'status': 'error', 'summary': 'no rows', "
            "'result': []}))")
        broken = session.run_cell("print(json.dumps({'status': 'success', 'result': {}}))")
        after = session.run_cell(RESULT.format("{'name': row['name']}"))
    assert failed.status == "exception" and failed.error is not None
    assert (failed.error.kind, failed.error.line, failed.error.missing_field) == (
        "missing_field", 3, "population")
    assert syntax.error is not None and syntax.error.kind == "syntax_error"
    assert missing.error is not None and missing.error.kind == "missing_module"
    assert reported.status == "script_reported_error" and reported.protocol is not None
    assert broken.status == "protocol_error" and broken.error is not None
    assert "summary" in broken.error.message
    assert after.ok and after.protocol is not None and after.protocol.result == {"name": "x"}


def test_inputs_join_the_session_and_names_must_stay_unique(
    any_sandbox: Sandbox, tmp_path: Path
) -> None:
    first = tmp_path / "first.json"
    first.write_text(json.dumps({"n": 1}))
    second = tmp_path / "second.json"
    second.write_text(json.dumps({"n": 2}))
    clash = tmp_path / "other" / "first.json"
    clash.parent.mkdir()
    clash.write_text(json.dumps({"n": 99}))
    with any_sandbox.open_session() as session:
        session.run_cell("import json\na = json.load(open('/input/first.json'))['n']", [first])
        outcome = session.run_cell(
            "b = json.load(open('/input/second.json'))['n']\n" + RESULT.format("{'sum': a + b}"),
            [first, second])
        assert outcome.protocol is not None and outcome.protocol.result == {"sum": 3}
        with pytest.raises(SandboxError, match="already has an input named"):
            session.run_cell("pass", [clash])
        with pytest.raises(SandboxError, match="does not exist"):
            session.run_cell("pass", [tmp_path / "absent.json"])
        with pytest.raises(SandboxError, match="timeout_s must be a positive number"):
            session.run_cell("pass", timeout_s=-1)
        assert session.run_cell("print(a)").stdout.text == "1\n"  # still alive


def test_close_is_idempotent_and_ends_the_session(any_sandbox: Sandbox) -> None:
    session = any_sandbox.open_session()
    assert session.ended is None
    session.run_cell("x = 1")
    session.close()
    session.close()
    assert session.ended == "closed"
    with pytest.raises(SandboxError, match="session ended: closed"):
        session.run_cell("x")


# -- the real session only ------------------------------------------------------------------


def settings_with(sandbox_settings: Settings, **changes: object) -> BubblewrapSandbox:
    return BubblewrapSandbox.from_settings(sandbox_settings.model_copy(update=changes))


@pytest.mark.sandbox
def test_close_leaves_nothing_of_the_session(real_sandbox: BubblewrapSandbox) -> None:
    session = real_sandbox.open_session()
    session.run_cell("import threading, time\n"
                     "for _ in range(3):\n"
                     "    threading.Thread(target=time.sleep, args=(3600,)).start()")
    assert len(uid_pids(session.uid)) >= 1
    session.close()
    assert session.leftover_processes == 0
    assert not uid_pids(session.uid)
    assert not session.run_dir.exists()


@pytest.mark.sandbox
def test_a_cell_past_its_cpu_budget_ends_the_session(sandbox_settings: Settings) -> None:
    sandbox = settings_with(sandbox_settings, sandbox_cell_cpu_s=1)
    with sandbox.open_session() as session:
        assert session.run_cell("import signal\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)"
                                ).status == "success"
        # the wall clock is far away even on a loaded machine: only the CPU watch can stop it
        outcome = session.run_cell("while True:\n    pass", timeout_s=120)
        assert outcome.status == "limit_exceeded" and outcome.error is not None
        assert outcome.error.kind == "cpu_limit" and outcome.cpu_time_s >= 1
        assert session.ended is not None and "CPU" in session.ended
        with pytest.raises(SandboxError, match="session ended: cell 2 ended it"):
            session.run_cell("pass")
    assert not uid_pids(session.uid)


@pytest.mark.sandbox
def test_the_session_wall_clock_bounds_every_cell(real_sandbox: BubblewrapSandbox) -> None:
    with real_sandbox.open_session(SandboxLimits(timeout_s=3)) as session:
        outcome = session.run_cell("import time\ntime.sleep(30)", timeout_s=60)
    assert outcome.status == "timeout" and outcome.error is not None
    assert "session's wall clock of 3 s" in outcome.error.message
    assert outcome.wall_time_s < 10 and outcome.leftover_processes == 0


@pytest.mark.sandbox
def test_a_cell_that_ends_the_process_ends_the_session(real_sandbox: BubblewrapSandbox) -> None:
    with real_sandbox.open_session() as session:
        outcome = session.run_cell("import os\nos._exit(0)")
        assert outcome.status == "killed" and outcome.error is not None
        assert "exit status 0" in outcome.error.message
        with pytest.raises(SandboxError, match="session ended"):
            session.run_cell("pass")


@pytest.mark.sandbox
def test_each_result_cell_collects_only_new_or_changed_scratch_files(
    real_sandbox: BubblewrapSandbox,
) -> None:
    with real_sandbox.open_session() as session:
        first = session.run_cell("open('a.json', 'w').write('{}')\n" + RESULT.format("{}"))
        quiet = session.run_cell("open('b.json', 'w').write('[]')")
        second = session.run_cell("open('c.json', 'w').write('[1]')\n" + RESULT.format("{}"))
    assert [a.name for a in first.artifacts] == ["a.json"]
    assert first.artifacts[0].media_type == "application/json"
    assert quiet.artifacts == []  # no result, nothing collected yet
    assert sorted(a.name for a in second.artifacts) == ["b.json", "c.json"]
    assert f"/{session.session_id}/cell-3/" in second.artifacts[0].uri


@pytest.mark.sandbox
def test_an_idle_session_is_ended_at_its_wall_clock(real_sandbox: BubblewrapSandbox) -> None:
    import time

    session = real_sandbox.open_session(SandboxLimits(timeout_s=4))
    assert session.run_cell("x = 1").status == "success"
    deadline = time.monotonic() + 20
    while session.ended is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert session.ended == "its wall clock of 4 s ran out"
    assert not uid_pids(session.uid) and not session.run_dir.exists()
    with pytest.raises(SandboxError, match="session ended: its wall clock of 4 s ran out"):
        session.run_cell("x")
    session.close()
    assert session.ended == "its wall clock of 4 s ran out"


@pytest.mark.sandbox
def test_a_cell_that_forges_a_reply_ends_the_session(real_sandbox: BubblewrapSandbox) -> None:
    forge = (
        "import os, stat, struct\n"
        "for name in os.listdir('/proc/self/fd'):\n"
        "    fd = int(name)\n"
        "    try:\n"
        "        if stat.S_ISSOCK(os.fstat(fd).st_mode):\n"
        "            os.write(fd, struct.pack('>I', 2) + b'[]')\n"
        "    except OSError:\n"
        "        pass\n"
    )
    with real_sandbox.open_session() as session:
        outcome = session.run_cell(forge)
        assert outcome.status == "killed" and outcome.error is not None
        assert "broke the session's channel" in outcome.error.message
        with pytest.raises(SandboxError, match="session ended: cell 1 ended it"):
            session.run_cell("pass")
    assert outcome.leftover_processes == 0 and not uid_pids(session.uid)


@pytest.mark.sandbox
def test_concurrent_sessions_are_isolated_from_each_other(real_sandbox: BubblewrapSandbox) -> None:
    write = "import os\nopen('/scratch/mine.txt', 'w').write(name)\nprint(os.getuid())"
    check = RESULT.format("{'name': name, 'seen': sorted(os.listdir('/scratch'))}")
    with real_sandbox.open_session() as first, real_sandbox.open_session() as second:
        assert first.uid != second.uid
        first.run_cell("name = 'first'")
        second.run_cell("name = 'second'")
        assert first.run_cell(write).stdout.text == "1000\n"
        second.run_cell(write)
        one, two = first.run_cell(check), second.run_cell(check)
    assert one.protocol is not None and two.protocol is not None
    assert one.protocol.result == {"name": "first", "seen": ["mine.txt"]}
    assert two.protocol.result == {"name": "second", "seen": ["mine.txt"]}
    with fsspec.open(one.artifacts[0].uri, "r") as handle:
        assert handle.read() == "first"
