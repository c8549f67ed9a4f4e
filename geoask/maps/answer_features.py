"""Which of a run's exported features are the answer: one choice for every answer map.

A run exports GeoJSON files (RFC 7946, EPSG:4326), GeoParquet for large results (also
EPSG:4326; both read by :data:`LAYER_READERS`) - usually more than the answer: "airports
within 50 km of RDU" fetches every airport, a Python step then filters. :func:`pick_answer`
splits a run's layers into the **answer** (drawn prominently, the map zoomed to it) and the
**context** (everything fetched, drawn muted), from the typed answer
(:class:`geoask.vocabulary.answers.FinalAnswer`) alone, in this order:

1. ``bbox`` / ``geometry`` answers: their own geometry;
2. ``entity_list`` / ``ranked_list`` ids, or ``records``/``object`` key values (string/integer
   fields): the features of the layer column that matches the most distinct answer values
   (ties: the fewer features, then the later layer - the final step's), with their values and
   labels (:mod:`geoask.maps.answer_values`);
3. otherwise the final step's own feature output (GeoJSON, GeoParquet), when it exported one;
4. otherwise no answer features (the layers are drawn as they are).

The intent's focus (:mod:`geoask.maps.focus_layers`) adds the reference features, the distance
ring, nearest links, and a count's counted features.

Both the PNG map (:mod:`geoask.maps.answer_map`) and the interactive one
(:mod:`geoask.maps.interactive_map`) draw what this module picks, styled by :func:`layer_styles`.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import IO, TYPE_CHECKING, Any, Final, Literal

import fsspec
import geopandas as gpd
import pandas as pd
import pyarrow.parquet as pq
from shapely.geometry import box, shape

from geoask.base.formats import GEOJSON, GEOPARQUET, ExportFormat, format_of, format_of_file
from geoask.maps.answer_values import (
    LABEL_COLUMN,
    ValueField,
    annotate,
    headline,
    payload_rows,
    value_key,
)
from geoask.maps.focus_layers import (
    counted_features,
    distance_ring,
    find_reference,
    nearest_links,
    without_reference,
)
from geoask.sql.crs import PLANAR
from geoask.vocabulary.answers import AnswerType, FinalAnswer
from geoask.vocabulary.focus import MapFocus

if TYPE_CHECKING:
    from geoask.vocabulary.artifacts import ArtifactRef

ANSWER_COLOUR: Final = "#d62728"
REFERENCE_COLOUR: Final = "#1f3b99"
RING_COLOUR: Final = "#1f3b99"
MAX_DRAWN: Final = 2000
"""Features of one fetched layer drawn as they are; more are drawn as a sample (HTML) or, points
in the PNG's view, as a density; the legend says how many of how many."""
CONTEXT_COLOURS: Final = ("#9a9a9a", "#b8b8b8", "#7f7f7f", "#c9c9c9")
LAYER_COLOURS: Final = ("#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")
Bounds = tuple[float, float, float, float]


def _read_geoparquet(handle: IO[bytes]) -> gpd.GeoDataFrame | None:
    """A GeoParquet file's features; None for a Parquet without ``geo`` metadata (a table)."""
    if b"geo" not in (pq.read_schema(handle).metadata or {}):
        return None
    handle.seek(0)
    return gpd.read_parquet(handle)


LAYER_READERS: dict[ExportFormat, Callable[[IO[bytes]], gpd.GeoDataFrame | None]] = {
    GEOJSON: gpd.read_file, GEOPARQUET: _read_geoparquet}
"""The export formats drawn as map layers, with how each file is read."""


