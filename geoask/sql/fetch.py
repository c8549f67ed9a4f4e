"""Read a server-side cursor in batches, refusing a result past the row cap or the size cap.

The executor (:class:`geoask.sql.executor.PostgresSqlRunner`) reads every result through
:class:`Fetch`: a large one from a server-side cursor, :data:`FETCH_ROWS` rows per ``FETCH``
(a whole one from ``Cursor.stream``), the rows counted so that row ``row_cap + 1`` is refused
(``result_too_large``) without a count of the whole result. Geometry values arrive as WKB bytes
(:func:`geoask.sql.geometry_values.register_geometry_loaders`): a batch's size is counted on
them (:func:`~geoask.sql.geometry_values.approximate_size`), then each geometry column of the
batch is decoded in one call (:func:`~geoask.sql.geometry_values.decode_geometry_columns`).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from typing import Any

import psycopg

from geoask.errors import QueryExecutionError
from geoask.sql.geometry_values import (
    approximate_size,
    decode_geometry_columns,
    geometry_indexes,
)

FETCH_ROWS = 10_000
"""Rows per ``FETCH`` from the server-side cursor: what a stream holds at a time."""


class Fetch:
    """Reads a cursor's rows in batches, refusing a result past the row cap or the size cap.

    Args:
        rows: the cursor's rows (a server-side cursor's iterator, or ``Cursor.stream``).
        cursor: the cursor, whose description (known once the first row arrived) tells which
            columns hold geometry: those whose type is one of ``geometry_oids``.
        geometry_oids: the OIDs of the database's ``geometry`` and ``geography`` types, whose
            values the connection loads as WKB bytes.
        row_cap: rows allowed; row ``row_cap + 1`` is refused.
        max_bytes: approximate size allowed (:func:`~geoask.sql.geometry_values.approximate_size`
            of the rows as fetched, geometries as WKB).

    """

    def __init__(self, rows: Iterator[tuple[Any, ...]], cursor: psycopg.Cursor[Any] |
                 psycopg.ServerCursor[Any], geometry_oids: frozenset[int], row_cap: int,
                 max_bytes: int) -> None:
        self.source, self.cursor, self.geometry_oids = rows, cursor, geometry_oids
        self.row_cap, self.max_bytes = row_cap, max_bytes
        self.geometry: list[int] | None = None
        self.rows = self.size = 0
        self.ended = False

    def head(self, head_rows: int) -> list[tuple[Any, ...]]:
        """Up to ``head_rows`` rows (fewer: the result ended)."""
        rows: list[tuple[Any, ...]] = []
        while len(rows) < head_rows:
            batch = self._next(min(FETCH_ROWS, head_rows - len(rows)))
            if not batch:
                break
            rows.extend(batch)
        return rows

    def batches(self) -> Iterator[list[tuple[Any, ...]]]:
        """The remaining rows, :data:`FETCH_ROWS` at a time."""
        while batch := self._next(FETCH_ROWS):
            yield batch

    def _next(self, count: int) -> list[tuple[Any, ...]]:
        """The next ``count`` rows (fewer: the result ended), geometry columns decoded.

        The caps are checked row by row as the rows arrive, so the refusal names the row that
        passed them and a ``Cursor.stream`` never holds more than the cap.
        """
        if self.ended:  # a short batch ended the result: no further FETCH to learn it again
            return []
        # a server-side cursor's rows are converted a FETCH at a time (its iterator goes
        # through Python for each row), never more than one row past the cap
        wanted = min(count, self.row_cap - self.rows + 1)
        rows: Iterable[tuple[Any, ...]] = (
            self.cursor.fetchmany(wanted) if isinstance(self.cursor, psycopg.ServerCursor)
            else itertools.islice(self.source, wanted))
        batch: list[tuple[Any, ...]] = []
        for row in rows:
            self.rows += 1
            if self.rows > self.row_cap:
                raise QueryExecutionError("result_too_large", row_cap_message(self.row_cap))
            self.size += approximate_size(row)
            if self.size > self.max_bytes:
                raise QueryExecutionError(
                    "result_too_large",
                    f"the result passed {self.max_bytes // (1024 * 1024)} MiB after "
                    f"{self.rows} rows; select fewer columns or rows, or aggregate in SQL",
                )
            batch.append(row)
        self.ended = len(batch) < wanted
        if self.geometry is None and self.cursor.description is not None:
            self.geometry = geometry_indexes(self.cursor.description, self.geometry_oids)
        return decode_geometry_columns(batch, self.geometry or [])


def row_cap_message(row_cap: int) -> str:
    """Why a result past the row cap is refused, and what to do instead (one line).

    >>> row_cap_message(100_000)[:58]
    'the result has more than 100,000 rows (the row cap, GEOASK'
    """
    return (f"the result has more than {row_cap:,} rows (the row cap, GEOASK_SQL_ROW_CAP) and "
            "geoask never computes on a cut result: screen candidates in SQL with an "
            "index-backed bounding-box test (geom && ST_MakeEnvelope(...) or ST_Expand(...)), "
            "aggregate in SQL, or select fewer rows")
