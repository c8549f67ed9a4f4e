"""Export a query result that holds a raster as one GeoTIFF, and describe it for prompts.

A result column holds a raster when its type is PostGIS ``raster`` (the catalog's notion of a
spatial column, :func:`geoask.catalog.spatial.spatial_kind`; values arrive as hex WKB) or it is
``bytea`` holding GeoTIFF files (``ST_AsTIFF``, ``ST_AsGDALRaster(..., 'GTiff')``). The rasters
of all rows - tiles of one coverage, or clips of it by ``ST_Clip`` - are pasted into one grid
(:func:`geoask.base.raster.mosaic`) and written as ``<name>.tif`` with its CRS (the raster's SRID,
never reprojected) and nodata. Other columns of the result are not written into the GeoTIFF;
the preview lists them. NULL and empty rasters (``ST_Clip`` of a tile outside the zone) are
skipped.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from geoask.base.raster import (
    RasterCaps,
    RasterTile,
    describe,
    from_wkb,
    mosaic,
    read_geotiff,
    to_geotiff_bytes,
)
from geoask.catalog.spatial import SpatialKind, spatial_kind
from geoask.errors import (
    ArtifactWriteError,
    DataValidationError,
    QueryExecutionError,
    RasterTooLargeError,
)
from geoask.sql.executor import QueryResult

TIFF_MAGIC = (b"II*\x00", b"MM\x00*")
#: The caps of a result's rasters without a setting: the default of ``sql_max_result_mib``.
DEFAULT_RASTER_CAPS = RasterCaps(max_bytes=256 * 2**20)


@dataclass(frozen=True)
class RasterExport:
    """A result's raster as GeoTIFF bytes, with the facts its preview shows.

    Attributes:
        column: the raster column's name.
        data: the GeoTIFF file.
        facts: ``column`` and ``tiles`` (rasters pasted) plus :func:`geoask.base.raster.describe`
            of the mosaic (size, bands, pixel type, nodata, SRID, pixel size and extent in CRS
            units); what the preview's ``raster`` member holds.

    """

    column: str
    data: bytes
    facts: dict[str, Any]


def raster_text(facts: dict[str, Any]) -> str:
    """One preview line for a prompt: how to read the GeoTIFF and what its grid is."""
    f = facts
    return (f"raster: {json.dumps(f['column'], ensure_ascii=False)} exported as GeoTIFF (read "
            f"with rasterio.open; {f['tiles']} tiles mosaicked): {f['width']} x {f['height']} "
            f"pixels, {f['band_count']} band(s) {f['pixel_type']}, nodata {f['nodata']}, CRS "
            f"EPSG:{f['srid']} (not reprojected), pixel size {f['pixel_size']} and extent "
            f"{f['extent']} in CRS units"
            + (f"; bands: {'; '.join(f['bands'])}" if f.get("bands") else ""))


def raster_column_indexes(result: QueryResult) -> list[int]:
    """Indexes of the result's raster columns: ``raster`` type, or ``bytea`` holding GeoTIFFs."""
    out = []
    for index, column in enumerate(result.columns):
        if spatial_kind(column.type_name) is SpatialKind.RASTER:
            out.append(index)
        elif column.type_name == "bytea":
            first = next((row[index] for row in result.rows if row[index] is not None), None)
            if first is not None and bytes(first[:4]) in TIFF_MAGIC:
                out.append(index)
    return out


def export_raster(result: QueryResult, indexes: Sequence[int],
                  bands: Mapping[str, tuple[str, ...]] | None = None,
                  caps: RasterCaps = DEFAULT_RASTER_CAPS) -> RasterExport:
    """Mosaic the rasters of ``result``'s one raster column into GeoTIFF bytes.

    ``caps`` are checked on each raster's header before it is decoded and on the mosaic's grid
    before it is allocated: a GeoTIFF that declares 60,000 x 60,000 pixels, or two 1-pixel
    tiles 100,000 pixels apart, is refused in one line, never decoded.

    ``bands`` (``schema.table.column`` -> band lines, from the catalog) add ``bands`` to the
    facts when the column comes straight from a table column (``ResultColumn.source``); a
    computed raster (``ST_Clip(...)``) has no source and keeps just its grid.

    Raises:
        ArtifactWriteError: more than one raster column, no raster in any row, or rasters that
            cannot be pasted into one grid (different SRID, pixel size, bands or alignment);
            the message says what to select instead.
        QueryExecutionError: ``result_too_large``: a raster or the mosaic passes ``caps``.

    """
    if len(indexes) != 1:
        names = ", ".join(result.columns[i].name for i in indexes)
        raise ArtifactWriteError(f"the result has {len(indexes)} raster columns ({names}); "
                                 "select one raster column per statement")
    index = indexes[0]
    try:
        tiles = [tile for tile in (_tile(row[index], caps) for row in result.rows)
                 if tile is not None and tile.width * tile.height * tile.bands.shape[0] > 0]
        merged = mosaic(tiles, caps)
        data = to_geotiff_bytes(merged)
    except RasterTooLargeError as error:
        raise QueryExecutionError("result_too_large", f"cannot export raster column "
                                  f"{result.columns[index].name!r}: {error}") from None
    except DataValidationError as error:
        raise ArtifactWriteError(f"cannot export raster column "
                                 f"{result.columns[index].name!r}: {error}") from None
    column = result.columns[index]
    facts = {"column": column.name, "tiles": len(tiles), **describe(merged)}
    if column.source is not None and column.source in (bands or {}):
        facts["bands"] = list((bands or {})[column.source])
    return RasterExport(column.name, data, facts)


def _tile(value: Any, caps: RasterCaps) -> RasterTile | None:
    if value is None:
        return None
    if isinstance(value, str):
        return from_wkb(value, caps)
    return read_geotiff(bytes(value), caps)
