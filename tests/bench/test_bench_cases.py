"""The case model, the JSON Schema and the shipped case files agree; invalid cases are refused."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml

from geoask.cases.loader import (
    DEFAULT_CASES_DIR,
    SCHEMA_PATH,
    load_case_file,
    load_cases,
    write_expected_values,
)
from geoask.cases.model import Category
from geoask.cases.schema import schema_text
from geoask.errors import BenchmarkCaseError
from geoask.sql.context import GuardContext
from geoask.sql.guard import find_violation

VALID = {
    "id": "airports-900",
    "question": "How many airports are in Texas (TX)?",
    "difficulty": "easy",
    "category": "attribute_filter_rank",
    "scenario": "airports",
    "requires_sandbox": False,
    "reference": {"steps": [{
        "kind": "sql", "objective": "Count the airports in Texas.",
        "statements": [{"name": "n", "sql": "SELECT count(*) AS n FROM demo.airports"}],
    }]},
    "answer": {"answer_type": "scalar", "projection": {"value_field": "n", "unit": "count"}},
    "expected": {"value": 209, "tolerance": {"abs": 0}},
}

PYTHON_STEP = {"kind": "python", "name": "calc", "objective": "Compute something in Python.",
               "inputs": ["n"], "script": "print(1)"}


def _write(tmp_path: Path, *cases: dict) -> Path:
    path = tmp_path / "cases.yaml"
    path.write_text(yaml.safe_dump({"cases": list(cases)}, sort_keys=False))
    return path


def _variant(**changes) -> dict:
    case = copy.deepcopy(VALID)
    for dotted, value in changes.items():
        target = case
        *parents, last = dotted.split("__")
        for key in parents:
            target = target[key]
        target[last] = value
    return case


def test_schema_file_is_generated_from_the_model():
    assert SCHEMA_PATH.read_text() == schema_text(), "run python -m geoask.cases.schema"


def test_valid_case_loads(tmp_path):
    [loaded] = load_case_file(_write(tmp_path, VALID))
    assert loaded.case.id == "airports-900"
    assert loaded.case.expected.value == 209


INVALID = [
    ("unknown difficulty", _variant(difficulty="trivial"), "difficulty"),
    ("bad id", _variant(id="Airports-1"), "id"),
    ("unknown field", {**VALID, "colour": "red"}, "colour"),
    ("sandbox flag without python step", _variant(requires_sandbox=True), "requires_sandbox"),
    ("python step without sandbox flag",
     _variant(reference__steps=[VALID["reference"]["steps"][0], PYTHON_STEP]), "requires_sandbox"),
    ("python input unknown",
     _variant(requires_sandbox=True, reference__steps=[
         VALID["reference"]["steps"][0], {**PYTHON_STEP, "inputs": ["nope"]}]), "nope"),
    ("spatial without cross-check", _variant(category="spatial", measurement="geodesic WGS 84"),
     "cross_check"),
    ("spatial without measurement", _variant(category="spatial", cross_check={
        "method": "PostGIS ST_DWithin geography", "program": VALID["reference"]}), "measurement"),
    ("statistics without cross-check", _variant(category="statistics"), "cross_check"),
    ("scalar without value_field", _variant(answer__projection={"unit": "count"}), "value_field"),
    ("negative tolerance", _variant(expected__tolerance={"abs": -1}), "abs"),
    ("empty objective", _variant(reference__steps=[{
        **VALID["reference"]["steps"][0], "objective": ""}]), "objective"),
]


@pytest.mark.parametrize(("title", "case", "message"), INVALID, ids=[row[0] for row in INVALID])
def test_invalid_cases_are_refused(tmp_path, title, case, message):
    with pytest.raises(BenchmarkCaseError, match=message):
        load_case_file(_write(tmp_path, case))


def test_duplicate_ids_are_refused(tmp_path):
    (tmp_path / "a.yaml").write_text(yaml.safe_dump({"cases": [VALID]}))
    (tmp_path / "b.yaml").write_text(yaml.safe_dump({"cases": [VALID]}))
    with pytest.raises(BenchmarkCaseError, match="appears in"):
        load_cases(tmp_path)


def test_unknown_only_id_is_refused(tmp_path):
    with pytest.raises(BenchmarkCaseError, match="unknown case id"):
        load_cases(_write(tmp_path, VALID), ["airports-999"])


def test_write_expected_values_keeps_sql_readable(tmp_path):
    case = _variant(expected={"tolerance": {"abs": 0}})
    statement = case["reference"]["steps"][0]["statements"][0]
    statement["sql"] = "SELECT count(*) AS n\nFROM demo.airports\n"
    path = _write(tmp_path, case)
    write_expected_values(path, {"airports-900": 1.234567890123})
    text = path.read_text()
    assert "sql: |" in text
    [loaded] = load_case_file(path)
    assert loaded.case.expected.value == 1.23456789


SHIPPED = load_cases(DEFAULT_CASES_DIR)


def test_shipped_case_files_follow_the_schema():
    import jsonschema

    schema = json.loads(SCHEMA_PATH.read_text())
    for path in sorted(DEFAULT_CASES_DIR.glob("*.yaml")):
        jsonschema.validate(yaml.safe_load(path.read_text()), schema)
    assert SHIPPED


@pytest.mark.parametrize("item", SHIPPED, ids=lambda item: item.case.id)
def test_shipped_case_is_complete_and_guarded(item):
    case = item.case
    assert case.expected.value is not None, "run geoask bench fill"
    assert case.id.startswith(_PREFIX[case.scenario])
    if case.category in (Category.SPATIAL, Category.STATISTICS):
        assert case.cross_check is not None
    for step in case.reference.steps:
        for statement in getattr(step, "statements", []):
            violation = find_violation(statement.sql, GuardContext(policy="separated"))
            assert violation is None, f"{statement.name}: {violation}"


_PREFIX = {
    "states_income": "states-", "counties_census": "counties-", "airports": "airports-",
    "climate_nc": "climate-", "new_haven": "newhaven-", "world": "world-",
    "luxembourg_dem": "luxdem-", "landsat_olinda": "landsat-",
}


def _has_number(value) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return True
    if isinstance(value, list):
        return any(_has_number(item) for item in value)
    if isinstance(value, dict):
        return any(_has_number(item) for item in value.values())
    return False


@pytest.mark.parametrize("item", SHIPPED, ids=lambda item: item.case.id)
def test_numeric_answers_state_their_unit(item):
    case = item.case
    if case.answer.answer_type.value != "entity_list" and _has_number(case.expected.value):
        assert case.answer.projection.unit, "numeric answers need projection.unit"


def test_shipped_set_covers_every_scenario_and_difficulty():
    from collections import Counter

    cases = [item.case for item in SHIPPED]
    assert {str(c.scenario) for c in cases} == set(_PREFIX)
    by_difficulty = Counter(str(c.difficulty) for c in cases)
    assert set(by_difficulty) == {"easy", "medium", "hard"}
    sandbox_share = sum(c.requires_sandbox for c in cases) / len(cases)
    assert 0.25 <= sandbox_share <= 0.45, sandbox_share


@pytest.mark.parametrize(
    "item",
    [i for i in SHIPPED if i.case.answer.answer_type.value == "ranked_list"
     and i.case.reference.steps[-1].kind == "sql"],
    ids=lambda item: item.case.id,
)
def test_ranked_sql_answers_satisfy_the_topk_contract(item):
    statement = item.case.reference.steps[-1].statements[-1]
    violation = find_violation(statement.sql, GuardContext(policy="separated", contract="topk"))
    assert violation is None, violation
