"""The evaluator's rules: table-driven correct answers and near-misses that must NOT count."""

from __future__ import annotations

import json
from typing import Any

import pytest

from geoask.bench.evaluate import (
    CaseScore,
    RootCause,
    Verdict,
    evidence_agrees,
    judge_answer,
    list_match,
    root_cause,
    score_case,
)
from geoask.bench.evaluate.answer_types import extract_scalar
from geoask.bench.evaluate.causes import tool_failure_cause
from geoask.bench.evaluate.units import find_field, unit_factor
from geoask.bench.evaluate.values import ids_exact
from geoask.bench.metrics import routing_metrics
from geoask.cases.model import BenchmarkCase, Category
from geoask.records.execution_log import ExecutionLog, ModelCall, StageTiming, ToolTraceEntry
from geoask.vocabulary.answers import AnswerType, FinalAnswer


def make_case(answer_type: str, projection: dict[str, Any], expected: Any,
              tolerance: dict[str, float] | None = None, *, requires_sandbox: bool = False,
              category: str = "attribute_filter_rank", difficulty: str = "easy",
              case_id: str = "test-001") -> BenchmarkCase:
    steps: list[dict[str, Any]] = [{"kind": "sql", "objective": "read the rows needed here",
                                    "statements": [{"name": "rows", "sql": "SELECT 1"}]}]
    if requires_sandbox:
        steps.append({"kind": "python", "name": "result", "objective": "compute the answer here",
                      "inputs": ["rows"], "script": "print(1)"})
    return BenchmarkCase.model_validate({
        "id": case_id, "question": "A test question about the data?", "difficulty": difficulty,
        "category": category, "scenario": "airports", "requires_sandbox": requires_sandbox,
        "reference": {"steps": steps},
        "answer": {"answer_type": answer_type, "projection": projection},
        "expected": {"value": expected, "tolerance": tolerance or {}},
    })


SCALAR_KM = make_case("scalar", {"value_field": "mean_nn_km", "unit": "km"}, 20.2188,
                      {"abs": 0.01})
SCALAR_PCT = make_case("scalar", {"value_field": "south_pct", "unit": "%"}, 33.56, {"abs": 0.01})
SCALAR_COUNT = make_case("scalar", {"value_field": "airport_count", "unit": "count"}, 209)
SCALAR_AREA = make_case("scalar", {"value_field": "area_km2", "unit": "km2"}, 10659.46,
                        {"rel": 0.001})
SCALAR_TEXT = make_case("scalar", {"value_field": "census_region"}, "West")
ENTITIES = make_case("entity_list", {"entity_field": "iata"}, ["CGX", "MDW", "ORD"])
ENTITIES_INT = make_case("entity_list", {"entity_field": "cell_id"}, [7, 12])
ENTITIES_FIPS = make_case("entity_list", {"entity_field": "county_fips"}, ["06075", "36005"])
RANKED = make_case("ranked_list", {"entity_field": "state_abbr", "value_field": "airport_count",
                                   "unit": "count", "order": "descending"},
                   [{"id": "AK", "value": 263}, {"id": "TX", "value": 209},
                    {"id": "CA", "value": 205}])
RANKED_TIES = make_case("ranked_list", {"entity_field": "city", "value_field": "n",
                                        "unit": "count", "order": "descending"},
                        [{"id": "Houston", "value": 8}, {"id": "Indianapolis", "value": 6},
                         {"id": "Miami", "value": 6}])
RANKED_KM2 = make_case("ranked_list", {"entity_field": "iso_a3", "value_field": "area_km2",
                                       "unit": "km2", "order": "descending"},
                       [{"id": "RUS", "value": 16989128.17}, {"id": "CAN", "value": 10036042.98}],
                       {"rel": 0.005})
RECORDS = make_case("records", {"key_fields": ["census_region"], "value_fields": ["area_km2"],
                                "unit": "km2"},
                    [{"census_region": "Midwest", "area_km2": 2127878.258},
                     {"census_region": "Northeast", "area_km2": 468766.6929}], {"rel": 0.002})
