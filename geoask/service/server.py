"""Start and stop a local Prefect server (API + dashboard) on 127.0.0.1.

The server runs as a child process ``python -m prefect server start`` in its own process group,
with telemetry off, ``PREFECT_HOME=<home>/prefect`` and its database at
``GEOASK_SERVER_DATABASE_URL``, by default the database ``GEOASK_SERVER_DATABASE`` (``prefect``)
of the embedded PostgreSQL cluster (:func:`prepare_server_database`; SQLite under
``<home>/prefect`` when the data lives on an external server). Start-up takes 10-20 s;
:meth:`PrefectServer.start` waits on ``/api/health`` with a bounded timeout.

>>> sqlite_database_url(Settings(home=Path("/srv/geoask")))
'sqlite+aiosqlite:////srv/geoask/prefect/prefect.db'
"""

from __future__ import annotations

import base64
import contextlib
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType

import httpx

from geoask.base.ports import LOOPBACK, SERVER_PORT, port_is_free, taken_port_message
from geoask.errors import ServiceError
from geoask.settings import Settings


def sqlite_database_url(settings: Settings) -> str:
    """SQLAlchemy URL of a SQLite Prefect database under ``<home>/prefect``."""
    return f"sqlite+aiosqlite:///{settings.prefect_home / 'prefect.db'}"


def prepare_server_database(settings: Settings) -> str:
    """The Prefect server's SQLAlchemy URL, its database made ready first.

    ``GEOASK_SERVER_DATABASE_URL`` when set (used as is); with an external data server
    (``GEOASK_DATABASE_URL``) SQLite under ``<home>/prefect``; otherwise the database
    ``GEOASK_SERVER_DATABASE`` of the embedded cluster, which is started when stopped and
    gets the database on first use (:meth:`EmbeddedCluster.ensure_database`), reached as
    ``geoask_owner`` through asyncpg (``postgresql+asyncpg://...``).

    Raises:
        DatabaseError: the embedded cluster cannot be started or set up.

    """
    from geoask.db.cluster import OWNER_ROLE, EmbeddedCluster
    from geoask.db.urls import uses_external_database

    if settings.server_database_url:
        return settings.server_database_url
    if uses_external_database(settings):
        return sqlite_database_url(settings)
    cluster = EmbeddedCluster(settings)
    cluster.up()
    cluster.ensure_database(settings.server_database)
    url = cluster.url(OWNER_ROLE, settings.server_database)
    return url.replace("postgresql://", "postgresql+asyncpg://", 1)


def api_url_for(port: int) -> str:
    """API URL of a server on 127.0.0.1:``port``.

    >>> api_url_for(4200)
    'http://127.0.0.1:4200/api'
    """
    return f"http://{LOOPBACK}:{port}/api"


AUTH_USER = "geoask"
"""The user part of the API's basic-authentication string (``geoask:<secret>``)."""


def new_auth_string() -> str:
    """A fresh secret for the Prefect API's basic authentication: ``geoask:<43 characters>``.

    ``PREFECT_SERVER_API_AUTH_STRING`` in the environment of ``geoask server`` wins over it
    (:meth:`PrefectServer.start`): several machines then share the one the user chose.
    """
    return f"{AUTH_USER}:{secrets.token_urlsafe(32)}"


def auth_headers(auth_string: str | None) -> dict[str, str]:
    """The ``Authorization`` header Prefect's clients send for ``auth_string`` ({} for None).

    >>> auth_headers("geoask:s3cret")
    {'Authorization': 'Basic Z2VvYXNrOnMzY3JldA=='}
    """
    if not auth_string:
        return {}
    return {"Authorization": "Basic " + base64.b64encode(auth_string.encode()).decode()}


def client_environment(settings: Settings, api_url: str,
                       auth_string: str | None = None) -> dict[str, str]:
    """Variables a Prefect client, runner or worker of this server needs (telemetry off).

    Results are persisted under ``<home>/prefect/storage`` so a caller of the API can read a
    flow run's return value (geoask's tasks opt out: ``tasks/options.py``); ``auth_string``
    is the API's basic-authentication secret (``PREFECT_API_AUTH_STRING``), which the flow
    runs started by this process inherit.
    """
    return {
        **({"PREFECT_API_AUTH_STRING": auth_string} if auth_string else {}),
        "PREFECT_API_URL": api_url,
        "PREFECT_HOME": str(settings.prefect_home),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "DO_NOT_TRACK": "1",
        "PREFECT_RESULTS_PERSIST_BY_DEFAULT": "true",
        "PREFECT_LOCAL_STORAGE_PATH": str(settings.prefect_home / "storage"),
    }


