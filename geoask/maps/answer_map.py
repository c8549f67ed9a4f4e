"""The maps of an answer: its features drawn over what the run fetched, as PNG and HTML.

:func:`draw_answer_maps` reads the feature files a run exported (GeoJSON, RFC 7946, or
GeoParquet; EPSG:4326), picks the answer's features and the reference features, ring, links and
values of the intent's focus (:func:`geoask.maps.answer_features.pick_answer`), and writes two
files into the run folder, one design in both:

* ``map.png`` (:func:`render_answer_map`, geopandas/matplotlib): the Natural Earth 1:110m
  countries and coastline underneath (:mod:`geoask.maps.context_layer`, shipped, offline);
  the run's GeoTIFFs over them (:mod:`geoask.maps.raster_map`); everything fetched muted (a
  point layer of thousands as a density); the distance ring dashed; the answer in strong
  colour, or graduated by its values (a choropleth for zones, proportional symbols for
  points, :mod:`geoask.maps.graduated`) and labelled (name, rank, value and unit); the
  reference features as a star or bold outline, labelled; nearest links dotted. Zoomed to the
  answer, reference and ring with a margin, in the metric CRS that fits the extent
  (:mod:`geoask.maps.views`); legend beside the map (never over it or the title), titled with a
  scalar or object answer's value; scale bar and a CRS and source note.
* ``map.html`` (:mod:`geoask.maps.interactive_map`): the same layers in a self-contained
  Leaflet page, with layer toggles, labels and popups.

Planar layers (SRID 0 data the catalog declares planar, exported in its own coordinates) have no
place on the Earth: they are drawn alone, as exported, with a scale bar in their declared units
(none for unknown units), no context layer, lon/lat layer or raster with them, and no
``map.html`` (Leaflet places lon/lat only; the map section says why). Without answer or
reference features every layer is drawn in its own colour, zoomed to all of them.
It also gives the map's markdown section (the image inline, the files named) for the run's
``run-summary`` artifact. A map is a view: any failure is logged and the question is unaffected.
"""

from __future__ import annotations

import base64
import io
import logging
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Final

from geoask.base.storage import filesystem_for, write_atomic
from geoask.maps.answer_features import (
    AnswerFeatures,
    feature_layers,
    layer_styles,
    pick_answer,
    planar_units,
    read_layers,
)
from geoask.maps.graduated import answer_graduation
from geoask.maps.interactive_map import interactive_map_html
from geoask.maps.png_layers import (
    draw_context_layer,
    draw_labels,
    draw_layer,
)
from geoask.maps.raster_map import raster_backdrop, raster_bounds_wgs84, raster_urls
from geoask.maps.views import (
    Bounds,
    MapView,
    map_crs,
    map_view,
    nice_scale_length,
    plain_text,
    planar_view,
    scale_label,
)
from geoask.records.run_artifacts import Markdown, file_link

if TYPE_CHECKING:
    import geopandas as gpd
    from matplotlib.axes import Axes

    from geoask.maps.key_lookup import KeyedFeatures
    from geoask.records.run_artifacts import RunArtifacts
    from geoask.vocabulary.answers import FinalAnswer
    from geoask.vocabulary.artifacts import ArtifactRef
    from geoask.vocabulary.focus import MapFocus

__all__ = ["AnswerMaps", "MapView", "draw_answer_maps", "map_crs", "map_view",
           "nice_scale_length", "planar_scale_label", "render_answer_map", "scale_label"]
MAP_SIZE_IN: Final = (10.0, 6.0)
MAP_DPI: Final = 110
MAP_FILE: Final = "map.png"
HTML_MAP_FILE: Final = "map.html"
LEGEND_FONT: Final = 7.0
"""Legend text size in points; rows grow to the largest proportional symbol."""
TITLE_WIDTH: Final = 110
TITLE_LINES: Final = 3
"""The question as the PNG's title: wrapped at this many characters, on at most these lines."""
FRAME_ASPECT: Final = 4 / 3
"""Width over height of the map frame; the view is widened or heightened to it."""
SCALED_PLANAR_UNITS: Final = frozenset({"metre", "foot"})
"""Declared planar units a scale bar can be drawn in (not ``unknown``)."""
logger = logging.getLogger(__name__)


