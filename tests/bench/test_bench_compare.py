"""Table-driven tests of answer comparison, including near-misses that must NOT match."""

from __future__ import annotations

import pytest

from geoask.bench.compare import compare_answers, ids_equal, numbers_match
from geoask.cases.model import AnswerType, Tolerance

EXACT = Tolerance()
ABS_1 = Tolerance(abs=1.0)
REL_1PCT = Tolerance(rel=0.01)

MATCHES = [
    # (title, answer_type, expected, actual, tolerance)
    ("integer count equal", AnswerType.SCALAR, 209, 209, EXACT),
    ("float within abs", AnswerType.SCALAR, 17.2, 17.9, ABS_1),
    ("float within rel", AnswerType.SCALAR, 1000.0, 1009.9, REL_1PCT),
    ("stored 10 digits", AnswerType.SCALAR, 17.19864831, 17.198648306014352, EXACT),
    ("text equal", AnswerType.SCALAR, "Texas", "Texas", EXACT),
    ("entities any order", AnswerType.ENTITY_LIST, ["CGX", "MDW", "ORD"], ["ORD", "CGX", "MDW"],
     EXACT),
    ("integer id as text", AnswerType.ENTITY_LIST, [1, 2], ["2", "1"], EXACT),
    ("ranked ids and values", AnswerType.RANKED_LIST,
     [{"id": "AK", "value": 263}, {"id": "TX", "value": 209}],
     [{"id": "AK", "value": 263}, {"id": "TX", "value": 209}], EXACT),
    ("ranked values within rel", AnswerType.RANKED_LIST,
     [{"id": "A", "value": 100.0}], [{"id": "A", "value": 100.5}], REL_1PCT),
    ("records equal", AnswerType.RECORDS,
     [{"region": "South", "n": 3}, {"region": "West", "n": 4}],
     [{"region": "South", "n": 3}, {"region": "West", "n": 4}], EXACT),
    ("object with extra field", AnswerType.OBJECT,
     {"iata": "LGA", "distance_km": 17.2}, {"iata": "LGA", "distance_km": 17.2, "note": "x"},
     ABS_1),
    ("bbox within abs", AnswerType.BBOX, [0.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 1.0000001],
     Tolerance(abs=1e-6)),
    ("geometry same", AnswerType.GEOMETRY, {"type": "Point", "coordinates": [1.0, 2.0]},
     {"type": "Point", "coordinates": [1.0, 2.0000001]}, Tolerance(abs=1e-6)),
]

