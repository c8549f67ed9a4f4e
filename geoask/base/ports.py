"""Loopback TCP ports geoask listens on: is one free, and what to say when it is taken.

The embedded PostGIS (``GEOASK_DB_PORT``) and the Prefect server (``GEOASK_SERVER_PORT``) each
check their port before any slow work (initdb, the server's start), and a taken port is one
message naming the setting and a port that is free right now. :data:`BOUND_PORTS` lists them
(the settings take their defaults from it); ``scripts/check_ports.py`` runs
:func:`taken_ports` with only the system Python before ``make setup`` installs anything, so
this module imports nothing but the standard library. The warm worker and the workspace page
listen on ports the system picks, which cannot be taken.
"""

from __future__ import annotations

import socket
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

LOOPBACK: Final = "127.0.0.1"
_SEARCH: Final = 100


@dataclass(frozen=True)
class BoundPort:
    """A fixed port geoask listens on, and the setting under which it binds nothing there.

    ``unless`` names that setting: an external database or Prefect API.
    """

    setting: str
    default: int
    command: str
    unless: str


DB_PORT: Final = BoundPort("GEOASK_DB_PORT", 55432, "geoask db up", "GEOASK_DATABASE_URL")
SERVER_PORT: Final = BoundPort("GEOASK_SERVER_PORT", 4200, "geoask server",
                               "GEOASK_SERVER_API_URL")
BOUND_PORTS: Final = (DB_PORT, SERVER_PORT)


def port_is_free(port: int, host: str = LOOPBACK) -> bool:
    """True when nothing listens on ``host:port``."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.settimeout(0.5)
        return probe.connect_ex((host, port)) != 0


def free_port_after(port: int) -> int | None:
    """The first free port above ``port`` (within 100), or None."""
    return next((p for p in range(port + 1, min(port + _SEARCH, 65535) + 1) if port_is_free(p)),
                None)


def taken_port_message(port: int, setting: str, command: str) -> str:
    """One line: ``port`` is taken, which setting moves geoask off it, and to what.

    >>> taken_port_message(1, "GEOASK_DB_PORT", "geoask db up")[:52]
    'port 1 on 127.0.0.1 is used by another program; set '
    """
    free = free_port_after(port)
    example = f" (e.g. export {setting}={free})" if free else ""
    return (f"port {port} on {LOOPBACK} is used by another program; set {setting} to a free "
            f"port{example} and run `{command}` again")


def taken_ports(environ: Mapping[str, str], command: str) -> list[str]:
    """One line per port of :data:`BOUND_PORTS` geoask would bind that is taken or invalid.

    Args:
        environ: the environment (``GEOASK_*`` settings); a port whose ``unless`` setting is
            set is not bound by geoask and not checked.
        command: what to run again once the setting is changed (``make demo``).

    >>> taken_ports({"GEOASK_DB_PORT": "x", "GEOASK_SERVER_API_URL": "http://h:1/api"}, "make")
    ["GEOASK_DB_PORT='x' is not a port number (1024-65535); set it to a free port"]

    """
    lines = []
    for bound in BOUND_PORTS:
        if environ.get(bound.unless):
            continue
        text = environ.get(bound.setting, str(bound.default))
        if not text.strip().isdigit() or not 1024 <= int(text) <= 65535:
            lines.append(f"{bound.setting}={text!r} is not a port number (1024-65535); set it "
                         "to a free port")
        elif not port_is_free(int(text)):
            lines.append(taken_port_message(int(text), bound.setting, command))
    return lines