RECORDS_YEAR = make_case("records", {"key_fields": ["census_year"],
                                     "value_fields": ["rate_per_100k"], "unit": "per_100k"},
                         [{"census_year": 1960, "rate_per_100k": 4.53},
                          {"census_year": 1970, "rate_per_100k": 8.21}], {"abs": 0.001})
OBJECT_KM = make_case("object", {"fields": ["iata", "distance_km"], "unit": "km"},
                      {"iata": "LGA", "distance_km": 17.1986}, {"abs": 0.01})
OBJECT_MIXED = make_case("object", {"fields": ["cell_id", "easting_m", "incident_count"],
                                    "unit": "m"},
                         {"cell_id": 2213, "easting_m": 673500, "incident_count": 198},
                         {"abs": 0.5})
OBJECT_RATIO = make_case("object", {"fields": ["ratio_1929", "share_pct"], "unit": "ratio"},
                         {"ratio_1929": 4.2509, "share_pct": 12.5}, {"abs": 0.001})
BBOX = make_case("bbox", {"value_field": "bbox", "unit": "degrees"},
                 [-159.6033, 19.7203, -155.0485, 22.2092], {"abs": 1e-4})
SQUARE = {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]]]}
GEOMETRY = make_case("geometry", {"value_field": "geom", "unit": "degrees"}, SQUARE,
                     {"abs": 1e-6})


def scalar(value: Any, unit: str | None = None) -> dict[str, Any]:
    return {"value": value, **({"unit": unit} if unit else {})}


def items(*pairs: tuple[Any, Any], unit: str | None = None) -> dict[str, Any]:
    rows = [{"rank": n, "id": i, "value": v} for n, (i, v) in enumerate(pairs, start=1)]
    return {"items": rows, **({"unit": unit} if unit else {})}


def entities(*ids: Any) -> dict[str, Any]:
    return {"entities": [{"id": i} for i in ids]}


