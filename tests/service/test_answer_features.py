"""Which exported features are the answer: ids, records keys, direct geometry, the final step."""

from __future__ import annotations

import geopandas as gpd
import pytest
from shapely.geometry import Point, box

from geoask.maps.answer_features import answer_values, feature_layers, pick_answer
from geoask.vocabulary.answers import FinalAnswer
from geoask.vocabulary.artifacts import ArtifactRef


def layer(**columns) -> gpd.GeoDataFrame:
    n = len(next(iter(columns.values())))
    return gpd.GeoDataFrame(columns, geometry=[Point(i, i) for i in range(n)], crs=4326)


LAYERS = {
    "counties": layer(fips=[17031, 17043, 17089, 17097], name=["Cook", "DuPage", "Kane", "Lake"],
                      state=["IL", "IL", "IL", "IL"]),
    "neighbours": layer(fips=[17043.0, 17097.0], name=["DuPage", "Lake"]),
}


def answer(answer_type: str, payload: dict) -> FinalAnswer:
    return FinalAnswer(answer_type=answer_type, data_payload=payload, summary="")


@pytest.mark.parametrize(("given", "layer_name", "names"), [
    # integer ids match in both layers (a float column in the later one): the later wins
    (answer("entity_list", {"entities": [{"id": 17043}, {"id": "17097"}]}), "neighbours",
     ["DuPage", "Lake"]),
    (answer("ranked_list", {"items": [{"rank": 1, "id": "17089", "value": 3.0}]}), "counties",
     ["Kane"]),
    # records: the field matching the most distinct values wins (name over state)
    (answer("records", {"records": [{"name": "cook", "state": "IL", "n": 0.5},
                                    {"name": "Kane", "state": "IL", "n": 1.5}]}), "counties",
     ["Cook", "Kane"]),
])
def test_answer_ids_pick_their_features(given, layer_name, names):
    picked = pick_answer(given, LAYERS)
    assert picked.answer is not None
    assert list(picked.answer["name"]) == names
    assert picked.how.endswith(f"of {layer_name}")
    assert list(picked.context) == ["counties", "neighbours"]


def test_bbox_and_geometry_answers_are_their_own_geometry():
    bbox = pick_answer(answer("bbox", {"bbox": [-88.0, 41.0, -87.0, 42.0]}), LAYERS)
    assert bbox.answer is not None and bbox.answer.geometry.iloc[0].equals(
        box(-88.0, 41.0, -87.0, 42.0))
    assert bbox.bounds() == (-88.0, 41.0, -87.0, 42.0)
    point = pick_answer(answer("geometry", {"geometry": {"type": "Point",
                                                         "coordinates": [5.0, 6.0]}}), LAYERS)
    assert point.answer is not None and point.bounds() == (5.0, 6.0, 5.0, 6.0)


def test_without_matching_ids_the_final_steps_output_is_the_answer():
    scalar = answer("scalar", {"value": 2, "unit": "count"})
    assert pick_answer(scalar, LAYERS, ["neighbours"]).how == "the final step's output"
    assert len(pick_answer(scalar, LAYERS, ["neighbours"]).answer) == 2
    nothing = pick_answer(scalar, LAYERS, [])
    assert nothing.answer is None and nothing.bounds() == (0.0, 0.0, 3.0, 3.0)  # all layers
    unmatched = answer("entity_list", {"entities": [{"id": "nowhere"}]})
    assert pick_answer(unmatched, LAYERS).answer is None


def test_answer_values_keeps_only_key_like_fields():
    records = answer("records", {"records": [{"fips": 1, "share": 0.25, "ok": True},
                                             {"fips": 2, "share": 0.5, "ok": False}]})
    assert answer_values(records) == {"fips": [1, 2]}
    assert answer_values(answer("scalar", {"value": 1})) == {}


def test_feature_layers_keep_step_order_and_unique_names():
    refs = [[ArtifactRef(name="result", url="/r/sql-1/result.geojson", format="geojson"),
             ArtifactRef(name="rows", url="/r/sql-1/rows.json", format="json")],
            [ArtifactRef(name="result", url="/r/python-1/result.geojson",
                         format="application/geo+json")],
            [ArtifactRef(name="cells", url="/r/sql-2/cells.parquet", format="geoparquet"),
             ArtifactRef(name="grid", url="/r/sql-2/grid.tif", format="geotiff")]]
    assert feature_layers(refs) == [("result", "/r/sql-1/result.geojson"),
                                    ("result-2", "/r/python-1/result.geojson"),
                                    ("cells", "/r/sql-2/cells.parquet")]
