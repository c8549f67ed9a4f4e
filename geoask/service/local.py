"""geoask's long-lived local Prefect server: found through a state file, else started detached.

``geoask ask`` and ``geoask bench`` run their flows against a Prefect server that outlives
them, so a question does not pay for Prefect's temporary SQLite server (15-20 s) and the
benchmark's concurrent runs are not refused with 503s. :func:`prefect_api` chooses it:

1. an API URL set from outside - ``GEOASK_SERVER_API_URL``, or Prefect's own
   ``PREFECT_API_URL`` (a flow-run subprocess, a test harness) - is used and nothing starts;
2. else the server named by ``<home>/prefect/server.json`` (:class:`ServerState`: URL, pid,
   port, mode), when its process lives and ``/api/health`` answers; a state file whose
   process is gone is stale and removed;
3. else ``geoask server`` is started in the background (:func:`start_background`: detached,
   in its own session, output to ``<home>/prefect/serve.log`` (0600), the Prefect server's to
   ``server.log``, database as :func:`geoask.service.server.prepare_server_database` says),
   on ``GEOASK_SERVER_PORT`` or, when that port is taken, a free one; it serves the
   deployments, so ``--via-api`` works against it. A file lock makes concurrent commands
   start one.

``geoask server`` in a terminal records itself in the same file, so commands reuse it too.
The API answers only requests that carry its basic-authentication secret (recorded in the 0600
state file, :func:`api_auth_string`), which every client this module sets up sends.
``geoask server stop``, ``geoask db down`` and ``make down`` stop the recorded server
(:func:`stop_server`). Nothing here imports Prefect until :func:`prefect_api` is entered.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from geoask.base.interrupt import detach
from geoask.errors import ServiceError
from geoask.service.state_file import (
    ServerState,
    is_process,
    read_state,
    remove_state,
    state_path,
)
from geoask.settings import Settings

LOCK_FILE = "server.lock"
SERVE_LOG = "serve.log"
SERVER_COMMAND = "import sys; from geoask.app.cli import main; sys.argv[0] = 'geoask'; main()"
"""``python -c`` program running the geoask CLI (the arguments follow it)."""
CHECKOUT = Path(__file__).resolve().parents[2]
"""The source checkout (the served flows are imported from it by module name)."""
ARTIFACT_FLUSH_S = 30.0
"""How long leaving :func:`prefect_api` waits for queued Prefect artifacts (s)."""


@contextlib.contextmanager
def private_log(path: Path) -> Iterator[int]:
    """``path`` opened for appending, readable by its owner only (0600, an old file too)."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.fchmod(descriptor, 0o600)
        yield descriptor
    finally:
        os.close(descriptor)


def running_server(settings: Settings) -> ServerState | None:
    """The recorded server when it runs and is healthy; a stale record is removed.

    Raises:
        ServiceError: the recorded process lives but its API does not answer (hung, or
            still starting in another command after the lock was given up).

    """
    from geoask.service.server import is_healthy

    state = _live_state(settings)
    if state is None:
        return None
    if is_healthy(state.api_url):
        return state
    raise ServiceError(f"the geoask Prefect server (pid {state.pid}) does not answer at "
                       f"{state.api_url}; see {state.log_path}, or stop it with "
                       "`geoask server stop`")


def masked_url(url: str) -> str:
    """``url`` with any password replaced by ``***``.

    >>> masked_url("postgresql+asyncpg://geoask_owner:s3cret@127.0.0.1:5432/prefect")
    'postgresql+asyncpg://geoask_owner:***@127.0.0.1:5432/prefect'
    """
    scheme, sep, rest = url.partition("://")
    credentials, at, host = rest.rpartition("@")
    if not sep or not at or ":" not in credentials:
        return url
    return f"{scheme}://{credentials.split(':', 1)[0]}:***@{host}"


