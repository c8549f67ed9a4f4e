"""A run's layers in one GeoPackage, native CRS kept; the answer's features with its values."""

from __future__ import annotations

import json

import pyogrio
import pytest

from geoask.maps.answer_frame import answer_frame
from geoask.maps.geopackage import write_geopackage
from geoask.records.artifact_registry import ArtifactKind, RegistryEntry
from geoask.vocabulary.answers import FinalAnswer

POINTS = {"type": "FeatureCollection", "features": [
    {"type": "Feature", "properties": {"iata": "JFK"},
     "geometry": {"type": "Point", "coordinates": [-73.7789, 40.6398]}},
    {"type": "Feature", "properties": {"iata": "LGA"},
     "geometry": {"type": "Point", "coordinates": [-73.8726, 40.7772]}}]}
PLANAR = {"type": "FeatureCollection", "crs": {"type": "name", "properties": {
    "name": "planar", "units": "metre"}}, "features": [
    {"type": "Feature", "properties": {"cell": 7},
     "geometry": {"type": "Point", "coordinates": [500.0, 1200.0]}}]}


def entry(tmp_path, ref, kind, data, suffix, **extra) -> RegistryEntry:
    path = tmp_path / f"{ref}{suffix}"
    path.write_text(json.dumps(data))
    step, name = ref.split(".")
    fmt = "geojson" if suffix == ".geojson" else "json"
    return RegistryEntry(ref=ref, name=name, kind=kind, url=str(path), format=fmt, step=step,
                         made_by="sql", run_id="r", **extra)


@pytest.fixture
def entries(tmp_path):
    return [
        entry(tmp_path, "sql-1.airports", ArtifactKind.FEATURES, POINTS, ".geojson",
              srid=4326, native_crs="EPSG:2263"),
        entry(tmp_path, "sql-2.cells", ArtifactKind.FEATURES, PLANAR, ".geojson",
              native_crs="planar"),
        entry(tmp_path, "sql-3.counts", ArtifactKind.RECORDS, [{"state": "NY", "n": 2}], ".json"),
        entry(tmp_path, "python-1.result", ArtifactKind.SCALAR, {"n": 2}, ".json"),
    ]


def test_every_layer_is_written_in_its_native_crs_and_planar_data_get_none(tmp_path, entries):
    written = write_geopackage(entries, str(tmp_path / "run.gpkg"))
    assert written.layers == ["sql-1_airports", "sql-2_cells", "sql-3_counts"]
    assert written.left_out == ["python-1.result"]
    airports = pyogrio.read_dataframe(written.url, layer="sql-1_airports")
    assert airports.crs.to_epsg() == 2263  # NY State Plane, in US survey feet
    assert airports.geometry.x.min() > 900_000  # feet, not degrees
    assert airports.to_crs(4326).geometry.x.round(4).tolist() == [-73.7789, -73.8726]
    cells = pyogrio.read_dataframe(written.url, layer="sql-2_cells")
    assert cells.crs is None and cells.geometry.x.tolist() == [500.0]  # never a guessed CRS
    counts = pyogrio.read_dataframe(written.url, layer="sql-3_counts")
    assert counts.to_dict("records") == [{"state": "NY", "n": 2}]


def test_the_answer_frame_carries_the_answer_values_in_wgs84(entries):
    answer = FinalAnswer(answer_type="ranked_list", summary="", data_payload={
        "items": [{"rank": 1, "id": "LGA", "value": 17.2}, {"rank": 2, "id": "JFK", "value": 0}],
        "unit": "km"})
    frame = answer_frame(answer, entries)
    assert frame.crs.to_epsg() == 4326
    assert frame[["iata", "rank", "value"]].to_dict("records") == [
        {"iata": "LGA", "rank": 1, "value": 17.2}, {"iata": "JFK", "rank": 2, "value": 0}]
    assert answer_frame(None, entries) is None
