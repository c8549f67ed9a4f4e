"""Export a query result to the question's artifact folder, and summarise it for prompts.

With a geometry column (geometry or geography: :func:`geoask.sql.executor.holds_geometry`, which
asks the catalog's notion of a spatial column) the result becomes a GeoJSON FeatureCollection
(RFC 7946: longitude, latitude in WGS 84, coordinates at full double precision; the first
geometry column is the feature geometry, further ones become WKT properties); without one, a
JSON array of records. Geometry stored in any SRID is transformed to WGS 84 first, and the
storage CRS of each geometry column is recorded (:mod:`geoask.sql.crs`) in the collection's
foreign member ``native_crs`` and in the preview (``native_crs``; a line per column in its
text, which is how the compute agent learns it). A result with a raster column becomes one
GeoTIFF instead (:mod:`geoask.sql.raster_export`: tiles mosaicked, CRS and nodata kept), its
grid described in the preview's ``raster`` member and text. A vector result of at least
``columnar_rows`` rows (setting ``sql_columnar_rows``) becomes GeoParquet instead of GeoJSON
(:mod:`geoask.sql.parquet_export`: the same WGS 84 geometries as WKB, converted and written in
batches of rows): small results stay GeoJSON, which people open; large ones write and read
several times faster and smaller (``benchmark/export_formats.py``); a table without geometry
of that many rows becomes Parquet (the same writer, no ``geo`` metadata) instead of JSON.
Values: dates and times as ISO 8601 text, numerics as JSON numbers, NULL (and NaN) as null.
Every file is written through fsspec to a temporary name and then moved into place, so a
reader never sees a partial file.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np
import shapely
from shapely.geometry.base import BaseGeometry

from geoask.base.formats import GEOJSON, GEOPARQUET, GEOTIFF, JSON, PARQUET
from geoask.base.raster import RasterCaps
from geoask.base.storage import write_atomic
from geoask.sql.crs import PLANAR, WGS84_SRID, NativeCrs, reproject_result, to_wgs84
from geoask.sql.executor import QueryResult
from geoask.sql.geojson_geometry import geojson_geometries
from geoask.sql.parquet_export import geoparquet_bytes
from geoask.sql.raster_export import (
    DEFAULT_RASTER_CAPS,
    export_raster,
    raster_column_indexes,
    raster_text,
)
from geoask.sql.values import dumps_exact, json_value, unique_names, wkt


@dataclass(frozen=True)
class ResultPreview:
    """Compact description of a result for the execution state and the prompts.

    Attributes:
        columns: ``{"name", "type"}`` per column, in order.
        row_count: rows of the result (every row: a result past ``row_cap`` is refused).
        row_cap: the cap in force.
        first_rows: the first rows as JSON-ready mappings (geometries as short WKT).
        geometry_column: name of the feature geometry column, or None.
        geometry_types: geometry types present, e.g. ``["MultiPolygon"]``.
        bbox_wgs84: ``[min_lon, min_lat, max_lon, max_lat]`` of all geometries, or None.
        native_crs: per geometry column, the CRS it is stored in and the metric CRS to use
            (:meth:`geoask.sql.crs.NativeCrs.to_dict`).
        bbox_planar: for a feature column the catalog declares planar (exported in its own
            coordinates, ``bbox_wgs84`` then None), the bounds in those coordinates.
        raster: for a result exported as GeoTIFF, its grid
            (:attr:`geoask.sql.raster_export.RasterExport.facts`), else None.

    """

    columns: list[dict[str, str]]
    row_count: int
    row_cap: int
    first_rows: list[dict[str, Any]]
    geometry_column: str | None
    geometry_types: list[str]
    bbox_wgs84: list[float] | None
    native_crs: list[dict[str, Any]] = field(default_factory=list)
    raster: dict[str, Any] | None = None
    bbox_planar: list[float] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The preview as plain JSON-ready data."""
        return asdict(self)

    def to_text(self) -> str:
        """A few lines for a prompt or the terminal.

        Column names are written as JSON strings (quoted, newlines escaped), like the values:
        a name is chosen by the query's author (a newline in ``AS "..."``) and must not forge lines
        in the text the next agent reads.
        """
        columns = ", ".join(
            f"{json.dumps(c['name'], ensure_ascii=False)} ({c['type']})" for c in self.columns)
        count = f"{self.row_count} row{'' if self.row_count == 1 else 's'}"
        lines = [f"columns: {columns}", f"rows: {count}"]
        if self.geometry_column:
            box = (f"bbox (planar) {self.bbox_planar}" if self.bbox_planar is not None
                   else f"bbox (lon/lat) {self.bbox_wgs84}")
            lines.append(
                f"geometry: {json.dumps(self.geometry_column, ensure_ascii=False)} "
                f"{'/'.join(self.geometry_types) or 'none'}, {box}"
            )
        lines.extend(NativeCrs(**crs).to_text() for crs in self.native_crs)
        if self.raster is not None:
            lines.append(raster_text(self.raster))
        lines.extend(dumps_exact(row) for row in self.first_rows)
        return "\n".join(lines)


