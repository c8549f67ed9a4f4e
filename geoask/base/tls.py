"""The CA-bundle variables every HTTP client of geoask and Prefect loads, checked up front.

httpx (the health checks, Prefect's client) builds a TLS context from ``SSL_CERT_FILE`` - also
for a plain-HTTP API - and Prefect's client from ``PREFECT_API_SSL_CERT_FILE``; a missing or
garbage file ended a command in a raw ``FileNotFoundError``/``ssl.SSLError`` traceback (and
Prefect printed one more at import).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from geoask.errors import ConfigurationError

CERTIFICATE_VARIABLES = ("SSL_CERT_FILE", "PREFECT_API_SSL_CERT_FILE")
"""Variables naming a CA bundle (PEM) that geoask's and Prefect's HTTP clients load."""

_PEM_CERTIFICATE = b"-----BEGIN CERTIFICATE-----"


def check_certificate_files(environ: Mapping[str, str] | None = None) -> None:
    """Check that every set :data:`CERTIFICATE_VARIABLES` names a readable PEM bundle.

    A cheap check (the file is read, not parsed: well under 1 ms, so every command can afford
    it): the file exists, can be read and holds a PEM certificate.

    Raises:
        ConfigurationError: one names a missing or unreadable file, or one without a PEM
            certificate; the message names the variable and its value.

    """
    for name in CERTIFICATE_VARIABLES:
        path = (os.environ if environ is None else environ).get(name)
        if not path:
            continue
        try:
            with open(path, "rb") as handle:
                usable = _PEM_CERTIFICATE in handle.read()
            reason = "" if usable else "not a PEM certificate bundle"
        except FileNotFoundError:
            reason = "no such file"
        except OSError as error:
            reason = f"cannot be read ({error.strerror or error})"
        if reason:
            raise ConfigurationError(f"{name}={path}: {reason}; point it at a PEM file of CA "
                                     "certificates or unset it")