# (title, case, payload): every one of these is strictly correct.
CORRECT = [
    ("scalar in value", SCALAR_COUNT, scalar(209, "count")),
    ("scalar as float equal to int", SCALAR_COUNT, scalar(209.0)),
    ("scalar in the contract's value field", SCALAR_COUNT, {"airport_count": 209}),
    ("single-valued payload under another name", SCALAR_COUNT, {"n": 209, "unit": "count"}),
    ("single-valued record list", SCALAR_COUNT, {"records": [{"airport_count": 209}]}),
    ("scalar with explanatory fields next to value", SCALAR_COUNT,
     {"value": 209, "unit": "count", "note": "airports with scheduled service"}),
    ("km given in metres with unit", SCALAR_KM, scalar(20218.8, "m")),
    ("km within tolerance", SCALAR_KM, scalar(20.225, "km")),
    ("km given as kilometres spelled out", SCALAR_KM, scalar(20.2188, "kilometres")),
    ("distance field renamed to metres", SCALAR_KM, {"mean_nn_m": 20218.8}),
    ("percent given as ratio with unit", SCALAR_PCT, scalar(0.3356, "ratio")),
    ("percent given as percent", SCALAR_PCT, scalar(33.56, "percent")),
    ("km2 given in m2", SCALAR_AREA, scalar(10659.46e6, "m²")),
    ("km2 given in hectares", SCALAR_AREA, scalar(1065946.0, "ha")),
    ("text scalar", SCALAR_TEXT, scalar("West")),
    ("entity list in any order", ENTITIES, entities("ORD", "CGX", "MDW")),
    ("entity list with names", ENTITIES,
     {"entities": [{"id": "CGX", "name": "Meigs"}, {"id": "MDW"}, {"id": "ORD"}]}),
    ("entity list by the contract's entity field", ENTITIES,
     {"entities": [{"iata": "CGX"}, {"iata": "MDW"}, {"iata": "ORD"}]}),
    ("integer ids", ENTITIES_INT, entities(12, 7)),
    ("zero-padded text ids", ENTITIES_FIPS, entities("36005", "06075")),
    ("ranked list", RANKED, items(("AK", 263), ("TX", 209), ("CA", 205), unit="count")),
    ("ranked list ordered by rank field", RANKED,
     {"items": [{"rank": 2, "id": "TX", "value": 209}, {"rank": 1, "id": "AK", "value": 263},
                {"rank": 3, "id": "CA", "value": 205}]}),
    ("ranked list with tied entries swapped", RANKED_TIES,
     items(("Houston", 8), ("Miami", 6), ("Indianapolis", 6))),
    ("ranked list in m2", RANKED_KM2,
     items(("RUS", 16989128.17e6), ("CAN", 10036042.98e6), unit="m2")),
    ("records in any order with extra fields", RECORDS,
     {"records": [{"census_region": "Northeast", "area_km2": 468766.7, "states": 9},
                  {"census_region": "Midwest", "area_km2": 2127878.3}]}),
    ("records with units map in m2", RECORDS,
     {"records": [{"census_region": "Midwest", "area_km2": 2127878.258e6},
                  {"census_region": "Northeast", "area_km2": 468766.6929e6}],
      "units": {"area_km2": "m2"}}),
    ("records with integer keys", RECORDS_YEAR,
     {"records": [{"census_year": 1970, "rate_per_100k": 8.21},
                  {"census_year": 1960, "rate_per_100k": 4.53}]}),
    ("object with extra explanatory field", OBJECT_KM,
     {"iata": "LGA", "distance_km": 17.19, "name": "LaGuardia", "method": "geodesic"}),
    ("object with distance in metres under renamed field", OBJECT_KM,
     {"iata": "LGA", "distance_m": 17198.6}),
    ("object with units map", OBJECT_KM,
     {"iata": "LGA", "distance_km": 17198.6, "units": {"distance_km": "m"}}),
    ("object mixed units with count unit stated", OBJECT_MIXED,
     {"cell_id": 2213, "easting_m": 673500.2, "incident_count": 198,
      "units": {"easting_m": "m", "incident_count": "count"}}),
    ("object percent field given as ratio", OBJECT_RATIO,
     {"ratio_1929": 4.2509, "share_pct": 0.125, "units": {"share_pct": "ratio"}}),
    ("flat bbox", BBOX, {"bbox": [-159.6033, 19.7203, -155.0485, 22.2092]}),
    ("nested bbox", BBOX, {"bbox": [[-159.6033, 19.7203], [-155.0485, 22.2092]]}),
    ("bbox as min/max mapping", BBOX,
     {"bbox": {"minx": -159.6033, "miny": 19.7203, "maxx": -155.0485, "maxy": 22.2092}}),
    ("geometry as GeoJSON", GEOMETRY, {"geometry": SQUARE}),
    ("geometry as WKT", GEOMETRY, {"geometry": "POLYGON ((0 0, 1 0, 1 1, 0 1, 0 0))"}),
]

