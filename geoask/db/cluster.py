"""The embedded PostgreSQL 15 + PostGIS cluster (the default database of geoask).

The cluster lives under ``<GEOASK_HOME>/postgres`` (``pgdata/`` data directory, ``run/`` socket
folder, ``server.log``, ``credentials.json``), or under ``/var/lib/geoask/<hash>/postgres`` when
the PostgreSQL user cannot reach GEOASK_HOME (see ``Settings.service_home``). It listens on
127.0.0.1 only at ``GEOASK_DB_PORT`` and is run by an unprivileged OS user (PostgreSQL refuses
to run as root: when geoask runs as root it creates and uses the system user
``GEOASK_DB_OS_USER``).

Roles: ``postgres`` (bootstrap superuser, Unix-socket access only), ``geoask_owner`` (owns the
data schema and loads data) and ``geoask_reader`` (SELECT only, read-only transactions, 30 s
statement timeout). Passwords are random and kept in ``credentials.json`` (mode 0600).

Every operation is idempotent: ``up`` on a running cluster and ``down`` on a stopped one do
nothing but report.
"""

from __future__ import annotations

import json
import os
import pwd
import secrets
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg import sql

from geoask.base.ports import DB_PORT, port_is_free, taken_port_message
from geoask.catalog.model import load_catalog
from geoask.errors import ConfigurationError, DatabaseError
from geoask.settings import Settings

DATABASE_NAME = "geoask"
OWNER_ROLE = "geoask_owner"
READER_ROLE = "geoask_reader"


@dataclass(frozen=True)
class Credentials:
    """Passwords of the owner and reader roles of one embedded cluster."""

    owner_password: str
    reader_password: str


