"""``<home>/prefect/server.json``: which geoask Prefect server runs, and whether it still does.

:class:`ServerState` is what the file records (URL, pid, port, mode, start time, log); a record
names a live server only when its pid still is the process that was recorded
(:func:`is_process`), so a pid reused by another program is never signalled.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from geoask.settings import Settings

STATE_FILE = "server.json"


@dataclass(frozen=True)
class ServerState:
    """What ``<home>/prefect/server.json`` records about a running geoask Prefect server.

    Attributes:
        api_url: ``http://127.0.0.1:<port>/api``.
        pid: the ``geoask server`` process (SIGTERM stops it and its Prefect server).
        port: TCP port on 127.0.0.1.
        mode: ``background`` (started by a command) or ``foreground`` (``geoask server`` in
            a terminal).
        log_path: the Prefect server's output.
        database: the server database's SQLAlchemy URL without its password.
        started_at: the ``geoask server`` process's start (Unix time, psutil), so that a pid
            reused by another program after a crash or reboot is never taken for it.
        prefect_pid: its ``prefect server start`` child (a process group of its own).
        prefect_started_at: that child's start, likewise.
        worker_url: the warm question worker (:mod:`geoask.service.worker`), when it runs.
        worker_token: the secret its requests carry (the file is mode 0600).
        api_auth_string: the secret of the Prefect API's basic authentication
            (``PREFECT_SERVER_API_AUTH_STRING`` of the server, ``PREFECT_API_AUTH_STRING`` of
            every client geoask starts; the dashboard's password); None for a server started
            before geoask set one.
        workspace_url: the workspace page (:mod:`geoask.service.workspace`), when it runs.
        workspace_token: the secret its requests carry (``?token=``).

    """

    api_url: str
    pid: int
    port: int
    mode: str
    log_path: str
    database: str
    started_at: float | None = None
    prefect_pid: int | None = None
    prefect_started_at: float | None = None
    worker_url: str | None = None
    worker_token: str | None = None
    api_auth_string: str | None = None
    workspace_url: str | None = None
    workspace_token: str | None = None

    @property
    def dashboard_url(self) -> str:
        """The Prefect UI: the API URL without ``/api``."""
        return self.api_url.removesuffix("/api")

    @property
    def workspace_link(self) -> str | None:
        """The workspace page's URL with its token (like a Jupyter URL), when it runs."""
        if not self.workspace_url or not self.workspace_token:
            return None
        return f"{self.workspace_url}/?token={self.workspace_token}"


def state_path(settings: Settings) -> Path:
    """``<prefect home>/server.json``."""
    return settings.prefect_home / STATE_FILE


def read_state(settings: Settings) -> ServerState | None:
    """The recorded server, or None when there is no (readable) state file."""
    try:
        return ServerState(**json.loads(state_path(settings).read_text()))
    except (OSError, ValueError, TypeError):
        return None


def write_state(settings: Settings, state: ServerState) -> None:
    """Record ``state`` (atomically; mode 0600 from its creation: the file holds secrets)."""
    path = state_path(settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    with contextlib.suppress(FileNotFoundError):
        temporary.unlink()  # a leftover could have looser permissions
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        handle.write(json.dumps(asdict(state), indent=2))
    temporary.replace(path)


def remove_state(settings: Settings, pid: int | None = None) -> None:
    """Delete the state file (only when it still names ``pid``, if given)."""
    state = read_state(settings)
    if pid is None or (state is not None and state.pid == pid):
        with contextlib.suppress(FileNotFoundError):
            state_path(settings).unlink()


def process_started_at(pid: int) -> float | None:
    """When process ``pid`` started (Unix time); None when there is no such live process."""
    import psutil

    try:
        process = psutil.Process(pid)
        return None if process.status() == psutil.STATUS_ZOMBIE else process.create_time()
    except psutil.Error:
        return None


def is_process(pid: int | None, started_at: float | None, program: str) -> bool:
    """True when ``pid`` lives and is the process recorded as started at ``started_at``.

    A record without a start time (written by an older geoask) must at least name
    ``program`` on the process's command line; a pid now used by anything else is not it.
    """
    import psutil

    now = process_started_at(pid) if pid else None
    if now is None:
        return False
    if started_at is not None:
        return abs(now - started_at) < 0.05
    with contextlib.suppress(psutil.Error):
        return program in " ".join(psutil.Process(pid).cmdline())
    return False
