"""The state file of geoask's Prefect server: explicit URLs, stale and hung records, stop."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest

from geoask.errors import ServiceError
from geoask.service import local, state_file
from geoask.service.server import free_port
from geoask.settings import Settings


def state(pid: int, port: int, mode: str = "background", **extra) -> state_file.ServerState:
    """A record of process ``pid`` as geoask writes it (with the process's start time)."""
    return state_file.ServerState(api_url=f"http://127.0.0.1:{port}/api", pid=pid, port=port,
                             mode=mode, log_path="/tmp/x.log", database="sqlite",
                             started_at=state_file.process_started_at(pid), **extra)


def sleeper(*, session: bool = False) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                            start_new_session=session)


@pytest.fixture()
def settings(tmp_path) -> Settings:
    return Settings(home=tmp_path, server_port=free_port())


@pytest.fixture()
def healthy_api():
    """A local HTTP server whose ``/api/health`` answers 200, like Prefect's."""
    import http.server
    import threading

    class Health(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200 if self.path == "/api/health" else 404)
            self.end_headers()
            self.wfile.write(b"true")

        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Health)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/api"
    server.shutdown()


@pytest.mark.parametrize("explicit", ["server_api_url", "environment"])
def test_an_explicit_api_url_starts_nothing(settings, monkeypatch, explicit, healthy_api):
    if explicit == "environment":
        monkeypatch.setenv("PREFECT_API_URL", healthy_api)
    else:
        monkeypatch.delenv("PREFECT_API_URL", raising=False)
        settings = settings.model_copy(update={"server_api_url": healthy_api})
    assert local.ensure_server(settings) == healthy_api
    assert not state_file.state_path(settings).exists()
    assert not (settings.prefect_home / local.SERVE_LOG).exists()


@pytest.mark.parametrize("explicit", ["server_api_url", "environment"])
def test_an_explicit_api_url_that_does_not_answer_is_one_clear_error(settings, monkeypatch,
                                                                      explicit):
    # Attack finding 5: a 149-line traceback from Prefect's client.
    dead = f"http://127.0.0.1:{free_port()}/api"
    if explicit == "environment":
        monkeypatch.setenv("PREFECT_API_URL", dead)
    else:
        monkeypatch.delenv("PREFECT_API_URL", raising=False)
        settings = settings.model_copy(update={"server_api_url": dead})
    name = "PREFECT_API_URL" if explicit == "environment" else "GEOASK_SERVER_API_URL"
    with pytest.raises(ServiceError, match=rf"{dead} \({name}\) does not answer"):
        local.ensure_server(settings)
    assert not state_file.state_path(settings).exists()


def test_a_record_whose_process_is_gone_is_stale_and_removed(settings):
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True, check=True)
    state_file.write_state(settings, state(int(finished.stdout), settings.server_port))
    assert state_file.read_state(settings) is not None
    assert local.running_server(settings) is None
    assert not state_file.state_path(settings).exists()
    assert local.stop_server(settings) is None


def test_a_live_process_that_does_not_answer_is_a_clear_error(settings):
    with sleeper() as hung:
        try:
            state_file.write_state(settings, state(hung.pid, settings.server_port))
            with pytest.raises(ServiceError, match=rf"pid {hung.pid}.* does not answer.*"
                                                   r"`geoask server stop`"):
                local.running_server(settings)
            stopped = local.stop_server(settings, timeout_s=10)
            assert stopped is not None and stopped.pid == hung.pid
            assert hung.wait(timeout=10) == -15  # SIGTERM
            assert not state_file.state_path(settings).exists()
        finally:
            hung.kill()


def test_a_record_is_removed_only_by_its_own_process(settings):
    state_file.write_state(settings, state(4242, settings.server_port))
    state_file.remove_state(settings, pid=4343)
    assert state_file.read_state(settings) == state(4242, settings.server_port)
    assert oct(state_file.state_path(settings).stat().st_mode & 0o777) == "0o600"
    state_file.remove_state(settings, pid=4242)
    assert state_file.read_state(settings) is None


@pytest.mark.parametrize("record", ["another start time", "no start time, not geoask"])
def test_a_pid_reused_by_another_program_is_never_signalled(settings, record):
    # After a crash or reboot the recorded pid may belong to anything (attack finding 1).
    with sleeper() as other:
        try:
            recorded = state(other.pid, settings.server_port)
            started = (recorded.started_at or 0) - 3600 if record == "another start time" else None
            state_file.write_state(settings, dataclasses.replace(recorded, started_at=started))
            assert local.running_server(settings) is None  # stale: removed, nothing signalled
            assert local.stop_server(settings, timeout_s=1) is None
            assert other.poll() is None
            assert not state_file.state_path(settings).exists()
        finally:
            other.kill()


def test_the_prefect_server_of_a_killed_geoask_server_is_stopped(settings):
    # `geoask server` SIGKILLed: its Prefect server (own process group) must not live on.
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    with sleeper(session=True) as orphan:
        try:
            state_file.write_state(settings, dataclasses.replace(
                state(int(gone.stdout), settings.server_port), prefect_pid=orphan.pid,
                prefect_started_at=state_file.process_started_at(orphan.pid)))
            assert local.running_server(settings) is None
            assert orphan.wait(timeout=10) == -15  # SIGTERM to its group
        finally:
            orphan.kill()


def test_an_unreadable_record_counts_as_none_and_starts_no_second_server(settings,
                                                                         monkeypatch):
    # Attack finding 9: a corrupt record made the next command start a second server while
    # the first one ran on, unknown to `geoask server stop`.
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    state_file.state_path(settings).parent.mkdir(parents=True)
    state_file.state_path(settings).write_text("{not json")
    assert state_file.read_state(settings) is None
    for call in (local.running_server, local.stop_server, local.ensure_server):
        with pytest.raises(ServiceError, match=r"server record .* is unreadable"):
            call(settings)
    assert not (settings.prefect_home / local.SERVE_LOG).exists()  # nothing was started


@pytest.mark.parametrize(("url", "expected"), [
    ("postgresql+asyncpg://u:p@h:1/d", "postgresql+asyncpg://u:***@h:1/d"),
    ("postgresql+asyncpg://u@h:1/d", "postgresql+asyncpg://u@h:1/d"),
    ("sqlite+aiosqlite:////srv/p.db", "sqlite+aiosqlite:////srv/p.db"),
])
def test_masked_url(url, expected):
    assert local.masked_url(url) == expected


def test_a_server_that_exits_at_start_is_one_clear_error(settings, monkeypatch):
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    monkeypatch.setattr(local, "SERVER_COMMAND", "import sys; print('boom: no luck'); sys.exit(3)")
    with pytest.raises(ServiceError, match=r"exited with code 3 while starting: boom: no luck"):
        local.ensure_server(settings)
    assert state_file.read_state(settings) is None


def test_the_recorded_secret_goes_to_its_own_api_and_the_environments_to_others(
        settings, monkeypatch):
    import os
    import stat

    port = free_port()
    record = state(os.getpid(), port, api_auth_string="geoask:recorded")
    state_file.write_state(settings, record)
    assert stat.S_IMODE(state_file.state_path(settings).stat().st_mode) == 0o600
    monkeypatch.setenv("PREFECT_API_AUTH_STRING", "geoask:from-the-environment")
    assert local.api_auth_string(settings, record.api_url) == "geoask:recorded"
    other = f"http://127.0.0.1:{free_port()}/api"  # a server of the user's own
    assert local.api_auth_string(settings, other) == "geoask:from-the-environment"
    monkeypatch.delenv("PREFECT_API_AUTH_STRING")
    assert local.api_auth_string(settings, other) is None
