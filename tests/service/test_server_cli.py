"""`geoask server --no-serve` starts a healthy Prefect server on 127.0.0.1 and stops on SIGTERM."""

from __future__ import annotations

import asyncio
import json
import os
import select
import signal
import stat
import subprocess
import time
from pathlib import Path

import httpx
import pytest
import websockets
from harness import GEOASK, ROOT, drop_server_database, server_database

from geoask.base.ports import port_is_free
from geoask.service.server import api_url_for, auth_headers, free_port, is_healthy


def test_server_starts_healthy_and_stops_cleanly(tmp_path):
    port = free_port()
    environment = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_API_")}
    environment["GEOASK_SERVER_HOME"] = str(tmp_path / "prefect")
    environment["GEOASK_SERVER_DATABASE"] = server_database(tmp_path)
    process = subprocess.Popen([GEOASK, "server", "--no-serve", "--port", str(port)],
                               env=environment, cwd=ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, start_new_session=True)
    seen = ""
    try:
        # wait for the CLI's own report, not only for the port: a health probe of ours can
        # succeed before the CLI's probe does and prints "healthy after"
        deadline = time.monotonic() + 180
        while "healthy after" not in seen:
            assert time.monotonic() < deadline, seen
            assert process.poll() is None, seen + process.stdout.read()
            ready, _, _ = select.select([process.stdout], [], [], 0.5)
            if ready:  # raw reads: nothing stays hidden in the text wrapper's buffer
                seen += os.read(process.stdout.fileno(), 65536).decode(errors="replace")
        assert is_healthy(api_url_for(port))
        assert not (tmp_path / "prefect" / "prefect.db").exists()  # no SQLite: PostgreSQL
        status = subprocess.run([GEOASK, "server", "status"], env=environment, cwd=ROOT,
                                capture_output=True, text=True, timeout=60, check=True).stdout
        assert f"running (foreground, pid {process.pid}): dashboard http://127.0.0.1:{port}" \
            in status, status
        assert f"/{server_database(tmp_path)}" in status and ":***@" in status
        assert "need its password: api_auth_string in" in status
        _assert_only_the_secret_opens_the_api(tmp_path / "prefect" / "server.json", port)
    finally:
        process.send_signal(signal.SIGTERM)
        rest, _ = process.communicate(timeout=60)
        drop_server_database(tmp_path)
    assert not (tmp_path / "prefect" / "server.json").exists()  # its record went with it
    output = seen + rest
    assert process.returncode == 0, output
    assert "healthy after" in output and "Prefect server stopped" in output
    assert "Traceback" not in output
    assert not is_healthy(api_url_for(port))
    assert port_is_free(port)


def _assert_only_the_secret_opens_the_api(record: Path, port: int) -> None:
    """Basic authentication: 401 without the recorded secret, on HTTP and websockets alike."""
    assert stat.S_IMODE(record.stat().st_mode) == 0o600
    secret = json.loads(record.read_text())["api_auth_string"]
    assert secret.startswith("geoask:") and len(secret) > 40
    api = api_url_for(port)
    query = {"artifacts": {}, "limit": 1}
    assert httpx.post(f"{api}/artifacts/filter", json=query, timeout=60).status_code == 401
    wrong = auth_headers("geoask:guessed")
    assert httpx.post(f"{api}/artifacts/filter", json=query, headers=wrong,
                      timeout=60).status_code == 401
    assert httpx.post(f"{api}/artifacts/filter", json=query,
                      headers=auth_headers(secret), timeout=60).status_code == 200
    assert httpx.get(f"{api}/health", timeout=60).status_code == 200  # probes stay open
    events = f"ws://127.0.0.1:{port}/api/events/out"

    async def subscribe(token: str | None) -> str:
        async with websockets.connect(events, subprotocols=["prefect"]) as socket:
            await socket.send(json.dumps({"type": "auth", "token": token}))
            return json.loads(await socket.recv())["type"]

    assert asyncio.run(subscribe(secret)) == "auth_success"
    for token in ("geoask:guessed", None):
        with pytest.raises(websockets.ConnectionClosed) as closed:
            asyncio.run(subscribe(token))
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008


def test_a_bad_answer_flow_fails_at_once_in_one_line():
    import subprocess

    from harness import GEOASK

    from geoask.service.server import free_port

    for entrypoint in ("flows.no_such_module:answer_question", "no/such/file.py:flow", "nope"):
        done = subprocess.run([GEOASK, "server", "--port", str(free_port()),
                               "--answer-flow", entrypoint],
                              capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 1, done.stdout + done.stderr
        assert done.stderr.startswith("error: --answer-flow:"), done.stderr
        assert "Traceback" not in done.stderr and "healthy" not in done.stdout


def test_a_taken_port_is_one_error_and_no_stopped_line(tmp_path):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([GEOASK, "server", "--port", str(port), "--no-serve"],
                              capture_output=True, text=True, timeout=120, check=False,
                              env={**os.environ, "GEOASK_SERVER_HOME": str(tmp_path)})
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"port {port} on 127.0.0.1 is used by another program; set GEOASK_SERVER_PORT" in (
        done.stderr)
    assert "stopped" not in done.stdout  # nothing had started (attack finding)
