"""Raster backdrops of an answer map: a hillshaded elevation or a false-colour image.

The GeoTIFFs a run exported (:mod:`geoask.sql.raster_export`, in the raster's own CRS) are
warped to the map's CRS (nearest neighbour, rasterio/GDAL) and drawn under the vector layers of
:func:`geoask.maps.answer_map.render_answer_map`:

* one band: the values coloured with matplotlib's ``terrain`` land colours and shaded by a hillshade
  (sun from the north-west, 45 degrees high; :class:`matplotlib.colors.LightSource`, with the
  pixel size in metres of the map's metric CRS), so zones drawn on top read as a class map over
  the relief;
* three or more bands: a false-colour composite of bands 4, 3, 2 (near infrared, red, green on
  a Landsat image; bands 1-3 with three bands), each stretched between its 2nd and 98th
  percentile.

Nodata pixels are transparent. A raster of more than :data:`MAX_BACKDROP_PIXELS` pixels is read
decimated (GDAL's overview-style nearest sampling) before it is warped: a map image needs no
more, and the warp's float64 copies of a large export would take gigabytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from geoask.base.formats import Content, holds

if TYPE_CHECKING:
    from geoask.vocabulary.artifacts import ArtifactRef

Bounds = tuple[float, float, float, float]
MAX_BACKDROP_PIXELS = 4_000_000


@dataclass(frozen=True)
class RasterBackdrop:
    """A raster ready for ``imshow``: RGBA pixels, their extent in the map CRS, a legend label.

    Attributes:
        rgba: float array ``(rows, cols, 4)`` in 0-1; nodata has alpha 0.
        extent: ``(left, right, bottom, top)`` in map units, as ``imshow`` takes it.
        label: legend text (``"band 1, hillshaded (141-547)"``).

    """

    rgba: np.ndarray
    extent: tuple[float, float, float, float]
    label: str


def raster_urls(step_artifacts: Sequence[Sequence[ArtifactRef]]) -> list[str]:
    """URLs of the GeoTIFF files of a run's steps, in step order."""
    return [a.url for artifacts in step_artifacts for a in artifacts
            if holds(a.format, Content.RASTER)]


def raster_bounds_wgs84(data: bytes) -> Bounds:
    """``(west, south, east, north)`` in degrees of a GeoTIFF's grid."""
    from rasterio.io import MemoryFile
    from rasterio.warp import transform_bounds

    with MemoryFile(data) as memory, memory.open() as source:
        west, south, east, north = transform_bounds(source.crs, "EPSG:4326", *source.bounds)
    return float(west), float(south), float(east), float(north)


def raster_backdrop(data: bytes, crs: str) -> RasterBackdrop:
    """Warp the GeoTIFF ``data`` to ``crs`` (metric) and colour it (see the module text)."""
    from affine import Affine
    from matplotlib import colormaps
    from matplotlib.colors import LightSource, ListedColormap, Normalize
    from rasterio.io import MemoryFile
    from rasterio.warp import Resampling, calculate_default_transform, reproject

    with MemoryFile(data) as memory, memory.open() as source:
        step = max(1.0, (source.width * source.height / MAX_BACKDROP_PIXELS) ** 0.5)
        shape = (max(1, int(source.height / step)), max(1, int(source.width / step)))
        source_transform = source.transform @ Affine.scale(source.width / shape[1],
                                                           source.height / shape[0])
        transform, width, height = calculate_default_transform(
            source.crs, crs, shape[1], shape[0], *source.bounds)
        bands = [1] if source.count < 3 else [4, 3, 2] if source.count >= 4 else [1, 2, 3]
        warped = np.full((len(bands), height, width), np.nan)
        for out, band in zip(warped, bands, strict=True):
            pixels = source.read(band, out_shape=shape).astype("float64")
            reproject(pixels, out, src_transform=source_transform,
                      src_crs=source.crs, src_nodata=source.nodata, dst_transform=transform,
                      dst_crs=crs, dst_nodata=np.nan, resampling=Resampling.nearest)
    missing = np.isnan(warped).any(axis=0)
    left, top = transform.c, transform.f
    extent = (left, left + transform.a * width, top + transform.e * height, top)
    if len(bands) == 1:
        values = warped[0]
        low, high = np.nanmin(values), np.nanmax(values)
        shade = LightSource(azdeg=315, altdeg=45)
        land = ListedColormap(colormaps["terrain"](np.linspace(0.25, 1.0, 256)))  # no sea blue
        rgba = shade.shade(np.where(missing, low, values), cmap=land,
                           norm=Normalize(low, high), blend_mode="soft",
                           dx=abs(transform.a), dy=abs(transform.e))
        label = f"band 1, hillshaded ({low:g} to {high:g})"
    else:
        rgb = np.empty((height, width, 3))
        for index, values in enumerate(warped):
            low, high = np.nanpercentile(values, [2, 98])
            rgb[..., index] = np.clip((values - low) / max(high - low, 1e-12), 0, 1)
        rgba = np.dstack([np.nan_to_num(rgb), np.ones((height, width))])
        label = f"bands {', '.join(map(str, bands))} as red, green, blue"
    rgba = np.array(rgba, dtype="float64")
    rgba[missing, 3] = 0.0
    return RasterBackdrop(rgba, extent, label)
