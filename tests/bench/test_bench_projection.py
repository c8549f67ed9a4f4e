"""Table-driven tests of answer projection from a last step's output."""

from __future__ import annotations

import pytest

from geoask.cases.model import AnswerType, Projection
from geoask.cases.projection import ProjectionError, project_answer

ROWS = [{"iata": "ORD", "n": 3, "city": "Chicago"}, {"iata": "MDW", "n": 1, "city": "Chicago"}]

PROJECTIONS = [
    ("scalar from one row", [{"n": 3}], AnswerType.SCALAR, Projection(value_field="n"), 3),
    ("scalar from object", {"n": 3, "note": "x"}, AnswerType.SCALAR, Projection(value_field="n"),
     3),
    ("entity list sorted", ROWS, AnswerType.ENTITY_LIST, Projection(entity_field="iata"),
     ["MDW", "ORD"]),
    ("numeric ids sort as numbers", [{"id": 10}, {"id": 9}], AnswerType.ENTITY_LIST,
     Projection(entity_field="id"), [9, 10]),
    ("ranked keeps order", ROWS, AnswerType.RANKED_LIST,
     Projection(entity_field="iata", value_field="n"),
     [{"id": "ORD", "value": 3}, {"id": "MDW", "value": 1}]),
    ("ranked without values", ROWS, AnswerType.RANKED_LIST, Projection(entity_field="iata"),
     [{"id": "ORD"}, {"id": "MDW"}]),
    ("records restricted and sorted", ROWS, AnswerType.RECORDS,
     Projection(key_fields=["iata"], value_fields=["n"]),
     [{"iata": "MDW", "n": 1}, {"iata": "ORD", "n": 3}]),
    ("records under a key", {"rows": ROWS, "total": 4}, AnswerType.RECORDS,
     Projection(records_path="rows", key_fields=["iata"], value_fields=["n"]),
     [{"iata": "MDW", "n": 1}, {"iata": "ORD", "n": 3}]),
    ("object restricted", {"iata": "LGA", "distance_km": 17.2, "x": 1}, AnswerType.OBJECT,
     Projection(fields=["iata", "distance_km"]), {"iata": "LGA", "distance_km": 17.2}),
    ("flat bbox", {"bbox": [1, 2, 3, 4]}, AnswerType.BBOX, Projection(value_field="bbox"),
     [1.0, 2.0, 3.0, 4.0]),
    ("nested bbox flattened", {"bbox": [[1, 2], [3, 4]]}, AnswerType.BBOX,
     Projection(value_field="bbox"), [1.0, 2.0, 3.0, 4.0]),
    ("named bbox", {"bbox": {"minx": 1, "miny": 2, "maxx": 3, "maxy": 4}}, AnswerType.BBOX,
     Projection(value_field="bbox"), [1.0, 2.0, 3.0, 4.0]),
    ("wkt geometry", {"g": "POINT (1 2)"}, AnswerType.GEOMETRY, Projection(value_field="g"),
     {"type": "Point", "coordinates": [1.0, 2.0]}),
]

FAILURES = [
    ("scalar from two rows", ROWS, AnswerType.SCALAR, Projection(value_field="n"), "exactly one"),
    ("scalar from no rows", [], AnswerType.SCALAR, Projection(value_field="n"), "exactly one"),
    ("missing field", [{"count": 3}], AnswerType.SCALAR, Projection(value_field="n"),
     "field 'n' missing"),
    ("list answer from object", {"iata": "ORD"}, AnswerType.ENTITY_LIST,
     Projection(entity_field="iata"), "records_path"),
    ("null entity id", [{"iata": None}], AnswerType.ENTITY_LIST, Projection(entity_field="iata"),
     "null"),
    ("missing records key", {"rows": []}, AnswerType.RECORDS,
     Projection(records_path="data", key_fields=["a"], value_fields=["b"]), "no key 'data'"),
    ("bbox of three numbers", {"bbox": [1, 2, 3]}, AnswerType.BBOX, Projection(value_field="bbox"),
     "four numbers"),
    ("bbox min above max", {"bbox": [3, 2, 1, 4]}, AnswerType.BBOX, Projection(value_field="bbox"),
     "exceeds"),
    ("not a geometry", {"g": "POINT (x)"}, AnswerType.GEOMETRY, Projection(value_field="g"),
     "not a geometry"),
]


@pytest.mark.parametrize(("title", "data", "answer_type", "projection", "expected"), PROJECTIONS,
                         ids=[row[0] for row in PROJECTIONS])
def test_projection(title, data, answer_type, projection, expected):
    assert project_answer(data, answer_type, projection) == expected


@pytest.mark.parametrize(("title", "data", "answer_type", "projection", "message"), FAILURES,
                         ids=[row[0] for row in FAILURES])
def test_projection_failures(title, data, answer_type, projection, message):
    with pytest.raises(ProjectionError, match=message):
        project_answer(data, answer_type, projection)
