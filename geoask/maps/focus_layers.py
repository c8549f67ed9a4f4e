"""The reference features of an answer map, its distance ring, nearest links and counted features.

From the intent's :class:`geoask.vocabulary.focus.MapFocus` (never the question's text):

- **reference**: the features of the run's layers whose code or name equals one of the focus's
  reference values (casefolded; the most specific value that matches wins; a value matching
  more than :data:`MAX_REFERENCE` features names a class, not a feature, and is skipped); else
  a whole layer named like the value (letters and digits, casefolded: the statement ``i95``
  that fetched the segments of ``I- 95`` without their name);
- **ring**: for a ``within_distance`` / ``beyond_distance`` question, the reference buffered by
  the distance in an azimuthal equidistant projection centred on the reference (exactly
  geodesic from a point reference; close to it near a line or zone a few hundred km across);
- **links**: for a ``nearest`` question, the shortest line from the reference to each answer
  feature (the label says the distance the answer gives);
- **counted**: a count answer has no ids: the features inside the ring (or inside the reference
  zone of a ``within``/``contains``/``intersects`` question), the reference's own excluded, of
  the other layers (else of the reference's layer: "other airports within 50 km of ORD") are
  what it counted, as the map draws them.

Every frame is in EPSG:4326.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import geopandas as gpd
import pandas as pd
import shapely

from geoask.vocabulary.focus import MapFocus
from geoask.vocabulary.plan import SpatialPredicate

MAX_REFERENCE: Final = 25
MAX_LINKS: Final = 25


@dataclass(frozen=True)
class Reference:
    """The reference features found in the run's layers, and what named them."""

    features: gpd.GeoDataFrame
    name: str
    layer: str


def find_reference(focus: MapFocus, layers: dict[str, gpd.GeoDataFrame]) -> Reference | None:
    """The reference features of ``focus`` in ``layers`` (see the module docstring)."""
    for value in focus.reference:
        wanted = value.strip().casefold()
        for name, frame in layers.items():
            for column in frame.columns:
                if column == frame.geometry.name or frame[column].dtype.kind not in "OUS":
                    continue
                texts = frame[column].map(lambda v: v.strip().casefold()
                                          if isinstance(v, str) else None)
                selected = texts == wanted
                if 0 < int(selected.sum()) <= MAX_REFERENCE:
                    return Reference(frame[selected], value, name)
        for name, frame in layers.items():  # a statement that fetched just the reference
            if _alphanumeric(name) == _alphanumeric(value) and len(frame) <= MAX_REFERENCE:
                return Reference(frame, value, name)
    return None


def _alphanumeric(text: str) -> str:
    """``text`` casefolded, letters and digits only: a layer name as a reference value.

    >>> _alphanumeric("I- 95") == _alphanumeric("i95")
    True
    """
    return "".join(c for c in text.casefold() if c.isalnum())


def distance_ring(reference: Reference, focus: MapFocus) -> gpd.GeoDataFrame | None:
    """The ring of a distance question around ``reference`` (None without one)."""
    if not focus.ring or focus.distance_m is None:
        return None
    merged = shapely.union_all(reference.features.geometry.values)
    centre = merged.centroid
    local = (f"+proj=aeqd +lat_0={centre.y} +lon_0={centre.x} +datum=WGS84 +units=m +no_defs")
    projected = gpd.GeoSeries([merged], crs=4326).to_crs(local)
    ring = projected.buffer(focus.distance_m, quad_segs=32).to_crs(4326)
    label = f"{focus.distance_label} from {reference.name}"
    return gpd.GeoDataFrame({"ring": [label]}, geometry=list(ring), crs=4326)


def nearest_links(reference: Reference, answer: gpd.GeoDataFrame | None,
                  focus: MapFocus) -> gpd.GeoDataFrame | None:
    """Shortest lines from the reference to each answer feature of a ``nearest`` question."""
    if focus.predicate is not SpatialPredicate.NEAREST or answer is None or not len(answer) \
            or len(answer) > MAX_LINKS:
        return None
    merged = shapely.union_all(reference.features.geometry.values)
    lines = [shapely.shortest_line(merged, geometry) for geometry in answer.geometry]
    return gpd.GeoDataFrame({"link": [f"from {reference.name}"] * len(lines)}, geometry=lines,
                            crs=4326)


def without_reference(answer: gpd.GeoDataFrame | None,
                      reference: Reference | None) -> gpd.GeoDataFrame | None:
    """``answer`` less the reference's own features (an object answer may name both)."""
    if answer is None or reference is None:
        return answer
    own = set(reference.features.geometry.to_wkb())
    kept = answer[~answer.geometry.to_wkb().isin(own)]
    return kept if len(kept) else answer


def counted_features(layers: dict[str, gpd.GeoDataFrame], reference: Reference,
                     ring: gpd.GeoDataFrame | None,
                     focus: MapFocus) -> gpd.GeoDataFrame | None:
    """The features of the other layers inside the ring or the reference zone (a count's)."""
    zone = ring.geometry.iloc[0] if ring is not None else (
        shapely.union_all(reference.features.geometry.values) if focus.zone else None)
    if zone is None or zone.geom_type not in ("Polygon", "MultiPolygon"):
        return None
    own = set(reference.features.geometry.to_wkb())
    inside = {name: frame[frame.intersects(zone) & ~frame.geometry.to_wkb().isin(own)]
              for name, frame in layers.items()}
    others = [frame for name, frame in inside.items() if name != reference.layer and len(frame)]
    chosen = others or [frame for frame in inside.values() if len(frame)]
    if not chosen:
        return None
    return gpd.GeoDataFrame(pd.concat(chosen, ignore_index=True), crs=4326)
