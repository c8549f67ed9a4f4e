"""The maps of an answer: its features drawn over what the run fetched, as PNG and HTML.

:func:`draw_answer_maps` reads the feature files a run exported (GeoJSON, RFC 7946, or
GeoParquet; EPSG:4326), picks
the answer's features with :func:`geoask.maps.answer_features.pick_answer`, and writes two files
into the run folder: ``map.png`` (:func:`render_answer_map`: the answer in strong colour over
the fetched context in grey - polygons under lines under points - zoomed to the answer's extent
with a margin, in the metric CRS that fits the extent
(:func:`geoask.sql.metric_crs.metric_crs_for_extent`: its UTM zone, else a continental or global
equal-area CRS); up to :data:`MAX_LABELS` answer features labelled with their matched id;
legend, scale bar in metres/kilometres and a CRS note) and ``map.html``
(:mod:`geoask.maps.interactive_map`: the same layers in a self-contained Leaflet page).
Planar layers (SRID 0 data the catalog declares planar, exported in its own coordinates) have no
place on the Earth: they are drawn alone, as exported, with a scale bar in their declared units
(none for unknown units), no lon/lat layer or raster with them, and no ``map.html`` (Leaflet
places lon/lat only; the map section says why). Without
answer features every layer is drawn in its own colour, zoomed to all of them. The GeoTIFFs a
run exported are drawn underneath (:mod:`geoask.maps.raster_map`: a hillshaded elevation, or a
false-colour image), so zones over a raster read as a class map over the relief; a run with
only rasters gets a map of them. Only the run's data is drawn (no shipped boundary files), so
it works on any database.
It also gives the map's markdown section (the image inline, the files named) for the run's
``run-summary`` artifact. A map is a view: any failure is logged and the question is unaffected.
"""

from __future__ import annotations

import base64
import io
import logging
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Final

import geopandas as gpd
from pyproj import Proj

from geoask.base.storage import filesystem_for, write_atomic
from geoask.maps.answer_features import (
    AnswerFeatures,
    feature_layers,
    layer_styles,
    pick_answer,
    planar_units,
    read_layers,
)
from geoask.maps.interactive_map import interactive_map_html
from geoask.maps.raster_map import raster_backdrop, raster_bounds_wgs84, raster_urls
from geoask.records.run_artifacts import Markdown, file_link
from geoask.sql.crs import PLANAR
from geoask.sql.metric_crs import metric_crs_for_extent

if TYPE_CHECKING:
    from geoask.records.run_artifacts import RunArtifacts
    from geoask.vocabulary.answers import FinalAnswer
    from geoask.vocabulary.artifacts import ArtifactRef

MAP_SIZE_IN: Final = (8.0, 6.0)
MAP_DPI: Final = 110
MAP_FILE: Final = "map.png"
HTML_MAP_FILE: Final = "map.html"
MARGIN_SHARE: Final = 0.15
MIN_MARGIN_M: Final = 2000.0
MAX_LABELS: Final = 25
SCALED_PLANAR_UNITS: Final = frozenset({"metre", "foot"})
"""Declared planar units a scale bar can be drawn in (not ``unknown``)."""
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


def map_crs(bounds_wgs84: Bounds) -> tuple[str, float]:
    """The drawing CRS and its map units per ground metre at the map centre.

    The metric CRS of the extent (:func:`geoask.sql.metric_crs.metric_crs_for_extent`): the
    UTM zone it fits (1 unit per metre), else the equal-area CRS chosen for it, whose scale
    along the parallel through the map centre (pyproj's projection factors) sizes the scale bar.
    """
    chosen = metric_crs_for_extent(bounds_wgs84)
    if not chosen.geodesic_distances:
        return chosen.code, 1.0
    west, south, east, north = bounds_wgs84
    factors = Proj(chosen.crs).get_factors((west + east) / 2, (south + north) / 2)
    return chosen.code, float(factors.parallel_scale)


@dataclass(frozen=True)
class MapView:
    """What the PNG map shows: its CRS, map units per ground metre, and padded limits.

    Attributes:
        crs: the drawing CRS (``"EPSG:326xx"``/``"EPSG:327xx"`` or an equal-area one such as
            ``"EPSG:5070"``).
        units_per_metre: map units per ground metre at the centre (1 in UTM).
        limits: ``(xmin, ymin, xmax, ymax)`` in map units: the extent plus a margin of
            :data:`MARGIN_SHARE` per side, at least :data:`MIN_MARGIN_M` metres.

    """

    crs: str
    units_per_metre: float
    limits: tuple[float, float, float, float]


def planar_view(bounds: Bounds) -> MapView:
    """The view of planar coordinates ``(xmin, ymin, xmax, ymax)``: drawn as they are.

    >>> planar_view((0.0, 0.0, 100.0, 50.0)).limits
    (-15.0, -15.0, 115.0, 65.0)
    """
    west, south, east, north = bounds
    pad = max(east - west, north - south, 1e-9) * MARGIN_SHARE
    return MapView(PLANAR, 1.0, (west - pad, south - pad, east + pad, north + pad))