# (title, case, payload, failure kind): near-misses that must NOT count.
NEAR_MISSES = [
    ("km given in metres without unit", SCALAR_KM, scalar(20218.8), "scale"),
    ("metres labelled km", SCALAR_KM, scalar(20218.8, "km"), "scale"),
    ("km just outside tolerance", SCALAR_KM, scalar(20.2300, "km"), "value"),
    ("distance in degrees", SCALAR_KM, scalar(0.18, "degrees"), "unit"),
    ("percent given as ratio without unit", SCALAR_PCT, scalar(0.3356), "percent"),
    ("ratio labelled percent", SCALAR_PCT, scalar(0.3356, "%"), "percent"),
    ("km2 given in m2 without unit", SCALAR_AREA, scalar(10659.46e6), "scale"),
    ("area given as a length", SCALAR_AREA, scalar(10659.46, "km"), "unit"),
    ("count off by one", SCALAR_COUNT, scalar(208), "value"),
    ("count as text", SCALAR_COUNT, scalar("209"), "value"),
    ("scalar hidden in a multi-valued payload", SCALAR_COUNT,
     {"counts": {"a": 209, "b": 11}}, "field"),
    ("scalar among several fields", SCALAR_COUNT, {"n": 209, "m": 11}, "field"),
    ("scalar in a list of two", SCALAR_COUNT, {"records": [{"n": 209}, {"n": 11}]}, "field"),
    ("text in other case", SCALAR_TEXT, scalar("west"), "value"),
    ("entity list with an extra entity", ENTITIES, entities("CGX", "MDW", "ORD", "PWK"),
     "entities"),
    ("entity list with a missing entity", ENTITIES, entities("CGX", "MDW"), "entities"),
    ("entity list with a repeated entity", ENTITIES, entities("CGX", "MDW", "ORD", "ORD"),
     "entities"),
    ("entity list in other letter case", ENTITIES, entities("cgx", "MDW", "ORD"), "entities"),
    ("integer ids given as text", ENTITIES_INT, entities("7", "12"), "entities"),
    ("integer ids given as floats", ENTITIES_INT, entities(7.0, 12.0), "entities"),
    ("text ids without zero padding", ENTITIES_FIPS, entities("6075", "36005"), "entities"),
    ("text ids given as integers", ENTITIES_FIPS, entities(6075, 36005), "entities"),
    ("entity list not under entities", ENTITIES, {"airports": ["CGX", "MDW", "ORD"]}, "field"),
    ("ranked list with swapped ranks", RANKED,
     items(("TX", 209), ("AK", 263), ("CA", 205)), "order"),
    ("ranked list with swapped rank numbers", RANKED,
     {"items": [{"rank": 2, "id": "AK", "value": 263}, {"rank": 1, "id": "TX", "value": 209},
                {"rank": 3, "id": "CA", "value": 205}]}, "order"),
    ("entity with the wrong value in the same record", RANKED,
     items(("AK", 209), ("TX", 263), ("CA", 205)), "value"),
    ("ranked list missing its last entry", RANKED, items(("AK", 263), ("TX", 209)), "entities"),
    ("ranked list with an extra entry", RANKED,
     items(("AK", 263), ("TX", 209), ("CA", 205), ("OK", 102)), "entities"),
    ("ranked entry without a value", RANKED,
     {"items": [{"rank": 1, "id": "AK"}, {"rank": 2, "id": "TX"}, {"rank": 3, "id": "CA"}]},
     "field"),
    ("tie swapped but values exchanged with the leader", RANKED_TIES,
     items(("Miami", 8), ("Houston", 6), ("Indianapolis", 6)), "order"),
    ("ranked km2 in m2 without unit", RANKED_KM2,
     items(("RUS", 16989128.17e6), ("CAN", 10036042.98e6)), "scale"),
    ("records with an extra record", RECORDS,
     {"records": [{"census_region": "Midwest", "area_km2": 2127878.258},
                  {"census_region": "Northeast", "area_km2": 468766.6929},
                  {"census_region": "South", "area_km2": 2.0e6}]}, "entities"),
    ("records with a missing record", RECORDS,
     {"records": [{"census_region": "Midwest", "area_km2": 2127878.258}]}, "entities"),
    ("records with values swapped between records", RECORDS,
     {"records": [{"census_region": "Midwest", "area_km2": 468766.6929},
                  {"census_region": "Northeast", "area_km2": 2127878.258}]}, "value"),
    ("records without the value field", RECORDS,
     {"records": [{"census_region": "Midwest", "area": 2127878.258},
                  {"census_region": "Northeast", "area": 468766.6929}]}, "field"),
    ("records keyed by text years", RECORDS_YEAR,
     {"records": [{"census_year": "1960", "rate_per_100k": 4.53},
                  {"census_year": "1970", "rate_per_100k": 8.21}]}, "entities"),
    ("object missing a field", OBJECT_KM, {"iata": "LGA"}, "field"),
    ("object with metres under the km field and no unit", OBJECT_KM,
     {"iata": "LGA", "distance_km": 17198.6}, "scale"),
    ("object with the wrong entity", OBJECT_KM, {"iata": "JFK", "distance_km": 17.1986}, "value"),
    ("object distance in degrees", OBJECT_KM,
     {"iata": "LGA", "distance_km": 0.15, "units": {"distance_km": "degrees"}}, "unit"),
    ("object id within tolerance but not exact", OBJECT_MIXED,
     {"cell_id": 2213.2, "easting_m": 673500, "incident_count": 198}, "value"),
    ("object percent field given as ratio without unit", OBJECT_RATIO,
     {"ratio_1929": 4.2509, "share_pct": 0.125}, "percent"),
    ("object answer as a list", OBJECT_KM, [{"iata": "LGA", "distance_km": 17.1986}], "field"),
    ("bbox with swapped corners", BBOX,
     {"bbox": [-155.0485, 22.2092, -159.6033, 19.7203]}, "field"),
    ("bbox in lat/lon order", BBOX, {"bbox": [19.7203, -159.6033, 22.2092, -155.0485]}, "value"),
    ("bbox with three numbers", BBOX, {"bbox": [-159.6033, 19.7203, -155.0485]}, "field"),
    ("geometry shifted", GEOMETRY,
     {"geometry": {"type": "Polygon",
                   "coordinates": [[[0, 0], [1.1, 0], [1.1, 1], [0, 1], [0, 0]]]}}, "value"),
    ("geometry of another type", GEOMETRY,
     {"geometry": {"type": "LineString", "coordinates": [[0, 0], [1, 1]]}}, "value"),
]


