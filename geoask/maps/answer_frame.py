"""The answer of a finished run as one GeoDataFrame: its features with its values.

:func:`answer_frame` reads a run's layers from its registry entries and picks the answer's
features as the maps do (:func:`geoask.maps.answer_features.pick_answer`, which joins the
answer's rows on: a ranked list's ``rank`` and ``value``, a record's fields), ranked first. The
frame is in WGS 84 (EPSG:4326) as exported; planar SRID 0 data stay in their own coordinates
with no CRS (never a guessed one).
"""

from __future__ import annotations

from collections.abc import Sequence

import geopandas as gpd

from geoask.maps.answer_features import feature_layers, pick_answer, read_layers
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
    if "rank" in frame.columns:
        frame = frame.sort_values("rank", kind="stable").reset_index(drop=True)
    return frame
