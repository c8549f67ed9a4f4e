"""The interactive answer map: one self-contained HTML page (Leaflet inlined, no network).

:func:`interactive_map_html` writes the layers :func:`geoask.maps.answer_features.pick_answer`
chose into a page that needs nothing else when opened, from ``file://`` too: Leaflet 1.9.4's
JS and CSS are inlined from ``geoask/vendor/leaflet/`` (see its ``PROVENANCE.md``), there is
no tile layer: the Natural Earth 1:110m countries and coastline around the view are embedded
instead (:mod:`geoask.maps.context_layer`). The data is embedded as GeoJSON (EPSG:4326,
coordinates rounded to :data:`COORDINATE_DECIMALS` decimals, about 1 m; a fetched layer of more
than :data:`geoask.maps.answer_features.MAX_DRAWN` features as a seeded random sample, its
legend saying so), drawn by Leaflet in Web Mercator (EPSG:3857), in the design of the PNG map
(:mod:`geoask.maps.answer_map`): context muted, the ring dashed, the answer on top (graduated:
fill by class, circle radius by value), the reference bold, nearest links dotted; answer and
reference features carry permanent labels (class ``geoask-label``), every feature a popup of
its properties. A layer control toggles every layer; the title sits in a header above the
map and the legend in a side panel beside it, so neither covers the map or the other. SVG
paths are of class ``geoask-<role>`` (``answer``, ``context``, ``reference``, ``ring``,
``link``; the countries ``geoask-basemap``) and ``window.geoaskMap`` lists the layers drawn
(role, features, features drawn) and the legend rows, which the browser tests read. The run's
rasters lie underneath as PNG image overlays (class ``geoask-raster``), warped to EPSG:3857 and
coloured as in the PNG map (:mod:`geoask.maps.raster_map`), so they sit exactly where Leaflet
draws them.

Every database- or model-written text reaches Leaflet as text, never as HTML: the page's one
``asText`` escape for Leaflet's HTML-taking tooltips and layer control, text nodes elsewhere.
"""

from __future__ import annotations

import base64
import html
import io
import json
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any, Final

import geopandas as gpd
import numpy as np
import shapely

from geoask.maps.answer_features import MAX_DRAWN, AnswerFeatures, LayerStyle, layer_styles
from geoask.maps.answer_values import MAX_LABELS, VALUE_COLUMN
from geoask.maps.context_layer import CONTEXT_SOURCE, context_features
from geoask.maps.graduated import Graduation, answer_graduation
from geoask.maps.raster_map import raster_backdrop

LEAFLET_DIR: Final = Path(__file__).resolve().parents[1] / "vendor" / "leaflet"
COORDINATE_DECIMALS: Final = 5
BACKGROUND: Final = "#f4f1ea"
CRS_NOTE: Final = ("Data in EPSG:4326 (WGS 84), drawn in EPSG:3857; no background tiles; "
                   f"context: {CONTEXT_SOURCE}.")
CONTEXT_LABEL: Final = "countries and coastline (Natural Earth 1:110m)"
LABEL: Final = "geoask:label"
FILL: Final = "geoask:fill"
RADIUS: Final = "geoask:radius"
"""Per-feature drawing properties of the page (never shown in popups)."""

