"""The map image of an answer with geometry: the run's own result features.

:func:`publish_answer_map` reads the GeoJSON files a run exported (EPSG:4326, RFC 7946) and
draws them - polygons under lines under points, in export order - in a metric CRS (the UTM
zone of the features; Web Mercator for extents wider than :data:`UTM_EXTENT_DEG`), with a
legend and a scale bar in metres/kilometres, and writes ``map.png`` into the run folder. Only
the run's data is drawn (no shipped boundary files), so it works on any database.
It also creates the Prefect markdown artifact ``answer-map`` showing the image, so the flow
run page has it. A map is a view: any failure is logged and the question is unaffected.
"""

from __future__ import annotations

import base64
import io
import logging
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

import fsspec
import geopandas as gpd

if TYPE_CHECKING:
    from geoask.run_artifacts import RunArtifacts
    from geoask.state import ArtifactRef

UTM_EXTENT_DEG: Final = 12.0
MAP_SIZE_IN: Final = (8.0, 6.0)
MAP_DPI: Final = 110
MAP_FILE: Final = "map.png"
MAP_KEY: Final = "answer-map"
LAYER_COLOURS: Final = ("#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")
Bounds = tuple[float, float, float, float]
logger = logging.getLogger(__name__)


def nice_scale_length(max_length_m: float) -> float:
    """Largest 1, 2 or 5 × 10^k metres not above ``max_length_m`` (a scale bar's length).

    >>> nice_scale_length(3700.0)
    2000.0

    Raises:
        ValueError: ``max_length_m`` is not positive.

    """
    if not max_length_m > 0:
        raise ValueError(f"a scale bar needs a positive length, got {max_length_m}")
    power = 10.0 ** math.floor(math.log10(max_length_m))
    for step in (5.0, 2.0, 1.0):
        if step * power <= max_length_m * (1 + 1e-9):
            return step * power
    return power  # unreachable: 1 × 10^floor(log10(x)) <= x


def scale_label(length_m: float) -> str:
    """``length_m`` as a scale-bar label: metres below 1 km, else kilometres.

    >>> scale_label(500.0), scale_label(20000.0)
    ('500 m', '20 km')
    """
    return f"{length_m:g} m" if length_m < 1000 else f"{length_m / 1000:g} km"


def geojson_urls(artifacts: Sequence[ArtifactRef]) -> list[tuple[str, str]]:
    """``(name, url)`` of the GeoJSON files among a run's artifact references."""
    return [(a.name, a.url) for a in artifacts if a.format == "geojson"]


def read_layers(files: Sequence[tuple[str, str]]) -> dict[str, gpd.GeoDataFrame]:
    """The non-empty GeoJSON files as GeoDataFrames in EPSG:4326, by name."""
    layers: dict[str, gpd.GeoDataFrame] = {}
    for name, url in files:
        with fsspec.open(url, "rb") as handle:
            frame = gpd.read_file(handle)
        frame = frame[frame.geometry.notna() & ~frame.geometry.is_empty]
        if len(frame):
            layers[name] = frame.set_crs(4326, allow_override=True)
    return layers


def map_crs(bounds_wgs84: Bounds, layer: gpd.GeoDataFrame) -> tuple[Any, float]:
    """The drawing CRS and its map units per ground metre at the map centre.

    UTM (1 unit per metre) for small extents; Web Mercator (1/cos(latitude)) otherwise.
    """
    west, south, east, north = bounds_wgs84
    if max(east - west, north - south) <= UTM_EXTENT_DEG:
        return layer.estimate_utm_crs(), 1.0
    latitude = math.radians((south + north) / 2)
    return "EPSG:3857", 1.0 / max(math.cos(latitude), 1e-6)