class EmbeddedCluster:
    """A project-local PostgreSQL 15 cluster with PostGIS, managed through ``pg_ctl``.

    Raises :class:`geoask.errors.DatabaseError` with a specific message (missing binaries,
    port in use, failed start with the log's tail) when an operation fails.
    """

    def __init__(self, settings: Settings) -> None:
        """Bind the cluster to ``settings`` (home folder, port, OS user, PostgreSQL binaries)."""
        self.settings = settings
        self.root = settings.cluster_dir
        self.port = settings.db_port

    # -- paths ---------------------------------------------------------------------------
    @property
    def pgdata(self) -> Path:
        """The PostgreSQL data directory."""
        return self.root / "pgdata"

    @property
    def socket_dir(self) -> Path:
        """Folder of the Unix-domain socket (superuser access only)."""
        return self.root / "run"

    @property
    def log_file(self) -> Path:
        """The server log."""
        return self.root / "server.log"

    @property
    def credentials_file(self) -> Path:
        """JSON file with the role passwords (mode 0600)."""
        return self.root / "credentials.json"

    # -- public operations ---------------------------------------------------------------
    def is_initialized(self) -> bool:
        """True when the data directory holds a cluster."""
        return (self.pgdata / "PG_VERSION").is_file()

    def is_running(self) -> bool:
        """True when the postmaster of this cluster runs (``pg_ctl status``)."""
        if not self.is_initialized():
            return False
        result = self._run_as_db_user([self._bin("pg_ctl"), "status", "-D", str(self.pgdata)])
        return result.returncode == 0

    def up(self) -> bool:
        """Initialise (first time), start and bootstrap the cluster.

        Returns True if the cluster was started by this call, False if it was already running.
        Raises DatabaseError when PostgreSQL or PostGIS is missing, the port is taken by another
        program, or the server does not start (the message quotes the log's tail).
        """
        self._check_binaries()
        if self.is_running():
            running_port = self.running_port()
            if running_port != self.port:
                raise DatabaseError(
                    f"the cluster in {self.root} already runs on port {running_port}, not "
                    f"GEOASK_DB_PORT={self.port}; use that port, or stop it first with "
                    f"GEOASK_DB_PORT={running_port} geoask db down"
                )
            self._write_config()  # a cluster started by an older geoask gets today's settings
            with psycopg.connect(self._superuser_conninfo("postgres"), autocommit=True) as conn:
                conn.execute("SELECT pg_reload_conf()")
            self._bootstrap()
            return False
        if not port_is_free(self.port):  # before initdb and storage: fail in a second
            raise DatabaseError(taken_port_message(self.port, DB_PORT.setting, DB_PORT.command))
        self._prepare_storage()
        if not self.is_initialized():
            self._initdb()
        self._write_config()
        result = self._run_as_db_user(
            [self._bin("pg_ctl"), "start", "-w", "-t", "60", "-D", str(self.pgdata),
             "-l", str(self.log_file)]
        )
        if result.returncode != 0:
            raise DatabaseError(
                f"PostgreSQL did not start ({result.stderr.strip() or result.stdout.strip()}); "
                f"last lines of {self.log_file}:\n{self._log_tail()}"
            )
        self._bootstrap()
        return True

    def running_port(self) -> int | None:
        """The port the running postmaster listens on (from ``postmaster.pid``), if any."""
        try:
            lines = (self.pgdata / "postmaster.pid").read_text().splitlines()
            return int(lines[3])
        except (OSError, IndexError, ValueError):
            return None

    def down(self) -> bool:
        """Stop the cluster (fast shutdown). Returns False if it was not running."""
        if not self.is_running():
            return False
        result = self._run_as_db_user(
            [self._bin("pg_ctl"), "stop", "-w", "-m", "fast", "-D", str(self.pgdata)]
        )
        if result.returncode != 0:
            raise DatabaseError(f"PostgreSQL did not stop: {result.stderr.strip()}")
        return True

    def credentials(self) -> Credentials:
        """Return the role passwords; raises DatabaseError if the cluster was never set up."""
        try:
            data = json.loads(self.credentials_file.read_text())
        except FileNotFoundError:
            raise DatabaseError(
                "the embedded database has not been set up yet; run `geoask db up`"
            ) from None
        return Credentials(data["owner_password"], data["reader_password"])

    def url(self, role: str, database: str = DATABASE_NAME) -> str:
        """Libpq URL for ``role`` (``geoask_owner`` or ``geoask_reader``) over 127.0.0.1."""
        creds = self.credentials()
        password = creds.owner_password if role == OWNER_ROLE else creds.reader_password
        return f"postgresql://{role}:{password}@127.0.0.1:{self.port}/{database}"

    def ensure_database(self, name: str) -> bool:
        """Create database ``name`` owned by the owner role, with PostGIS; safe to repeat.

        As the cluster superuser: ``CREATE DATABASE`` (if absent), ``CREATE EXTENSION postgis``
        and the same database-level rights as the demo database (CONNECT for owner and reader
        only, no CREATE in ``public``; the owner may add rows to ``spatial_ref_sys``). Returns
        True if the database was created by this call. Raises DatabaseError when the cluster
        is not running.
        """
        if not self.is_running():
            raise DatabaseError("the embedded database is not running; start it with "
                                "`geoask db up`")
        with psycopg.connect(self._superuser_conninfo("postgres"), autocommit=True) as conn:
            exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s",
                                  (name,)).fetchone()
            if not exists:
                conn.execute(sql.SQL("CREATE DATABASE {} OWNER {}").format(
                    sql.Identifier(name), sql.Identifier(OWNER_ROLE)))
        with psycopg.connect(self._superuser_conninfo(name), autocommit=True) as conn:
            for statement in _database_statements(name):
                conn.execute(statement)
        return not exists

    def drop_database(self, name: str) -> None:
        """Drop database ``name`` (sessions still in it are ended); nothing if it is absent.

        Raises:
            ConfigurationError: ``name`` is the embedded cluster's own database.
            DatabaseError: the cluster is not running.

        """
        if name in (DATABASE_NAME, "postgres"):
            raise ConfigurationError(f"database {name} is the embedded cluster's own; not dropped")
        if not self.is_running():
            raise DatabaseError("the embedded database is not running; start it with "
                                "`geoask db up`")
        with psycopg.connect(self._superuser_conninfo("postgres"), autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
                sql.Identifier(name)))

    # -- internals -----------------------------------------------------------------------
    def _bin(self, name: str) -> str:
        return str(self.settings.pg_bindir / name)

    def _check_binaries(self) -> None:
        if not Path(self._bin("pg_ctl")).exists():
            raise DatabaseError(
                f"PostgreSQL 15 binaries not found in {self.settings.pg_bindir}; install Debian's "
                "`postgresql-15-postgis-3` (make demo does it when run as root) or set "
                "GEOASK_PG_BINDIR"
            )
        if not Path("/usr/share/postgresql/15/extension/postgis.control").exists():
            raise DatabaseError(
                "PostGIS for PostgreSQL 15 is not installed; install Debian's "
                "`postgresql-15-postgis-3`"
            )

    def _as_root(self) -> bool:
        return os.geteuid() == 0

    def _run_as_db_user(self, argv: list[str]) -> subprocess.CompletedProcess[str]:
        if self._as_root():
            argv = ["runuser", "-u", self.settings.db_os_user, "--", *argv]
        return subprocess.run(argv, capture_output=True, text=True, check=False, cwd="/")

    def _prepare_storage(self) -> None:
        """Create the cluster folder, owned by the OS user that will run PostgreSQL.

        The folder lies where that user can reach it (``Settings.service_home``).
        """
        self.root.mkdir(parents=True, exist_ok=True)
        if not self._as_root():
            self.root.chmod(0o700)
            return
        user = self._ensure_os_user()
        for path in (self.root, self.pgdata, self.socket_dir):
            path.mkdir(exist_ok=True)
            shutil.chown(path, user.pw_uid, user.pw_gid)
            path.chmod(0o700)
        if self.log_file.exists():
            shutil.chown(self.log_file, user.pw_uid, user.pw_gid)

    def _ensure_os_user(self) -> pwd.struct_passwd:
        name = self.settings.db_os_user
        try:
            return pwd.getpwnam(name)
        except KeyError:
            subprocess.run(
                ["useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent",
                 "--shell", "/usr/sbin/nologin", name],
                check=True, capture_output=True,
            )
            return pwd.getpwnam(name)

    def _initdb(self) -> None:
        result = self._run_as_db_user(
            [self._bin("initdb"), "-D", str(self.pgdata), "-U", "postgres", "-E", "UTF8",
             "--locale=C.UTF-8", "--auth-local=trust", "--auth-host=scram-sha-256"]
        )
        if result.returncode != 0:
            raise DatabaseError(f"initdb failed: {result.stderr.strip()}")

    def _write_config(self) -> None:
        conf = (
            "# written by geoask; overrides postgresql.conf\n"
            "listen_addresses = '127.0.0.1'\n"
            f"port = {self.port}\n"
            f"unix_socket_directories = '{self.socket_dir}'\n"
            "unix_socket_permissions = 0700\n"
            "shared_buffers = '256MB'\n"
            "work_mem = '32MB'\n"
            "max_connections = 50\n"
            "password_encryption = 'scram-sha-256'\n"
            "timezone = 'UTC'\n"
            # ST_FromGDALRaster, ST_AsGDALRaster and ST_AsTIFF need their GDAL driver enabled
            "postgis.gdal_enabled_drivers = 'GTiff PNG'\n"
            # the second wall behind the guard's no_outdb_rasters: no band read from a file
            "postgis.enable_outdb_rasters = off\n"
        )
        include = self.pgdata / "geoask.conf"
        self._write_as_db_user(include, conf)
        main = self.pgdata / "postgresql.conf"
        text = main.read_text()
        if "include_if_exists = 'geoask.conf'" not in text:
            self._write_as_db_user(main, text + "\ninclude_if_exists = 'geoask.conf'\n")

    def _write_as_db_user(self, path: Path, text: str) -> None:
        tmp = path.with_suffix(".tmp")
        tmp.write_text(text)
        if self._as_root():
            user = pwd.getpwnam(self.settings.db_os_user)
            shutil.chown(tmp, user.pw_uid, user.pw_gid)
        tmp.chmod(0o600)
        tmp.replace(path)

    def _log_tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.log_file.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def _superuser_conninfo(self, dbname: str) -> str:
        return psycopg.conninfo.make_conninfo(
            host=str(self.socket_dir), port=self.port, user="postgres", dbname=dbname
        )

    def _bootstrap(self) -> None:
        """Create database, roles, PostGIS and grants; safe to repeat."""
        creds = self._load_or_create_credentials()
        schema = data_schema(self.settings)
        with psycopg.connect(self._superuser_conninfo("postgres"), autocommit=True) as conn:
            exists = conn.execute(
                "SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE_NAME,)
            ).fetchone()
            if not exists:
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(DATABASE_NAME)))
            for role, password in ((OWNER_ROLE, creds.owner_password),
                                   (READER_ROLE, creds.reader_password)):
                has = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone()
                verb = "ALTER" if has else "CREATE"
                conn.execute(
                    sql.SQL(verb + " ROLE {} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE "
                            "PASSWORD {}").format(sql.Identifier(role), sql.Literal(password))
                )
        with psycopg.connect(self._superuser_conninfo(DATABASE_NAME), autocommit=True) as conn:
            for statement in _bootstrap_statements(schema, self.settings.statement_timeout_s):
                conn.execute(statement)

    def _load_or_create_credentials(self) -> Credentials:
        if self.credentials_file.exists():
            return self.credentials()
        creds = Credentials(secrets.token_urlsafe(18), secrets.token_urlsafe(18))
        tmp = self.credentials_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(
            {"owner_password": creds.owner_password, "reader_password": creds.reader_password}
        ))
        tmp.chmod(0o600)
        tmp.replace(self.credentials_file)
        return creds


