"""`geoask server --no-serve` starts a healthy Prefect server on 127.0.0.1 and stops on SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import time

from harness import GEOASK, ROOT

from geoask.service.server import api_url_for, free_port, is_healthy, port_is_free


def test_server_starts_healthy_and_stops_cleanly(tmp_path):
    port = free_port()
    environment = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_API_")}
    environment["GEOASK_SERVER_HOME"] = str(tmp_path / "prefect")
    process = subprocess.Popen([GEOASK, "server", "--no-serve", "--port", str(port)],
                               env=environment, cwd=ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 180
        while not is_healthy(api_url_for(port)) and time.monotonic() < deadline:
            assert process.poll() is None, process.stdout.read()
            time.sleep(0.5)
        assert is_healthy(api_url_for(port))
        assert (tmp_path / "prefect" / "prefect.db").is_file()  # SQLite under the server home
    finally:
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=60)
    assert process.returncode == 0, output
    assert "healthy after" in output and "Prefect server stopped" in output
    assert "Traceback" not in output
    assert not is_healthy(api_url_for(port))
    assert port_is_free(port)
