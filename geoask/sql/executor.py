"""Run checked SQL read-only: the database side of defence in depth.

Every query runs as the ``geoask_reader`` role (the URL's user), in a ``READ ONLY`` transaction
that is always rolled back, with ``SET LOCAL statement_timeout``, over the extended query
protocol only (a server-side prepared statement: a second statement fails at the server too),
fetching at most ``row_cap + 1`` rows: a result past the row cap (or the size cap) is refused
with a ``result_too_large`` error, never cut - geoask computes on whole results only.
Geometry and geography values arrive as hex EWKB, streamed as WKB bytes and turned into shapely
geometries (SRID kept) a column at a time (:mod:`geoask.sql.geometry_values`); the
definitions of the SRIDs they carry are read from ``spatial_ref_sys`` in the same transaction
(:mod:`geoask.sql.srs`), so the export can transform from any CRS the database defines.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import psycopg
import shapely
from psycopg import errors as pg_errors

from geoask.catalog.spatial import spatial_kind
from geoask.db.urls import reader_url
from geoask.errors import DatabaseError, QueryExecutionError
from geoask.sql.geometry_values import (
    approximate_size,
    decode_geometry_columns,
    geometry_indexes,
    register_geometry_loaders,
)
from geoask.sql.guard import CheckedQuery
from geoask.sql.srs import SpatialRefSys, read_definitions

if TYPE_CHECKING:
    from geoask.settings import Settings

# SQLSTATE -> kind reported to the agent's correction loop.
ERROR_KINDS: dict[str, str] = {
    "42601": "syntax",
    "42P01": "undefined_table",
    "3F000": "undefined_table",
    "42703": "undefined_column",
    "42702": "undefined_column",
    "42804": "type_mismatch",
    "42883": "type_mismatch",
    "42846": "type_mismatch",
    "42725": "type_mismatch",
    "22P02": "type_mismatch",
    "22007": "type_mismatch",
    "22008": "type_mismatch",
    "42803": "grouping",
    "22012": "division_by_zero",
    "57014": "timeout",
    "42501": "permission",
    "25006": "permission",
}


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


class PostgresSqlRunner:
    """:class:`SqlRunner` over psycopg 3.

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
        stop attacks on their own. ``body_offset`` maps server error positions back to the
        submitted text.
        """
        connection = self._connect()
        try:
            connection.read_only = True
            geometry_oids = register_geometry_loaders(connection)
            connection.execute(
                "SELECT set_config('statement_timeout', %s, true),"
                " set_config('standard_conforming_strings', 'on', true)",
                [f"{self.statement_timeout_s * 1000}"],
            )
            cursor = connection.cursor()
            rows = decode_geometry_columns(self._fetch(cursor, sql, row_cap),
                                           geometry_indexes(cursor.description, geometry_oids))
            if not rows:  # a stream of no row leaves no description: read the empty result's
                cursor.execute(sql)  # columns (geometry ones too) by running it once more
            if cursor.description is None:
                return QueryResult((), [], row_cap, sql)
            columns = _columns(connection, cursor)
            definitions = read_definitions(connection, result_srids(columns, rows))
        except pg_errors.Error as error:
            raise classify_database_error(error, sql, body_offset) from None
        finally:
            _rollback_quietly(connection)
            connection.close()
        return QueryResult(columns, rows, row_cap, sql, definitions)

    def _fetch(self, cursor: psycopg.Cursor[Any], sql: str, row_cap: int) -> list[tuple[Any, ...]]:
        """Stream the rows, refusing a result past ``row_cap`` rows or over the size limit."""
        rows: list[tuple[Any, ...]] = []
        size = 0
        for row in cursor.stream(sql, size=500):
            rows.append(row)
            size += approximate_size(row)
            if size > self.max_result_bytes:
                raise QueryExecutionError(
                    "result_too_large",
                    f"the result passed {self.max_result_bytes // (1024 * 1024)} MiB after "
                    f"{len(rows)} rows; select fewer columns or rows, or aggregate in SQL",
                )
            if len(rows) > row_cap:
                raise QueryExecutionError("result_too_large", row_cap_message(row_cap))
        return rows

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


def row_cap_message(row_cap: int) -> str:
    """Why a result past the row cap is refused, and what to do instead (one line).

    >>> row_cap_message(100_000)[:58]
    'the result has more than 100,000 rows (the row cap, GEOASK'
    """
    return (f"the result has more than {row_cap:,} rows (the row cap, GEOASK_SQL_ROW_CAP) and "
            "geoask never computes on a cut result: screen candidates in SQL with an "
            "index-backed bounding-box test (geom && ST_MakeEnvelope(...) or ST_Expand(...)), "
            "aggregate in SQL, or select fewer rows")


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


def _rollback_quietly(connection: psycopg.Connection[Any]) -> None:
    # A broken connection cannot roll back; closing it (next) ends the transaction anyway.
    with contextlib.suppress(psycopg.Error):
        connection.rollback()


def classify_database_error(
    error: pg_errors.Error, sql: str, body_offset: int = 0
) -> QueryExecutionError:
    """Turn a psycopg error into a :class:`QueryExecutionError` for the agent's correction loop.

    ``kind`` comes from the SQLSTATE (see :data:`ERROR_KINDS`, ``other`` otherwise); the
    server's position (1-based, in ``sql``) is mapped to the submitted text, which starts
    ``body_offset`` characters into ``sql``.
    """
    diag = error.diag
    sqlstate = diag.sqlstate or getattr(error, "sqlstate", None)
    message = diag.message_primary or str(error).strip() or type(error).__name__
    position = line = col = None
    if diag.statement_position:
        absolute = int(diag.statement_position)
        body = sql[body_offset:]
        relative = absolute - body_offset
        if 1 <= relative <= len(body):
            position = relative
            before = body[: relative - 1]
            line = before.count("\n") + 1
            col = relative - (before.rfind("\n") + 1)
    return QueryExecutionError(
        ERROR_KINDS.get(sqlstate or "", "other"),
        message,
        sqlstate=sqlstate,
        position=position,
        line=line,
        col=col,
        hint=diag.message_hint,
    )