@contextlib.contextmanager
def start_lock(settings: Settings) -> Iterator[None]:
    """Hold ``<prefect home>/server.lock`` (an exclusive ``flock``) while inside."""
    settings.prefect_home.mkdir(parents=True, exist_ok=True)
    with (settings.prefect_home / LOCK_FILE).open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def start_background(settings: Settings) -> ServerState:
    """Start ``geoask server`` detached; return its record once its API is healthy.

    The process runs in a session of its own (it outlives this command and its terminal),
    serves the deployments like a foreground ``geoask server``, writes its output to
    ``<prefect home>/serve.log`` and runs until ``geoask server stop``.

    Raises:
        ServiceError: it exited, or did not record a healthy server within
            ``GEOASK_SERVER_START_TIMEOUT_S`` (+30 s for the database); the message names the log.

    """
    from geoask.base.ports import port_is_free
    from geoask.service.server import free_port

    port = settings.server_port if port_is_free(settings.server_port) else free_port()
    log_path = settings.prefect_home / SERVE_LOG
    settings.prefect_home.mkdir(parents=True, exist_ok=True)
    with private_log(log_path) as log:
        process = subprocess.Popen(
            [sys.executable, "-c", SERVER_COMMAND, "server", "--background", "--port", str(port)],
            env={**os.environ, "GEOASK_SERVER_HOME": str(settings.prefect_home)},
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True, cwd=CHECKOUT)
    detach(process.pid)  # a stop of this command (Ctrl-C) leaves the server running
    deadline = time.monotonic() + settings.server_start_timeout_s + 30
    while time.monotonic() < deadline:
        state = read_state(settings)
        if state is not None and state.pid == process.pid:
            return state
        if process.poll() is not None:
            raise ServiceError(f"the geoask Prefect server exited with code "
                               f"{process.returncode} while starting: {_last_line(log_path)} "
                               f"(log {log_path})")
        time.sleep(0.2)
    with contextlib.suppress(ProcessLookupError):
        os.kill(process.pid, signal.SIGTERM)
    raise ServiceError(f"the geoask Prefect server did not start within "
                       f"{settings.server_start_timeout_s + 30:.0f} s; see {log_path} or raise "
                       "GEOASK_SERVER_START_TIMEOUT_S")


def _last_line(path: Path) -> str:
    lines = [line for line in path.read_text(errors="replace").splitlines() if line.strip()]
    return lines[-1].strip() if lines else "(no output)"


def api_auth_string(settings: Settings, api_url: str) -> str | None:
    """The basic-authentication secret a client of ``api_url`` sends, or None.

    The secret recorded for this home's server when ``api_url`` is its API, else
    ``PREFECT_API_AUTH_STRING`` from the environment (the user's, for a server of their own).
    """
    state = read_state(settings)
    if state is not None and state.api_url == api_url and state.api_auth_string:
        return state.api_auth_string
    return os.environ.get("PREFECT_API_AUTH_STRING") or None


def wait_for_deployment(api_url: str, name: str, timeout_s: float, log_path: str,
                        auth_string: str | None = None) -> None:
    """Return once the server at ``api_url`` has a deployment ``name`` (polls every 0.25 s).

    Raises:
        ServiceError: it has none after ``timeout_s`` seconds (the message names the log).

    """
    import httpx

    from geoask.service.server import auth_headers

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.HTTPError, ValueError):
            found = httpx.post(f"{api_url}/deployments/filter", timeout=5,
                               headers=auth_headers(auth_string),
                               json={"deployments": {"name": {"any_": [name]}}}).json()
            if found:
                return
        time.sleep(0.25)
    raise ServiceError(f"the geoask Prefect server at {api_url} has no deployment {name!r} "
                       f"{timeout_s:.0f} s after its start; see {log_path}")