PLAIN_HTTP_CA_FILE = "plain-http-ca.pem"


def plain_http_ca_file(api_url: str, prefect_home: Path) -> Path | None:
    """A one-certificate CA bundle for Prefect clients of a plain-HTTP API; None for HTTPS.

    Every Prefect client builds a TLS context from ``PREFECT_API_SSL_CERT_FILE`` (default:
    certifi's bundle, ~150 CA certificates, 50 ms to parse on the 2-core reference machine),
    also for an ``http://`` URL, where it is never used; Prefect makes a new client for every
    subflow run (the task run tracking it in its parent flow run), so each benchmark question
    paid it. For a plain-HTTP API the file ``<prefect_home>/plain-http-ca.pem`` holds only
    the first certificate of certifi's bundle (under 1 ms). None for any other URL scheme or
    when ``PREFECT_API_SSL_CERT_FILE`` is set in the environment (the user's choice stands).

    Raises:
        ArtifactWriteError: the file could not be written.

    """
    if not api_url.startswith("http://") or os.environ.get("PREFECT_API_SSL_CERT_FILE"):
        return None
    path = prefect_home / PLAIN_HTTP_CA_FILE
    if not path.is_file():
        import certifi

        from geoask.base.storage import write_atomic

        bundle = Path(certifi.where()).read_text(encoding="ascii")
        end = "-----END CERTIFICATE-----"
        write_atomic(str(path), (bundle[:bundle.index(end) + len(end)] + "\n").encode("ascii"))
    return path


SERVER_TUNING: dict[str, str] = {
    "PREFECT_SERVER_SERVICES_TASK_RUN_RECORDER_BATCH_SIZE": "200",
    "PREFECT_SERVER_SERVICES_TASK_RUN_RECORDER_FLUSH_INTERVAL": "1",
}
"""Server settings geoask changes (a variable already set in the environment wins).

Prefect's task-run recorder turns the task-run events clients send into task runs and states;
by default it writes each event in a transaction of its own, which made the server's CPU per
question run (one flow run, seven stage task runs) 1.12 s on the 2-core reference machine.
In batches of up to 200, flushed at least every second (a task run reaches the dashboard at
most ~1 s later), it is 0.65 s, and a question's flow-run overhead falls with the server's
load (``benchmark/prefect_server.py``).
"""