@pytest.mark.parametrize(("title", "case", "payload"), CORRECT, ids=[c[0] for c in CORRECT])
def test_correct_answers_count(title, case, payload):
    verdict = judge_answer(case, case.answer.answer_type, payload)
    assert verdict.matches, verdict.reason


@pytest.mark.parametrize(("title", "case", "payload", "kind"), NEAR_MISSES,
                         ids=[c[0] for c in NEAR_MISSES])
def test_near_misses_do_not_count(title, case, payload, kind):
    verdict = judge_answer(case, case.answer.answer_type, payload)
    assert not verdict.matches
    assert verdict.kind == kind, verdict.reason
    assert verdict.reason


def test_wrong_answer_type_fails_the_contract():
    verdict = judge_answer(SCALAR_COUNT, AnswerType.OBJECT, {"value": 209})
    assert (verdict.matches, verdict.kind) == (False, "contract")


def test_no_answer_is_missing():
    assert judge_answer(SCALAR_COUNT, None, None).kind == "missing"


@pytest.mark.parametrize(("expected", "actual", "factor"), [
    ("km", "m", 0.001), ("m", "km", 1000.0), ("%", "ratio", 100.0), ("ratio", "percent", 0.01),
    ("km2", "m2", 1e-6), ("m2", "ha", 1e4), ("m", "ft", 0.3048), ("count", "count", 1.0),
    ("USD", None, 1.0), (None, "km", 1.0), ("km", "degrees", None), ("%", "km", None),
])
def test_unit_factor(expected, actual, factor):
    result = unit_factor(expected, actual)
    assert result == pytest.approx(factor) if factor is not None else result is None


@pytest.mark.parametrize(("expected", "actual", "same"), [
    (7, 7, True), ("NC", "NC", True), (7, "7", False), (7, 7.0, False), ("06075", "6075", False),
    ("NC", "NC ", False), (True, 1, False), ((1, "a"), (1, "a"), True),
    ((1, "a"), (1.0, "a"), False),
])
def test_ids_exact(expected, actual, same):
    assert ids_exact(expected, actual) is same


@pytest.mark.parametrize(("record", "name", "key"), [
    ({"distance_km": 1}, "distance_km", "distance_km"),
    ({"Distance_KM": 1}, "distance_km", "Distance_KM"),
    ({"distance_m": 1}, "distance_km", "distance_m"),
    ({"distance_m2": 1}, "distance_km", None),
    ({"distance": 1}, "distance_km", None),
    ({"population": 1}, "pop", None),
])
def test_find_field(record, name, key):
    assert find_field(record, name) == key


@pytest.mark.parametrize(("payload", "value", "unit"), [
    ({"value": 3, "unit": "km"}, 3, "km"), (3, 3, None), ([3], 3, None),
    ({"n_km": 3}, 3, "km"), ({"n": 3, "units": {"n": "m"}}, 3, "m"),
    ({"records": [{"n": 3}], "unit": "m"}, 3, "m"),
])
def test_extract_scalar(payload, value, unit):
    assert extract_scalar(payload, "x") == (value, unit)


# --- list measures --------------------------------------------------------------------------