def explicit_api_url(settings: Settings, configured_url: str | None = None) -> str | None:
    """The Prefect API the user chose instead of geoask's own server, or None.

    ``GEOASK_SERVER_API_URL``, else ``configured_url``, else ``PREFECT_API_URL`` in the
    environment.
    """
    return settings.server_api_url or configured_url or os.environ.get("PREFECT_API_URL")


def ensure_server(settings: Settings, configured_url: str | None = None,
                  deployment: str | None = None) -> str:
    """The API URL to run flows against; starts a background server when none runs.

    ``configured_url`` (or ``GEOASK_SERVER_API_URL``, or ``PREFECT_API_URL`` in the
    environment) is returned as is once its ``/health`` answers. A server started here is
    announced on stderr in one line; with ``deployment`` (``--via-api``), this returns once
    it serves that deployment.

    Raises:
        ConfigurationError: a certificate variable names no usable CA file
            (:func:`geoask.base.tls.check_certificate_files`).
        ServiceError, DatabaseError: no server runs and none could be started, or a
            configured API URL does not answer.

    """
    from geoask.base.tls import check_certificate_files

    check_certificate_files()  # every HTTP client (health checks, Prefect) would fail on it
    explicit = explicit_api_url(settings, configured_url)
    if explicit:
        from geoask.service.server import is_healthy

        if not is_healthy(explicit):
            source = ("GEOASK_SERVER_API_URL" if settings.server_api_url
                      else "PREFECT_API_URL")
            raise ServiceError(f"the Prefect API at {explicit} ({source}) does not answer; "
                               f"start that server, or unset {source} to let geoask use its "
                               "own")
        return explicit
    with start_lock(settings):
        state = running_server(settings)
        if state is None:
            began = time.perf_counter()
            state = start_background(settings)
            if deployment is not None:
                wait_for_deployment(state.api_url, deployment, settings.server_start_timeout_s,
                                    str(settings.prefect_home / SERVE_LOG),
                                    state.api_auth_string)
            print(f"started the geoask Prefect server in the background in "
                  f"{time.perf_counter() - began:.1f} s: dashboard {state.dashboard_url} "
                  f"(log {state.log_path}; `geoask server stop` stops it)", file=sys.stderr)
    return state.api_url


@contextlib.contextmanager
def prefect_api(settings: Settings, *, verbose: bool = False,
                wait_for_artifacts: bool = True) -> Iterator[str]:
    """Run the block's flows against geoask's Prefect server (:func:`ensure_server`).

    Sets ``PREFECT_API_URL`` for this process (Prefect's settings context and the
    environment, which Dask workers and subprocesses inherit); without ``verbose`` Prefect
    writes nothing on the terminal (the run logs keep everything). Flow runs started in the block
    are marked Crashed if SIGINT/SIGTERM stops geoask before they end
    (:func:`geoask.run.stops.crash_runs_on_stop`); their Prefect artifacts, posted in the
    background, are flushed when the block ends (at most ``ARTIFACT_FLUSH_S``; not with
    ``wait_for_artifacts=False``, for a long-lived process). Yields the API URL.

    Raises:
        ServiceError, DatabaseError: see :func:`ensure_server`.

    """
    from prefect.context import SyncClientContext
    from prefect.settings import (
        PREFECT_API_AUTH_STRING,
        PREFECT_API_SSL_CERT_FILE,
        PREFECT_API_URL,
        PREFECT_FLOWS_HEARTBEAT_FREQUENCY,
        temporary_settings,
    )

    from geoask.base.console import quiet_console
    from geoask.records import artifact_publisher, background_writes
    from geoask.run.stops import crash_runs_on_stop
    from geoask.service.server import plain_http_ca_file
    from geoask.service.watch import infrastructure_probes, watch_infrastructure

    if not verbose:
        quiet_console()
    url = ensure_server(settings, PREFECT_API_URL.value())
    environment = {"PREFECT_API_URL": url}  # subprocesses and Dask workers too, in the block
    # No flow-run heartbeats: Prefect's heartbeat thread sleeps in whole seconds and every
    # flow run's end waits for it (0.5 s on average, half a warm question's wall time), and
    # nothing here acts on missed heartbeats (a stop marks this process's runs Crashed).
    # One API client for the block's flow runs (Prefect makes one per run otherwise: a TLS
    # context with the CA bundle loaded and a version check, ~0.1 s CPU each); the clients
    # Prefect still makes (one per subflow run) get a small CA file on a plain-HTTP API.
    updates: dict[Any, Any] = {PREFECT_API_URL: url, PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}
    if (ca_file := plain_http_ca_file(url, settings.prefect_home)) is not None:
        updates[PREFECT_API_SSL_CERT_FILE] = str(ca_file)
    if (auth := api_auth_string(settings, url)) is not None:
        environment["PREFECT_API_AUTH_STRING"] = auth
        updates[PREFECT_API_AUTH_STRING] = auth
    with (environment_variables(environment), temporary_settings(updates=updates),
          SyncClientContext.get_or_create(),
          crash_runs_on_stop(url), watch_infrastructure(infrastructure_probes(
              settings, url, _database_url(settings)))):
        try:
            yield url
        finally:
            if wait_for_artifacts:
                artifact_publisher.flush(ARTIFACT_FLUSH_S)
                background_writes.flush(ARTIFACT_FLUSH_S)


