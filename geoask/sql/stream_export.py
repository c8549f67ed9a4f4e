"""Export a large vector result as it is fetched: GeoParquet row groups, memory bounded by a batch.

:func:`export_stream` reads a :class:`~geoask.sql.executor.ResultStream`: a result that ended
within its first ``columnar_rows`` rows (or a raster) is exported whole by
:func:`geoask.sql.export.export_result` (GeoJSON/JSON: people open them); a longer result
without geometry is written batch by batch as Parquet (:data:`~geoask.base.formats.PARQUET`,
the same writer without ``geo`` metadata); a longer vector result is written batch by batch as
GeoParquet (:class:`~geoask.sql.parquet_export.GeoParquetWriter`):
each batch is reprojected to EPSG:4326 (:func:`geoask.sql.crs.reproject_result`, with the
``spatial_ref_sys`` rows of SRIDs first met in it read in the same transaction) and written as
one row group, while the SRIDs, bounds and geometry types of every row are gathered for the
``geo`` metadata, the native CRS (its metric CRS chosen from the whole extent) and the preview.
The file is written through :func:`geoask.base.storage.open_atomic`: a result refused past the
row cap (the executor raises ``result_too_large`` at row ``row_cap + 1``, never counting the
whole result first) or failing half-way leaves no file at all.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import numpy as np
import shapely

from geoask.base.formats import GEOPARQUET, PARQUET
from geoask.base.storage import open_atomic, write_atomic
from geoask.sql.crs import NativeCrs, describe_column, reproject_result
from geoask.sql.executor import QueryResult, ResultStream
from geoask.sql.export import (
    ExportedResult,
    ResultPreview,
    build_preview,
    export_result,
    feature_summary,
)
from geoask.sql.parquet_export import GeoParquetWriter
from geoask.sql.raster_export import raster_column_indexes
from geoask.sql.srs import SpatialRefSys
from geoask.sql.values import dumps_exact


@dataclass
class _Seen:
    """What the batches written so far hold, per geometry column and for the feature column."""

    definitions: dict[int, SpatialRefSys]
    srids: list[set[int]]
    bounds: list[list[np.ndarray]]
    described: list[NativeCrs] = field(default_factory=list)
    types: set[str] = field(default_factory=set)
    rows: int = 0


def export_stream(stream: ResultStream, out_dir: str, *, name: str = "result",
                  preview_rows: int = 5, declared_srids: Mapping[str, int] | None = None,
                  declared_planar: Mapping[str, str] | None = None,
                  raster_bands: Mapping[str, tuple[str, ...]] | None = None,
                  columnar_rows: int | None = None, max_result_mib: int | None = None
                  ) -> ExportedResult:
    """Write the streamed result (and its preview) into ``out_dir``; see the module.

    Arguments are those of :func:`geoask.sql.export.export_result`.

    Raises:
        QueryExecutionError: the result passed the row cap or the size cap (no file is left),
            or a raster passed its caps (``result_too_large``).
        CrsError: a geometry's CRS cannot be told or built (see ``export_result``).
        ArtifactWriteError: the file could not be written, or a ``numeric`` value does not fit
            the column type its first rows chose.

    """
    head = stream.head
    if stream.complete or raster_column_indexes(head):
        if not stream.complete:  # rasters are mosaicked whole (their own caps apply)
            head = replace(head, rows=head.rows + [r for b in stream.batches for r in b])
        return export_result(head, out_dir, name=name, preview_rows=preview_rows,
                             declared_srids=declared_srids, declared_planar=declared_planar,
                             raster_bands=raster_bands, columnar_rows=columnar_rows,
                             max_result_mib=max_result_mib)
    if not head.geometry_columns:
        return _export_table(stream, out_dir.rstrip("/"), name, preview_rows)
    declared = (declared_srids or {}, declared_planar or {})
    base = out_dir.rstrip("/")
    data_path = f"{base}/{GEOPARQUET.file_name(name)}"
    first, _ = reproject_result(head, *declared)
    seen = _Seen(dict(head.crs_definitions), [set() for _ in head.geometry_columns],
                 [[] for _ in head.geometry_columns])
    with open_atomic(data_path) as handle, GeoParquetWriter(handle, first) as writer:
        writer.write(_reproject(head, head.rows, seen, declared))
        for batch in stream.batches:
            _learn_definitions(stream, batch, seen)
            writer.write(_reproject(head, batch, seen, declared))
        native = _native(head, seen)
        writer.finish(native, sorted(seen.types), _bbox(seen))
    preview = _preview(first, preview_rows, native, seen)
    preview_path = f"{base}/{name}.preview.json"
    write_atomic(preview_path, dumps_exact(preview.to_dict()).encode("utf-8"))
    return ExportedResult(data_path, preview_path, GEOPARQUET.name, preview)


def _export_table(stream: ResultStream, base: str, name: str, preview_rows: int
                  ) -> ExportedResult:
    """A large result without geometry as Parquet, a row group per batch as it is fetched."""
    head, rows = stream.head, stream.head.row_count
    data_path = f"{base}/{PARQUET.file_name(name)}"
    with open_atomic(data_path) as handle, GeoParquetWriter(handle, head) as writer:
        writer.write(head.rows)
        for batch in stream.batches:
            writer.write(batch)
            rows += len(batch)
    shown = build_preview(replace(head, rows=head.rows[:preview_rows]), preview_rows)
    preview = replace(shown, row_count=rows)
    preview_path = f"{base}/{name}.preview.json"
    write_atomic(preview_path, dumps_exact(preview.to_dict()).encode("utf-8"))
    return ExportedResult(data_path, preview_path, PARQUET.name, preview)


def _learn_definitions(stream: ResultStream, batch: list[tuple[object, ...]], seen: _Seen
                       ) -> None:
    """Read the ``spatial_ref_sys`` rows of SRIDs the batch brings for the first time."""
    srids = set()
    for i in stream.head.geometry_columns:
        values = np.array([row[i] for row in batch], dtype=object)
        values = values[shapely.is_geometry(values)]
        srids |= {int(s) for s in np.unique(shapely.get_srid(values))} if len(values) else set()
    new = sorted(srids - {0} - set(seen.definitions))
    if new:
        seen.definitions.update(stream.definitions(new))


def _reproject(head: QueryResult, rows: list[tuple[object, ...]], seen: _Seen,
               declared: tuple[Mapping[str, int], Mapping[str, str]]) -> list[tuple[object, ...]]:
    """``rows`` in EPSG:4326; their SRIDs, bounds and feature geometry types into ``seen``."""
    batch = dataclasses.replace(head, rows=rows, crs_definitions=seen.definitions)
    wgs84, described = reproject_result(batch, *declared)
    for k, (index, crs) in enumerate(zip(head.geometry_columns, described, strict=True)):
        seen.srids[k] |= set(crs.srids)
        types, box = feature_summary([row[index] for row in wgs84.rows])
        if box is not None:
            seen.bounds[k].append(np.array(box))
            if k == 0:
                seen.types |= set(types)
    if not seen.described or any(c.srids for c in described):
        seen.described = described if not seen.described else [
            new if new.srids else old for old, new in zip(seen.described, described,
                                                           strict=True)]
    seen.rows += len(rows)
    return wgs84.rows


def _native(head: QueryResult, seen: _Seen) -> list[NativeCrs]:
    """The native CRS of each geometry column over every row (metric CRS from all bounds)."""
    out = []
    for k, index in enumerate(head.geometry_columns):
        batch = seen.described[k]
        if batch.is_planar or not seen.srids[k]:
            out.append(batch)
            continue
        bounds = _union(seen.bounds[k])
        out.append(describe_column(head.columns[index], sorted(seen.srids[k]), bounds,
                                   batch.note, seen.definitions))
    return out


def _union(bounds: list[np.ndarray]) -> np.ndarray | None:
    if not bounds:
        return None
    stacked = np.vstack(bounds)
    return np.array([stacked[:, 0].min(), stacked[:, 1].min(), stacked[:, 2].max(),
                     stacked[:, 3].max()])


def _bbox(seen: _Seen) -> list[float] | None:
    union = _union(seen.bounds[0])
    return None if union is None else [float(v) for v in union]


def _preview(first: QueryResult, preview_rows: int, native: list[NativeCrs], seen: _Seen
             ) -> ResultPreview:
    """The preview: first rows from the head, counts, types and bounds from every row."""
    shown = build_preview(replace(first, rows=first.rows[:preview_rows]), preview_rows, native)
    planar = bool(native) and native[0].is_planar
    box = _bbox(seen)
    return replace(shown, row_count=seen.rows, geometry_types=sorted(seen.types),
                   bbox_wgs84=None if planar else box, bbox_planar=box if planar else None)
