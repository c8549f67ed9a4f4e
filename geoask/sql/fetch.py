"""Read a server-side cursor in batches, refusing a result past the row cap or the size cap.

The executor (:class:`geoask.sql.executor.PostgresSqlRunner`) reads every result through
:class:`Fetch`: a large one from a server-side cursor, :data:`FETCH_ROWS` rows per ``FETCH``
(a whole one from ``Cursor.stream``), geometries loaded
a column of a batch at a time (:func:`load_geometries`), the rows counted so that row
``row_cap + 1`` is refused (``result_too_large``) without a count of the whole result.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import psycopg
import shapely

from geoask.errors import QueryExecutionError

FETCH_ROWS = 10_000
"""Rows per ``FETCH`` from the server-side cursor: what a stream holds at a time."""


class Fetch:
    """Reads a cursor's rows in batches, refusing a result past the row cap or the size cap.

    Args:
        rows: the cursor's rows (a server-side cursor's iterator, or ``Cursor.stream``).
        cursor: the cursor, whose description (known once the first row arrived) tells which
            columns hold geometry: those whose type is one of ``geometry_oids``.
        geometry_oids: the OIDs of the database's ``geometry`` and ``geography`` types.
        row_cap: rows allowed; row ``row_cap + 1`` is refused.
        max_bytes: approximate size allowed (:func:`batch_size`).

    """

    def __init__(self, rows: Iterator[tuple[Any, ...]], cursor: psycopg.Cursor[Any] |
                 psycopg.ServerCursor[Any], geometry_oids: frozenset[int], row_cap: int,
                 max_bytes: int) -> None:
        self.source, self.cursor, self.geometry_oids = rows, cursor, geometry_oids
        self.row_cap, self.max_bytes = row_cap, max_bytes
        self.geometry: list[int] | None = None
        self.rows = self.size = 0

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
        batch = list(itertools.islice(self.source, count))
        if self.geometry is None and self.cursor.description is not None:
            self.geometry = [i for i, column in enumerate(self.cursor.description)
                             if column.type_code in self.geometry_oids]
        self.rows += len(batch)
        if self.rows > self.row_cap:
            raise QueryExecutionError("result_too_large", row_cap_message(self.row_cap))
        batch = load_geometries(batch, self.geometry or [])
        self.size += batch_size(batch, self.geometry or [])
        if self.size > self.max_bytes:
            raise QueryExecutionError(
                "result_too_large",
                f"the result passed {self.max_bytes // (1024 * 1024)} MiB after "
                f"{self.rows} rows; select fewer columns or rows, or aggregate in SQL",
            )
        return batch


def load_geometries(rows: list[tuple[Any, ...]], indexes: Sequence[int]
                    ) -> list[tuple[Any, ...]]:
    """``rows`` with the hex EWKB text of the ``indexes`` columns loaded as shapely geometries.

    PostGIS sends geometry and geography values as hex EWKB; they are loaded a column of a
    batch at a time (SRID kept; NULL stays None).

    >>> [(g,)] = load_geometries([("0101000020E6100000000000000000F03F0000000000000040",)], [0])
    >>> g.wkt, int(shapely.get_srid(g))
    ('POINT (1 2)', 4326)
    """
    if not indexes or not rows:
        return rows
    columns = [list(column) for column in zip(*rows, strict=True)]
    for i in indexes:
        columns[i] = list(shapely.from_wkb(np.array(columns[i], dtype=object)))
    return list(zip(*columns, strict=True))


def row_cap_message(row_cap: int) -> str:
    """Why a result past the row cap is refused, and what to do instead (one line).

    >>> row_cap_message(100_000)[:58]
    'the result has more than 100,000 rows (the row cap, GEOASK'
    """
    return (f"the result has more than {row_cap:,} rows (the row cap, GEOASK_SQL_ROW_CAP) and "
            "geoask never computes on a cut result: screen candidates in SQL with an "
            "index-backed bounding-box test (geom && ST_MakeEnvelope(...) or ST_Expand(...)), "
            "aggregate in SQL, or select fewer rows")


def batch_size(rows: list[tuple[Any, ...]], geometry: Sequence[int]) -> int:
    """Rough in-memory size of fetched rows in bytes.

    Text/bytes count their length, the ``geometry`` columns' values 16 B per coordinate
    (counted a column at a time), other values 8 B.

    >>> batch_size([("abc", shapely.Point(1, 2)), (None, None)], [1])
    27
    """
    if not rows:
        return 0
    size = 0
    for i, column in enumerate(zip(*rows, strict=True)):
        if i in geometry:
            counts = shapely.get_num_coordinates(np.array(column, dtype=object))
            size += 16 * int(counts.sum())
        else:
            size += sum(len(v) if isinstance(v, str | bytes | bytearray | memoryview) else 8
                        for v in column)
    return size
