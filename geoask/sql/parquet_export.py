"""Write a large result as GeoParquet (a table as Parquet), converting its rows in batches.

The file is GeoParquet 1.1 as geopandas' ``GeoDataFrame.to_parquet`` writes it and
``geopandas.read_parquet`` reads it: the feature geometry (the result's first geometry column)
in the column ``geometry`` as ISO WKB, and the file's ``geo`` metadata naming it, its encoding,
geometry types, bounding box and CRS (PROJJSON of EPSG:4326: like the GeoJSON export, every
geometry was reprojected to WGS 84 longitude/latitude first, so both formats of one result hold
the same coordinates). The native CRS of each geometry column is kept in the file's
``native_crs`` metadata (the GeoJSON's foreign member of that name). Further geometry columns
are WKT text, and other values are those of the JSON export (:func:`geoask.sql.values.json_value`)
in a column type chosen from the PostgreSQL type (:func:`arrow_type`).

Rows are turned into Arrow columns :data:`BATCH_ROWS` at a time and each batch is written as
one row group, so the full result is never held a second time as columns.
"""

from __future__ import annotations

import decimal
import io
import json
import math
from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import shapely
from pyproj import CRS

from geoask.errors import ArtifactWriteError
from geoask.sql.crs import WGS84_SRID, NativeCrs, to_wgs84
from geoask.sql.executor import QueryResult, ResultColumn
from geoask.sql.values import dumps_exact, json_value, unique_names, wkt

BATCH_ROWS = 10_000
"""Rows converted to columns and written as one row group at a time."""

GEOPARQUET_VERSION = "1.1.0"
FEATURE_COLUMN = "geometry"
"""The feature geometry's column name (as a GeoJSON read by geopandas names it)."""

_ARROW_TYPES: dict[str, pa.DataType] = {
    "smallint": pa.int64(), "integer": pa.int64(), "bigint": pa.int64(),
    "real": pa.float64(), "double precision": pa.float64(), "boolean": pa.bool_(),
}
"""PostgreSQL type -> Arrow type of its column; ``numeric`` is :func:`numeric_type`'s, the rest
text (dates and times as ISO 8601, ``json`` and arrays as JSON text, as the JSON export writes
them)."""

_MAX_DECIMAL_DIGITS = 38


def arrow_type(column: ResultColumn, values: Iterable[Any]) -> pa.DataType:
    """The Arrow type of a non-geometry result column holding the JSON-ready ``values``.

    >>> arrow_type(ResultColumn("n", "bigint"), [1, None])
    DataType(int64)
    >>> arrow_type(ResultColumn("d", "date"), ["2020-01-02"])
    DataType(string)
    """
    if column.type_name == "numeric":
        return numeric_type(values)
    return _ARROW_TYPES.get(column.type_name, pa.string())


def numeric_type(values: Iterable[Any]) -> pa.DataType:
    """``float64`` when every value is an exact double, else a decimal wide enough, else text.

    ``values`` are :func:`~geoask.sql.values.json_value` outputs: a ``Decimal`` only where no
    double holds the value exactly, so the column keeps every digit. They are scanned once,
    keeping only the widest integer part and scale.

    >>> numeric_type([1, 2.5, None])
    DataType(double)
    >>> numeric_type([Decimal("12345678901234567890.123456789"), 2])
    Decimal128Type(decimal128(29, 9))
    """
    exact, text, whole, scale = False, False, 1, 0
    for value in values:
        text = text or isinstance(value, str)  # NaN or Infinity (json_value's text)
        if isinstance(value, Decimal):
            exact = True
            scale = max(scale, -int(value.as_tuple().exponent))
        if isinstance(value, Decimal | int | float) and not isinstance(value, bool):
            whole = max(whole, len(str(abs(int(value)))))
    if not exact:
        return pa.float64()
    if whole + scale > _MAX_DECIMAL_DIGITS or text:  # no decimal holds NaN
        return pa.string()
    return pa.decimal128(whole + scale, scale)


def geoparquet_bytes(result: QueryResult, native_crs: Sequence[NativeCrs],
                     geometry_types: Sequence[str], bbox: Sequence[float] | None,
                     batch_rows: int = BATCH_ROWS) -> bytes:
    """The GeoParquet file of ``result`` (geometries already in EPSG:4326); a table's Parquet.

    ``geometry_types`` and ``bbox`` (WGS 84) of the feature geometry go into the ``geo``
    metadata; the preview (:func:`geoask.sql.export.build_preview`) has computed them. A
    result without geometry is a plain Parquet table.
    """
    buffer = io.BytesIO()
    with GeoParquetWriter(buffer, result) as writer:
        for start in range(0, result.row_count, batch_rows):
            writer.write(result.rows[start:start + batch_rows])
        writer.finish(native_crs, geometry_types, bbox)
    return buffer.getvalue()