@dataclass(frozen=True)
class AnswerFeatures:
    """A run's layers split into the answer and its context, all in EPSG:4326.

    Attributes:
        answer: the answer's features (properties kept), or None when none could be picked.
        context: every exported layer by name, in export order (the answer's layer included).
        how: one line saying how the answer features were found (legend, map note).
        label_column: the answer's column that matched the answer's ids (map labels), if any.
        extent: ``(west, south, east, north)`` of the run's rasters, in degrees, if any.
        reference: the reference features the question names (:mod:`geoask.maps.focus_layers`).
        reference_name: the code or name that found them.
        ring: the distance ring around the reference, with its label, if any.
        links: shortest lines from the reference to the answer (``nearest``), if any.
        values: the payload field the answer is graduated by (two or more values), if any.
        headline: the one line of a scalar or object answer (legend), if any.
        looked_up: the table the answer's geometry was looked up in by key, if it was.

    """

    answer: gpd.GeoDataFrame | None
    context: dict[str, gpd.GeoDataFrame] = field(default_factory=dict)
    how: str = ""
    label_column: str | None = None
    extent: Bounds | None = None
    reference: gpd.GeoDataFrame | None = None
    reference_name: str = ""
    ring: gpd.GeoDataFrame | None = None
    links: gpd.GeoDataFrame | None = None
    values: ValueField | None = None
    headline: str | None = None
    looked_up: str | None = None

    def bounds(self) -> Bounds:
        """``(west, south, east, north)`` in degrees of the answer and reference, else all layers.

        The answer, the reference and the ring when there is an answer or a reference; else
        every layer; without any layer, ``extent`` (a raster backdrop's,
        :mod:`geoask.maps.raster_map`).

        Raises:
            ValueError: there is nothing to draw.

        """
        focus = [f for f in (self.answer, self.reference, self.ring) if f is not None]
        frames = focus or list(self.context.values())
        if not frames and self.extent is not None:
            return self.extent
        if not frames:
            raise ValueError("an answer map needs at least one layer with geometry")
        combined = gpd.GeoSeries([g for f in frames for g in f.geometry], crs=4326)
        west, south, east, north = (float(v) for v in combined.total_bounds)
        return west, south, east, north


def feature_layers(step_artifacts: Sequence[Sequence[ArtifactRef]]) -> list[tuple[str, str]]:
    """``(layer name, url)`` of the feature files (:data:`LAYER_READERS`) of a run's steps.

    In step order.

    A name used by an earlier step gets ``-2``, ``-3``... so every layer keeps its own name.
    """
    files: list[tuple[str, str]] = []
    names: set[str] = set()
    for artifacts in step_artifacts:
        for artifact in artifacts:
            found = format_of(artifact.format)
            if found is None or found not in LAYER_READERS:
                continue
            name, number = artifact.name, 1
            while name in names:
                number += 1
                name = f"{artifact.name}-{number}"
            names.add(name)
            files.append((name, artifact.url))
    return files


def read_layers(files: Iterable[tuple[str, str]]) -> dict[str, gpd.GeoDataFrame]:
    """The non-empty feature files (any fsspec URL) as GeoDataFrames, by name.

    Each file is read by its format's reader (:data:`LAYER_READERS`, told by the suffix); a
    Parquet file without ``geo`` metadata holds no layer. Layers are in EPSG:4326, except a
    GeoJSON of planar coordinates (its top-level ``crs`` member names ``planar``: SRID 0 data
    the catalog declares planar, :mod:`geoask.sql.crs`), which has no CRS (``crs`` None) and
    its units in ``frame.attrs["planar_units"]`` (:func:`planar_units`).

    Raises:
        ValueError: a file's suffix names no format drawn as a layer.

    """
    layers: dict[str, gpd.GeoDataFrame] = {}
    for name, url in files:
        found = format_of_file(url)
        if found is None or found not in LAYER_READERS:
            raise ValueError(f"{url} is no map layer (layers: "
                             f"{', '.join(f.suffix for f in LAYER_READERS)})")
        with fsspec.open(url, "rb") as handle:
            data = handle.read()
        frame = LAYER_READERS[found](io.BytesIO(data))
        if frame is None:
            continue
        frame = frame[frame.geometry.notna() & ~frame.geometry.is_empty]
        if not len(frame):
            continue
        units = _declared_planar_units(json.loads(data)) if found is GEOJSON else None
        if units is None:
            layers[name] = frame.set_crs(4326, allow_override=True)
        else:
            layers[name] = frame.set_crs(None, allow_override=True)
            layers[name].attrs["planar_units"] = units
    return layers


def planar_units(frame: gpd.GeoDataFrame) -> str | None:
    """The declared units of a planar layer (``metre``, ``foot``, ``unknown``); None if lon/lat."""
    units = frame.attrs.get("planar_units")
    return str(units) if units is not None else None


def _declared_planar_units(collection: Any) -> str | None:
    member = collection.get("crs") if isinstance(collection, dict) else None
    properties = member.get("properties") if isinstance(member, dict) else None
    if not isinstance(properties, dict) or properties.get("name") != PLANAR:
        return None
    return str(properties.get("units") or "unknown")


