"""Answer payload schemas, table-driven: valid payloads pass, near-misses are caught."""

from __future__ import annotations

import pytest

from geoask.vocabulary.answers import AnswerType, payload_errors

T = AnswerType

VALID = [
    (T.SCALAR, {"value": 12.5, "unit": "mm"}),
    (T.SCALAR, {"value": None}),
    (T.ENTITY_LIST, {"entities": [{"id": "37183", "name": "Wake"}, {"id": 7}]}),
    (T.RANKED_LIST, {"items": [{"rank": 1, "id": "ATL", "value": 3.0},
                               {"rank": 2, "id": "CLT", "value": 2.0}], "order": "descending"}),
    (T.RANKED_LIST, {"items": []}),
    (T.RECORDS, {"records": [{"state": "NC", "income_usd": 1}], "units": {"income_usd": "USD"}}),
    (T.OBJECT, {"slope": 0.3, "r2": 0.9}),
    (T.BBOX, {"bbox": [-84.3, 33.8, -75.5, 36.6]}),
    (T.GEOMETRY, {"geometry": {"type": "Point", "coordinates": [-78.6, 35.8]}}),
]

INVALID = [
    (T.SCALAR, {"val": 1}, "'value' is a required property"),
    (T.SCALAR, {"value": [1, 2]}, "value"),
    (T.ENTITY_LIST, {"entities": [{"name": "Wake"}]}, "'id' is a required property"),
    (T.ENTITY_LIST, ["37183"], "is not of type 'object'"),
    (T.RANKED_LIST, {"items": [{"rank": 2, "id": "A", "value": 1}]}, "ranks must start at 1"),
    (T.RANKED_LIST, {"items": [{"rank": 1, "id": "A", "value": 1},
                               {"rank": 3, "id": "B", "value": 2},
                               {"rank": 2, "id": "C", "value": 3}]}, "in order"),
    (T.RANKED_LIST, {"items": [{"rank": 1, "id": "A"}]}, "'value' is a required property"),
    (T.RANKED_LIST, {"items": [], "order": "up"}, "order"),
    (T.RECORDS, {"records": [1, 2]}, "is not of type 'object'"),
    (T.OBJECT, {}, "should be non-empty"),
    (T.BBOX, {"bbox": [1, 2, 3]}, "is too short"),
    (T.BBOX, {"bbox": [-75.5, 33.8, -84.3, 36.6]}, "min <= max"),
    (T.GEOMETRY, {"geometry": {"type": "Circle"}}, "is not one of"),
]


@pytest.mark.parametrize(("answer_type", "payload"), VALID)
def test_valid_payloads(answer_type, payload):
    assert payload_errors(answer_type, payload) == []


@pytest.mark.parametrize(("answer_type", "payload", "message"), INVALID)
def test_invalid_payloads(answer_type, payload, message):
    errors = payload_errors(answer_type, payload)
    assert errors and any(message in e for e in errors), errors


def test_the_terminal_report_shows_control_characters_instead_of_running_them():
    # Attack pass: a database value's "set terminal title" sequence reached the terminal raw.
    from types import SimpleNamespace

    from geoask.base.result_view import result_text

    result = SimpleNamespace(message="RDU is Raleigh\x1b]0;pwned\x07\r", answer=None,
                             evidence=["sql-1: 1 row \x9b2J"], transitions=[], route="sql_only",
                             artifact_folder="/a")
    text = result_text(result)
    assert "\x1b" not in text and "\x07" not in text and "\x9b" not in text
    assert "Raleigh\\x1b]0;pwned\\x07\\x0d" in text and "\\x9b2J" in text
