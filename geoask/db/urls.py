"""Connection URLs of the database geoask works on: external (GEOASK_DATABASE_URL) or embedded."""

from __future__ import annotations

from psycopg.conninfo import make_conninfo

from geoask.db.cluster import OWNER_ROLE, READER_ROLE, EmbeddedCluster
from geoask.errors import ConfigurationError
from geoask.settings import Settings


def uses_external_database(settings: Settings) -> bool:
    """True when GEOASK_DATABASE_URL names a server, so no embedded cluster is started."""
    return bool(settings.database_url)


def reader_url(settings: Settings) -> str:
    """Libpq URL of the read-only role (``geoask_reader`` on the embedded cluster)."""
    if settings.database_url:
        return settings.database_url
    return EmbeddedCluster(settings).url(READER_ROLE)


def reader_url_for_database(settings: Settings, database: str) -> str:
    """Libpq conninfo of the reader role for ``database`` on the same server.

    Same host, port, role and password as :func:`reader_url`, only the database name differs
    (on the embedded cluster: a database created there next to the demo's).

    Raises:
        DatabaseError: the embedded cluster has no credentials yet (run `geoask db up`).

    """
    return make_conninfo(reader_url(settings), dbname=database)


def owner_url(settings: Settings) -> str:
    """Libpq URL of the role that loads data.

    Raises:
        ConfigurationError: an external server is used but GEOASK_OWNER_DATABASE_URL is unset.

    """
    if settings.database_url:
        if not settings.owner_database_url:
            raise ConfigurationError(
                "GEOASK_DATABASE_URL points at an external server; set GEOASK_OWNER_DATABASE_URL "
                "to a role that may create the demo data's schema to load it there"
            )
        return settings.owner_database_url
    return EmbeddedCluster(settings).url(OWNER_ROLE)
