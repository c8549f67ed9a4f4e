"""End ``geoask bench``/``ask`` within seconds when the Prefect API or the database goes away.

Without this, every question left after ``geoask db down`` (which stops the Prefect server whose
database the cluster holds) waited out Prefect's client retries (65-75 s each, "Unable to acquire
concurrency slots"), printed ~145 KB of errors and never recovered. :func:`watch_infrastructure`
probes, once a second in a daemon thread, the Prefect API's ``/health`` and the database's
listening socket (TCP, or the Unix socket of a socket-directory host), and the record of this
home's geoask server, which ``geoask server`` deletes first thing when it is stopped: a record
gone, a probe refused for :data:`REFUSED_FOR_S` seconds, or one failing in any other way
(timeouts) for :data:`SILENT_FOR_S`, ends the command through
:func:`geoask.base.interrupt.abort`: one line naming what went away and what was kept, exit code
:data:`~geoask.base.interrupt.EXIT_INFRASTRUCTURE`. Finished benchmark questions are saved
already; a rerun resumes with the rest. The flow runs in flight are marked *Crashed* when the
API still answers (the database went away); when the API itself is gone they cannot be, and
stay *Running* on that server until it marks them itself (it does not: Prefect leaves a run
whose process ended silently to its heartbeat automations, off here). Only a command waiting in
:func:`~geoask.base.interrupt.run_until_stopped` can be ended so (a watch entered in the
main thread waits for it); the server's own worker threads are not watched.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Final

import httpx

from geoask.base.interrupt import abort, can_abort
from geoask.service.state_file import read_state
from geoask.settings import Settings

PROBE_INTERVAL_S: Final = 1.0
"""Seconds between two rounds of probes."""
PROBE_TIMEOUT_S: Final = 2.0
"""Seconds one probe may take."""
REFUSED_FOR_S: Final = 2.0
"""A service whose probes are refused (nothing listens) this long is gone."""
SILENT_FOR_S: Final = 20.0
"""A service whose probes fail otherwise (time out, answer an error) this long is gone."""


class Refused(Exception):
    """Nothing listens where the service should be (connection refused, no socket file)."""


@dataclass
class Probe:
    """One service to watch: its name in the stop line and a check that raises when down."""

    name: str
    check: Callable[[], None]
    refused_text: str = "refuses connections"
    refused_for_s: float = REFUSED_FOR_S
    failing_since: float | None = None
    refused: bool = False

    def gone(self, now: float) -> bool:
        """Probe once; True when it has failed long enough to call the service gone."""
        try:
            self.check()
        except Refused:
            self.refused = True
        except Exception:  # a timeout, an error status: slower to conclude
            self.refused = False
        else:
            self.failing_since = None
            return False
        self.failing_since = self.failing_since if self.failing_since is not None else now
        return now - self.failing_since >= (self.refused_for_s if self.refused
                                            else SILENT_FOR_S)

    @property
    def gone_text(self) -> str:
        """``<name> <how it failed>`` for the stop line."""
        return f"{self.name} {self.refused_text if self.refused else 'stopped answering'}"


def api_probe(api_url: str) -> Probe:
    """The Prefect API at ``api_url``: ``GET /health`` must answer 200 (it needs no secret)."""
    def check() -> None:
        try:
            response = httpx.get(f"{api_url}/health", timeout=PROBE_TIMEOUT_S)
        except httpx.ConnectError as error:
            raise Refused(str(error)) from None
        response.raise_for_status()

    return Probe(f"the Prefect API at {api_url}", check)


def record_probe(settings: Settings, pid: int) -> Probe:
    """The geoask server ``pid`` of this home: its record must still name it.

    ``geoask server`` deletes its record first thing when it is stopped (``geoask server
    stop``, ``geoask db down``), before its Prefect server takes seconds to shut down: a record
    gone or naming another process ends the command at once.
    """
    def check() -> None:
        state = read_state(settings)
        if state is None or state.pid != pid:
            raise Refused("the record is gone")

    return Probe(f"the geoask Prefect server (pid {pid})", check, "was stopped", 0.0)


def database_probe(host: str, port: int) -> Probe:
    """The database server at ``host:port``: something must accept a connection there.

    A ``host`` starting with ``/`` is a socket directory (libpq's ``.s.PGSQL.<port>``).
    """
    def check() -> None:
        family, address = ((socket.AF_UNIX, f"{host}/.s.PGSQL.{port}") if host.startswith("/")
                           else (socket.AF_INET6 if ":" in host else socket.AF_INET,
                                 (host, port)))
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.settimeout(PROBE_TIMEOUT_S)
            try:
                probe.connect(address)
            except (ConnectionRefusedError, FileNotFoundError) as error:
                raise Refused(str(error)) from None

    where = host if host.startswith("/") else f"{host}:{port}"
    return Probe(f"the database server at {where}", check)


def infrastructure_probes(settings: Settings, api_url: str, database_url: str | None
                          ) -> list[Probe]:
    """The probes of a command that runs flows on ``api_url`` against ``database_url``.

    With this home's recorded server at ``api_url``, its record is watched too.
    """
    address = database_address(database_url) if database_url else None
    probes = [api_probe(api_url), *([database_probe(*address)] if address else [])]
    state = read_state(settings)
    if state is not None and state.api_url == api_url:
        probes.append(record_probe(settings, state.pid))
    return probes


def database_address(url: str) -> tuple[str, int] | None:
    """``(host, port)`` of a libpq URL's first host, or None when it cannot be told.

    >>> database_address("postgresql://geoask_reader:x@127.0.0.1:55432/geoask")
    ('127.0.0.1', 55432)
    >>> database_address("postgresql:///geoask?host=/var/run/postgresql")
    ('/var/run/postgresql', 5432)
    """
    from psycopg.conninfo import conninfo_to_dict

    try:
        info = conninfo_to_dict(url)
        host = str(info.get("host") or os.environ.get("PGHOST") or "").split(",")[0]
        port = int(str(info.get("port") or os.environ.get("PGPORT") or 5432).split(",")[0])
    except Exception:  # an unparsable URL: the command's own connection reports it
        return None
    return (host, port) if host else None


@contextlib.contextmanager
def watch_infrastructure(probes: list[Probe]) -> Iterator[None]:
    """Watch ``probes`` while inside; the first one gone ends the command (module docstring)."""
    if not probes or not (can_abort() or threading.current_thread() is threading.main_thread()):
        yield  # a server's worker thread: nothing to end
        return
    done = threading.Event()

    def watch() -> None:
        while not done.wait(PROBE_INTERVAL_S):
            now = time.monotonic()
            for probe in probes:
                if probe.gone(now) and not done.is_set() and abort(probe.gone_text):
                    return

    thread = threading.Thread(target=watch, name="geoask-infrastructure-watch", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
