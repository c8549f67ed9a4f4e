"""Run checked SQL read-only: the database side of defence in depth.

Every query runs as the ``geoask_reader`` role (the URL's user), in a ``READ ONLY`` transaction
that is always rolled back (on a session kept from one statement to the next,
:mod:`geoask.sql.sessions`, reset with ``DISCARD ALL`` in between), with ``SET LOCAL
statement_timeout``, over the extended query protocol only (a server-side prepared
statement: a second statement fails at the server too),
read through a server-side cursor in batches (:mod:`geoask.sql.fetch`) up to ``row_cap + 1``
rows: a result past the row cap (or the size cap) is refused with a ``result_too_large``
error, never cut - geoask computes on whole results only. :meth:`PostgresSqlRunner.run`
returns a whole result; :meth:`PostgresSqlRunner.stream` hands a large one over batch by batch
(:class:`ResultStream`) so the export writes it with bounded memory.
Geometry and geography values arrive as hex EWKB, are kept as WKB bytes while fetched and are
turned into shapely geometries (SRID kept) a column of a batch at a time
(:mod:`geoask.sql.geometry_values`); the
definitions of the SRIDs they carry are read from ``spatial_ref_sys`` in the same transaction
(:mod:`geoask.sql.srs`), so the export can transform from any CRS the database defines.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
import psycopg
import shapely
from psycopg import errors as pg_errors

from geoask.catalog.spatial import spatial_kind
from geoask.db.urls import reader_url
from geoask.errors import DatabaseError, QueryExecutionError
from geoask.sql.fetch import FETCH_ROWS, Fetch
from geoask.sql.geometry_values import GEOMETRY_TYPE_NAMES, register_geometry_loaders
from geoask.sql.guard import CheckedQuery
from geoask.sql.sessions import ReaderSessions
from geoask.sql.sqlstate import classify_database_error
from geoask.sql.srs import SpatialRefSys, read_definitions

if TYPE_CHECKING:
    from geoask.settings import Settings


@dataclass(frozen=True)
class ResultColumn:
    """One result column: its name, PostgreSQL type name and whether it holds geometry.

    ``is_geometry`` is true for the vector spatial kinds (geometry, geography) of
    :mod:`geoask.catalog.spatial`, whose values arrive as shapely geometries; see
    :func:`holds_geometry`. ``source`` is the table column a spatial (geometry, geography or
    raster) column comes straight from, as ``schema.table.column`` (the server's row
    description, libpq ``PQftable`` / ``PQftablecol``, through subqueries and aliases), or
    None for a computed value; the
    export looks up the catalog's declared SRID (and a raster's bands) with it.
    """

    name: str
    type_name: str
    is_geometry: bool = False
    source: str | None = None


@dataclass(frozen=True)
class QueryResult:
    """Rows of one executed query.

    Attributes:
        columns: result columns in order.
        rows: every row (at most ``row_cap``: a larger result is refused); geometry/geography
            values are shapely geometries carrying their SRID (``shapely.get_srid``), other
            values as psycopg loads them.
        row_cap: the cap in force.
        executed_sql: the exact text sent to the server.
        crs_definitions: SRID -> its ``spatial_ref_sys`` row, for every non-zero SRID the
            geometries carry that the database defines (empty without geometry, and for
            hand-built results: the export then reads an SRID as an EPSG code).

    """

    columns: tuple[ResultColumn, ...]
    rows: list[tuple[Any, ...]]
    row_cap: int
    executed_sql: str
    crs_definitions: Mapping[int, SpatialRefSys] = field(default_factory=dict)

    @property
    def row_count(self) -> int:
        """Number of rows (at most ``row_cap``)."""
        return len(self.rows)

    @property
    def geometry_columns(self) -> tuple[int, ...]:
        """Indexes of the geometry/geography columns."""
        return tuple(i for i, column in enumerate(self.columns) if column.is_geometry)


class SqlRunner(Protocol):
    """Executes checked queries; :class:`PostgresSqlRunner` in production, fakes in unit tests."""

    def run(self, checked: CheckedQuery) -> QueryResult:
        """Execute ``checked.sql`` and return its rows.

        Raises:
            QueryExecutionError: the database refused or failed the query (classified).
            DatabaseError: the database could not be reached.

        """
        ...

    def close(self) -> None:
        """Close what the runner keeps open between statements (its idle session, if any)."""
        ...


@dataclass
class StaticSqlRunner:
    """In-memory :class:`SqlRunner` for unit tests: returns canned results by submitted SQL.

    Attributes:
        results: submitted SQL -> result, or -> exception to raise.
        executed: checked queries received, in order.

    """

    results: Mapping[str, QueryResult | Exception]
    executed: list[CheckedQuery] = field(default_factory=list)

    def run(self, checked: CheckedQuery) -> QueryResult:
        """Return (or raise) the canned outcome for ``checked.submitted_sql``."""
        self.executed.append(checked)
        outcome = self.results.get(checked.submitted_sql)
        if outcome is None:
            raise QueryExecutionError("other", f"no canned result for {checked.submitted_sql!r}")
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    def close(self) -> None:
        """Nothing is kept between statements."""


CURSOR_NAME = "geoask_result"
DECLARE_PREFIX = f'DECLARE "{CURSOR_NAME}" CURSOR FOR '
"""What psycopg sends before the query (``ServerCursor``): error positions count it."""


@dataclass
class ResultStream:
    """An executed query whose rows are read in batches from a server-side cursor.

    Attributes:
        head: the first rows (at most the ``head_rows`` asked for), the columns and the CRS
            definitions of the head's SRIDs; the whole result when ``complete``.
        complete: the head holds every row (the result ended before ``head_rows``).
        batches: the rows after the head, :data:`~geoask.sql.fetch.FETCH_ROWS` at a time,
            geometries loaded; it raises ``result_too_large`` past the row cap (or the size
            cap), so a consumer never finishes a cut result.
        definitions: reads the ``spatial_ref_sys`` rows of more SRIDs in the same transaction
            (:func:`geoask.sql.srs.read_definitions`).

    """

    head: QueryResult
    complete: bool
    batches: Iterator[list[tuple[Any, ...]]]
    definitions: Callable[[Sequence[int]], dict[int, SpatialRefSys]]


class PostgresSqlRunner:
    """:class:`SqlRunner` over psycopg 3, reading rows through a server-side cursor.

    Args:
        url: libpq URL of the read-only role (``geoask.db.urls.reader_url``).
        statement_timeout_s: per-statement time limit in seconds (``SET LOCAL``).
        connect_timeout_s: time limit for opening the connection in seconds.
        max_result_mib: largest result (approximate in-memory size, MiB) fetched; a larger one
            is refused with a ``result_too_large`` error instead of exhausting memory.

    """

    def __init__(self, url: str, *, statement_timeout_s: int = 30, connect_timeout_s: int = 10,
                 max_result_mib: int = 256):
        self.url = url
        self.statement_timeout_s = statement_timeout_s
        self.connect_timeout_s = connect_timeout_s
        self.max_result_bytes = max_result_mib * 1024 * 1024
        self._sessions = ReaderSessions(self._connect)

    @classmethod
    def from_settings(cls, settings: Settings) -> PostgresSqlRunner:
        """The reader-role runner with ``statement_timeout_s`` and ``sql_max_result_mib``.

        Raises:
            ConfigurationError: the reader's URL cannot be formed (no password file yet).

        """
        return cls(reader_url(settings), statement_timeout_s=settings.statement_timeout_s,
                   max_result_mib=settings.sql_max_result_mib)

    def run(self, checked: CheckedQuery) -> QueryResult:
        """Execute a guard-checked query; see :class:`SqlRunner`."""
        return self.run_text(checked.sql, checked.row_cap, body_offset=checked.body_offset)

    def run_text(self, sql: str, row_cap: int, *, body_offset: int = 0) -> QueryResult:
        """Execute ``sql`` with every database-side protection but *without* the guard.

        Used by :meth:`run` and by the integration tests that prove the role and transaction
        stop attacks on their own (the statement is sent as it is, not inside a cursor).
        ``body_offset`` maps server error positions back to the submitted text.
        """
        with self._open(sql, row_cap, row_cap + 1, body_offset, declare=False) as stream:
            return stream.head

    def stream(self, checked: CheckedQuery, head_rows: int
               ) -> AbstractContextManager[ResultStream]:
        """Execute a guard-checked query; see :class:`StreamingSqlRunner`.

        The statement runs as a ``DECLARE ... CURSOR`` (extended query protocol: one statement
        only) in the read-only transaction, fetched :data:`~geoask.sql.fetch.FETCH_ROWS` rows
        at a time.
        """
        return self._open(checked.sql, checked.row_cap, head_rows, checked.body_offset,
                          declare=True)

    def close(self) -> None:
        """Close the session kept between statements (:mod:`geoask.sql.sessions`)."""
        self._sessions.close()

    @contextmanager
    def _open(self, sql: str, row_cap: int, head_rows: int, body_offset: int, *,
              declare: bool) -> Iterator[ResultStream]:
        prefix = DECLARE_PREFIX if declare else ""
        rows: Iterator[tuple[Any, ...]] = iter(())
        try:
            with self._sessions.session(self._prepare) as (connection, oids):
                try:
                    cursor, rows = _execute(connection, sql, declare)
                    fetch = Fetch(rows, cursor, oids, row_cap, self.max_result_bytes)
                    head = fetch.head(head_rows)
                    if cursor.description is None:  # a stream of no row leaves no description:
                        cursor = connection.cursor()  # read the empty result's columns by
                        cursor.execute(sql)           # running it once more
                    if cursor.description is None:
                        yield ResultStream(QueryResult((), [], row_cap, sql), True, iter(()),
                                           lambda srids: {})
                        return
                    columns = _columns(connection, cursor)
                    definitions = read_definitions(connection, result_srids(columns, head))
                    yield ResultStream(QueryResult(columns, head, row_cap, sql, definitions),
                                       len(head) < head_rows, fetch.batches(),
                                       lambda srids: read_definitions(connection, srids))
                finally:
                    close = getattr(rows, "close", None)
                    if close is not None:  # a stream left half-read holds the connection's lock
                        with contextlib.suppress(psycopg.Error):
                            close()
        except pg_errors.Error as error:
            raise classify_database_error(error, prefix + sql, len(prefix) + body_offset,
                                          statement_timeout_s=self.statement_timeout_s) from None

    def _prepare(self, connection: psycopg.Connection[Any]) -> frozenset[int]:
        """Start the statement's transaction: read-only, its time limit; the geometry OIDs.

        The OIDs of the geometry types are read in the same command (they change when PostGIS
        is reinstalled) and their values loaded as WKB (:func:`register_geometry_loaders`).
        """
        connection.read_only = True
        row = connection.execute(_PREPARE_SQL, [f"{self.statement_timeout_s * 1000}"]).fetchone()
        return register_geometry_loaders(connection, row[2:] if row else ())

    def _connect(self) -> psycopg.Connection[Any]:
        try:
            return psycopg.connect(
                self.url,
                autocommit=False,
                connect_timeout=self.connect_timeout_s,
                application_name="geoask-sql",
            )
        except psycopg.Error as error:  # unreachable server, or a malformed URL
            first_line = str(error).strip().splitlines()[0] if str(error).strip() else "no reply"
            raise DatabaseError(
                f"could not connect to the database ({first_line}); start it with "
                "`geoask db up` or check GEOASK_DATABASE_URL"
            ) from None


_PREPARE_SQL = ("SELECT set_config('statement_timeout', %s, true),"
                " set_config('standard_conforming_strings', 'on', true), " +
                ", ".join(f"to_regtype('{name}')::oid::int" for name in GEOMETRY_TYPE_NAMES))
"""The first command of a statement's transaction (:meth:`PostgresSqlRunner._prepare`)."""