@dataclass(frozen=True)
class ExportedResult:
    """Where a result was written.

    Attributes:
        data_path: URL/path of the data file (GeoJSON, GeoParquet, JSON or GeoTIFF).
        preview_path: URL/path of the preview JSON file.
        format: the export format's name (:data:`geoask.base.formats.EXPORT_FORMATS`).
        preview: the preview written next to the data.

    """

    data_path: str
    preview_path: str
    format: str
    preview: ResultPreview


def export_result(
    result: QueryResult, out_dir: str, *, name: str = "result", preview_rows: int = 5,
    declared_srids: Mapping[str, int] | None = None,
    declared_planar: Mapping[str, str] | None = None,
    raster_bands: Mapping[str, tuple[str, ...]] | None = None,
    columnar_rows: int | None = None,
    max_result_mib: int | None = None,
) -> ExportedResult:
    """Write ``result`` (and its preview) into ``out_dir`` (any fsspec URL or local path).

    Writes ``<name>.tif`` (:data:`~geoask.base.formats.GEOTIFF`) when the result has a raster
    column (:mod:`geoask.sql.raster_export`), else with a geometry column ``<name>.parquet``
    (:data:`~geoask.base.formats.GEOPARQUET`, :mod:`geoask.sql.parquet_export`) when it has at
    least ``columnar_rows`` rows (None: never) and ``<name>.geojson``
    (:data:`~geoask.base.formats.GEOJSON`) otherwise, else ``<name>.parquet``
    (:data:`~geoask.base.formats.PARQUET`) from ``columnar_rows`` rows on and ``<name>.json``
    (:data:`~geoask.base.formats.JSON`) below, plus
    ``<name>.preview.json``. Geometries are reprojected to WGS 84 once, from each value's
    own SRID; ``declared_srids`` (``schema.table.column`` -> SRID, from the catalog) and
    ``declared_planar`` (-> units of a column declared planar, kept in its own coordinates)
    resolve values with SRID 0 (see :mod:`geoask.sql.crs`); ``raster_bands``
    (``schema.table.column`` -> band lines, from the catalog) name a raster's bands in its
    preview; ``max_result_mib`` (setting ``sql_max_result_mib``; None: its default) caps each
    decoded raster and the mosaic.

    Raises:
        CrsError: a geometry's CRS cannot be told (SRID 0 and none declared) or built (neither
            defined by the database nor an EPSG code).
        ArtifactWriteError: the folder or a file could not be written, or the result's rasters
            cannot be exported as one GeoTIFF (several raster columns, none, misaligned).
        QueryExecutionError: ``result_too_large``: a raster or their mosaic passes its caps.

    """
    result, native_crs = reproject_result(result, declared_srids, declared_planar)
    rasters = raster_column_indexes(result)
    preview = build_preview(result, preview_rows, native_crs, rasters)
    if rasters:
        caps = (DEFAULT_RASTER_CAPS if max_result_mib is None
                else RasterCaps(max_bytes=max_result_mib * 2**20))
        raster = export_raster(result, rasters, raster_bands or {}, caps)
        preview = replace(preview, raster=raster.facts)
        fmt, data = GEOTIFF, raster.data
    elif is_columnar(result.row_count, columnar_rows):
        fmt = GEOPARQUET if result.geometry_columns else PARQUET
        data = geoparquet_bytes(result, native_crs, preview.geometry_types, preview.bbox_wgs84)
    elif result.geometry_columns:
        fmt, data = GEOJSON, _dumps(result_to_geojson(result, native_crs))
    else:
        fmt, data = JSON, _dumps(result_to_records(result))
    base = out_dir.rstrip("/")
    data_path = f"{base}/{fmt.file_name(name)}"
    preview_path = f"{base}/{name}.preview.json"
    write_atomic(data_path, data)
    write_atomic(preview_path, _dumps(preview.to_dict()))
    return ExportedResult(data_path, preview_path, fmt.name, preview)