def server_environment(
    settings: Settings, port: int, database_url: str, base: Mapping[str, str] | None = None,
    auth_string: str | None = None,
) -> dict[str, str]:
    """Environment of the ``prefect server start`` child: ``base`` plus the server settings.

    ``database_url`` is the SQLAlchemy URL of the server's database
    (:func:`prepare_server_database`); ``auth_string`` turns on Prefect's basic
    authentication (``PREFECT_SERVER_API_AUTH_STRING``): every API request but
    ``GET /api/health`` and ``/api/ready`` must carry it, else 401, and so must the first
    message of every websocket (events, logs, task runs).

    A ``PREFECT_API_URL`` inherited from ``base`` is dropped: the server must not point at
    another server, and the dashboard is told the API URL of this one. The task-run recorder
    writes in batches (:data:`SERVER_TUNING`) unless ``base`` sets those variables itself.
    """
    environment = {k: v for k, v in (base or {}).items() if k != "PREFECT_API_URL"}
    for name, value in SERVER_TUNING.items():
        environment.setdefault(name, value)
    environment.update({
        "PREFECT_HOME": str(settings.prefect_home),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "DO_NOT_TRACK": "1",
        "PREFECT_SERVER_API_HOST": LOOPBACK,
        "PREFECT_SERVER_API_PORT": str(port),
        "PREFECT_UI_API_URL": api_url_for(port),
        "PREFECT_SERVER_DATABASE_CONNECTION_URL": database_url,
    })
    if auth_string:
        environment["PREFECT_SERVER_API_AUTH_STRING"] = auth_string
    return environment


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now (tests start servers on it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        return int(sock.getsockname()[1])


def is_healthy(api_url: str, timeout_s: float = 2.0) -> bool:
    """True when ``<api_url>/health`` answers 200."""
    try:
        return httpx.get(f"{api_url}/health", timeout=timeout_s).status_code == 200
    except httpx.HTTPError:
        return False


class PrefectServer:
    """A Prefect server child process on 127.0.0.1:``port``; a context manager.

    Args:
        settings: geoask settings (home, database URL, start timeout).
        port: the port (default ``GEOASK_SERVER_PORT``).
        log_path: file receiving the server's output (default ``<home>/prefect/server.log``).

    Attributes:
        started_in_s: seconds from launch until the health endpoint answered (after start).
        database_url: the server database's SQLAlchemy URL (after start).
        auth_string: the API's basic-authentication secret (after start):
            ``PREFECT_SERVER_API_AUTH_STRING`` from the environment, else a new random one.

    """

    def __init__(self, settings: Settings, port: int | None = None,
                 log_path: Path | None = None) -> None:
        self.settings = settings
        self.port = port or settings.server_port
        self.log_path = log_path or settings.prefect_home / "server.log"
        self.started_in_s: float | None = None
        self.database_url: str | None = None
        self.auth_string: str | None = None
        self._process: subprocess.Popen[bytes] | None = None


    @property
    def pid(self) -> int | None:
        """The ``prefect server start`` process (leader of its own process group), if started."""
        return self._process.pid if self._process is not None else None

    @property
    def api_url(self) -> str:
        """``http://127.0.0.1:<port>/api``."""
        return api_url_for(self.port)

    @property
    def dashboard_url(self) -> str:
        """``http://127.0.0.1:<port>`` (the Prefect UI)."""
        return f"http://{LOOPBACK}:{self.port}"

    def start(self) -> float:
        """Launch the server and wait for its health endpoint; return the start time in s.

        Raises:
            ServiceError: the port is taken, the server exited, or it was not healthy within
                ``GEOASK_SERVER_START_TIMEOUT_S`` (the message points at the log).

        """
        if not port_is_free(self.port):
            raise ServiceError(taken_port_message(self.port, SERVER_PORT.setting,
                                                  SERVER_PORT.command))
        self.settings.prefect_home.mkdir(parents=True, exist_ok=True)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        begin = time.perf_counter()
        self.database_url = database_url = prepare_server_database(self.settings)
        self.auth_string = os.environ.get("PREFECT_SERVER_API_AUTH_STRING") or new_auth_string()
        with self.log_path.open("ab") as log:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "prefect", "server", "start", "--host", LOOPBACK,
                 "--port", str(self.port), "--analytics-off"],
                env=server_environment(self.settings, self.port, database_url, os.environ,
                                       self.auth_string),
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        try:
            self._wait_until_healthy(self.settings.server_start_timeout_s)
        except ServiceError:
            self.stop()
            raise
        self.started_in_s = time.perf_counter() - begin
        return self.started_in_s

    def _wait_until_healthy(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            assert self._process is not None
            if self._process.poll() is not None:
                raise ServiceError(f"the Prefect server exited with code {self._process.returncode}"
                                   f" while starting; see {self.log_path}")
            if is_healthy(self.api_url):
                return
            time.sleep(0.25)
        raise ServiceError(f"the Prefect server did not answer {self.api_url}/health within "
                           f"{timeout_s:.0f} s; see {self.log_path} or raise "
                           "GEOASK_SERVER_START_TIMEOUT_S")

    def stop(self, timeout_s: float = 20.0) -> None:
        """Stop the server's process group: SIGTERM, then SIGKILL after ``timeout_s``."""
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        _signal_group(process, signal.SIGTERM)
        try:
            process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            _signal_group(process, signal.SIGKILL)
            process.wait(timeout=timeout_s)

    def __enter__(self) -> PrefectServer:
        """Start the server (see :meth:`start`)."""
        self.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        """Stop the server."""
        self.stop()


def _signal_group(process: subprocess.Popen[bytes], signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signum)