@pytest.mark.parametrize(("case", "payload", "exact_set", "ranking", "p", "r"), [
    (ENTITIES, entities("CGX", "MDW", "ORD"), True, None, 1.0, 1.0),
    (ENTITIES, entities("CGX", "MDW", "ORD", "PWK"), False, None, 0.75, 1.0),
    (ENTITIES, entities("CGX"), False, None, 1.0, 1 / 3),
    (ENTITIES, entities(), False, None, 0.0, 0.0),
    (ENTITIES, {"wrong": []}, False, None, 0.0, 0.0),
    (ENTITIES_INT, entities("7", 12), False, None, 0.5, 0.5),
    (RANKED, items(("AK", 263), ("TX", 209), ("CA", 205)), True, True, 1.0, 1.0),
    (RANKED, items(("TX", 209), ("AK", 263), ("CA", 205)), True, False, 1.0, 1.0),
    (RANKED, items(("AK", 263), ("TX", 209)), False, False, 1.0, 2 / 3),
    (RANKED_TIES, items(("Houston", 8), ("Miami", 6), ("Indianapolis", 6)), True, True, 1, 1),
    (RECORDS, {"records": [{"census_region": "Midwest", "area_km2": 1.0}]}, False, None, 1, 0.5),
])
def test_list_match(case, payload, exact_set, ranking, p, r):
    match = list_match(case, payload)
    assert match is not None
    assert (match.exact_set, match.ranking_exact) == (exact_set, ranking)
    assert (match.precision, match.recall) == (pytest.approx(p), pytest.approx(r))
    expected_f1 = 2 * p * r / (p + r) if p + r else 0.0
    assert match.f1 == pytest.approx(expected_f1)


def test_list_measures_are_undefined_for_scalars_and_objects():
    assert list_match(SCALAR_COUNT, scalar(209)) is None
    assert list_match(OBJECT_KM, {"iata": "LGA", "distance_km": 17.2}) is None


# --- score_case: trace, routing, FEPSR, tokens ----------------------------------------------

def log_of(*, route: str = "sql_only", outcome: str = "answered", retries: int = 0,
           tools: tuple[tuple[str, str, str], ...] = (), calls: tuple[tuple[str, int, int], ...]
           = (("intent", 300, 40), ("answer", 500, 60)),
           stages: tuple[tuple[str, float, str], ...] = (("intent", 1200.0, "ok"),
                                                          ("answer", 800.0, "ok")),
           variant: str = "FULL") -> ExecutionLog:
    return ExecutionLog(
        run_id="r1", question="q", variant=variant, route=route, outcome=outcome,
        guardrail_retries=retries,
        tool_trace=[ToolTraceEntry(stage="sql-1", tool=t, status=s, detail=d)
                    for t, s, d in tools],
        model_calls=[ModelCall(role=role, stage=role, prompt_tokens=p, completion_tokens=c,
                               requests=1, duration_ms=10.0, status="ok")
                     for role, p, c in calls],
        stages=[StageTiming(stage=name, started_at="t", duration_ms=ms, status=status)
                for name, ms, status in stages],
    )


def answer(answer_type: str, payload: Any) -> FinalAnswer:
    return FinalAnswer(answer_type=answer_type, data_payload=payload, summary="An answer.")


def test_score_case_correct_first_path():
    score = score_case(SCALAR_COUNT, answer("scalar", scalar(209, "count")), log_of())
    assert score.ssa and score.first_path_success and score.schema_valid
    assert (score.prompt_tokens, score.completion_tokens, score.total_tokens) == (800, 100, 900)
    assert score.time_s == pytest.approx(2.0)
    assert score.root_cause is None and score.reason == ""
    assert score.exact_set is None and score.entity_f1 is None
    assert (score.variant, score.repeat, score.difficulty) == ("FULL", 0, "easy")


def test_recovered_case_counts_for_ssa_not_fepsr():
    log = log_of(retries=1, tools=(("executor", "error", "undefined_column error: x"),
                                   ("executor", "ok", "rows")))
    score = score_case(SCALAR_COUNT, answer("scalar", scalar(209)), log)
    assert score.ssa and not score.first_path_success
    assert (score.failed_calls, score.guardrail_retries) == (1, 1)


def test_failed_call_alone_breaks_the_first_path():
    log = log_of(tools=(("sandbox", "error", "exception: boom"),))
    score = score_case(SCALAR_COUNT, answer("scalar", scalar(209)), log)
    assert score.ssa and not score.first_path_success