@runtime_checkable
class StreamingSqlRunner(SqlRunner, Protocol):
    """A :class:`SqlRunner` that can also read a large result in batches."""

    def stream(self, checked: CheckedQuery, head_rows: int
               ) -> AbstractContextManager[ResultStream]:
        """Execute ``checked.sql`` and read its first ``head_rows`` rows.

        See :class:`ResultStream`; the connection stays open while the block lasts.

        Raises:
            QueryExecutionError: the database refused or failed the query (classified),
                or the result passed the row cap or the size cap (``result_too_large``).
            DatabaseError: the database could not be reached.

        """
        ...


def _execute(connection: psycopg.Connection[Any], sql: str, declare: bool
             ) -> tuple[psycopg.Cursor[Any] | psycopg.ServerCursor[Any], Iterator[tuple[Any, ...]]]:
    """The cursor running ``sql`` and its rows: a server-side cursor, or one streamed result."""
    if not declare:
        cursor = connection.cursor()
        return cursor, cursor.stream(sql, size=500)
    server = connection.cursor(name=CURSOR_NAME)
    server.itersize = FETCH_ROWS
    server.execute(sql)
    return server, iter(server)


def _columns(connection: psycopg.Connection[Any], cursor: psycopg.Cursor[Any]
             ) -> tuple[ResultColumn, ...]:
    description = cursor.description or []
    oids = sorted({column.type_code for column in description})
    names = dict(
        connection.execute(
            "SELECT oid::int, format_type(oid, NULL) FROM pg_catalog.pg_type WHERE oid = ANY(%s)",
            [oids],
        ).fetchall()
    )
    types = [names.get(column.type_code, str(column.type_code)) for column in description]
    pgresult = cursor.pgresult
    origins = {i: (pgresult.ftable(i), pgresult.ftablecol(i))
               for i, type_name in enumerate(types) if spatial_kind(type_name) and pgresult}
    sources = _column_sources(connection, [o for o in origins.values() if o[0]])
    return tuple(
        ResultColumn(column.name, type_name, holds_geometry(type_name),
                     sources.get(origins.get(i, (0, 0))))
        for i, (column, type_name) in enumerate(zip(description, types, strict=True))
    )


