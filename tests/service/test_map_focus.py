"""The map's focus: the intent's reference carried to the map, rings, links, counts, classes."""

from __future__ import annotations

import io
import json
from pathlib import Path

import geopandas as gpd
import pytest
from PIL import Image
from pyproj import Geod
from shapely.geometry import LineString, Point, box

from geoask.maps import answer_map
from geoask.maps.answer_features import layer_styles, pick_answer
from geoask.maps.answer_values import LABEL_COLUMN, VALUE_COLUMN, headline
from geoask.maps.context_layer import CONTEXT_FILE, context_features, natural_earth
from geoask.maps.focus_layers import MAX_REFERENCE
from geoask.maps.graduated import graduation
from geoask.vocabulary.answers import FinalAnswer
from geoask.vocabulary.focus import MapFocus, map_focus, reference_keys
from geoask.vocabulary.plan import (
    Distance,
    Intent,
    OperationIntent,
    PlaceResolution,
    SpatialPredicate,
    SpatialTopology,
    SpatiotemporalScope,
)


def answer(answer_type: str, payload: dict) -> FinalAnswer:
    return FinalAnswer(answer_type=answer_type, data_payload=payload, summary="")


def airports() -> gpd.GeoDataFrame:
    codes = ["JFK", "LGA", "EWR", "HPN", "ISP"]
    points = [Point(-73.7789, 40.6398), Point(-73.8726, 40.7772), Point(-74.1687, 40.6925),
              Point(-73.7076, 41.0670), Point(-73.1002, 40.7952)]
    return gpd.GeoDataFrame({"iata": codes, "state": ["NY"] * 5}, geometry=points, crs=4326)


def test_map_focus_carries_the_intents_reference_relation_and_distance():
    intent = Intent(target="airports", operation=OperationIntent.FILTER,
                    scope=SpatiotemporalScope(places=[PlaceResolution(
                        mentioned="Raleigh", level="city", resolved_to="Wake")]),
                    topology=SpatialTopology(predicate=SpatialPredicate.WITHIN_DISTANCE,
                                             distance=Distance(value=50, unit="km"),
                                             reference="Raleigh-Durham International (RDU)"))
    focus = map_focus(intent)
    assert focus.reference == ("RDU", "Raleigh-Durham International (RDU)",
                               "Raleigh-Durham International", "Wake", "Raleigh")
    assert focus.ring and focus.distance_m == 50_000.0 and focus.distance_label == "50 km"
    assert map_focus(None) == MapFocus() and not MapFocus().ring
    assert reference_keys(None) == []


def test_the_reference_models_intent_names_the_reference_of_its_case():
    from geoask.cases.loader import load_cases
    from geoask.models.reference.intent import case_intent

    cases = {c.case.id: c.case for c in load_cases(
        Path(__file__).parents[2] / "benchmark" / "cases",
        only=["airports-006", "airports-024", "airports-001"])}
    nearest = case_intent(cases["airports-006"]).topology
    assert (nearest.predicate, nearest.reference) == (SpatialPredicate.NEAREST, "JFK")
    within = case_intent(cases["airports-024"]).topology  # measured with pyproj.Geod
    assert (within.predicate, within.reference) == (SpatialPredicate.WITHIN_DISTANCE, "RDU")
    assert within.distance is not None and within.distance.metres == 50_000.0
    assert case_intent(cases["airports-001"]).topology == SpatialTopology()


def test_a_distance_ring_is_geodesic_around_a_point_reference():
    focus = MapFocus(("JFK",), SpatialPredicate.WITHIN_DISTANCE, 20_000.0, "20 km")
    picked = pick_answer(answer("entity_list", {"entities": [{"id": "LGA"}]}),
                         {"airports": airports()}, (), focus)
    assert picked.reference is not None and list(picked.reference["iata"]) == ["JFK"]
    assert picked.ring is not None and picked.ring["ring"].iloc[0] == "20 km from JFK"
    ring = picked.ring.geometry.iloc[0].exterior
    geod = Geod(ellps="WGS84")
    distances = [geod.inv(-73.7789, 40.6398, x, y)[2] for x, y in ring.coords]
    assert min(distances) == pytest.approx(20_000, rel=2e-3)
    assert max(distances) == pytest.approx(20_000, rel=2e-3)
    west, _, east, _ = picked.bounds()  # zoomed to answer, reference and ring
    assert west < -73.7789 - 0.2 and east > -73.7789 + 0.2


def test_a_count_shows_the_features_counted_in_the_ring_less_the_reference():
    focus = MapFocus(("JFK",), SpatialPredicate.WITHIN_DISTANCE, 35_000.0, "35 km")
    picked = pick_answer(answer("scalar", {"value": 2, "unit": "count"}),
                         {"airports": airports()}, (), focus)
    assert picked.answer is not None and sorted(picked.answer["iata"]) == ["EWR", "LGA"]
    assert picked.how == "counted: features within 35 km from JFK, as drawn"
    assert picked.headline == "answer: 2 count"
    styles = [style.role for _, style in layer_styles(picked)]
    assert styles == ["context", "ring", "answer", "reference"]


