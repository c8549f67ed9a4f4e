"""Connection URLs of the database geoask works on: external (GEOASK_DATABASE_URL) or embedded."""

from __future__ import annotations

from dataclasses import dataclass

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from geoask.db.cluster import DATABASE_NAME, OWNER_ROLE, READER_ROLE, EmbeddedCluster
from geoask.errors import ConfigurationError
from geoask.settings import Settings


def uses_external_database(settings: Settings) -> bool:
    """True when GEOASK_DATABASE_URL names a server, so no embedded cluster is started."""
    return bool(settings.database_url)


def configured_database_name(settings: Settings) -> str:
    """The name of the configured database: GEOASK_DATABASE_URL's, else the embedded one's.

    >>> configured_database_name(Settings(database_url="postgresql://u@h/spdata"))
    'spdata'
    """
    if settings.database_url:
        return str(conninfo_to_dict(settings.database_url).get("dbname")
                   or conninfo_to_dict(settings.database_url).get("user") or "postgres")
    return DATABASE_NAME


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


@dataclass(frozen=True)
class DatasetTarget:
    """Where a dataset is loaded: the owner's URL, the role granted SELECT, the reader's URL.

    ``reader_url`` is None on an external server (its reader URL is the user's to form).
    ``created``: the database was created for this load (embedded cluster only).
    """

    owner_url: str
    reader_role: str
    reader_url: str | None
    created: bool = False


def dataset_target(settings: Settings, database: str, owner: str | None = None) -> DatasetTarget:
    """Prepare database ``database`` for loading and say how to reach it.

    Embedded cluster: creates the database (owned by ``geoask_owner``, with PostGIS) if needed.
    External server (GEOASK_DATABASE_URL set): ``owner`` must be a URL of a role owning that
    database, which must exist with PostGIS; the role of GEOASK_DATABASE_URL is granted SELECT.

    Raises:
        ConfigurationError: ``owner`` is missing (external) or given (embedded), or names
            another database.
        DatabaseError: the embedded cluster is not running.

    """
    if not settings.database_url:
        if owner:
            raise ConfigurationError(
                "--owner-url is only for an external server (GEOASK_DATABASE_URL); the "
                "embedded cluster's owner role is used otherwise")
        if database == DATABASE_NAME:
            raise ConfigurationError(
                f"database {database} is the embedded cluster's own (the demo data and the "
                "question runs use it); name the dataset's own database in its manifest")
        cluster = EmbeddedCluster(settings)
        created = cluster.ensure_database(database)
        return DatasetTarget(cluster.url(OWNER_ROLE, database), READER_ROLE,
                             cluster.url(READER_ROLE, database), created)
    if not owner:
        raise ConfigurationError(
            f"GEOASK_DATABASE_URL points at an external server; pass --owner-url with the URL "
            f"of a role that owns database {database} there (create it first: CREATE DATABASE "
            f"{database}; then in it CREATE EXTENSION postgis)")
    named = _conninfo(owner).get("dbname")
    if named != database:
        raise ConfigurationError(
            f"--owner-url names database {named or '(none)'}, the manifest loads {database}; "
            f"point it at database {database}")
    reader = _conninfo(settings.database_url).get("user")
    if not reader:
        raise ConfigurationError("GEOASK_DATABASE_URL names no user; the loader grants that "
                                 "role SELECT, so name it in the URL")
    return DatasetTarget(owner, reader, None)


def _conninfo(url: str) -> dict[str, str]:
    try:
        return {k: str(v) for k, v in conninfo_to_dict(url).items() if v is not None}
    except psycopg.ProgrammingError as error:
        raise ConfigurationError(f"cannot parse the database URL: {error}") from None