def answer_values(answer: FinalAnswer) -> dict[str, list[Any]]:
    """The values that name the answer's entities, per payload field.

    ``entity_list`` / ``ranked_list``: ``{"id": [...]}``; ``records`` and ``object`` (one row):
    every field whose values are strings or integers; other answer types: ``{}``.

    >>> answer_values(FinalAnswer(answer_type="entity_list", summary="",
    ...     data_payload={"entities": [{"id": "RDU"}, {"id": 7}]}))
    {'id': ['RDU', 7]}
    """
    rows = payload_rows(answer)
    if answer.answer_type in (AnswerType.ENTITY_LIST, AnswerType.RANKED_LIST):
        fields = ["id"]
    elif answer.answer_type in (AnswerType.RECORDS, AnswerType.OBJECT):
        fields = list(dict.fromkeys(k for row in rows for k in row))
    else:
        return {}
    values: dict[str, list[Any]] = {}
    for name in fields:
        column = [row.get(name) for row in rows]
        if column and all(value_key(v) is not None for v in column):
            values[name] = column
    return values


def pick_answer(answer: FinalAnswer | None, layers: dict[str, gpd.GeoDataFrame],
                final_layers: Sequence[str] = (), focus: MapFocus | None = None,
                ) -> AnswerFeatures:
    """Split ``layers`` into the answer's features and context (see the module docstring).

    Args:
        answer: the run's typed answer (None: a run without one - nothing is picked).
        layers: the run's exported layers by name, EPSG:4326, in export order.
        final_layers: names of the layers the final step exported (fallback 3).
        focus: the intent's reference, relation and distance: the reference features, ring,
            nearest links and a count's counted features are added
            (:mod:`geoask.maps.focus_layers`).

    """
    reference = find_reference(focus, layers) if focus is not None else None
    picked = _picked(answer, layers, final_layers,
                     {value_key(reference.name)} if reference is not None else set())
    if focus is None or reference is None:
        return picked
    ring = distance_ring(reference, focus)
    found = without_reference(picked.answer, reference)
    how = picked.how
    counted = counted_features(layers, reference, ring, focus) if answer is not None and \
        answer.answer_type is AnswerType.SCALAR else None
    if counted is not None:  # what a count counted, rather than all the final step fetched
        where = f"within {ring['ring'].iloc[0]}" if ring is not None else \
            f"{focus.predicate.value} {reference.name}"
        found, how = counted, f"counted: features {where}, as drawn"
    return replace(picked, answer=found, how=how, reference=reference.features,
                   reference_name=reference.name, ring=ring,
                   links=nearest_links(reference, found, focus))


def _picked(answer: FinalAnswer | None, layers: dict[str, gpd.GeoDataFrame],
            final_layers: Sequence[str], reference: set[str | None]) -> AnswerFeatures:
    """The answer's features; values naming the ``reference`` (keys) are not the answer's."""
    if answer is None:
        return AnswerFeatures(None, layers, "")
    direct = _answer_geometry(answer)
    said = headline(answer)
    if direct is not None:
        return AnswerFeatures(direct, layers, f"the answer's {answer.answer_type.value}",
                              headline=said)
    best: tuple[tuple[int, int, int], gpd.GeoDataFrame, str, str, str] | None = None
    for field_name, values in answer_values(answer).items():
        wanted = {value_key(v) for v in values} - reference
        for order, (name, frame) in enumerate(layers.items()):
            for column in frame.columns:
                if column == frame.geometry.name:
                    continue
                keys = frame[column].map(value_key)
                selected = keys.isin(wanted)
                matched = len(set(keys[selected]))
                if not matched:
                    continue
                score = (matched, -int(selected.sum()), order)
                if best is None or score > best[0]:
                    best = (score, frame[selected], f"answer {field_name} values matched "
                                                    f"{column!r} of {name}", str(column),
                            field_name)
    if best is not None:
        _, frame, how, column, field_name = best
        annotated, value_field = annotate(frame, column, answer, field_name)
        return AnswerFeatures(annotated, layers, how, LABEL_COLUMN, values=value_field,
                              headline=said)
    final = [layers[name] for name in final_layers if name in layers]
    if final:
        combined = gpd.GeoDataFrame(pd.concat(final, ignore_index=True), crs=final[0].crs)
        return AnswerFeatures(combined, layers, "the final step's output", headline=said)
    return AnswerFeatures(None, layers, "", headline=said)


