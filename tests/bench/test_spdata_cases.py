"""The spdata benchmark cases (benchmark/databases/spdata/cases): valid, about the spdata catalog,
enough of them of every kind, and one sandbox case recomputed end to end on a loaded spdata."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest
import sqlglot
import yaml
from sqlglot import exp
from typer.testing import CliRunner

from agents.intent import IntentDeps, intent_agent
from agents.intent import prompt as intent_prompt
from geoask.app.cli import app
from geoask.cases.loader import load_cases, run_target
from geoask.cases.model import Category
from geoask.catalog.model import load_catalog
from geoask.run.composition import model_provider
from geoask.settings import get_settings
from geoask.vocabulary.plan import IntentRejection

SPDATA = Path(__file__).resolve().parents[2] / "benchmark" / "databases" / "spdata"
CASES = SPDATA / "cases"


@pytest.fixture(scope="module")
def loaded():
    """Every spdata case, validated by the case model (the loader raises on any error)."""
    return load_cases(CASES)


def test_every_file_names_the_spdata_catalog_and_database(loaded):
    files = sorted(CASES.glob("*.yaml"))
    assert len(files) >= 4
    for path in files:
        top = yaml.safe_load(path.read_text())
        assert top["database"] == "spdata", path.name
        assert (path.parent / top["catalog"]).resolve() == (SPDATA / "catalog.yaml").resolve()
    target = run_target(loaded)  # one catalog and database for the whole folder
    assert target.catalog == (SPDATA / "catalog.yaml").resolve() and target.database == "spdata"


def test_the_set_has_the_size_and_mix_the_issue_asks_for(loaded):
    cases = [item.case for item in loaded]
    assert len(cases) >= 32
    assert len({case.id for case in cases}) == len(cases)
    assert set(Counter(case.difficulty for case in cases)) == {"easy", "medium", "hard"}
    assert set(Counter(case.category for case in cases)) == set(Category)
    assert sum(case.requires_sandbox for case in cases) >= 12
    for case in cases:
        assert case.expected.value is not None, f"{case.id}: run geoask bench fill"
        if case.category in (Category.SPATIAL, Category.STATISTICS):
            assert case.cross_check is not None, case.id


def test_reference_sql_reads_only_tables_of_the_spdata_catalog(loaded):
    catalog = load_catalog(SPDATA / "catalog.yaml")
    known = {catalog.qualified_name(table) for table in catalog.tables}
    read: set[str] = set()
    for item in loaded:
        for step in item.case.reference.steps:
            for statement in getattr(step, "statements", ()):
                tables = {f"{t.db}.{t.name}" for t in
                          sqlglot.parse_one(statement.sql, read="postgres").find_all(exp.Table)}
                assert tables <= known, f"{item.case.id}: {sorted(tables - known)}"
                read |= tables
    # both schemas, the view and the undeclared join keys' two sides are exercised
    assert {"us_census.ny8_tract_rates", "us_census.ny8_leukemia", "us_census.ny8_tracts",
            "us_census.boston_tracts", "europe.lux_districts", "europe.london_cycle_docks"} <= read


def test_the_reference_model_replays_the_cases_of_the_configured_case_path(loaded):
    """`ask --model reference` on your own data replays GEOASK_BENCH_CASES_PATH, not the demo."""
    question = next(item.case.question for item in loaded if item.case.id == "lux-006")
    deps = IntentDeps(question=question, catalog_summary="europe.lux_cantons: cantons")

    def intent(settings):
        model = model_provider(settings, "reference")("intent")
        return intent_agent.run_sync(intent_prompt(deps), deps=deps, model=model).output

    demo = get_settings()
    assert isinstance(intent(demo), IntentRejection)  # the demo's cases do not hold it
    mine = demo.model_copy(update={"bench_cases_path": CASES})
    assert not isinstance(intent(mine), IntentRejection)


@pytest.mark.db
@pytest.mark.sandbox
def test_a_sandbox_case_verifies_on_a_loaded_spdata(spdata_loaded, tmp_path):
    """ny8-007 (UTM 18N areas + geography cross-check) through `bench verify` on the spdata the
    session loaded (tests/conftest.py)."""
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    cases = yaml.safe_load((CASES / "ny8_leukemia.yaml").read_text())["cases"]
    (case,) = [case for case in cases if case["id"] == "ny8-007"]
    here = tmp_path / "one.yaml"
    here.write_text(yaml.safe_dump({"catalog": str(SPDATA / "catalog.yaml"),
                                    "database": spdata_loaded.name, "cases": [case]}))
    result = CliRunner().invoke(app, ["bench", "verify", "--tasks-file", str(here)])
    assert "1/1 cases verified (1 with a cross-check, 1 need the sandbox)" in result.output, \
        result.output
    case["expected"]["value"] *= 1.01  # a wrong area must fail
    here.write_text(yaml.safe_dump({"catalog": str(SPDATA / "catalog.yaml"),
                                    "database": spdata_loaded.name, "cases": [case]}))
    result = CliRunner().invoke(app, ["bench", "verify", "--tasks-file", str(here)])
    assert result.exit_code == 1 and "FAIL ny8-007" in result.output, result.output