def planar_scale_label(length: float, units: str) -> str:
    """A scale-bar label in planar ``units`` (``metre`` or ``foot``).

    >>> planar_scale_label(500.0, "foot"), planar_scale_label(2000.0, "metre")
    ('500 ft', '2 km')
    """
    return scale_label(length) if units == "metre" else f"{length:g} ft"


def map_view(bounds_wgs84: Bounds) -> MapView:
    """The view of an extent ``(west, south, east, north)`` in degrees (see :class:`MapView`)."""
    extent = gpd.GeoDataFrame(geometry=gpd.GeoSeries.from_xy(
        [bounds_wgs84[0], bounds_wgs84[2]], [bounds_wgs84[1], bounds_wgs84[3]], crs=4326))
    crs, units_per_metre = map_crs(bounds_wgs84)
    west, south, east, north = (float(v) for v in extent.to_crs(crs).total_bounds)
    margin = MIN_MARGIN_M * units_per_metre
    pad_x = max((east - west) * MARGIN_SHARE, margin)
    pad_y = max((north - south) * MARGIN_SHARE, margin)
    return MapView(crs, units_per_metre, (west - pad_x, south - pad_y, east + pad_x,
                                          north + pad_y))


def plain_text(text: str) -> str:
    r"""``text`` as matplotlib draws it literally: ``$`` escaped, so no mathtext is parsed.

    An unbalanced ``$`` in a question or a label ("fees between $20 and $30") made matplotlib
    raise, or draw the span between two of them in math italics.

    >>> plain_text("fees between $20 and $30")
    'fees between \\$20 and \\$30'
    """
    return text.replace("$", r"\$")