@contextlib.contextmanager
def environment_variables(values: dict[str, str]) -> Iterator[None]:
    """``values`` set in ``os.environ`` inside the block, the earlier values restored after.

    A later command of the same process (a test, a notebook) must not find the block's API
    URL and take it for one the user chose (:func:`explicit_api_url`).
    """
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _database_url(settings: Settings) -> str | None:
    """The reader's URL of the data's database (watched while flows run), None if unknown."""
    from geoask.db.urls import reader_url

    try:
        return reader_url(settings)
    except Exception:  # no URL to watch; the flows' own connections report the cause
        return None


def _live_state(settings: Settings) -> ServerState | None:
    """The recorded server if its process lives; a stale record is removed (None).

    A Prefect server left behind by a ``geoask server`` that died (SIGKILL) is stopped then.

    Raises:
        ServiceError: the record exists but is unreadable: whatever server it named may still
            run, so none is started beside it (the message says how to clear it).

    """
    state = read_state(settings)
    if state is None and state_path(settings).exists():
        raise ServiceError(f"the server record {state_path(settings)} is unreadable; if a "
                           "geoask server of this home still runs, stop its process, then "
                           "delete the file")
    if state is not None and not is_process(state.pid, state.started_at, "geoask"):
        _stop_prefect_child(state)
        remove_state(settings, state.pid)
        return None
    return state


def _stop_prefect_child(state: ServerState) -> None:
    """SIGTERM the recorded Prefect server's process group, when it is still that process."""
    if state.prefect_pid and is_process(state.prefect_pid, state.prefect_started_at, "prefect"):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(state.prefect_pid, signal.SIGTERM)


def stop_server(settings: Settings, timeout_s: float = 30.0) -> ServerState | None:
    """Stop the recorded server (SIGTERM, SIGKILL after ``timeout_s``); None if none ran.

    ``geoask server`` ends serving and stops its Prefect server on SIGTERM; a Prefect server
    still running after it (its parent had to be killed) is sent SIGTERM too. Only the
    processes the record names (pid and start time) are signalled.
    """
    state = _live_state(settings)
    if state is None:
        return None
    with contextlib.suppress(ProcessLookupError):
        os.kill(state.pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    while is_process(state.pid, state.started_at, "geoask") and time.monotonic() < deadline:
        time.sleep(0.1)
    if is_process(state.pid, state.started_at, "geoask"):
        with contextlib.suppress(ProcessLookupError):
            os.kill(state.pid, signal.SIGKILL)
    _stop_prefect_child(state)
    remove_state(settings, state.pid)
    return state
