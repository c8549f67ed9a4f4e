"""How each layer of the PNG answer map is drawn (geopandas/matplotlib), with its legend entry.

One function per kind of layer of :func:`geoask.maps.answer_features.layer_styles`: the
Natural Earth context underneath (:mod:`geoask.maps.context_layer`), fetched layers muted (a
point layer of thousands as hexagonal-bin density), the distance ring dashed, the answer in
strong colour or graduated (:mod:`geoask.maps.graduated`), the reference as a star or a bold
outline, nearest links dotted; then the labels. Zones over a raster are semi-transparent, so
the raster shows through.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import geopandas as gpd
import numpy as np

from geoask.maps.answer_features import MAX_DRAWN, LayerStyle
from geoask.maps.answer_values import MAX_LABELS, VALUE_COLUMN
from geoask.maps.context_layer import ADMIN0, COASTLINE, CONTEXT_SOURCE, context_features
from geoask.maps.graduated import Graduation
from geoask.maps.views import Bounds, plain_text

if TYPE_CHECKING:
    from matplotlib.axes import Axes

LAND: Final = "#f3f0e8"
SEA: Final = "#e6eef5"
BORDER: Final = "#c4bcab"
COAST: Final = "#7f9bb3"
DENSITY_GREYS: Final = (0.35, 0.95)
"""Part of matplotlib's ``Greys`` a density is drawn with: mid to dark grey, never white."""


def draw_context_layer(axes: Axes, bounds: Bounds, crs: str) -> list[Any]:
    """Natural Earth countries (land, borders) and coastline under the map; its legend entry."""
    from matplotlib.patches import Patch

    frame = context_features(bounds).to_crs(crs)
    axes.set_facecolor(SEA)
    admin0, coast = frame[frame["kind"] == ADMIN0], frame[frame["kind"] == COASTLINE]
    if len(admin0):
        admin0.plot(ax=axes, facecolor=LAND, edgecolor=BORDER, linewidth=0.6, zorder=0)
    if len(coast):
        coast.plot(ax=axes, color=COAST, linewidth=0.8, zorder=0.5)
    return [Patch(facecolor=LAND, edgecolor=BORDER, label=f"countries, coast: {CONTEXT_SOURCE}")]


def draw_layer(axes: Axes, frame: gpd.GeoDataFrame, style: LayerStyle,
               graduated: Graduation | None, over_raster: bool,
               limits: tuple[float, float, float, float]) -> list[Any]:
    """Draw one projected layer as its role says; its legend entries.

    A fetched point layer with more than :data:`MAX_DRAWN` points inside ``limits`` (the view,
    map units) is drawn as a density of hexagonal bins over the view.
    """
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    kind = str(frame.geom_type.iloc[0])
    base = (30 if "Point" in kind else 20 if "Line" in kind else 10) + style.zorder
    if style.role == "answer" and "Point" in kind:
        base = 55  # answer points over the reference's outline and links
    if style.role == "ring":
        frame.plot(ax=axes, facecolor=style.colour, alpha=style.alpha, zorder=base)
        frame.boundary.plot(ax=axes, color=style.colour, linestyle="--", linewidth=1.4,
                            zorder=base)
        return [Line2D([], [], color=style.colour, linestyle="--", label=style.label)]
    if style.role == "link":
        frame.plot(ax=axes, color=style.colour, linestyle=":", linewidth=1.6, zorder=45)
        return [Line2D([], [], color=style.colour, linestyle=":", label=style.label)]
    if style.role == "reference":
        return _draw_reference(axes, frame, style, kind)
    if style.role == "answer" and graduated is not None:
        return _draw_graduated(axes, frame, style, graduated, kind, over_raster, base)
    west, south, east, north = limits
    visible = frame.cx[west:east, south:north]
    if style.role == "context" and "Point" in kind and len(visible) > MAX_DRAWN:
        from matplotlib import colormaps
        from matplotlib.colors import ListedColormap

        greys = ListedColormap(colormaps["Greys"](np.linspace(*DENSITY_GREYS, 256)))
        centres = visible.geometry.representative_point()
        axes.hexbin(centres.x, centres.y, gridsize=60, mincnt=1, cmap=greys, alpha=0.6,
                    zorder=base, linewidths=0, extent=(west, east, south, north))
        label = f"{style.label[:-1]}; {len(visible):,} in view drawn as density)"
        return [Patch(facecolor="#8a8a8a", alpha=0.6, label=label)]
    if "Point" in kind:
        frame.plot(ax=axes, color=style.colour, markersize=36 if style.answer else 9,
                   edgecolor="black" if style.answer else "none", zorder=base)
        return [Line2D([], [], marker="o", linestyle="", color=style.colour, label=style.label)]
    if "Line" in kind:
        frame.plot(ax=axes, color=style.colour, zorder=base,
                   linewidth=2.4 if style.answer else 1.0)
        return [Line2D([], [], color=style.colour, linewidth=1.6, label=style.label)]
    alpha = min(style.alpha, 0.35) if over_raster else style.alpha
    frame.plot(ax=axes, facecolor=style.colour, alpha=alpha, zorder=base)
    frame.boundary.plot(ax=axes, color=style.colour if over_raster else "black", zorder=base,
                        linewidth=(1.8 if style.answer else 0.8) if over_raster else
                        (0.9 if style.answer else 0.3))
    return [Patch(facecolor=style.colour, edgecolor="black", alpha=alpha, label=style.label)]


