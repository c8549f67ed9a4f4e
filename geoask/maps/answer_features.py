"""Which of a run's exported features are the answer: one choice for every answer map.

A run exports GeoJSON files (RFC 7946, EPSG:4326), GeoParquet for large results (also
EPSG:4326; both read by :data:`LAYER_READERS`) - usually more than the answer: "airports
within 50 km of RDU" fetches every airport, a Python step then filters. :func:`pick_answer`
splits a run's layers into the **answer** (drawn prominently, the map zoomed to it) and the
**context** (everything fetched, drawn muted), from the typed answer
(:class:`geoask.vocabulary.answers.FinalAnswer`) alone, in this order:

1. ``bbox`` / ``geometry`` answers: their own geometry;
2. ``entity_list`` / ``ranked_list`` ids, or ``records`` key values (string/integer fields):
   the features of the layer column that matches the most distinct answer values (ties: the
   fewer features, then the later layer - the final step's);
3. otherwise the final step's own feature output (GeoJSON, GeoParquet), when it exported one;
4. otherwise no answer features (the layers are drawn as they are).

Both the PNG map (:mod:`geoask.maps.answer_map`) and the interactive one
(:mod:`geoask.maps.interactive_map`) draw what this module picks, styled by :func:`layer_styles`.
"""

from __future__ import annotations

import io
import json
import numbers
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any, Final

import fsspec
import geopandas as gpd
import pandas as pd
import pyarrow.parquet as pq
from shapely.geometry import box, shape

from geoask.base.formats import GEOJSON, GEOPARQUET, ExportFormat, format_of, format_of_file
from geoask.sql.crs import PLANAR
from geoask.vocabulary.answers import AnswerType, FinalAnswer

if TYPE_CHECKING:
    from geoask.vocabulary.artifacts import ArtifactRef

ANSWER_COLOUR: Final = "#d62728"
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

    """

    answer: gpd.GeoDataFrame | None
    context: dict[str, gpd.GeoDataFrame] = field(default_factory=dict)
    how: str = ""
    label_column: str | None = None
    extent: Bounds | None = None

    def bounds(self) -> Bounds:
        """``(west, south, east, north)`` in degrees of the answer, else of all layers.

        Without any layer, ``extent`` (a raster backdrop's, :mod:`geoask.maps.raster_map`).

        Raises:
            ValueError: there is nothing to draw.

        """
        frames = [self.answer] if self.answer is not None else list(self.context.values())
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

    ``entity_list`` / ``ranked_list``: ``{"id": [...]}``; ``records``: every field whose
    values are strings or integers; other answer types: ``{}``.

    >>> answer_values(FinalAnswer(answer_type="entity_list", summary="",
    ...     data_payload={"entities": [{"id": "RDU"}, {"id": 7}]}))
    {'id': ['RDU', 7]}
    """
    payload = answer.data_payload if isinstance(answer.data_payload, dict) else {}
    rows: list[Any]
    if answer.answer_type is AnswerType.ENTITY_LIST:
        rows = payload.get("entities") or []
    elif answer.answer_type is AnswerType.RANKED_LIST:
        rows = payload.get("items") or []
    elif answer.answer_type is AnswerType.RECORDS:
        rows = payload.get("records") or []
    else:
        return {}
    fields = ["id"] if answer.answer_type is not AnswerType.RECORDS else list(
        dict.fromkeys(k for row in rows if isinstance(row, dict) for k in row))
    values: dict[str, list[Any]] = {}
    for name in fields:
        column = [row.get(name) for row in rows if isinstance(row, dict)]
        if column and all(_key(v) is not None for v in column):
            values[name] = column
    return values


def pick_answer(answer: FinalAnswer | None, layers: dict[str, gpd.GeoDataFrame],
                final_layers: Sequence[str] = ()) -> AnswerFeatures:
    """Split ``layers`` into the answer's features and context (see the module docstring).

    Args:
        answer: the run's typed answer (None: a run without one - nothing is picked).
        layers: the run's exported layers by name, EPSG:4326, in export order.
        final_layers: names of the layers the final step exported (fallback 3).

    """
    if answer is None:
        return AnswerFeatures(None, layers, "")
    direct = _answer_geometry(answer)
    if direct is not None:
        return AnswerFeatures(direct, layers, f"the answer's {answer.answer_type.value}")
    best: tuple[tuple[int, int, int], gpd.GeoDataFrame, str, str] | None = None
    for field_name, values in answer_values(answer).items():
        wanted = {_key(v) for v in values}
        for order, (name, frame) in enumerate(layers.items()):
            for column in frame.columns:
                if column == frame.geometry.name:
                    continue
                keys = frame[column].map(_key)
                selected = keys.isin(wanted)
                matched = len(set(keys[selected]))
                if not matched:
                    continue
                score = (matched, -int(selected.sum()), order)
                if best is None or score > best[0]:
                    best = (score, frame[selected], f"answer {field_name} values matched "
                                                    f"{column!r} of {name}", str(column))
    if best is not None:
        return AnswerFeatures(best[1], layers, best[2], best[3])
    final = [layers[name] for name in final_layers if name in layers]
    if final:
        combined = gpd.GeoDataFrame(pd.concat(final, ignore_index=True), crs=final[0].crs)
        return AnswerFeatures(combined, layers, "the final step's output")
    return AnswerFeatures(None, layers, "")


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


def _key(value: Any) -> str | None:
    """A value as a comparable key: integers and integral floats as digits, text casefolded.

    >>> _key(" RDU "), _key(37063), _key(37063.0), _key(0.5), _key(True)
    ('rdu', '37063', '37063', None, None)
    """
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        number = float(value)
        return str(int(number)) if number.is_integer() else None
    if isinstance(value, str) and value.strip():
        return value.strip().casefold()
    return None


@dataclass(frozen=True)
class LayerStyle:
    """How one layer is drawn (both maps): colour, opacity, order and legend label."""

    colour: str
    alpha: float
    zorder: int
    label: str
    answer: bool = False


def layer_styles(features: AnswerFeatures) -> list[tuple[gpd.GeoDataFrame, LayerStyle]]:
    """The layers to draw, bottom first: the context (muted when there is an answer), answer.

    Without answer features each context layer gets its own colour of :data:`LAYER_COLOURS`.
    """
    muted = features.answer is not None
    drawn: list[tuple[gpd.GeoDataFrame, LayerStyle]] = []
    for index, (name, frame) in enumerate(features.context.items()):
        palette = CONTEXT_COLOURS if muted else LAYER_COLOURS
        label = f"{name}{': fetched' if muted else ''} ({_count(len(frame))})"
        drawn.append((frame, LayerStyle(palette[index % len(palette)], 0.35 if muted else 0.55,
                                        index, label)))
    if features.answer is not None:
        drawn.append((features.answer, LayerStyle(
            ANSWER_COLOUR, 0.75, len(drawn) + 1,
            f"answer ({_count(len(features.answer))}; {features.how})", answer=True)))
    return drawn


def _count(n: int) -> str:
    return f"{n} feature{'' if n == 1 else 's'}"