def render_answer_map(features: AnswerFeatures, title: str,
                      rasters: Sequence[bytes] = (), planar_units: str | None = None) -> bytes:
    """PNG bytes: ``features`` (EPSG:4326) zoomed to the answer, legend, scale bar, CRS note.

    ``rasters`` (GeoTIFF files) are drawn under the layers (:func:`raster_backdrop`). With
    ``planar_units`` the features are planar coordinates, drawn as they are: a scale bar in
    those units (``metre``, ``foot``; none for ``unknown``), no lon/lat context.

    Raises:
        ValueError: there is no layer to draw.

    """
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    from mpl_toolkits.axes_grid1.anchored_artists import AnchoredSizeBar

    view = planar_view(features.bounds()) if planar_units else map_view(features.bounds())
    crs, units_per_metre = view.crs, view.units_per_metre

    def project(frame: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
        return frame if planar_units else frame.to_crs(crs)

    figure = Figure(figsize=MAP_SIZE_IN, dpi=MAP_DPI)
    axes = figure.add_subplot()
    handles: list[Any] = []
    for data in rasters:
        backdrop = raster_backdrop(data, crs)
        axes.imshow(backdrop.rgba, extent=backdrop.extent, zorder=1, interpolation="nearest")
        handles.append(Patch(facecolor="tan", edgecolor="grey", label=backdrop.label))
    for frame, style in layer_styles(features):
        projected = project(frame)
        kind = projected.geom_type.iloc[0]
        base = (30 if "Point" in kind else 20 if "Line" in kind else 10) + style.zorder
        if "Point" in kind:
            projected.plot(ax=axes, color=style.colour, markersize=36 if style.answer else 9,
                           edgecolor="black" if style.answer else "none", zorder=base)
            handles.append(Line2D([], [], marker="o", linestyle="", color=style.colour,
                                  label=style.label))
        elif "Line" in kind:
            projected.plot(ax=axes, color=style.colour, zorder=base,
                           linewidth=2.4 if style.answer else 1.0)
            handles.append(Line2D([], [], color=style.colour, linewidth=1.6, label=style.label))
        elif rasters:  # zones over a raster: outlines only, so the raster stays visible
            projected.plot(ax=axes, facecolor="none", edgecolor=style.colour, zorder=base,
                           linewidth=1.8 if style.answer else 0.6)
            handles.append(Line2D([], [], color=style.colour, linewidth=1.6, label=style.label))
        else:
            projected.plot(ax=axes, facecolor=style.colour, edgecolor="black", alpha=style.alpha,
                           linewidth=0.9 if style.answer else 0.3, zorder=base)
            handles.append(Patch(facecolor=style.colour, edgecolor="black", alpha=style.alpha,
                                 label=style.label))
    if features.answer is not None and features.label_column is not None and len(
            features.answer) <= MAX_LABELS:
        projected = project(features.answer)
        for point, text in zip(projected.geometry.representative_point(),
                               projected[features.label_column], strict=True):
            axes.annotate(plain_text(str(text)), (point.x, point.y), xytext=(5, 5), fontsize=8,
                          textcoords="offset points", zorder=60)
    west, south, east, north = view.limits
    axes.set_xlim(west, east)
    axes.set_ylim(south, north)
    axes.set_aspect("equal")
    length = nice_scale_length((east - west) / units_per_metre / 4)
    label = (scale_label(length) if planar_units is None
             else planar_scale_label(length, planar_units) if planar_units in SCALED_PLANAR_UNITS
             else None)
    if label is not None:
        axes.add_artist(AnchoredSizeBar(axes.transData, length * units_per_metre, label,
                                        loc="lower right", frameon=True,
                                        size_vertical=(north - south) / 150))
    for handle in handles:
        handle.set_label(plain_text(handle.get_label()))
    axes.legend(handles=handles, loc="upper left", fontsize=7, framealpha=0.9)
    axes.set_title(plain_text(title if len(title) <= 90 else title[:87] + "..."), fontsize=10)
    axes.set_xticks([])
    axes.set_yticks([])
    sources = ["feature exports (EPSG:4326)"] if features.context or features.answer is not None \
        else []
    source = " and ".join([*sources, *(["GeoTIFFs"] if rasters else [])])
    axes.set_xlabel(f"drawn in {crs} from the run's {source}" if planar_units is None else
                    f"planar coordinates in {planar_units} units, drawn as exported (no lon/lat, "
                    "so no map context); from the run's GeoJSON exports", fontsize=7)
    axes.set_ylabel("")
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", bbox_inches="tight")
    return buffer.getvalue()


@dataclass(frozen=True)
class AnswerMaps:
    """The map files of a run and their section of the run summary.

    ``png`` and ``html`` are URLs under the run folder (``html`` None for planar data, which
    the lon/lat Leaflet page cannot place); ``markdown`` shows the PNG inline (a data URL),
    says what is drawn and names the files.
    """

    png: str
    html: str | None
    markdown: Markdown


def draw_answer_maps(store: RunArtifacts, step_artifacts: Sequence[Sequence[ArtifactRef]],
                     answer: FinalAnswer | None, title: str) -> AnswerMaps | None:
    """Write ``map.png`` and ``map.html`` of a run; their markdown section for the UI.

    Args:
        store: the run's :class:`geoask.records.run_artifacts.RunArtifacts` (``url``, ``folder``).
        step_artifacts: the artifact references of each step, in step order (``name``,
            ``url``, ``format``); the last step's features are the answer's fallback.
        answer: the typed answer whose features are drawn prominently (None: just the layers).
        title: the map title (the question).

    Returns:
        The maps' URLs and markdown, or None when the run exported no geometry or drawing
        failed (logged).

    """
    try:
        files = feature_layers(step_artifacts)
        layers = read_layers(files)
        rasters = [_read_bytes(url) for url in raster_urls(step_artifacts)]
        units = next((u for u in map(planar_units, layers.values()) if u is not None), None)
        if units is not None:  # planar layers have no place on the Earth: drawn alone
            layers = {n: f for n, f in layers.items() if planar_units(f) == units}
            files, rasters = [(n, u) for n, u in files if n in layers], []
        if not layers and not rasters:
            return None
        done = [artifacts for artifacts in step_artifacts if artifacts]
        final_count = len(feature_layers(done[-1:]))
        final = [name for name, _ in files[len(files) - final_count:]] if final_count else []
        features = pick_answer(answer, layers, final) if layers else AnswerFeatures(None)
        if units is not None and features.answer is not None and features.answer.crs:
            features = replace(features, answer=None)  # lon/lat answer geometry: not placeable
        if rasters:
            features = replace(features, extent=_union(map(raster_bounds_wgs84, rasters)))
        png = render_answer_map(features, title, rasters, units)
        png_url = store.url(MAP_FILE)
        html_url = None if units is not None else store.url(HTML_MAP_FILE)
        write_atomic(png_url, png)
        if html_url is not None:
            write_atomic(html_url, interactive_map_html(features, title, rasters).encode("utf-8"))
    except Exception as error:  # a map is a view; the answer stands without it
        first = next((line.strip() for line in str(error).splitlines() if line.strip()), "")
        logger.warning("could not draw the answer map: %s: %s", type(error).__name__, first)
        return None
    encoded = base64.b64encode(png).decode("ascii")
    how = features.how or "the run's result features"
    where = (Markdown("interactive map (works offline): {}").format(file_link(html_url))
             if html_url is not None else
             Markdown("no interactive map: its Leaflet page places lon/lat data, and these are "
                      "planar coordinates in {} units").format(units))
    markdown = Markdown("## Map\n\n![answer map](data:image/png;base64,{})\n\n{}\n\n"
                        "file: {}; {}").format(Markdown(encoded), how, file_link(png_url), where)
    return AnswerMaps(png=png_url, html=html_url, markdown=markdown)


def _read_bytes(url: str) -> bytes:
    filesystem, path = filesystem_for(url)
    with filesystem.open(path, "rb") as handle:
        return bytes(handle.read())


def _union(bounds: Iterable[Bounds]) -> Bounds:
    boxes = list(bounds)
    return (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes),
            max(b[3] for b in boxes))