_SCRIPT = """
const layers = JSON.parse(document.getElementById('geoask-layers').textContent);
const rasters = JSON.parse(document.getElementById('geoask-rasters').textContent);
const basemap = JSON.parse(document.getElementById('geoask-context').textContent);
const map = L.map('map', {preferCanvas: false, attributionControl: false});
const state = {layers: [], legend: [], headline: HEADLINE};
window.geoaskMap = state;
function asText(text) {
  // Leaflet's tooltips and layer control insert strings as HTML: data/model text goes through here
  const escapes = {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'};
  return String(text).replace(/[&<>"']/g, (c) => escapes[c]);
}
function popup(properties) {
  const table = document.createElement('table');
  for (const [key, value] of Object.entries(properties || {})) {
    if (key.startsWith('geoask:')) { continue; }
    const row = table.insertRow();
    row.insertCell().textContent = key;
    row.insertCell().textContent = value === null ? '' : String(value);
  }
  return table;
}
const overlays = {};
if (basemap) {
  map.createPane('context');
  map.getPane('context').style.zIndex = 250;
  const drawn = L.geoJSON(basemap, {pane: 'context', interactive: false,
    style: (f) => f.properties.kind === 'coastline'
      ? {color: '#7f9bb3', weight: 1.2, fill: false, className: 'geoask-basemap'}
      : {color: '#c4bcab', weight: 0.8, fillColor: '#f3f0e8', fillOpacity: 1,
         className: 'geoask-basemap'}}).addTo(map);
  overlays[asText(CONTEXT_LABEL)] = drawn;
  state.legend.push({label: CONTEXT_LABEL, colour: '#f3f0e8', role: 'basemap'});
}
for (const raster of rasters) {
  const drawn = L.imageOverlay(raster.url, raster.bounds,
    {opacity: 0.85, className: 'geoask-raster'}).addTo(map);
  overlays[asText(raster.label)] = drawn;
  state.legend.push({label: raster.label, colour: '#c8b48c', role: 'raster'});
}
for (const layer of layers) {
  const strong = layer.role !== 'context';
  const base = {color: layer.role === 'answer' ? '#000' : layer.colour, fillColor: layer.colour,
                weight: strong ? 2 : 1, opacity: strong ? 1 : 0.6, fillOpacity: layer.alpha,
                dashArray: layer.role === 'ring' ? '6 5' : (layer.role === 'link' ? '2 5' : null),
                className: 'geoask-' + layer.role};
  const style = (f) => Object.assign({}, base, f && f.properties['geoask:fill']
    ? {fillColor: f.properties['geoask:fill'], fillOpacity: 0.85} : {},
    layer.role === 'reference' ? {fill: false, weight: 4} : {});
  const drawn = L.geoJSON(layer.data, {
    style: style,
    pointToLayer: (f, latlng) => L.circleMarker(latlng, Object.assign(style(f), {
      radius: f.properties['geoask:radius'] || (layer.role === 'reference' ? 9
              : (layer.role === 'answer' ? 7 : 3)),
      fill: true, fillOpacity: layer.role === 'context' ? layer.alpha : 0.9,
      color: layer.role === 'context' ? layer.colour : '#000'})),
    onEachFeature: (f, shape) => {
      shape.bindPopup(() => popup(f.properties));
      const text = f.properties['geoask:label'];
      if (text) {
        shape.bindTooltip(asText(text), {permanent: true, direction: 'right', offset: [8, 0],
                                 className: 'geoask-label geoask-label-' + layer.role});
      }
    },
  }).addTo(map);
  if (strong) { drawn.bringToFront(); }
  overlays[asText(layer.label)] = drawn;
  state.layers.push({label: layer.label, role: layer.role, count: layer.count,
                     drawn: layer.data.features.length});
  state.legend.push({label: layer.label, colour: layer.colour, role: layer.role});
}
for (const row of CLASSES) { state.legend.push(Object.assign({role: 'class'}, row)); }
const fit = L.latLngBounds([[BOUNDS[1], BOUNDS[0]], [BOUNDS[3], BOUNDS[2]]]);
map.fitBounds(fit.pad(0.15), {maxZoom: 14});
L.control.scale({metric: true, imperial: false}).addTo(map);
L.control.layers(null, overlays, {collapsed: false, position: 'topright'}).addTo(map);
const legend = document.getElementById('legend');
if (HEADLINE) { legend.appendChild(Object.assign(document.createElement('div'),
  {className: 'headline', textContent: HEADLINE})); }
for (const row of state.legend) {
  const line = document.createElement('div');
  line.className = 'row row-' + row.role;
  const swatch = document.createElement('span');
  swatch.className = 'swatch' + (row.radius ? ' circle' : '');
  swatch.style.background = row.colour;
  if (row.radius) { swatch.style.width = swatch.style.height = (2 * row.radius) + 'px'; }
  line.append(swatch, document.createTextNode(row.label));
  legend.appendChild(line);
}
legend.appendChild(Object.assign(document.createElement('div'),
  {className: 'note', textContent: CRS_NOTE}));
"""

_STYLE = f"""
html, body {{ height: 100%; margin: 0; font: 13px sans-serif; }}
body {{ display: flex; flex-direction: column; }}
header {{ flex: none; padding: 6px 12px; background: #fff; border-bottom: 1px solid #ccc; }}
h1 {{ margin: 0; font: 600 15px sans-serif; }}
main {{ flex: 1; display: flex; min-height: 0; }}
#map {{ flex: 1; background: {BACKGROUND}; }}
#legend {{ flex: none; width: 300px; overflow-y: auto; padding: 8px 10px;
           border-left: 1px solid #ccc; background: #fff; font: 12px sans-serif; }}
#legend .headline {{ font-weight: 600; margin-bottom: 6px; }}
#legend .row {{ margin: 3px 0; }}
#legend .row-class {{ margin-left: 14px; }}
#legend .swatch {{ display: inline-block; width: 12px; height: 12px; margin-right: 6px;
                   border: 1px solid #333; vertical-align: middle; }}
#legend .swatch.circle {{ border-radius: 50%; }}
#legend .note {{ margin-top: 8px; color: #555; }}
.geoask-label {{ font: 11px sans-serif; padding: 1px 4px; }}
.geoask-label-reference {{ font-weight: 700; color: #1f3b99; }}
.leaflet-popup-content td {{ padding: 0 6px 0 0; font: 12px sans-serif; }}
"""


