"""The evaluator over all 200 benchmark cases: a well-shaped answer of the verified value counts,
perturbed ones (a wrong number, a missing entity, a dropped field, a shifted bbox) do not."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from geoask.bench.evaluate import judge_answer
from geoask.cases.loader import DEFAULT_CASES_DIR, load_cases
from geoask.cases.model import BenchmarkCase
from geoask.vocabulary.answers import AnswerType, payload_errors

CASES = [item.case for item in load_cases(DEFAULT_CASES_DIR)]


def payload_for(case: BenchmarkCase, value: Any) -> Any:
    """The final-answer payload an answer agent writes for ``value`` (answer shapes)."""
    projection = case.answer.projection
    unit = {"unit": projection.unit} if projection.unit else {}
    answer_type = case.answer.answer_type
    if answer_type is AnswerType.SCALAR:
        return {"value": value, **unit}
    if answer_type is AnswerType.ENTITY_LIST:
        return {"entities": [{"id": entity} for entity in value]}
    if answer_type is AnswerType.RANKED_LIST:
        return {"items": [{"rank": n, **item} for n, item in enumerate(value, start=1)], **unit}
    if answer_type is AnswerType.RECORDS:
        units = {name: projection.unit for name in projection.value_fields if projection.unit}
        return {"records": value, "units": units}
    if answer_type is AnswerType.BBOX:
        return {"bbox": value}
    if answer_type is AnswerType.GEOMETRY:
        return {"geometry": value}
    return {**value, **unit}  # an object answer may carry its unit as an extra field


def perturbed(case: BenchmarkCase) -> Any:
    """The expected value with one mistake a real run could make."""
    value = copy.deepcopy(case.expected.value)
    answer_type = case.answer.answer_type
    if answer_type is AnswerType.SCALAR:
        if isinstance(value, bool):
            return not value
        return value * 1.5 + 1 if isinstance(value, int | float) else f"{value}x"
    if answer_type in (AnswerType.ENTITY_LIST, AnswerType.RANKED_LIST, AnswerType.RECORDS):
        return value[:-1]
    if answer_type is AnswerType.BBOX:
        return [value[0] - 1.0, value[1], value[2], value[3]]
    if answer_type is AnswerType.OBJECT:
        first = next(iter(value))
        return {name: field for name, field in value.items() if name != first}
    return {"type": "Point", "coordinates": [0.0, 0.0]}


def test_all_cases_loaded():
    assert len(CASES) == 225


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_verified_value_counts(case):
    payload = payload_for(case, case.expected.value)
    assert payload_errors(case.answer.answer_type, payload) == []
    verdict = judge_answer(case, case.answer.answer_type, payload)
    assert verdict.matches, verdict.reason


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_perturbed_value_does_not_count(case):
    verdict = judge_answer(case, case.answer.answer_type, payload_for(case, perturbed(case)))
    assert not verdict.matches