def test_caller_time_overrides_stage_sum():
    score = score_case(SCALAR_COUNT, answer("scalar", scalar(209)), log_of(), time_s=3.5,
                       variant="NO_STCA", repeat=2)
    assert (score.time_s, score.variant, score.repeat) == (3.5, "NO_STCA", 2)


def test_schema_invalid_payload_can_still_be_correct_when_single_valued():
    score = score_case(SCALAR_COUNT, answer("scalar", {"airport_count": 209}), log_of())
    assert score.ssa and not score.schema_valid


def test_no_answer_scores_zero_for_lists():
    score = score_case(ENTITIES, None, log_of(outcome="failed", tools=(
        ("executor", "error", "syntax error at line 1"),)))
    assert not score.ssa and not score.answered
    assert (score.exact_set, score.entity_precision, score.entity_recall, score.entity_f1) == (
        False, 0.0, 0.0, 0.0)
    assert score.root_cause == RootCause.SQL_LOGIC.value


def test_routing_read_from_the_trace():
    sandbox_case = make_case("scalar", {"value_field": "r", "unit": "ratio"}, 0.5,
                             requires_sandbox=True, category="grouped_aggregation")
    by_route = score_case(sandbox_case, answer("scalar", scalar(0.5)),
                          log_of(route="sql_then_python"))
    by_tool = score_case(sandbox_case, None, log_of(outcome="failed", tools=(
        ("sandbox", "error", "exception: ZeroDivisionError"),)))
    skipped = score_case(sandbox_case, answer("scalar", scalar(0.4)), log_of())
    assert by_route.routed_to_sandbox and by_tool.routed_to_sandbox
    assert not skipped.routed_to_sandbox
    assert by_tool.root_cause == RootCause.COMPUTATION.value
    assert skipped.root_cause == RootCause.PLANNING_ROUTING.value


def test_score_round_trips_through_json():
    score = score_case(RANKED, answer("ranked_list", items(("AK", 263), ("TX", 209),
                                                           ("CA", 205))), log_of())
    again = CaseScore.from_dict(json.loads(json.dumps(score.to_dict())))
    assert again == score
    assert score.ranking_exact is True and score.entity_f1 == 1.0


def test_from_dict_names_missing_fields():
    with pytest.raises(ValueError, match="ssa"):
        CaseScore.from_dict({"case_id": "x"})


# --- root causes ------------------------------------------------------------------------------

@pytest.mark.parametrize(("tool", "detail", "cause"), [
    ("executor", "undefined_column error at line 1, col 8: column x", RootCause.SCHEMA_GROUNDING),
    ("executor", "undefined_table error: relation demo.x", RootCause.SCHEMA_GROUNDING),
    ("executor", "grouping error: must appear in GROUP BY", RootCause.SQL_LOGIC),
    ("guard", "rule query_only: only SELECT", RootCause.SQL_LOGIC),
    ("guard", "rule spatial_policy: ST_Distance is computed in Python", RootCause.PLANNING_ROUTING),
    ("sandbox", "missing_field: 'pop' is not in rows.json", RootCause.ARTIFACT_SPATIAL),
    ("sandbox", "exception: ValueError", RootCause.COMPUTATION),
    ("export", "cannot write", RootCause.ARTIFACT_SPATIAL),
    ("answer_check", "numbers not in evidence", RootCause.ANSWER_PROJECTION),
])
def test_tool_failure_cause(tool, detail, cause):
    assert tool_failure_cause(tool, detail) is cause


WRONG = Verdict(False, "x", "value")


@pytest.mark.parametrize(("verdict", "log", "evidence", "cause"), [
    (Verdict(True), log_of(), None, None),
    (WRONG, log_of(outcome="rejected"), None, RootCause.INTENT),
    (WRONG, log_of(route="sql_then_python"), None, RootCause.PLANNING_ROUTING),
    (WRONG, log_of(), True, RootCause.ANSWER_PROJECTION),
    (WRONG, log_of(), None, RootCause.SQL_LOGIC),
    (Verdict(False, "x", "entities"), log_of(), None, RootCause.SQL_LOGIC),
    (Verdict(False, "x", "field"), log_of(), None, RootCause.ANSWER_PROJECTION),
    (Verdict(False, "x", "contract"), log_of(), None, RootCause.ANSWER_PROJECTION),
    (Verdict(False, "x", "unit"), log_of(), None, RootCause.ARTIFACT_SPATIAL),
    (Verdict(False, "x", "scale"), log_of(), None, RootCause.ARTIFACT_SPATIAL),
    (Verdict(False, "x", "percent"), log_of(), None, RootCause.ANSWER_PROJECTION),
    (Verdict(False, "x", "missing"), log_of(outcome="failed", stages=(
        ("intent", 1.0, "ok"), ("plan", 1.0, "error"))), None, RootCause.PLANNING_ROUTING),
    (Verdict(False, "x", "missing"), None, None, None),
])
def test_root_cause(verdict, log, evidence, cause):
    assert root_cause(SCALAR_COUNT, verdict, log, evidence) is cause


