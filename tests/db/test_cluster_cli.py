"""`geoask db up/down/status` on a second, throw-away embedded cluster (own home and port)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from geoask.settings import service_home_for

pytestmark = pytest.mark.db

GEOASK = str(Path(sys.executable).with_name("geoask"))


@pytest.fixture
def cli(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GEOASK_")}
    env |= {"GEOASK_HOME": str(tmp_path / "home"), "GEOASK_DB_PORT": "55491"}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([GEOASK, *args], env=env, capture_output=True, text=True,
                              timeout=180, check=False)

    yield run
    run("db", "down")
    shutil.rmtree(service_home_for(tmp_path / "home"), ignore_errors=True)  # /var/lib/geoask/...
    shutil.rmtree(tmp_path / "home", ignore_errors=True)


def test_up_is_idempotent_and_survives_down(cli):
    first = cli("db", "up")
    assert first.returncode == 0, first.stderr
    assert "started" in first.stdout
    again = cli("db", "up")
    assert again.returncode == 0 and "already running" in again.stdout
    running = cli("db", "status", "--json")
    status = json.loads(running.stdout)
    assert running.returncode == 0
    assert status["running"] is True and status["mode"] == "embedded"
    assert status["catalog"].endswith("catalog.yaml") and status["catalog_hint"] is None
    assert status["reader_url"].startswith("postgresql://geoask_reader:")
    assert "@127.0.0.1:55491/geoask" in status["reader_url"]
    assert set(status["row_counts"].values()) == {None}  # nothing loaded in this cluster
    down = cli("db", "down")
    assert down.returncode == 0 and "stopped" in down.stdout
    assert "was not running" in cli("db", "down").stdout
    stopped_run = cli("db", "status", "--json")
    stopped = json.loads(stopped_run.stdout)
    assert stopped["running"] is False
    assert stopped_run.returncode == 1  # a database that does not answer is a failed status
    assert cli("db", "up").returncode == 0
    assert json.loads(cli("db", "status", "--json").stdout)["running"] is True


def test_port_taken_gives_a_clear_error(database, tmp_path):
    """The session's cluster already holds its port: a second cluster there must say so."""
    env = {**os.environ, "GEOASK_HOME": str(tmp_path / "clash"),
           "GEOASK_DB_PORT": str(database.settings.db_port)}
    result = subprocess.run([GEOASK, "db", "up"], capture_output=True, text=True, timeout=180,
                            check=False, env=env)
    assert result.returncode == 1
    assert f"port {database.settings.db_port} on 127.0.0.1 is used by another program" in (
        result.stderr)
    assert "export GEOASK_DB_PORT=" in result.stderr  # a port free right now, named
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "clash" / "postgres" / "pgdata" / "PG_VERSION").exists()  # no initdb


def test_down_stops_the_recorded_prefect_server_first(cli, tmp_path):
    """`geoask db down` stops the geoask Prefect server whose database lives in the cluster."""
    from geoask.service.state_file import ServerState, process_started_at, write_state
    from geoask.settings import Settings

    settings = Settings(home=tmp_path / "home")
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]) as server:
        try:
            write_state(settings, ServerState(
                api_url="http://127.0.0.1:9/api", pid=server.pid, port=9, mode="background",
                log_path="-", database="-", started_at=process_started_at(server.pid)))
            down = cli("db", "down")
            assert down.returncode == 0, down.stderr
            assert "Prefect server at http://127.0.0.1:9 stopped." in down.stdout
            assert server.wait(timeout=30) == -15  # SIGTERM
            assert not (tmp_path / "home" / "prefect" / "server.json").exists()
        finally:
            server.kill()


def test_status_of_an_external_server_says_which_catalog_it_counts(tmp_path):
    """With GEOASK_DATABASE_URL and the shipped demo catalog, status says to set the catalog."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GEOASK_")}
    env |= {"GEOASK_HOME": str(tmp_path / "home"),
            "GEOASK_DATABASE_URL": "postgresql://nobody@127.0.0.1:1/nowhere"}
    result = subprocess.run([GEOASK, "db", "status"], env=env, capture_output=True, text=True,
                            timeout=120, check=False)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "database: external" in result.stdout and "cannot connect" in result.stdout
    assert "shipped demo catalog" in result.stdout and "GEOASK_CATALOG_PATH" in result.stdout
