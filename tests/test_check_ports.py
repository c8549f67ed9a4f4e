"""``scripts/check_ports.py``: ``make setup``'s port check, with the system Python alone."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from geoask.base import ports
from geoask.settings import Settings

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "check_ports.py"
SYSTEM_PYTHON = shutil.which("python3", path="/usr/bin:/bin") or sys.executable


def check(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The script under an isolated interpreter: no site-packages, no PYTHONPATH, no venv."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("GEOASK_", "PYTHON"))}
    return subprocess.run([SYSTEM_PYTHON, "-I", "-S", str(SCRIPT), "--again", "make demo"],
                          env={**clean, **env}, capture_output=True, text=True, timeout=60,
                          check=False)


def test_a_taken_port_is_one_line_naming_the_setting_and_a_free_port():
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        taken = holder.getsockname()[1]
        ran = check({"GEOASK_DB_PORT": str(taken), "GEOASK_SERVER_API_URL": "http://h:1/api"})
    assert ran.returncode == 1
    (line,) = ran.stderr.splitlines()
    assert line.startswith(f"error: port {taken} on 127.0.0.1 is used by another program; "
                           "set GEOASK_DB_PORT to a free port (e.g. export GEOASK_DB_PORT=")
    assert line.endswith("and run `make demo` again")


def test_free_or_unbound_ports_pass_and_a_bad_value_is_named():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free = probe.getsockname()[1]
    ran = check({"GEOASK_DB_PORT": str(free), "GEOASK_SERVER_API_URL": "http://h:1/api"})
    assert (ran.returncode, ran.stderr) == (0, "")
    ran = check({"GEOASK_DATABASE_URL": "postgresql://h/db", "GEOASK_SERVER_PORT": "80"})
    assert ran.returncode == 1 and ran.stderr == (
        "error: GEOASK_SERVER_PORT='80' is not a port number (1024-65535); set it to a free "
        "port\n")


@pytest.mark.parametrize("bound", ports.BOUND_PORTS)
def test_the_settings_take_their_port_defaults_from_the_one_registry(bound):
    field = bound.setting.removeprefix("GEOASK_").lower()
    assert Settings.model_fields[field].default == bound.default
    assert bound.unless.removeprefix("GEOASK_").lower() in Settings.model_fields
