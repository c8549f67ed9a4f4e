"""The scale benchmark's case templates and file cross-check: screens, boxes, comparisons."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import shapely

SCALE = Path(__file__).resolve().parents[1] / "benchmark" / "databases" / "scale"
sys.path.insert(0, str(SCALE))
import build_cases  # noqa: E402
import case_parts  # noqa: E402
import crosscheck  # noqa: E402
import generate  # noqa: E402

EXACT = re.compile(r"ST_(Within|DWithin|Intersects|Contains|Distance|Area|Length)", re.I)


def _reference_sql(case: dict) -> list[str]:
    return [
        s["sql"]
        for step in case["reference"]["steps"]
        if step["kind"] == "sql"
        for s in step["statements"]
    ]


def test_thirty_cases_with_unique_ids_and_a_computation_each() -> None:
    cases = build_cases.all_cases()
    assert len(cases) == 30
    assert len({c["id"] for c in cases}) == 30
    assert len(crosscheck.computations()) == len(cases)


def test_reference_sql_screens_big_tables_by_box_and_never_refines() -> None:
    for case in build_cases.all_cases():
        for sql in _reference_sql(case):
            assert not EXACT.search(sql), (case["id"], sql)
            if re.search(r"scale\.(poi|parcels|roads)\b", sql):
                assert "geom && ST_" in sql, (case["id"], sql)


def test_district_screens_use_constant_envelopes_not_subqueries() -> None:
    for case in build_cases.all_cases():
        for sql in _reference_sql(case):
            if "ST_MakeEnvelope" in sql:
                assert "ST_Transform" not in sql and "districts" not in sql, sql


def test_district_box_is_the_generated_district_rectangle() -> None:
    districts = generate.districts().set_index("name")
    for name in ["High Country", "Triangle", "Pamlico"]:
        box = case_parts.district_lonlat_box([name])
        assert shapely.box(*box).equals_exact(districts.geometry[name].normalize(), 1e-9) or (
            pytest.approx(box) == tuple(districts.geometry[name].bounds)
        )
    row = case_parts.district_lonlat_box(build_cases.NORTH_ROW)
    assert pytest.approx(row) == tuple(
        districts[districts.index.isin(build_cases.NORTH_ROW)].total_bounds
    )


def test_lonlat_envelope_keeps_decimals_and_projected_one_rounds() -> None:
    lonlat = case_parts.district_box(["Triangle"], 4326, 0.001)
    utm = case_parts.district_box(["Triangle"], 32617, 500)
    assert re.fullmatch(r"ST_MakeEnvelope\(-?\d+\.\d+, [\d.]+, -?\d+\.\d+, [\d.]+, 4326\)", lonlat)
    assert re.fullmatch(r"ST_MakeEnvelope\(\d+, \d+, \d+, \d+, 32617\)", utm)


@pytest.mark.parametrize(
    ("got", "expected", "tolerance", "same"),
    [
        (1740, 1740, {"abs": 0}, True),
        (1743, 1740, {"abs": 0}, False),
        (100.00001, 100.0, {"rel": 1e-6}, True),
        (100.001, 100.0, {"rel": 1e-6}, False),
        ([{"id": 1, "value": 2.5}], [{"id": 1, "value": 2.0}], {"abs": 1.0}, True),
        ([{"id": 2, "value": 2.0}], [{"id": 1, "value": 2.0}], {"abs": 1.0}, False),
        ([{"k": "a", "v": 1}], [{"k": "a", "v": 1}, {"k": "b", "v": 1}], {"abs": 0}, False),
    ],
)
def test_close_compares_within_tolerance(
    got: object, expected: object, tolerance: dict, same: bool
) -> None:
    assert crosscheck.close(got, expected, tolerance) is same


@pytest.mark.parametrize("suffix", [".geojson", ".parquet"])
def test_reference_scripts_pass_the_compute_agents_checks_in_either_export_format(suffix):
    from agents.compute import SCRIPT_RULES, InputArtifact, parse_script, reads_every_input

    for case in build_cases.all_cases():
        for step in case["reference"]["steps"]:
            if step["kind"] != "python":
                continue
            tree = parse_script(step["script"])
            assert not isinstance(tree, str), (case["id"], tree)
            inputs = [InputArtifact(name, f"/input/{name}{suffix}", "") for name in step["inputs"]]
            errors = [rule(tree) for rule in SCRIPT_RULES] + [reads_every_input(tree, inputs)]
            assert [e for e in errors if e] == [], case["id"]