def planar_scale_label(length: float, units: str) -> str:
    """A scale-bar label in planar ``units`` (``metre`` or ``foot``).

    >>> planar_scale_label(500.0, "foot"), planar_scale_label(2000.0, "metre")
    ('500 ft', '2 km')
    """
    return scale_label(length) if units == "metre" else f"{length:g} ft"


def render_answer_map(features: AnswerFeatures, title: str,
                      rasters: Sequence[bytes] = (), planar_units: str | None = None) -> bytes:
    """PNG bytes of ``features`` (EPSG:4326): the design of the module docstring.

    ``rasters`` (GeoTIFF files) are drawn under the layers (:func:`raster_backdrop`). With
    ``planar_units`` the features are planar coordinates, drawn as they are: a scale bar in
    those units (``metre``, ``foot``; none for ``unknown``), no lon/lat context.

    Raises:
        ValueError: there is no layer to draw.

    """
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    bounds = features.bounds()
    view = planar_view(bounds) if planar_units else map_view(bounds)

    def project(frame: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
        return frame if planar_units else frame.to_crs(view.crs)

    figure = Figure(figsize=MAP_SIZE_IN, dpi=MAP_DPI)
    axes = figure.add_subplot()
    handles: list[Any] = [] if planar_units else draw_context_layer(axes, bounds, view.crs)
    for data in rasters:
        backdrop = raster_backdrop(data, view.crs)
        axes.imshow(backdrop.rgba, extent=backdrop.extent, zorder=1, interpolation="nearest")
        handles.append(Patch(facecolor="tan", edgecolor="grey", label=backdrop.label))
    graduated = answer_graduation(features)
    view = _fitted(view)
    for frame, style in layer_styles(features):
        handles += draw_layer(axes, project(frame), style, graduated, bool(rasters), view.limits)
    if features.answer is not None and features.label_column is not None:
        draw_labels(axes, project(features.answer), features.label_column)
    _frame_view(axes, view, planar_units)
    for handle in handles:
        handle.set_label(plain_text(handle.get_label()))
    legend_title = plain_text(features.headline) if features.headline else None
    tallest = max((2 * c.radius for c in graduated.classes), default=0.0) \
        if graduated is not None and graduated.kind == "symbols" else 0.0
    axes.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                fontsize=LEGEND_FONT, framealpha=0.95, title=legend_title, title_fontsize=8,
                alignment="left", handleheight=max(0.7, tallest / LEGEND_FONT),
                handlelength=max(2.0, tallest / LEGEND_FONT))
    axes.set_title(plain_text(textwrap.fill(title, TITLE_WIDTH, max_lines=TITLE_LINES,
                                            placeholder=" ...")), fontsize=10, loc="left")
    sources = ["feature exports (EPSG:4326)"] if features.context or (
        features.answer is not None and not features.looked_up) else []
    sources += [f"lookup by key in {features.looked_up}"] if features.looked_up else []
    source = " and ".join([*sources, *(["GeoTIFFs"] if rasters else [])])
    axes.set_xlabel(f"drawn in {view.crs} from the run's {source}; context: Natural Earth"
                    if planar_units is None else
                    f"planar coordinates in {planar_units} units, drawn as exported (no lon/lat, "
                    "so no map context); from the run's GeoJSON exports", fontsize=7)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", bbox_inches="tight")
    return buffer.getvalue()


def _fitted(view: MapView) -> MapView:
    """``view`` widened or heightened to the map's 4:3 frame, so a narrow extent gets context.

    >>> _fitted(MapView("EPSG:32618", 1.0, (0.0, 0.0, 10.0, 30.0))).limits
    (-15.0, 0.0, 25.0, 30.0)
    """
    west, south, east, north = view.limits
    width, height = east - west, north - south
    if width < FRAME_ASPECT * height:
        pad = (FRAME_ASPECT * height - width) / 2
        return replace(view, limits=(west - pad, south, east + pad, north))
    pad = (width / FRAME_ASPECT - height) / 2
    return replace(view, limits=(west, south - pad, east, north + pad))