def is_columnar(row_count: int, columnar_rows: int | None) -> bool:
    """Whether a vector result of ``row_count`` rows goes out as GeoParquet.

    >>> is_columnar(50_000, 20_000), is_columnar(10, 20_000), is_columnar(10**6, None)
    (True, False, False)
    """
    return columnar_rows is not None and row_count >= columnar_rows


def result_to_geojson(
    result: QueryResult, native_crs: Sequence[NativeCrs] = ()
) -> dict[str, Any]:
    """The result as a GeoJSON FeatureCollection (RFC 7946, lon/lat, full precision).

    Geometries in another SRID than 4326 are transformed one by one (:func:`to_wgs84`);
    :func:`export_result` passes them already reprojected, with ``native_crs`` recorded as the
    foreign member ``native_crs`` (``{column: NativeCrs.to_dict()}``). A feature column
    declared planar stays in its own coordinates, named by a top-level ``crs`` member
    (``{"type": "name", "properties": {"name": "planar", "units": ...}}``).

    Raises:
        ValueError: the result has no geometry column.

    """
    geometry_indexes = result.geometry_columns
    if not geometry_indexes:
        raise ValueError("the result has no geometry column")
    feature_index = geometry_indexes[0]
    names = unique_names([column.name for column in result.columns])
    columns = list(zip(*result.rows, strict=True)) or [()] * len(names)
    feature_column = _column_to_wgs84(columns[feature_index])
    geometries = geojson_geometries(feature_column)
    properties = [
        (names[i], [wkt(to_wgs84(value)) for value in column] if i in geometry_indexes
         else [json_value(value) for value in column])
        for i, column in enumerate(columns) if i != feature_index
    ]
    keys = [name for name, _ in properties]
    features = [
        {"type": "Feature", "geometry": geometry, "properties": dict(zip(keys, values,
                                                                          strict=True))}
        for geometry, *values in zip(geometries, *(values for _, values in properties),
                                     strict=True)
    ]
    kept = feature_column[[geometry is not None for geometry in geometries]]
    bounds = [shapely.bounds(kept)] if len(kept) else []
    collection: dict[str, Any] = {"type": "FeatureCollection", "features": features}
    if native_crs and native_crs[0].is_planar:
        collection["crs"] = {"type": "name",
                             "properties": {"name": PLANAR, "units": native_crs[0].units}}
    if bounds:
        collection["bbox"] = _union_bounds(bounds)
    if native_crs:
        collection["native_crs"] = {crs.column: crs.to_dict() for crs in native_crs}
    return collection


def result_to_records(result: QueryResult) -> list[dict[str, Any]]:
    """The result as JSON records ``[{column: value}]`` (geometries, if any, as WKT)."""
    names = unique_names([column.name for column in result.columns])
    geometry_indexes = set(result.geometry_columns)
    return [
        {
            names[i]: wkt(to_wgs84(value)) if i in geometry_indexes else json_value(value)
            for i, value in enumerate(row)
        }
        for row in result.rows
    ]


