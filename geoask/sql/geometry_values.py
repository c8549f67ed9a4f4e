"""Geometry values of a fetched result: WKB while streaming, shapely geometries in one call after.

PostGIS sends a geometry or geography value as hex EWKB text. The executor's loader keeps
each value as its WKB bytes while the rows stream (so the size check counts them cheaply), and
:func:`decode_geometry_columns` turns a whole column into shapely geometries, SRIDs included,
with one vectorised ``shapely.from_wkb`` call: decoding value by value costs a call into
GEOS per row, which dominated the fetch of a screened result of tens of thousands of polygons.
"""

from __future__ import annotations

import binascii
from collections.abc import Sequence
from typing import Any

import numpy as np
import psycopg
import shapely
from psycopg.adapt import Loader
from shapely.geometry.base import BaseGeometry

from geoask.catalog.spatial import SpatialKind

GEOMETRY_TYPE_NAMES = tuple(kind.value for kind in SpatialKind if kind.is_vector)
"""PostgreSQL type names whose values arrive as geometries (geometry, geography)."""


class _EwkbHexLoader(Loader):
    """Loads PostGIS text output (hex EWKB) as its WKB bytes (decoded per column later)."""

    def load(self, data: Any) -> bytes:
        return binascii.a2b_hex(data)


def register_geometry_loaders(connection: psycopg.Connection[Any],
                              oids: Sequence[int | None]) -> frozenset[int]:
    """Load values of the type ``oids`` (None: no such type) as WKB bytes; the OIDs loaded.

    The executor reads the OIDs of :data:`GEOMETRY_TYPE_NAMES` with its first command
    (``to_regtype``), once per statement: they change when PostGIS is reinstalled.
    """
    loaded = frozenset(oid for oid in oids if oid is not None)
    for oid in loaded:
        connection.adapters.register_loader(oid, _EwkbHexLoader)
    return loaded


def geometry_indexes(description: Sequence[Any] | None, oids: frozenset[int]) -> list[int]:
    """Indexes of the columns of a cursor ``description`` whose type is one of ``oids``."""
    return [i for i, column in enumerate(description or []) if column.type_code in oids]


def decode_geometry_columns(rows: list[tuple[Any, ...]], indexes: Sequence[int]
                            ) -> list[tuple[Any, ...]]:
    """``rows`` with the WKB values of columns ``indexes`` as shapely geometries (NULL: None).

    >>> wkb = shapely.to_wkb(shapely.set_srid(shapely.Point(1, 2), 4326), include_srid=True)
    >>> [(n, int(shapely.get_srid(g)), g.wkt) for n, g in decode_geometry_columns([(7, wkb)], [1])]
    [(7, 4326, 'POINT (1 2)')]
    """
    if not rows or not indexes:
        return rows
    columns: list[Any] = [list(column) for column in zip(*rows, strict=True)]
    for index in indexes:
        values = np.array(columns[index], dtype=object)
        present = np.array([value is not None for value in columns[index]], dtype=bool)
        decoded = np.full(len(values), None, dtype=object)
        if present.any():
            decoded[present] = shapely.from_wkb(values[present])
        columns[index] = decoded.tolist()
    return list(zip(*columns, strict=True))


def approximate_size(row: tuple[Any, ...]) -> int:
    """Rough in-memory size of a fetched row in bytes (text/bytes/WKB length, 16 B a coordinate).

    >>> approximate_size(("abc", 1, shapely.Point(0, 0)))
    27
    """
    size = 0
    for value in row:
        if isinstance(value, str | bytes | bytearray | memoryview):
            size += len(value)
        elif isinstance(value, BaseGeometry):
            size += 16 * int(shapely.get_num_coordinates(value))
        else:
            size += 8
    return size