def _column_sources(connection: psycopg.Connection[Any], origins: list[tuple[int, int]]
                    ) -> dict[tuple[int, int], str]:
    """``schema.table.column`` of each ``(table oid, attribute number)`` of a row description."""
    if not origins:
        return {}
    rows = connection.execute(
        "SELECT c.oid::int, a.attnum::int, n.nspname || '.' || c.relname || '.' || a.attname"
        " FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace"
        " JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid"
        " WHERE c.oid = ANY(%s) AND a.attnum = ANY(%s)",
        [sorted({o[0] for o in origins}), sorted({o[1] for o in origins})],
    ).fetchall()
    return {(oid, attnum): name for oid, attnum, name in rows}


def result_srids(columns: tuple[ResultColumn, ...], rows: list[tuple[Any, ...]]) -> list[int]:
    """The distinct non-zero SRIDs of the geometry values of ``rows``, ascending.

    >>> point = shapely.set_srid(shapely.Point(1, 2), 900914)
    >>> result_srids((ResultColumn("g", "geometry", True),), [(point,), (None,)])
    [900914]
    """
    indexes = [i for i, column in enumerate(columns) if column.is_geometry]
    if not indexes or not rows:
        return []
    values = np.array([row[i] for row in rows for i in indexes], dtype=object)
    values = values[shapely.is_geometry(values)]
    return sorted({int(s) for s in np.unique(shapely.get_srid(values))} - {0})


def holds_geometry(type_name: str) -> bool:
    """True if a result column of PostgreSQL type ``type_name`` holds shapely geometries.

    That is a vector :class:`~geoask.catalog.spatial.SpatialKind` (geometry or geography, any
    SRID, schema-qualified or not); arrays of them and rasters are not loaded as geometries.

    >>> holds_geometry("public.geometry"), holds_geometry("raster"), holds_geometry("geometry[]")
    (True, False, False)
    """
    kind = spatial_kind(type_name)
    return kind is not None and kind.is_vector