NEAR_MISSES = [
    ("count off by one", AnswerType.SCALAR, 209, 210, EXACT, "expected 209"),
    ("just outside abs", AnswerType.SCALAR, 17.2, 18.3, ABS_1, "tolerance"),
    ("just outside rel", AnswerType.SCALAR, 1000.0, 1010.5, REL_1PCT, "tolerance"),
    ("km given for m", AnswerType.SCALAR, 17198.6, 17.1986, REL_1PCT, "tolerance"),
    ("percent given for ratio", AnswerType.SCALAR, 0.25, 25.0, REL_1PCT, "tolerance"),
    ("number as text", AnswerType.SCALAR, 209, "209", EXACT, "number"),
    ("bool is not a number", AnswerType.SCALAR, 1, True, EXACT, "number"),
    ("text case differs", AnswerType.SCALAR, "Texas", "texas", EXACT, "expected"),
    ("nan never matches", AnswerType.SCALAR, 1.0, float("nan"), ABS_1, "tolerance"),
    ("missing entity", AnswerType.ENTITY_LIST, ["CGX", "MDW", "ORD"], ["MDW", "ORD"], EXACT,
     "missing"),
    ("extra entity", AnswerType.ENTITY_LIST, ["MDW", "ORD"], ["MDW", "ORD", "RFD"], EXACT, "extra"),
    ("duplicate entity", AnswerType.ENTITY_LIST, ["MDW", "ORD"], ["MDW", "ORD", "ORD"], EXACT,
     "more than once"),
    ("float id is not int id", AnswerType.ENTITY_LIST, [7], [7.0], EXACT, "missing"),
    ("ranked order swapped", AnswerType.RANKED_LIST,
     [{"id": "CA", "value": 205}, {"id": "TX", "value": 209}],
     [{"id": "TX", "value": 209}, {"id": "CA", "value": 205}], EXACT, "rank 1"),
    ("ranked list too short", AnswerType.RANKED_LIST,
     [{"id": "A"}, {"id": "B"}], [{"id": "A"}], EXACT, "2 ranked"),
    ("ranked value wrong", AnswerType.RANKED_LIST,
     [{"id": "A", "value": 10}], [{"id": "A", "value": 11}], EXACT, "rank 1 (A)"),
    ("record value wrong", AnswerType.RECORDS,
     [{"region": "South", "n": 3}], [{"region": "South", "n": 4}], EXACT, "record 1"),
    ("record key wrong", AnswerType.RECORDS,
     [{"region": "South", "n": 3}], [{"region": "West", "n": 3}], EXACT, "region"),
    ("record missing", AnswerType.RECORDS,
     [{"region": "South", "n": 3}, {"region": "West", "n": 4}], [{"region": "South", "n": 3}],
     EXACT, "2 records"),
    ("object field missing", AnswerType.OBJECT,
     {"iata": "LGA", "distance_km": 17.2}, {"iata": "LGA"}, ABS_1, "missing"),
    ("object entity wrong", AnswerType.OBJECT,
     {"iata": "LGA", "distance_km": 17.2}, {"iata": "EWR", "distance_km": 17.2}, ABS_1, "iata"),
    ("bbox shifted", AnswerType.BBOX, [0.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 1.001],
     Tolerance(abs=1e-6), "bbox[3]"),
    ("geometry type differs", AnswerType.GEOMETRY, {"type": "Point", "coordinates": [1.0, 2.0]},
     {"type": "MultiPoint", "coordinates": [[1.0, 2.0]]}, Tolerance(abs=1e-6), "MultiPoint"),
    ("geometry moved", AnswerType.GEOMETRY, {"type": "Point", "coordinates": [1.0, 2.0]},
     {"type": "Point", "coordinates": [1.0, 2.1]}, Tolerance(abs=1e-6), "Hausdorff"),
]


@pytest.mark.parametrize(("title", "answer_type", "expected", "actual", "tolerance"), MATCHES,
                         ids=[row[0] for row in MATCHES])
def test_matches(title, answer_type, expected, actual, tolerance):
    verdict = compare_answers(expected, actual, answer_type, tolerance)
    assert verdict.matches, verdict.reason
    assert verdict.reason == ""


@pytest.mark.parametrize(("title", "answer_type", "expected", "actual", "tolerance", "reason"),
                         NEAR_MISSES, ids=[row[0] for row in NEAR_MISSES])
def test_near_misses_do_not_match(title, answer_type, expected, actual, tolerance, reason):
    verdict = compare_answers(expected, actual, answer_type, tolerance)
    assert not verdict.matches
    assert reason in verdict.reason


@pytest.mark.parametrize(("expected", "actual", "tolerance", "result"), [
    (100.0, 101.0, Tolerance(rel=0.01), True),
    (100.0, 101.01, Tolerance(rel=0.01), False),
    (0.0, 0.5, Tolerance(abs=0.5, rel=0.5), True),
    (0.0, 1e-12, Tolerance(), False),
    (1e6, 1e6 + 0.5, Tolerance(abs=1.0, rel=0.0), True),
])
def test_numbers_match_boundaries(expected, actual, tolerance, result):
    assert numbers_match(expected, actual, tolerance) is result


@pytest.mark.parametrize(("a", "b", "equal"), [
    ("ORD", "ORD", True), (7, "7", True), ("07", 7, False), (True, 1, False), (7, 7.0, False),
])
def test_ids_are_exact(a, b, equal):
    assert ids_equal(a, b) is equal