def _draw_reference(axes: Axes, frame: gpd.GeoDataFrame, style: LayerStyle,
                    kind: str) -> list[Any]:
    from matplotlib.lines import Line2D

    if "Point" in kind:
        frame.plot(ax=axes, marker="*", markersize=260, color=style.colour, edgecolor="white",
                   linewidth=0.8, zorder=50)
        handle = Line2D([], [], marker="*", markersize=12, linestyle="", color=style.colour,
                        label=style.label)
    else:
        (frame if "Line" in kind else frame.boundary).plot(
            ax=axes, color=style.colour, linewidth=3.0, zorder=48)
        handle = Line2D([], [], color=style.colour, linewidth=3.0, label=style.label)
    point = frame.geometry.union_all().representative_point()  # one label, however many parts
    axes.annotate(plain_text(style.label.split(" (")[0].removeprefix("reference: ")),
                  (point.x, point.y), xytext=(8, -12), textcoords="offset points",
                  fontsize=8, fontweight="bold", color=style.colour, zorder=62)
    return [handle]


def _draw_graduated(axes: Axes, frame: gpd.GeoDataFrame, style: LayerStyle,
                    graduated: Graduation, kind: str, over_raster: bool,
                    base: int) -> list[Any]:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    values = [None if v is None or v != v else float(v) for v in frame[VALUE_COLUMN]]
    colours = [graduated.colour(v) for v in values]
    header = Patch(facecolor="none", edgecolor="none", label=f"{style.label}, by value:")
    if "Point" in kind:  # largest first, so no symbol hides a smaller one
        order = sorted(range(len(values)), key=lambda i: -(values[i] or 0.0))
        sizes = [(2 * graduated.radius(values[i])) ** 2 for i in order]
        frame.iloc[order].plot(ax=axes, color=[colours[i] for i in order], markersize=sizes,
                               edgecolor="black", linewidth=0.6, zorder=base)
        return [header, *(Line2D([], [], marker="o", linestyle="", color=c.colour,
                       markeredgecolor="black", markersize=2 * c.radius, label=c.label)
                          for c in graduated.classes)]
    alpha = 0.6 if over_raster else 0.85
    if "Line" in kind:
        frame.plot(ax=axes, color=colours, linewidth=2.6, zorder=base)
    else:
        frame.plot(ax=axes, color=colours, alpha=alpha, edgecolor="black", linewidth=0.6,
                   zorder=base)
    return [header, *(Patch(facecolor=c.colour, edgecolor="black", alpha=alpha, label=c.label)
                      for c in graduated.classes)]


def draw_labels(axes: Axes, frame: gpd.GeoDataFrame, column: str) -> None:
    """Label up to :data:`MAX_LABELS` features with ``column`` (boxed, readable on any fill)."""
    if len(frame) > MAX_LABELS:
        return
    for point, text in zip(frame.geometry.representative_point(), frame[column], strict=True):
        axes.annotate(plain_text(str(text)), (point.x, point.y), xytext=(5, 5), fontsize=7.5,
                      textcoords="offset points", zorder=60,
                      bbox={"boxstyle": "round,pad=0.15", "facecolor": "white", "alpha": 0.75,
                            "edgecolor": "none"})
