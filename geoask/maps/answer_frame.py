"""The answer of a finished run as one GeoDataFrame: its features with its values.

:func:`answer_frame` reads a run's layers from its registry entries, picks the answer's
features as the maps do (:func:`geoask.maps.answer_features.pick_answer`) and joins the
answer's rows on (a ranked list's ``rank`` and ``value``, a record's fields) by the column that
matched the answer's ids. The frame is in WGS 84 (EPSG:4326) as exported; planar SRID 0 data
stay in their own coordinates with no CRS (never a guessed one).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import geopandas as gpd
import pandas as pd

from geoask.base.answer_text import answer_rows
from geoask.maps.answer_features import _key, feature_layers, pick_answer, read_layers
from geoask.records.artifact_registry import RegistryEntry
from geoask.vocabulary.answers import FinalAnswer
from geoask.vocabulary.artifacts import ArtifactRef


def step_artifacts(entries: Sequence[RegistryEntry]) -> list[list[ArtifactRef]]:
    """The registry's artifacts grouped by the step that made them, in step order."""
    steps: dict[str, list[ArtifactRef]] = {}
    for entry in entries:
        steps.setdefault(entry.step, []).append(entry.to_artifact_ref())
    return list(steps.values())


def answer_frame(answer: FinalAnswer | None,
                 entries: Sequence[RegistryEntry]) -> gpd.GeoDataFrame | None:
    """The answer's features with its values joined on; None when none could be picked.

    Args:
        answer: the run's typed answer (None: nothing is picked).
        entries: the run's registry entries, in registration order.

    """
    steps = step_artifacts(entries)
    files = feature_layers(steps)
    layers = read_layers(files)
    if answer is None or not layers:
        return None
    final_count = len(feature_layers(steps[-1:]))
    final = [name for name, _ in files[len(files) - final_count:]] if final_count else []
    picked = pick_answer(answer, layers, final)
    if picked.answer is None:
        return None
    frame = picked.answer.reset_index(drop=True)
    if picked.label_column is None:
        return frame
    return _with_values(frame, picked.label_column, answer_rows(answer.data_payload))


def _with_values(frame: gpd.GeoDataFrame, column: str,
                 rows: list[dict[str, Any]]) -> gpd.GeoDataFrame:
    """``frame`` with the answer rows' other fields, matched on ``column`` = the row's id."""
    by_key = {_key(row.get("id")): row for row in rows if _key(row.get("id")) is not None}
    if not by_key:
        return frame
    keys = frame[column].map(_key)
    extra = [name for name in dict.fromkeys(k for row in rows for k in row)
             if name != "id" and name not in frame.columns]
    values = pd.DataFrame({name: keys.map(lambda k, n=name: by_key.get(k, {}).get(n))
                           for name in extra}, index=frame.index)
    joined = gpd.GeoDataFrame(pd.concat([frame, values], axis=1), geometry=frame.geometry.name,
                              crs=frame.crs)
    joined.attrs.update(frame.attrs)
    if "rank" in joined.columns:
        joined = joined.sort_values("rank", kind="stable").reset_index(drop=True)
    return joined