def data_schema(settings: Settings) -> str:
    """The schema the demo loader writes into: GEOASK_DATA_SCHEMA, else the catalog's ``schema``.

    Raises:
        CatalogError: GEOASK_DATA_SCHEMA is unset and the catalog cannot be read.

    """
    return settings.data_schema or load_catalog(settings.catalog_path).schema_name


def _database_statements(database: str) -> list[sql.SQL | sql.Composed]:
    """SQL, run inside ``database``, that gives it PostGIS and the two roles' database rights."""
    db, owner, reader = (sql.Identifier(n) for n in (database, OWNER_ROLE, READER_ROLE))
    return [
        sql.SQL("CREATE EXTENSION IF NOT EXISTS postgis"),
        sql.SQL("CREATE EXTENSION IF NOT EXISTS postgis_raster"),
        sql.SQL("REVOKE ALL ON DATABASE {} FROM PUBLIC").format(db),
        sql.SQL("GRANT CONNECT ON DATABASE {} TO {}, {}").format(db, owner, reader),
        sql.SQL("GRANT CREATE ON DATABASE {} TO {}").format(db, owner),
        sql.SQL("REVOKE CREATE ON SCHEMA public FROM PUBLIC"),
        # a dataset may define its own CRSs (a manifest's spatial_ref_sys); none is replaced
        sql.SQL("GRANT SELECT, INSERT ON spatial_ref_sys TO {}").format(owner),
        # a role may signal its own other sessions by default; the reader must not
        sql.SQL("REVOKE EXECUTE ON FUNCTION pg_terminate_backend(integer, bigint) FROM PUBLIC"),
        sql.SQL("REVOKE EXECUTE ON FUNCTION pg_cancel_backend(integer) FROM PUBLIC"),
    ]


def _bootstrap_statements(schema: str, timeout_s: int) -> list[sql.SQL | sql.Composed]:
    """SQL that (re)establishes PostGIS, the data schema and the two roles' rights."""
    owner, reader, data = (sql.Identifier(n) for n in (OWNER_ROLE, READER_ROLE, schema))
    return [
        *_database_statements(DATABASE_NAME),
        sql.SQL("CREATE SCHEMA IF NOT EXISTS {} AUTHORIZATION {}").format(data, owner),
        sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(data, reader),
        sql.SQL("GRANT SELECT ON ALL TABLES IN SCHEMA {} TO {}").format(data, reader),
        sql.SQL("ALTER DEFAULT PRIVILEGES FOR ROLE {} IN SCHEMA {} GRANT SELECT ON TABLES TO {}")
        .format(owner, data, reader),
        sql.SQL("ALTER ROLE {} SET default_transaction_read_only = on").format(reader),
        sql.SQL("ALTER ROLE {} SET statement_timeout = {}").format(
            reader, sql.Literal(f"{timeout_s}s")),
        sql.SQL("ALTER ROLE {} SET search_path = {}, public").format(reader, data),
        sql.SQL("ALTER ROLE {} SET search_path = {}, public").format(owner, data),
    ]
