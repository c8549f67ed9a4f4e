"""A `geoask server` subprocess for the service and browser tests (one per test session).

``acquire()`` starts ``geoask server --port <free> --answer-flow tests/service/scripted_flow.py``
with its own PREFECT_HOME, artifact and sandbox folders, waits until the deployment
``answer-question`` is registered, and returns a :class:`Served`; ``release()`` (called by each
fixture's teardown) stops it with SIGTERM when the last user is done - always, also on failure.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from geoask.service.server import api_url_for, free_port

ROOT = Path(__file__).resolve().parents[2]
SHIM = ROOT / "tests" / "service" / "scripted_flow.py"
GEOASK = str(Path(sys.executable).parent / "geoask")  # the console script a person runs


@dataclass
class Served:
    """A running `geoask server`: URLs, environment, folders and measured start-up times."""

    process: subprocess.Popen
    port: int
    work: Path
    environment: dict[str, str]
    log_path: Path
    healthy_after_s: float | None = None
    ready_after_s: float = 0.0
    users: int = 0
    state: Any = None  # the ServerState of a server started in the background
    runs: dict[str, Any] = field(default_factory=dict)  # question runs shared by tests
    artifacts: Path = field(init=False)

    def __post_init__(self) -> None:
        self.artifacts = self.work / "artifacts"

    @property
    def api_url(self) -> str:
        return api_url_for(self.port)

    @property
    def dashboard_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def auth_string(self) -> str | None:
        """The API's basic-authentication secret, from the server's 0600 record."""
        try:
            record = json.loads((self.work / "prefect" / "server.json").read_text())
        except (OSError, ValueError):
            return None
        return record.get("api_auth_string")

    @property
    def headers(self) -> dict[str, str]:
        """The API's basic-authentication header ({} without a recorded secret)."""
        from geoask.service.server import auth_headers

        return auth_headers(self.auth_string)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


_served: Served | None = None


def shared_run(served: Served, question_key: str) -> Any:
    """The scripted question ``question_key`` asked once through ``served``'s API.

    Tests that only read one finished run (its answer, task runs, artifacts, dashboard page)
    share it instead of each asking again: every run is a flow-run process on the server.
    """
    if question_key not in served.runs:
        from scripted_flow import QUESTIONS

        from geoask.service.client import ask_via_api
        from geoask.settings import get_settings

        settings = get_settings().model_copy(update={
            "server_api_url": served.api_url, "server_home": served.work / "prefect"})
        served.runs[question_key] = ask_via_api(QUESTIONS[question_key], settings=settings)
    return served.runs[question_key]


def server_database(work: Path) -> str:
    """The Prefect database of the test server using ``work`` (one per server, dropped after)."""
    return "prefect_" + "".join(c if c.isalnum() else "_" for c in work.name.lower())


def drop_server_database(work: Path) -> None:
    """Drop the test server's Prefect database from the embedded cluster (if it exists)."""
    import psycopg
    from psycopg import sql

    from geoask.db.urls import owner_url
    from geoask.settings import get_settings

    with psycopg.connect(owner_url(get_settings()), autocommit=True) as connection:
        connection.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
            sql.Identifier(server_database(work))))


def service_environment(work: Path) -> dict[str, str]:
    environment = {k: v for k, v in os.environ.items()
                   if not k.startswith("PREFECT_API_") and k != "GEOASK_SERVER_API_URL"}
    environment.update({
        "GEOASK_SERVER_HOME": str(work / "prefect"),
        "GEOASK_SERVER_DATABASE": server_database(work),
        "GEOASK_ARTIFACT_ROOT": str(work / "artifacts"),
        "GEOASK_BENCH_OUT_DIR": str(work / "bench-runs"),
        "GEOASK_SANDBOX_WORK_DIR": str(work / "sandbox-runs"),
        "GEOASK_SANDBOX_ARTIFACTS_URL": str(work / "sandbox-artifacts"),
        "PYTHONUNBUFFERED": "1",
    })
    return environment


def acquire(timeout_s: float = 180.0) -> Served:
    """The shared server, started on first use."""
    global _served
    if _served is None:
        _served = _start(timeout_s)
    _served.users += 1
    return _served


def release() -> None:
    """Drop one user; stop the server after the last one."""
    global _served
    if _served is None:
        return
    _served.users -= 1
    if _served.users <= 0:
        served, _served = _served, None
        stop(served)


def start_server(timeout_s: float = 180.0, answer_flow: str | None = None,
                 name: str = "real") -> Served:
    """A `geoask server` of its own (stop it with :func:`stop`): by default the real flows.

    ``answer_flow`` is passed as ``--answer-flow``; None serves what `geoask server` serves
    to a user (``flows.answer_question``, by module name).
    """
    return _start(timeout_s, answer_flow, name)