def _answer_geometry(answer: FinalAnswer) -> gpd.GeoDataFrame | None:
    payload = answer.data_payload if isinstance(answer.data_payload, dict) else {}
    if answer.answer_type is AnswerType.BBOX and payload.get("bbox"):
        west, south, east, north = (float(v) for v in payload["bbox"])
        return gpd.GeoDataFrame({"answer": ["bbox"]}, geometry=[box(west, south, east, north)],
                                crs=4326)
    if answer.answer_type is AnswerType.GEOMETRY and payload.get("geometry"):
        properties = {k: [str(v)] for k, v in (payload.get("properties") or {}).items()}
        return gpd.GeoDataFrame(properties or {"answer": ["geometry"]},
                                geometry=[shape(payload["geometry"])], crs=4326)
    return None


Role = Literal["context", "answer", "reference", "ring", "link"]


@dataclass(frozen=True)
class LayerStyle:
    """How one layer is drawn (both maps): colour, opacity, order, legend label and role.

    ``features`` counts the layer's features before any sampling.
    """

    colour: str
    alpha: float
    zorder: int
    label: str
    answer: bool = False
    role: Role = "context"
    features: int = 0


def layer_styles(features: AnswerFeatures, max_features: int | None = None,
                 ) -> list[tuple[gpd.GeoDataFrame, LayerStyle]]:
    """The layers to draw, bottom first: context (muted), ring, reference, answer, links.

    Without answer or reference features each context layer gets its own colour of
    :data:`LAYER_COLOURS`. With ``max_features`` a larger context layer is drawn as a random
    sample of that many (seeded: the same sample every time), its label saying so.
    """
    muted = features.answer is not None or features.reference is not None
    drawn: list[tuple[gpd.GeoDataFrame, LayerStyle]] = []
    near = features.bounds() if features.context else None
    for index, (name, frame) in enumerate(features.context.items()):
        palette = CONTEXT_COLOURS if muted else LAYER_COLOURS
        shown, note = _drawn(frame, max_features, near)
        label = f"{name}{': fetched' if muted else ''} ({_count(len(frame))}{note})"
        drawn.append((shown, LayerStyle(palette[index % len(palette)], 0.35 if muted else 0.55,
                                        index, label, features=len(frame))))
    top = len(drawn) + 1
    if features.ring is not None:
        drawn.append((features.ring, LayerStyle(RING_COLOUR, 0.06, top, "ring: "
                                                + str(features.ring["ring"].iloc[0]),
                                                role="ring")))
    if features.answer is not None:
        drawn.append((features.answer, LayerStyle(
            ANSWER_COLOUR, 0.75, top + 1,
            f"answer ({_count(len(features.answer))}; {features.how})", answer=True,
            role="answer")))
    if features.reference is not None:
        drawn.append((features.reference, LayerStyle(
            REFERENCE_COLOUR, 0.6, top + 2,
            f"reference: {features.reference_name} ({_count(len(features.reference))})",
            role="reference")))
    if features.links is not None:
        drawn.append((features.links, LayerStyle(
            REFERENCE_COLOUR, 0.9, top + 3,
            f"nearest: shortest line from {features.reference_name}", role="link")))
    return drawn


def _drawn(frame: gpd.GeoDataFrame, limit: int | None,
           near: Bounds | None) -> tuple[gpd.GeoDataFrame, str]:
    """At most ``limit`` features: those ``near`` the view (grown) first, then a seeded sample."""
    if limit is None or len(frame) <= limit or near is None:
        return frame, ""
    west, south, east, north = near
    pad_x, pad_y = max(east - west, 0.05), max(north - south, 0.05)
    close = frame.cx[west - pad_x:east + pad_x, south - pad_y:north + pad_y]
    if len(close) >= limit:
        return close.sample(limit, random_state=0).sort_index(), \
            f"; {limit:,} drawn, a random sample of the {len(close):,} near the answer"
    rest = frame.drop(close.index)
    shown = pd.concat([close, rest.sample(limit - len(close), random_state=0)]).sort_index()
    return shown, f"; {limit:,} drawn: the {len(close):,} near the answer, a random sample " \
        "of the rest"


def _count(n: int) -> str:
    return f"{n:,} feature{'' if n == 1 else 's'}"