def _frame_view(axes: Axes, view: MapView, planar_units: str | None) -> None:
    """Limits, equal aspect, no ticks, and the scale bar (none for unknown planar units)."""
    from mpl_toolkits.axes_grid1.anchored_artists import AnchoredSizeBar

    west, south, east, north = view.limits
    axes.set_xlim(west, east)
    axes.set_ylim(south, north)
    axes.set_aspect("equal")
    axes.set_xticks([])
    axes.set_yticks([])
    axes.set_ylabel("")
    length = nice_scale_length((east - west) / view.units_per_metre / 4)
    label = (scale_label(length) if planar_units is None
             else planar_scale_label(length, planar_units) if planar_units in SCALED_PLANAR_UNITS
             else None)
    if label is not None:
        axes.add_artist(AnchoredSizeBar(axes.transData, length * view.units_per_metre, label,
                                        loc="lower right", frameon=True,
                                        size_vertical=(north - south) / 150))


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
    looked_up: str | None = None
    """The table the answer's drawn geometry was looked up in by key, if it was."""


def draw_answer_maps(store: RunArtifacts, step_artifacts: Sequence[Sequence[ArtifactRef]],
                     answer: FinalAnswer | None, title: str,
                     focus: MapFocus | None = None,
                     keyed: KeyedFeatures | None = None) -> AnswerMaps | None:
    """Write ``map.png`` and ``map.html`` of a run; their markdown section for the UI.

    Args:
        store: the run's :class:`geoask.records.run_artifacts.RunArtifacts` (``url``, ``folder``).
        step_artifacts: the artifact references of each step, in step order (``name``,
            ``url``, ``format``); the last step's features are the answer's fallback.
        answer: the typed answer whose features are drawn prominently (None: just the layers).
        title: the map title (the question).
        focus: the intent's reference, relation and distance
            (:func:`geoask.vocabulary.focus.map_focus`): reference features, ring, links.
        keyed: the answer's coded features looked up by key
            (:func:`geoask.maps.key_lookup.look_up_keys`): the answer's geometry when the run's
            own layers hold none of the answer's features; the legend says where it came from.

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
        if not layers and not rasters and (keyed is None or keyed.features is None):
            return None
        done = [artifacts for artifacts in step_artifacts if artifacts]
        final_count = len(feature_layers(done[-1:]))
        final = [name for name, _ in files[len(files) - final_count:]] if final_count else []
        placed = focus if units is None else None  # a planar reference has no metres to ring
        features = pick_answer(answer, layers, final, placed) if layers else AnswerFeatures(None)
        if units is None and features.answer is None and keyed is not None:
            features = _looked_up(features, answer, layers, placed, keyed)
        if features.answer is None and not layers and not rasters:
            return None
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
    return AnswerMaps(png=png_url, html=html_url, markdown=markdown,
                      looked_up=features.looked_up)


def _looked_up(features: AnswerFeatures, answer: FinalAnswer | None,
               layers: dict[str, gpd.GeoDataFrame], focus: MapFocus | None,
               keyed: KeyedFeatures) -> AnswerFeatures:
    """The answer's features from the lookup by key, when the run exported none of them.

    Drawn as the answer (not as a fetched layer), the legend saying where they came from;
    ``features`` unchanged when the lookup has no geometry or none matches.
    """
    if keyed.features is None:
        return features
    found = pick_answer(answer, {**layers, keyed.table: keyed.features}, (), focus)
    if found.answer is None:
        return features
    return replace(found, how=keyed.how, context=layers, looked_up=keyed.table)


def _read_bytes(url: str) -> bytes:
    filesystem, path = filesystem_for(url)
    with filesystem.open(path, "rb") as handle:
        return bytes(handle.read())


def _union(bounds: Iterable[Bounds]) -> Bounds:
    boxes = list(bounds)
    return (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes),
            max(b[3] for b in boxes))