def test_nearest_links_and_an_object_answer_without_its_reference():
    focus = MapFocus(("JFK",), SpatialPredicate.NEAREST)
    picked = pick_answer(answer("object", {"from": "JFK", "iata": "LGA", "distance_km": 17.2,
                                           "unit": "km"}), {"airports": airports()}, (), focus)
    assert picked.answer is not None and list(picked.answer["iata"]) == ["LGA"]
    assert list(picked.answer[LABEL_COLUMN]) == ["LGA 17.2 km"]
    assert picked.links is not None and len(picked.links) == 1
    assert picked.links.geometry.iloc[0].coords[0] == pytest.approx((-73.7789, 40.6398))


def test_a_layer_named_like_the_reference_is_the_reference_when_no_column_names_it():
    segments = gpd.GeoDataFrame({"road_id": [7, 8]}, geometry=[
        LineString([(-72.92, 41.29), (-72.91, 41.30)]),
        LineString([(-72.91, 41.30), (-72.90, 41.30)])], crs=4326)
    incidents = gpd.GeoDataFrame({"incident_id": [1, 2]}, geometry=[
        Point(-72.9151, 41.2951), Point(-72.95, 41.25)], crs=4326)
    focus = MapFocus(("I- 95",), SpatialPredicate.WITHIN_DISTANCE, 20.0, "20 m")
    picked = pick_answer(answer("scalar", {"value": 1, "unit": "count"}),
                         {"i95": segments, "incidents": incidents}, (), focus)
    assert picked.reference is not None and list(picked.reference["road_id"]) == [7, 8]
    assert picked.answer is not None and list(picked.answer["incident_id"]) == [1]
    assert pick_answer(None, {"roads": segments}, (), focus).reference is None


def test_a_reference_value_naming_a_whole_class_is_not_a_reference():
    many = gpd.GeoDataFrame({"state": ["NY"] * (MAX_REFERENCE + 1)},
                            geometry=[Point(i, 0) for i in range(MAX_REFERENCE + 1)], crs=4326)
    picked = pick_answer(None, {"airports": many}, (), MapFocus(("NY",)))
    assert picked.reference is None


def test_ranked_values_and_labels_and_their_graduation():
    zones = gpd.GeoDataFrame({"code": ["A", "B", "C"], "name": ["Alpha", "Beta", "Gamma"]},
                             geometry=[box(i, 0, i + 1, 1) for i in range(3)], crs=4326)
    ranked = answer("ranked_list", {"unit": "m", "items": [
        {"rank": 1, "id": "C", "name": "Gamma", "value": 300.0},
        {"rank": 2, "id": "A", "name": "Alpha", "value": 200.0}]})
    picked = pick_answer(ranked, {"zones": zones})
    assert picked.answer is not None
    assert list(picked.answer[VALUE_COLUMN]) == [200.0, 300.0]
    assert list(picked.answer[LABEL_COLUMN]) == ["2. Alpha 200 m", "1. Gamma 300 m"]
    assert picked.values is not None and picked.values.unit == "m"
    many = graduation([float(v) for v in range(1, 21)], "m", points=False)
    assert len(many.classes) == 5 and many.classes[0].label == "1 to 4.8 m"
    assert many.colour(1.0) != many.colour(20.0)
    with pytest.raises(ValueError, match="two or more values"):
        graduation([1.0], "", points=True)
    assert headline(answer("entity_list", {"entities": []})) is None


def test_the_shipped_context_layer_is_small_and_complete():
    assert CONTEXT_FILE.stat().st_size < 1_000_000
    world = natural_earth()
    assert world.crs.to_epsg() == 4326
    assert (world["kind"] == "admin0").sum() == 177 and (world["kind"] == "coastline").sum() == 1
    around = context_features((5.9, 49.4, 6.6, 50.2))
    assert set(around["name"]) >= {"Luxembourg", "France", "Germany", "Belgium"}
    west, _, east, _ = around.total_bounds
    assert west >= 4.9 - 1e-9 and east <= 7.6 + 1e-9  # clipped around the view


def test_planar_maps_get_no_context_layer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from geoask.records.run_artifacts import RunArtifacts
    from geoask.vocabulary.artifacts import ArtifactRef

    drawn: list[str] = []
    monkeypatch.setattr(answer_map, "draw_context_layer",
                        lambda *args: drawn.append("context") or [])
    store = RunArtifacts(str(tmp_path), "run-p")
    parcels = {"type": "FeatureCollection", "crs": {"type": "name", "properties": {
        "name": "planar", "units": "metre"}}, "features": [{"type": "Feature", "properties": {
            "id": 1}, "geometry": {"type": "LineString", "coordinates": [[0, 0], [500, 300]]}}]}
    url = store.write_text("sql-1/parcels.geojson", json.dumps(parcels))
    maps = answer_map.draw_answer_maps(store, [[ArtifactRef(name="parcels", url=url,
                                                            format="geojson")]], None, "Parcels",
                                       MapFocus(("1",), SpatialPredicate.WITHIN_DISTANCE, 10.0,
                                                "10 m"))
    assert maps is not None and maps.html is None and drawn == []
    lonlat = gpd.GeoDataFrame({"name": ["x"]}, geometry=[LineString([(0, 0), (1, 1)])],
                              crs=4326)
    png = answer_map.render_answer_map(pick_answer(None, {"x": lonlat}), "lines")
    assert drawn == ["context"] and Image.open(io.BytesIO(png)).format == "PNG"