def _start(timeout_s: float, answer_flow: str | None = f"{SHIM}:answer_question",
           name: str = "scripted") -> Served:
    work = Path("/tmp") / f"geoask-service-tests-{os.getpid()}-{name}"
    work.mkdir(mode=0o755, exist_ok=True)
    port = free_port()
    environment = service_environment(work)
    log_path = work / "geoask-server.out"
    begin = time.perf_counter()
    command = [GEOASK, "server", "--port", str(port)]
    if answer_flow is not None:
        command += ["--answer-flow", answer_flow]
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            command, env=environment, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True)
    served = Served(process, port, work, environment, log_path)
    try:
        _wait_for_deployment(served, "answer-question", begin + timeout_s)
    except BaseException:
        stop(served)
        raise
    served.ready_after_s = time.perf_counter() - begin
    match = re.search(r"healthy after ([0-9.]+) s", served.log())
    served.healthy_after_s = float(match.group(1)) if match else None
    return served


def deployment_names(api_url: str, headers: dict[str, str] | None = None) -> list[str]:
    response = httpx.post(f"{api_url}/deployments/filter", json={}, timeout=5,
                          headers=headers or {})
    response.raise_for_status()
    return [d["name"] for d in response.json()]


def _wait_for_deployment(served: Served, name: str, deadline: float) -> None:
    while time.perf_counter() < deadline:
        if served.process.poll() is not None:
            raise RuntimeError(f"geoask server exited with {served.process.returncode}:\n"
                               f"{served.log()}")
        try:
            if name in deployment_names(served.api_url, served.headers):
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise TimeoutError(f"deployment {name} not registered in time:\n{served.log()}")


def stop(served: Served, timeout_s: float = 30.0) -> int | None:
    """SIGTERM the `geoask server` process (it stops its Prefect server); SIGKILL if stuck."""
    process = served.process
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=timeout_s)
    code = process.returncode
    drop_server_database(served.work)
    shutil.rmtree(served.work, ignore_errors=True)
    return code


def start_background(arguments: list[str], name: str = "background"
                     ) -> tuple[Served, subprocess.CompletedProcess[str]]:
    """Run ``geoask <arguments>`` with no server running: it starts one in the background.

    Returns the recorded server (``process`` None: it is not our child) and the command's
    outcome; stop the server with :func:`stop_background`.
    """
    from geoask.service.state_file import ServerState

    work = Path("/tmp") / f"geoask-service-tests-{os.getpid()}-{name}"
    work.mkdir(mode=0o755, exist_ok=True)
    environment = {**service_environment(work), "GEOASK_SERVER_PORT": str(free_port())}
    done = subprocess.run([GEOASK, *arguments], env=environment, cwd=ROOT, capture_output=True,
                          text=True, timeout=900, check=False)
    state_file = work / "prefect" / "server.json"
    if not state_file.is_file():
        drop_server_database(work)
        raise RuntimeError(f"geoask {arguments[0]} started no server:\n{done.stderr[-3000:]}")
    state = ServerState(**json.loads(state_file.read_text()))
    served = Served(None, state.port, work, environment,  # type: ignore[arg-type]
                    work / "prefect" / "serve.log", state=state)
    return served, done


def stop_background(served: Served) -> subprocess.CompletedProcess[str]:
    """``geoask server stop`` for ``served``; then drop its database and folder."""
    try:
        return subprocess.run([GEOASK, "server", "stop"], env=served.environment, cwd=ROOT,
                              capture_output=True, text=True, timeout=120, check=False)
    finally:
        drop_server_database(served.work)
        shutil.rmtree(served.work, ignore_errors=True)


def api_json(served: Served, path: str, body: dict | None = None) -> list | dict:
    """POST ``body`` to ``<api>/<path>`` and return the JSON reply."""
    response = httpx.post(f"{served.api_url}/{path}", json=body or {}, timeout=10,
                          headers=served.headers)
    response.raise_for_status()
    return json.loads(response.text)


def require_sandbox() -> None:
    """Skip unless the sandbox can run (bubblewrap, root); build its runtime when missing."""
    import pytest

    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed (apt-get install bubblewrap)")
    if os.geteuid() != 0:
        pytest.skip("the sandbox must be started as root")
    from geoask.settings import get_settings
    from sandbox.runtime import ensure_runtime

    settings = get_settings()
    ensure_runtime(settings.sandbox_runtime_path, settings.sandbox_base_python)
