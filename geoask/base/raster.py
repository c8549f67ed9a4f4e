"""PostGIS rasters in Python: the WKB codec, tiling, mosaicking and GeoTIFF bytes.

PostGIS writes a ``raster`` value as hex WKB (its text output, which psycopg hands over as a
``str`` when no loader is registered) and reads the same hex as input; the format is PostGIS's
``doc/RFC2-WellKnownBinaryFormat``: endianness, version 0, band count, scale X/Y, upper-left
X/Y, skew X/Y (float64, CRS units), SRID (int32), width and height (uint16), then per band a
flag byte (pixel type in the low 4 bits, 0x40 has-nodata) with the nodata value and the
pixels row by row from the top. Out-of-database bands are not supported.

The demo loader tiles a GeoTIFF into such values (:func:`tile_geotiff`); the SQL export
pastes the tiles of a result back into one grid (:func:`mosaic`) and writes it as a GeoTIFF
with its CRS and nodata (:func:`to_geotiff_bytes`), which the sandbox reads with rasterio.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from geoask.errors import DataValidationError, RasterTooLargeError

# PostGIS pixel type code -> numpy dtype (little-endian); 1BB/2BUI/4BUI are stored in a byte.
PIXEL_TYPES: dict[int, str] = {
    0: "u1", 1: "u1", 2: "u1", 3: "i1", 4: "u1", 5: "<i2", 6: "<u2", 7: "<i4", 8: "<u4",
    10: "<f4", 11: "<f8",
}
PIXEL_TYPE_NAMES: dict[int, str] = {
    0: "1BB", 1: "2BUI", 2: "4BUI", 3: "8BSI", 4: "8BUI", 5: "16BSI", 6: "16BUI",
    7: "32BSI", 8: "32BUI", 10: "32BF", 11: "64BF",
}
_CODES = {"uint8": 4, "int8": 3, "int16": 5, "uint16": 6, "int32": 7, "uint32": 8,
          "float32": 10, "float64": 11}
_HEADER = struct.Struct("<BHH6diHH")


@dataclass(frozen=True)
class RasterCaps:
    """Size caps checked on a raster's header before its pixels are decoded or pasted.

    Attributes:
        max_bytes: most bytes one decoded raster or mosaic may take (bands x pixels x pixel
            bytes, plus a mosaic's coverage mask); the SQL export uses the result cap
            ``sql_max_result_mib``.
        max_pixels: most pixels (width x height) of one raster or mosaic.
        max_sparseness: a mosaic's grid may hold at most this many times the pixels of its
            tiles (tiles far apart would make a huge, almost empty grid), above
            ``sparse_floor`` pixels.
        sparse_floor: mosaics up to this many pixels are never refused as sparse.

    """

    max_bytes: int
    max_pixels: int = 100_000_000
    max_sparseness: int = 64
    sparse_floor: int = 4_000_000

    def check(self, width: int, height: int, bands: int, pixel_bytes: int, what: str) -> None:
        """Refuse a ``width`` x ``height`` grid of ``bands`` bands before it is allocated.

        >>> try:
        ...     RasterCaps(max_bytes=2**20).check(60000, 60000, 1, 1, "the GeoTIFF")
        ... except RasterTooLargeError as error:
        ...     print(str(error)[:59])
        the GeoTIFF is 60000 x 60000 pixels x 1 band(s) (3,433 MiB)
        """
        pixels = width * height
        size = pixels * bands * pixel_bytes
        if pixels > self.max_pixels or size > self.max_bytes:
            raise RasterTooLargeError(
                f"{what} is {width} x {height} pixels x {bands} band(s) ({size / 2**20:,.0f} "
                f"MiB); at most {self.max_pixels:,} pixels and {self.max_bytes / 2**20:,.0f} "
                "MiB are decoded (GEOASK_SQL_MAX_RESULT_MIB)")

    def check_sparse(self, grid_pixels: int, tile_pixels: int) -> None:
        """Refuse a mosaic grid much larger than its tiles' own pixels (tiles far apart)."""
        if grid_pixels > max(self.sparse_floor, self.max_sparseness * tile_pixels):
            raise RasterTooLargeError(
                f"the result's rasters lie far apart: their mosaic would be {grid_pixels:,} "
                f"pixels for {tile_pixels:,} pixels of data; select rasters of one area per "
                "statement (ST_Clip to one zone)")


@dataclass(frozen=True)
class RasterTile:
    """One in-database raster: pixels, georeference and nodata.

    Attributes:
        bands: array ``(bands, height, width)`` of one dtype.
        transform: GDAL geotransform as PostGIS stores it: ``(upper_left_x, scale_x, skew_x,
            upper_left_y, skew_y, scale_y)`` in CRS units (``scale_y`` negative for north-up).
        srid: EPSG code of the CRS (0: unknown).
        nodata: per band, the nodata value or None.

    """

    bands: np.ndarray
    transform: tuple[float, float, float, float, float, float]
    srid: int
    nodata: tuple[float | None, ...]

    @property
    def width(self) -> int:
        """Columns of pixels."""
        return int(self.bands.shape[2])

    @property
    def height(self) -> int:
        """Rows of pixels."""
        return int(self.bands.shape[1])


def from_wkb(data: bytes | str, caps: RasterCaps | None = None) -> RasterTile:
    """Decode a PostGIS raster from WKB bytes or its hex text (the ``raster`` text output).

    Raises:
        DataValidationError: the value is not an in-database raster WKB this codec reads
            (big-endian, out-of-database band, unknown pixel type, truncated).
        RasterTooLargeError: its header declares more than ``caps`` allow.

    """
    raw = bytes.fromhex(data) if isinstance(data, str) else bytes(data)
    if len(raw) < _HEADER.size or raw[0] != 1:
        raise DataValidationError("not a little-endian PostGIS raster WKB value")
    (_, _, count, sx, sy, ulx, uly, kx, ky, srid, width, height) = _HEADER.unpack_from(raw)
    if caps is not None:
        caps.check(width, height, count, 8, "a raster value")  # 8: the widest pixel type
    offset = _HEADER.size
    bands, nodata = [], []
    for _ in range(count):
        flags = raw[offset]
        code = flags & 0x0F
        if flags & 0x80 or code not in PIXEL_TYPES:
            raise DataValidationError(f"raster band with flags {flags:#x} is not supported "
                                      "(out-of-database or unknown pixel type)")
        dtype = np.dtype(PIXEL_TYPES[code])
        value = np.frombuffer(raw, dtype, 1, offset + 1)[0]
        offset += 1 + dtype.itemsize
        size = width * height * dtype.itemsize
        if offset + size > len(raw):
            raise DataValidationError("raster WKB value is truncated")
        bands.append(np.frombuffer(raw, dtype, width * height, offset).reshape(height, width))
        nodata.append(value.item() if flags & 0x40 else None)
        offset += size
    stacked = np.stack(bands) if bands else np.zeros((0, height, width), "u1")
    return RasterTile(stacked, (ulx, sx, kx, uly, ky, sy), srid, tuple(nodata))


OUTDB_FLAG = 0x80
"""Band flag bit of an out-of-database band (its pixels live in a file on the server)."""
_MIN_HEX_CHARS = 2 * _HEADER.size


def has_outdb_band(raw: bytes) -> bool:
    """True if ``raw`` reads as PostGIS raster WKB with an out-of-database band.

    Walks the bands (either byte order) as PostGIS does; a band whose pixel type is unknown
    counts as out-of-database (the walk cannot step over it). A value that is no raster WKB
    at all, or is cut short before a band's flag, is False (the server refuses it itself).

    >>> has_outdb_band(to_wkb(RasterTile(np.zeros((1, 2, 2), "u1"), (0, 1, 0, 0, 0, -1), 0,
    ...                                  (None,))))
    False
    """
    if len(raw) < _HEADER.size or raw[0] not in (0, 1):
        return False
    order = "<" if raw[0] == 1 else ">"
    version, count = struct.unpack_from(order + "HH", raw, 1)
    width, height = struct.unpack_from(order + "HH", raw, _HEADER.size - 4)
    offset = _HEADER.size
    for _ in range(count if version == 0 else 0):
        if offset >= len(raw):
            return False
        flags = raw[offset]
        if flags & OUTDB_FLAG or flags & 0x0F not in PIXEL_TYPES:
            return True
        size = np.dtype(PIXEL_TYPES[flags & 0x0F]).itemsize
        offset += 1 + size + width * height * size
    return False


def outdb_raster_text(value: str) -> bool:
    r"""True if a SQL string constant is a raster literal with an out-of-database band.

    ``value`` as the server would read it into a raster: hex WKB (``raster`` input, and
    ``ST_RastFromHexWKB``) or a ``bytea`` hex literal (``'\\x...'``, for ``ST_RastFromWKB``).

    >>> outdb_raster_text("hello"), outdb_raster_text(to_wkb(RasterTile(
    ...     np.zeros((1, 1, 1), "u1"), (0, 1, 0, 0, 0, -1), 0, (None,))).hex())
    (False, False)
    """
    text = value.strip()
    text = text[2:] if text[:2] in ("\\x", "\\X") else text
    if len(text) < _MIN_HEX_CHARS or len(text) % 2:
        return False
    try:
        raw = bytes.fromhex(text)
    except ValueError:
        return False
    return has_outdb_band(raw)


def to_wkb(tile: RasterTile) -> bytes:
    """Encode ``tile`` as PostGIS raster WKB (little-endian, in-database bands).

    Raises:
        DataValidationError: the dtype has no PostGIS pixel type.

    """
    code = _CODES.get(tile.bands.dtype.name)
    if code is None:
        raise DataValidationError(f"no PostGIS pixel type for {tile.bands.dtype}")
    ulx, sx, kx, uly, ky, sy = tile.transform
    out = [_HEADER.pack(1, 0, tile.bands.shape[0], sx, sy, ulx, uly, kx, ky, tile.srid,
                        tile.width, tile.height)]
    dtype = np.dtype(PIXEL_TYPES[code])
    for band, nodata in zip(tile.bands, tile.nodata, strict=True):
        out.append(bytes([code | (0x40 if nodata is not None else 0)]))
        out.append(np.asarray(nodata or 0, dtype).tobytes())
        out.append(np.ascontiguousarray(band, dtype).tobytes())
    return b"".join(out)


def read_geotiff(path: Path | bytes, caps: RasterCaps | None = None) -> RasterTile:
    """The whole raster of a GeoTIFF file (or its bytes) with its EPSG code and nodata.

    ``caps`` are checked on the file's declared size before any pixel is read (a GeoTIFF of
    a few hundred bytes may declare 60,000 x 60,000 pixels).

    Raises:
        DataValidationError: the file has no EPSG-coded CRS or cannot be read.
        RasterTooLargeError: its declared size passes ``caps``.

    """
    import rasterio
    from rasterio.io import MemoryFile

    try:
        with (MemoryFile(path).open() if isinstance(path, bytes)
              else rasterio.open(path)) as source:
            epsg = source.crs.to_epsg() if source.crs is not None else None
            if epsg is None:
                raise DataValidationError(f"{path!s:.80}: the GeoTIFF has no EPSG-coded CRS")
            if caps is not None:
                pixel_bytes = max(np.dtype(d).itemsize for d in source.dtypes)
                caps.check(source.width, source.height, source.count, pixel_bytes,
                           "the GeoTIFF")
            t = source.transform
            return RasterTile(source.read(), (t.c, t.a, t.b, t.f, t.d, t.e), epsg,
                              tuple(source.nodatavals))
    except rasterio.errors.RasterioError as error:
        raise DataValidationError(f"cannot read the GeoTIFF {path!s:.80}: {error}") from None


def tile_raster(raster: RasterTile, width: int, height: int | None = None) -> list[RasterTile]:
    """Cut ``raster`` into tiles of at most ``width`` x ``height`` pixels, row by row from the top.

    ``height`` defaults to ``width`` (square tiles). Edge tiles are smaller (no padding), so
    every pixel appears exactly once and the tiles keep the source's alignment, SRID and
    nodata.
    """
    ulx, sx, kx, uly, ky, sy = raster.transform
    rows = height or width
    tiles = []
    for row in range(0, raster.height, rows):
        for col in range(0, raster.width, width):
            part = raster.bands[:, row:row + rows, col:col + width]
            origin = (ulx + col * sx + row * kx, uly + col * ky + row * sy)
            tiles.append(RasterTile(part.copy(), (origin[0], sx, kx, origin[1], ky, sy),
                                    raster.srid, raster.nodata))
    return tiles


def mosaic(tiles: list[RasterTile], caps: RasterCaps | None = None) -> RasterTile:
    """Paste aligned tiles into one raster covering their union (north-up, no skew).

    Pixels no tile covers, and each tile's nodata pixels, take the first tile's nodata (or,
    when it has none, the dtype's minimum for integers and NaN for floats, then declared as
    nodata; a band without nodata whose every pixel is covered keeps none). Later tiles
    overwrite earlier ones only where they hold data.

    Raises:
        DataValidationError: no tiles, or tiles that differ in SRID, pixel size, band count or
            dtype, are skewed, or are not on one pixel grid.
        RasterTooLargeError: the mosaic's grid (with its coverage mask) passes ``caps``, or is
            far larger than the tiles' own pixels; checked before it is allocated.

    """
    if not tiles:
        raise DataValidationError("the result holds no raster (every value was NULL)")
    first = tiles[0]
    _, sx, _, _, _, sy = first.transform
    for tile in tiles:
        if (tile.srid, tile.transform[1], tile.transform[5], tile.bands.shape[0],
                tile.bands.dtype) != (first.srid, sx, sy, first.bands.shape[0],
                                      first.bands.dtype):
            raise DataValidationError("the result's rasters differ in SRID, pixel size, band "
                                      "count or pixel type; export one kind of raster per "
                                      "statement")
        if tile.transform[2] or tile.transform[4]:
            raise DataValidationError("skewed rasters cannot be exported")
    left = min(t.transform[0] for t in tiles)
    top = max(t.transform[3] for t in tiles)
    cols = [(t.transform[0] - left) / sx for t in tiles]
    rows = [(t.transform[3] - top) / sy for t in tiles]
    if any(abs(v - round(v)) > 1e-6 for v in cols + rows):
        raise DataValidationError("the result's rasters are not aligned to one pixel grid")
    width = max(round(c) + t.width for c, t in zip(cols, tiles, strict=True))
    height = max(round(r) + t.height for r, t in zip(rows, tiles, strict=True))
    if caps is not None:  # + 1 byte per pixel and band: the coverage mask
        caps.check(width, height, first.bands.shape[0], first.bands.dtype.itemsize + 1,
                   "the mosaic of the result's rasters")
        caps.check_sparse(width * height, sum(t.width * t.height for t in tiles))
    fill: tuple[float, ...] = tuple(n if n is not None else _fill_value(first.bands.dtype)
                                    for n in first.nodata)
    out = np.empty((first.bands.shape[0], height, width), first.bands.dtype)
    covered = np.zeros((first.bands.shape[0], height, width), bool)
    for band, filler in enumerate(fill):
        out[band] = filler
    for c, r, tile in zip(cols, rows, tiles, strict=True):
        rows_ = slice(round(r), round(r) + tile.height)
        cols_ = slice(round(c), round(c) + tile.width)
        for band, value in enumerate(tile.nodata):
            data = tile.bands[band]
            has_data = ~np.isnan(data) if data.dtype.kind == "f" else np.ones(data.shape, bool)
            if value is not None:
                has_data &= data != value
            out[band, rows_, cols_][has_data] = data[has_data]
            covered[band, rows_, cols_] |= has_data
    # a band without nodata keeps none when the tiles cover every pixel
    nodata = tuple(None if n is None and covered[band].all() else fill[band]
                   for band, n in enumerate(first.nodata))
    return RasterTile(out, (left, sx, 0.0, top, 0.0, sy), first.srid, nodata)


def _fill_value(dtype: np.dtype) -> float:
    return float("nan") if dtype.kind == "f" else float(np.iinfo(dtype).min)


def to_geotiff_bytes(raster: RasterTile) -> bytes:
    """``raster`` as a deflate-compressed GeoTIFF (EPSG CRS, geotransform, nodata per file).

    GeoTIFF holds one nodata value for all bands: the first band's is written.
    """
    from affine import Affine
    from rasterio.io import MemoryFile

    ulx, sx, kx, uly, ky, sy = raster.transform
    count, height, width = raster.bands.shape
    profile = {"driver": "GTiff", "width": width, "height": height, "count": count,
               "dtype": raster.bands.dtype.name, "transform": Affine(sx, kx, ulx, ky, sy, uly),
               "crs": f"EPSG:{raster.srid}" if raster.srid else None,
               "nodata": raster.nodata[0] if raster.nodata else None, "compress": "deflate"}
    with MemoryFile() as memory:
        with memory.open(**profile) as sink:
            sink.write(raster.bands)
        return bytes(memory.read())


def describe(raster: RasterTile) -> dict[str, object]:
    """Facts a prompt needs: size, bands with pixel type and nodata, SRID, pixel size, extent.

    ``extent`` is ``[xmin, ymin, xmax, ymax]`` in the raster's CRS units.
    """
    ulx, sx, _, uly, _, sy = raster.transform
    code = _CODES.get(raster.bands.dtype.name, 0)
    return {
        "width": raster.width, "height": raster.height, "band_count": raster.bands.shape[0],
        "pixel_type": PIXEL_TYPE_NAMES.get(code, raster.bands.dtype.name),
        "nodata": list(raster.nodata), "srid": raster.srid, "pixel_size": [sx, abs(sy)],
        "extent": [ulx, uly + sy * raster.height, ulx + sx * raster.width, uly],
    }