class GeoParquetWriter:
    """Writes a vector result's rows as GeoParquet row groups, the ``geo`` metadata last.

    The column types come from ``first`` (a result whose rows, often the first of a stream,
    decide each ``numeric`` column's type: :func:`numeric_type`); each :meth:`write` is one
    row group of rows already in EPSG:4326; :meth:`finish` adds the ``geo`` and
    ``native_crs`` metadata, known only once every row was seen (Arrow's schema is not stored
    in the file, so every reader - geopandas, pyarrow, GDAL - takes them from the file's
    key/value metadata).

    A result without a geometry column is written the same way as a plain Parquet table
    (:data:`~geoask.base.formats.PARQUET`): :meth:`finish` then adds no metadata.
    """

    def __init__(self, sink: Any, first: QueryResult) -> None:
        self.feature = first.geometry_columns[0] if first.geometry_columns else None
        self.columns = first.columns
        self.names = unique_names([FEATURE_COLUMN if i == self.feature else c.name
                                   for i, c in enumerate(first.columns)])
        self.schema = _schema(first, self.names)
        self.writer = pq.ParquetWriter(sink, self.schema, store_schema=False)

    def __enter__(self) -> GeoParquetWriter:
        """The writer itself."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close the file (its footer written)."""
        self.writer.close()

    def write(self, rows: Sequence[tuple[Any, ...]]) -> None:
        """Write ``rows`` (geometries in EPSG:4326) as one row group.

        Raises:
            ArtifactWriteError: a ``numeric`` value does not fit the column's type chosen from
                the first rows (cast the column in SQL).

        """
        if rows:
            self.writer.write_batch(_batch(self.columns, self.feature, rows, self.schema))

    def finish(self, native_crs: Sequence[NativeCrs], geometry_types: Sequence[str],
               bbox: Sequence[float] | None) -> None:
        """Add the ``geo`` metadata (GeoParquet 1.1) and the ``native_crs`` of each column.

        The CRS is EPSG:4326's PROJJSON (every geometry was reprojected), or null (unknown,
        as geopandas writes a frame without CRS) for a feature column declared planar.
        """
        if self.feature is None:  # a table: nothing to describe
            return
        planar = bool(native_crs) and native_crs[0].is_planar
        name = self.names[self.feature]
        geo = {"version": GEOPARQUET_VERSION, "primary_column": name, "columns": {
            name: {"encoding": "WKB", "geometry_types": list(geometry_types),
                   "crs": None if planar else CRS.from_epsg(WGS84_SRID).to_json_dict(),
                   **({"bbox": list(bbox)} if bbox else {})}}}
        native = {crs.column: crs.to_dict() for crs in native_crs}
        self.writer.add_key_value_metadata({"geo": json.dumps(geo),
                                            "native_crs": json.dumps(native)})


def _schema(result: QueryResult, names: Sequence[str]) -> pa.Schema:
    feature = result.geometry_columns[0] if result.geometry_columns else None
    fields = []
    for i, column in enumerate(result.columns):
        if i == feature:
            fields.append(pa.field(names[i], pa.binary()))
        elif column.is_geometry:
            fields.append(pa.field(names[i], pa.string()))
        else:
            values = (json_value(row[i]) for row in result.rows)  # scanned for numeric only
            fields.append(pa.field(names[i], arrow_type(column, values)))
    return pa.schema(fields)


def _batch(columns: Sequence[ResultColumn], feature: int | None, rows: Sequence[tuple[Any, ...]],
           schema: pa.Schema) -> pa.RecordBatch:
    arrays = []
    for i, (column, field) in enumerate(zip(columns, schema, strict=True)):
        values = [row[i] for row in rows]
        if i == feature:  # already in EPSG:4326 (reproject_result), written as they are
            wkb = shapely.to_wkb(np.array(values, dtype=object), flavor="iso")
            arrays.append(pa.array(wkb, pa.binary()))
        elif column.is_geometry:
            arrays.append(pa.array([wkt(to_wgs84(value)) for value in values], pa.string()))
        else:
            arrays.append(_column(column, values, field.type))
    return pa.record_batch(arrays, schema=schema)


def _column(column: ResultColumn, values: Sequence[Any], arrow: pa.DataType) -> pa.Array:
    if pa.types.is_floating(arrow):  # NaN and Infinity stay IEEE doubles
        converted = [_float(value) for value in values]
        if any(isinstance(v, Decimal) for v in converted):
            raise _too_wide(column, arrow)
        return pa.array(converted, arrow)
    converted = [json_value(value) for value in values]
    if pa.types.is_decimal(arrow):
        converted = [None if v is None else Decimal(str(v)) for v in converted]
        try:
            return pa.array(converted, arrow)
        except (pa.ArrowInvalid, decimal.InvalidOperation):
            raise _too_wide(column, arrow) from None
    if pa.types.is_string(arrow):
        converted = [v if v is None or isinstance(v, str) else dumps_exact(v) for v in converted]
    return pa.array(converted, arrow)


def _float(value: Any) -> Any:
    """A float column's value: a non-finite number as a double, else the JSON value."""
    if isinstance(value, float | Decimal) and not math.isfinite(float(value)):
        return float(value)
    return json_value(value)


def _too_wide(column: ResultColumn, arrow: pa.DataType) -> ArtifactWriteError:
    return ArtifactWriteError(
        f"column {column.name} (numeric) has a value that does not fit its GeoParquet type "
        f"{arrow}, chosen from the result's first rows; cast it in SQL (::numeric(p,s) or "
        "::double precision) so every row has one type")