def render_answer_map(layers: dict[str, gpd.GeoDataFrame], title: str) -> bytes:
    """PNG bytes: ``layers`` (EPSG:4326), legend and scale bar.

    Raises:
        ValueError: ``layers`` is empty.

    """
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    from mpl_toolkits.axes_grid1.anchored_artists import AnchoredSizeBar

    if not layers:
        raise ValueError("an answer map needs at least one layer with geometry")
    combined = gpd.GeoDataFrame(geometry=[g for f in layers.values() for g in f.geometry],
                                crs=4326)
    bounds: Bounds = tuple(float(v) for v in combined.total_bounds)  # type: ignore[assignment]
    crs, units_per_metre = map_crs(bounds, combined)
    figure = Figure(figsize=MAP_SIZE_IN, dpi=MAP_DPI)
    axes = figure.add_subplot()
    handles: list[Any] = []
    for index, (name, frame) in enumerate(layers.items()):
        colour = LAYER_COLOURS[index % len(LAYER_COLOURS)]
        projected = frame.to_crs(crs)
        kind = projected.geom_type.iloc[0]
        label = f"{name} ({len(frame)} feature{'' if len(frame) == 1 else 's'})"
        if "Point" in kind:
            projected.plot(ax=axes, color=colour, markersize=9, zorder=30 + index)
            handles.append(Line2D([], [], marker="o", linestyle="", color=colour, label=label))
        elif "Line" in kind:
            projected.plot(ax=axes, color=colour, linewidth=1.6, zorder=20 + index)
            handles.append(Line2D([], [], color=colour, linewidth=1.6, label=label))
        else:
            projected.plot(ax=axes, facecolor=colour, edgecolor="black", alpha=0.55,
                           linewidth=0.5, zorder=10 + index)
            handles.append(Patch(facecolor=colour, edgecolor="black", alpha=0.55, label=label))
    west, south, east, north = gpd.GeoSeries.from_xy(
        [bounds[0], bounds[2]], [bounds[1], bounds[3]], crs=4326).to_crs(crs).total_bounds
    pad_x, pad_y = max((east - west) * 0.08, 50.0), max((north - south) * 0.08, 50.0)
    axes.set_xlim(west - pad_x, east + pad_x)
    axes.set_ylim(south - pad_y, north + pad_y)
    axes.set_aspect("equal")
    width_m = (east - west + 2 * pad_x) / units_per_metre
    length_m = nice_scale_length(width_m / 4)
    axes.add_artist(AnchoredSizeBar(axes.transData, length_m * units_per_metre,
                                    scale_label(length_m), loc="lower right", frameon=True,
                                    size_vertical=(north - south + 2 * pad_y) / 150))
    axes.legend(handles=handles, loc="upper left", fontsize=8, framealpha=0.9)
    axes.set_title(title if len(title) <= 90 else title[:87] + "...", fontsize=10)
    axes.set_xticks([])
    axes.set_yticks([])
    crs_name = crs if isinstance(crs, str) else f"EPSG:{crs.to_epsg()}"
    axes.set_xlabel(f"{crs_name}; features from the run's GeoJSON exports", fontsize=7)
    axes.set_ylabel("")
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", bbox_inches="tight")
    return buffer.getvalue()


def publish_answer_map(store: RunArtifacts, artifacts: Sequence[ArtifactRef],
                       title: str) -> str | None:
    """Write ``map.png`` for a run's GeoJSON exports and show it as artifact ``answer-map``.

    Args:
        store: the run's :class:`geoask.run_artifacts.RunArtifacts` (``url``, ``folder``).
        artifacts: the run's artifact references (``name``, ``url``, ``format``).
        title: the map title (the question).

    Returns:
        The map's URL, or None when the run exported no geometry or drawing failed (logged).

    """
    from geoask.run_artifacts import publish_markdown
    from geoask.sql.export import write_atomic

    try:
        layers = read_layers(geojson_urls(artifacts))
        if not layers:
            return None
        png = render_answer_map(layers, title)
        url = str(store.url(MAP_FILE))
        write_atomic(url, png)
    except Exception as error:  # a map is a view; the answer stands without it
        logger.warning("could not draw the answer map: %s", error)
        return None
    encoded = base64.b64encode(png).decode("ascii")
    publish_markdown(MAP_KEY, f"# Map\n\n![answer map](data:image/png;base64,{encoded})\n\n"
                              f"file: `{url}`", "the run's result features")
    return url
