"""Loopback TCP ports geoask listens on: is one free, and what to say when it is taken.

The embedded PostGIS (``GEOASK_DB_PORT``) and the Prefect server (``GEOASK_SERVER_PORT``) each
check their port before any slow work (initdb, the server's start), and a taken port is one
message naming the setting and a port that is free right now.
"""

from __future__ import annotations

import socket
from typing import Final

LOOPBACK: Final = "127.0.0.1"
_SEARCH: Final = 100


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
