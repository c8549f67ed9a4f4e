"""The interactive answer map: one self-contained HTML page (Leaflet inlined, no network).

:func:`interactive_map_html` writes the layers :func:`geoask.maps.answer_features.pick_answer`
chose into a page that needs nothing else when opened, from ``file://`` too: Leaflet 1.9.4's
JS and CSS are inlined from ``geoask/vendor/leaflet/`` (see its ``PROVENANCE.md``), there is
no tile layer (a plain background), the data is embedded as GeoJSON (EPSG:4326, coordinates
rounded to :data:`COORDINATE_DECIMALS` decimals, about 1 m), drawn by Leaflet in Web Mercator
(EPSG:3857). The context layers are muted, the answer layer on top; every feature has a popup
of its properties; the view fits the answer (else all layers); a legend, a metric scale bar
and a CRS note are shown. Answer features are SVG paths of class ``geoask-answer`` (context:
``geoask-context``), which the browser test counts. The run's rasters lie underneath as PNG
image overlays (class ``geoask-raster``), warped to EPSG:3857 and coloured as in the PNG map
(:mod:`geoask.maps.raster_map`), so they sit exactly where Leaflet draws them.
"""

from __future__ import annotations

import base64
import html
import io
import json
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Final

import numpy as np
import shapely

from geoask.maps.answer_features import AnswerFeatures, layer_styles
from geoask.maps.raster_map import raster_backdrop

LEAFLET_DIR: Final = Path(__file__).resolve().parents[1] / "vendor" / "leaflet"
COORDINATE_DECIMALS: Final = 5
BACKGROUND: Final = "#f4f1ea"
CRS_NOTE: Final = "Data in EPSG:4326 (WGS 84), drawn in EPSG:3857; no background tiles."

_SCRIPT = """
const layers = JSON.parse(document.getElementById('geoask-layers').textContent);
const rasters = JSON.parse(document.getElementById('geoask-rasters').textContent);
const map = L.map('map', {preferCanvas: false, attributionControl: false});
function popup(properties) {
  const table = document.createElement('table');
  for (const [key, value] of Object.entries(properties || {})) {
    const row = table.insertRow();
    row.insertCell().textContent = key;
    row.insertCell().textContent = value === null ? '' : String(value);
  }
  return table;
}
const legend = [];
for (const raster of rasters) {
  L.imageOverlay(raster.url, raster.bounds, {opacity: 0.85, className: 'geoask-raster'})
    .addTo(map);
  legend.push(['#c8b48c', raster.label]);
}
for (const layer of layers) {
  const style = {color: layer.answer ? '#000' : layer.colour, fillColor: layer.colour,
                 weight: layer.answer ? 2 : 1, opacity: layer.answer ? 1 : 0.6,
                 fillOpacity: layer.alpha, className: layer.answer ? 'geoask-answer'
                 : 'geoask-context'};
  const drawn = L.geoJSON(layer.data, {
    style: () => style,
    pointToLayer: (feature, latlng) => L.circleMarker(latlng,
      Object.assign({}, style, {radius: layer.answer ? 7 : 3, color: layer.answer ? '#000'
                                : layer.colour})),
    onEachFeature: (feature, shape) => shape.bindPopup(() => popup(feature.properties)),
  }).addTo(map);
  if (layer.answer) { drawn.bringToFront(); }
  legend.push([layer.colour, layer.label]);
}
const fit = L.latLngBounds([[BOUNDS[1], BOUNDS[0]], [BOUNDS[3], BOUNDS[2]]]);
map.fitBounds(fit.pad(0.15), {maxZoom: 14});
L.control.scale({metric: true, imperial: false}).addTo(map);
const box = L.control({position: 'topright'});
box.onAdd = () => {
  const div = L.DomUtil.create('div', 'geoask-legend');
  for (const [colour, label] of legend) {
    const line = L.DomUtil.create('div', '', div);
    const swatch = L.DomUtil.create('span', 'swatch', line);
    swatch.style.background = colour;
    line.appendChild(document.createTextNode(label));
  }
  L.DomUtil.create('div', 'note', div).textContent = CRS_NOTE;
  return div;
};
box.addTo(map);
"""

_STYLE = f"""
html, body, #map {{ height: 100%; margin: 0; }}
#map {{ background: {BACKGROUND}; }}
h1 {{ position: absolute; z-index: 1000; left: 50px; top: 4px; margin: 0; padding: 2px 8px;
      font: 600 14px sans-serif; background: rgba(255,255,255,0.85); }}
.geoask-legend {{ background: rgba(255,255,255,0.92); padding: 6px 8px; font: 12px sans-serif;
                  max-width: 360px; }}
.geoask-legend .swatch {{ display: inline-block; width: 12px; height: 12px; margin-right: 6px;
                          border: 1px solid #333; vertical-align: middle; }}
.geoask-legend .note {{ margin-top: 4px; color: #555; }}
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
                         rasters: Sequence[bytes] = ()) -> str:
    """The self-contained HTML page of ``features`` over ``rasters`` (GeoTIFF files).

    Raises:
        ValueError: there is no layer to draw.

    """
    bounds = features.bounds()
    layers = []
    for frame, style in layer_styles(features):
        rounded = frame.set_geometry(shapely.transform(
            frame.geometry.values, lambda xy: np.round(xy, COORDINATE_DECIMALS)))
        layers.append({"label": style.label, "colour": style.colour, "alpha": style.alpha,
                       "answer": style.answer,
                       "data": json.loads(rounded.to_json(drop_id=True, default=str))})
    js, css = leaflet_assets()
    constants = (f"const BOUNDS = {json.dumps(list(bounds))};\n"
                 f"const CRS_NOTE = {json.dumps(CRS_NOTE)};\n")
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title>",
        f"<style>{css}</style>", f"<style>{_STYLE}</style>", "</head><body>",
        f"<h1>{html.escape(title)}</h1>", '<div id="map"></div>',
        f'<script type="application/json" id="geoask-layers">{_script_safe(json.dumps(layers))}'
        "</script>",
        '<script type="application/json" id="geoask-rasters">'
        f"{_script_safe(json.dumps([raster_overlay(data) for data in rasters]))}</script>",
        f"<script>{js}</script>", f"<script>{constants}{_SCRIPT}</script>",
        "</body></html>"])


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