@cache
def leaflet_assets() -> tuple[str, str]:
    """Leaflet's minified ``(js, css)`` text, from the vendored copy.

    Raises:
        FileNotFoundError: the vendored files are missing (a broken install).

    """
    return ((LEAFLET_DIR / "leaflet.js").read_text(encoding="utf-8"),
            (LEAFLET_DIR / "leaflet.css").read_text(encoding="utf-8"))


def interactive_map_html(features: AnswerFeatures, title: str,
                         rasters: Sequence[bytes] = (), basemap: bool = True) -> str:
    """The self-contained HTML page of ``features`` over ``rasters`` (GeoTIFF files).

    With ``basemap`` the Natural Earth countries and coastline around the view are drawn
    underneath (:mod:`geoask.maps.context_layer`).

    Raises:
        ValueError: there is no layer to draw.

    """
    bounds = features.bounds()
    graduated = answer_graduation(features)
    layers = [_layer(frame, style, features, graduated)
              for frame, style in layer_styles(features, MAX_DRAWN)]
    context = json.loads(_rounded(context_features(bounds, grow=2.0)).to_json(
        drop_id=True)) if basemap else None
    classes = [{"label": c.label, "colour": c.colour,
                "radius": c.radius if graduated and graduated.kind == "symbols" else 0}
               for c in (graduated.classes if graduated else ())]
    js, css = leaflet_assets()
    constants = (f"const BOUNDS = {json.dumps(list(bounds))};\n"
                 f"const CRS_NOTE = {_script_safe(json.dumps(CRS_NOTE))};\n"
                 f"const CONTEXT_LABEL = {json.dumps(CONTEXT_LABEL)};\n"
                 f"const HEADLINE = {_script_safe(json.dumps(features.headline))};\n"
                 f"const CLASSES = {_script_safe(json.dumps(classes))};\n")
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title>",
        f"<style>{css}</style>", f"<style>{_STYLE}</style>", "</head><body>",
        f"<header><h1>{html.escape(title)}</h1></header>",
        '<main><div id="map"></div><aside id="legend" class="geoask-legend"></aside></main>',
        f'<script type="application/json" id="geoask-layers">{_script_safe(json.dumps(layers))}'
        "</script>",
        '<script type="application/json" id="geoask-rasters">'
        f"{_script_safe(json.dumps([raster_overlay(data) for data in rasters]))}</script>",
        '<script type="application/json" id="geoask-context">'
        f"{_script_safe(json.dumps(context))}</script>",
        f"<script>{js}</script>", f"<script>{constants}{_SCRIPT}</script>",
        "</body></html>"])


def _layer(frame: gpd.GeoDataFrame, style: LayerStyle, features: AnswerFeatures,
           graduated: Graduation | None) -> dict[str, Any]:
    """One layer for the page: its style, and its features with label, fill and radius."""
    frame = frame.copy()
    if style.role == "answer" and features.label_column and len(frame) <= MAX_LABELS:
        frame[LABEL] = frame[features.label_column].astype(str)
    if style.role == "reference":  # one label, however many parts
        frame[LABEL] = [features.reference_name] + [None] * (len(frame) - 1)
    if style.role == "answer" and graduated is not None and VALUE_COLUMN in frame:
        values = [None if v is None or v != v else float(v) for v in frame[VALUE_COLUMN]]
        frame[FILL] = [graduated.colour(v) for v in values]
        if graduated.kind == "symbols":
            frame[RADIUS] = [graduated.radius(v) for v in values]
    return {"label": style.label, "colour": style.colour, "alpha": style.alpha,
            "answer": style.answer, "role": style.role,
            "count": style.features or len(frame),
            "data": json.loads(_rounded(frame).to_json(drop_id=True, default=str))}


def _rounded(frame: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
    return frame.set_geometry(shapely.transform(
        frame.geometry.values, lambda xy: np.round(xy, COORDINATE_DECIMALS)))


def raster_overlay(data: bytes) -> dict[str, object]:
    """A GeoTIFF as a Leaflet image overlay: PNG data URL, ``[[south, west], [north, east]]``.

    The raster is warped to EPSG:3857 (Leaflet's CRS), so the overlay's corners, given in
    degrees, place every pixel where it belongs.
    """
    from matplotlib.image import imsave
    from pyproj import Transformer

    backdrop = raster_backdrop(data, "EPSG:3857")
    left, right, bottom, top = backdrop.extent
    to_degrees = Transformer.from_crs(3857, 4326, always_xy=True)
    west, south = to_degrees.transform(left, bottom)
    east, north = to_degrees.transform(right, top)
    buffer = io.BytesIO()
    imsave(buffer, backdrop.rgba, format="png")
    url = "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")
    return {"url": url, "bounds": [[south, west], [north, east]], "label": backdrop.label}


def _script_safe(text: str) -> str:
    r"""JSON text that cannot end its ``<script>`` element early (``<`` as ``\u003c``).

    >>> _script_safe('{"a": "</script>"}')
    '{"a": "\\u003c/script>"}'
    """
    return text.replace("<", "\\u003c")