CRS_STOP = (("guard", "ok", "pts"), ("executor", "ok", "pts: 3 rows"),
            ("export", "error", "crs: pts.geom has SRID 0 and no declared CRS"))


def test_a_run_stopped_by_an_unknown_crs_is_a_crs_error_not_a_routing_miss():
    case = make_case("scalar", {"value_field": "r", "unit": "ratio"}, 0.5, requires_sandbox=True,
                     category=Category.AGGREGATION.value)
    log = log_of(outcome="failed", tools=CRS_STOP)  # never reached the Python step
    assert root_cause(case, Verdict(False, "x", "missing"), log) is RootCause.CRS
    crs_run = score_case(case, None, log)
    routed_run = score_case(case, None, log_of(outcome="failed"))
    assert crs_run.root_cause == "crs" and routed_run.root_cause == "planning_routing"
    assert routing_metrics([crs_run, routed_run]).fn == 1  # only the real routing miss


def test_a_step_refused_for_its_inputs_crs_is_a_crs_error_not_a_routing_miss():
    case = make_case("scalar", {"value_field": "r", "unit": "ratio"}, 0.5, requires_sandbox=True,
                     category=Category.AGGREGATION.value)
    refused = (("guard", "ok", "pts"), ("executor", "ok", "pts: 3 rows"),
               ("pre_dispatch", "rejected", "the files of sql-1.x no longer exist (/x); crs: "
                "python-1 expects features in EPSG:4326 (or planar ones), got sql-1.pts"))
    log = log_of(outcome="failed", tools=refused)  # never reached the sandbox
    assert root_cause(case, Verdict(False, "x", "missing"), log) is RootCause.CRS
    other = (("pre_dispatch", "rejected", "python-1 would mount two files named a.geojson"),)
    assert tool_failure_cause("pre_dispatch", other[0][2]) is RootCause.ARTIFACT_SPATIAL


def test_wrong_number_after_python_is_computation():
    case = make_case("scalar", {"value_field": "r", "unit": "ratio"}, 0.5, requires_sandbox=True,
                     category=Category.AGGREGATION.value)
    assert root_cause(case, WRONG, log_of(route="sql_then_python")) is RootCause.COMPUTATION


@pytest.mark.parametrize(("output", "agrees"), [
    ([{"mean_nn_km": 20.22}], True),
    ([{"mean_nn_km": 20.3}], False),
    ([{"mean_nn_km": 20.22}, {"mean_nn_km": 1.0}], False),
    ({"other": 1}, False),
])
def test_evidence_agrees(output, agrees):
    assert evidence_agrees(SCALAR_KM, output) is agrees


def test_wrong_answer_over_right_evidence_is_answer_projection():
    wrong = answer("scalar", scalar(20.5, "km"))
    right_evidence = evidence_agrees(SCALAR_KM, [{"mean_nn_km": 20.2188}])
    score = score_case(SCALAR_KM, wrong, log_of(), evidence_matches=right_evidence)
    assert score.root_cause == RootCause.ANSWER_PROJECTION.value
    assert score_case(SCALAR_KM, wrong, log_of()).root_cause == RootCause.SQL_LOGIC.value


def test_unit_slip_is_blamed_on_spatial_semantics():
    score = score_case(SCALAR_KM, answer("scalar", scalar(20218.8)), log_of())
    assert not score.ssa and "factor 1000" in score.reason
    assert score.root_cause == RootCause.ARTIFACT_SPATIAL.value