def build_preview(
    result: QueryResult, preview_rows: int = 5, native_crs: Sequence[NativeCrs] = (),
    raster_indexes: Sequence[int] = (),
) -> ResultPreview:
    """Summarise ``result``: columns and types, row count, truncation, first rows, bbox, CRSs.

    Values of ``raster_indexes`` columns show as ``"<raster>"`` (or null) in the first rows.
    """
    names = unique_names([column.name for column in result.columns])
    geometry_indexes = result.geometry_columns
    feature_index = geometry_indexes[0] if geometry_indexes else None
    types, box = (feature_summary([row[feature_index] for row in result.rows])
                  if feature_index is not None else ([], None))
    first_rows = [
        {
            names[i]: (
                _short_wkt(value) if i in geometry_indexes
                else (None if value is None else "<raster>") if i in raster_indexes
                else _short_text(json_value(value))
            )
            for i, value in enumerate(row)
        }
        for row in result.rows[:preview_rows]
    ]
    planar = bool(native_crs) and native_crs[0].is_planar
    return ResultPreview(
        columns=[{"name": n, "type": c.type_name} for n, c in zip(names, result.columns,
                                                                      strict=True)],
        row_count=result.row_count,
        row_cap=result.row_cap,
        first_rows=first_rows,
        geometry_column=names[feature_index] if feature_index is not None else None,
        geometry_types=types,
        bbox_wgs84=None if planar else box,
        native_crs=[crs.to_dict() for crs in native_crs],
        bbox_planar=box if planar else None,
    )


def feature_summary(values: Sequence[Any]) -> tuple[list[str], list[float] | None]:
    """The geometry types and the lon/lat bounding box of a feature column's ``values``.

    One vectorised pass (types and bounds of tens of thousands of screened polygons were read
    one geometry at a time before); values in another SRID than 4326 or 0 are transformed
    first (:func:`to_wgs84`). None, and empty geometries, count for neither.

    >>> feature_summary([shapely.Point(1, 2), None, shapely.box(0, 0, 3, 1)])
    (['Point', 'Polygon'], [0.0, 0.0, 3.0, 2.0])
    """
    geometries = _column_to_wgs84(values)
    geometries = geometries[shapely.is_geometry(geometries)]
    geometries = geometries[~shapely.is_empty(geometries)]
    if not len(geometries):
        return [], None
    types = sorted({_TYPE_NAMES[int(i)] for i in np.unique(shapely.get_type_id(geometries))})
    return types, [float(v) for v in shapely.total_bounds(geometries)]


_TYPE_NAMES = ("Point", "LineString", "LinearRing", "Polygon", "MultiPoint", "MultiLineString",
               "MultiPolygon", "GeometryCollection")
"""shapely's geometry type id -> the name ``geom_type`` gives (``Polygon``, ``MultiPoint``)."""


def _column_to_wgs84(values: Sequence[Any]) -> np.ndarray:
    """``values`` as an object array, geometries in another SRID than 4326 or 0 transformed.

    One vectorised SRID read: the export's values are already in WGS 84 (or planar), so
    calling :func:`to_wgs84` on each one only read its SRID.
    """
    column = np.empty(len(values), dtype=object)
    column[:] = list(values)
    foreign = shapely.is_geometry(column)
    foreign[foreign] = ~np.isin(shapely.get_srid(column[foreign]), (0, WGS84_SRID))
    if foreign.any():
        column[foreign] = [to_wgs84(g) for g in column[foreign]]
    return column


def _dumps(payload: Any) -> bytes:
    return dumps_exact(payload).encode("utf-8")


def _short_wkt(value: Any, limit: int = 80) -> str | None:
    if not isinstance(value, BaseGeometry):
        return json_value(value)
    text = shapely.to_wkt(to_wgs84(value), rounding_precision=6)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _short_text(value: Any, limit: int = 200) -> Any:
    """Cut long text in previews, saying how long it was (the exported file keeps it whole)."""
    if isinstance(value, str) and len(value) > limit:
        return f"{value[:limit]}... ({len(value):,} characters)"
    return value


def _union_bounds(bounds: list[np.ndarray]) -> list[float]:
    stacked = np.vstack(bounds)
    return [
        float(stacked[:, 0].min()),
        float(stacked[:, 1].min()),
        float(stacked[:, 2].max()),
        float(stacked[:, 3].max()),
    ]
