"""Case files may name a free-form scenario and the catalog/database their cases run on."""

from __future__ import annotations

import shutil

import psycopg
import pytest
import yaml
from test_bench_cases import VALID, _variant
from typer.testing import CliRunner

from geoask.app.cli import app
from geoask.cases.loader import (
    DEFAULT_CASES_DIR,
    CaseTarget,
    load_case_file,
    load_cases,
    run_target,
)
from geoask.catalog.model import CATALOG_PATH
from geoask.errors import BenchmarkCaseError
from geoask.run.composition import settings_for_target
from geoask.settings import get_settings


def _file(folder, name, cases, **top):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(yaml.safe_dump({**top, "cases": cases}, sort_keys=False))
    return path


def test_a_free_form_scenario_is_accepted_and_a_bad_one_refused(tmp_path):
    path = _file(tmp_path, "c.yaml", [_variant(scenario="census_tracts")])
    assert load_case_file(path)[0].case.scenario == "census_tracts"
    bad = _file(tmp_path, "bad.yaml", [_variant(scenario="Census Tracts")])
    with pytest.raises(BenchmarkCaseError, match="scenario"):
        load_case_file(bad)


def test_catalog_is_relative_to_the_case_file_and_database_is_kept(tmp_path):
    (tmp_path / "db").mkdir()
    shutil.copy(CATALOG_PATH, tmp_path / "db" / "catalog.yaml")
    path = _file(tmp_path / "db" / "cases", "c.yaml", [VALID],
                 catalog="../catalog.yaml", database="spdata")
    (item,) = load_case_file(path)
    assert item.target == CaseTarget((tmp_path / "db" / "catalog.yaml").resolve(), "spdata")


def test_a_catalog_that_is_not_there_is_a_clear_error(tmp_path):
    path = _file(tmp_path, "c.yaml", [VALID], catalog="missing.yaml")
    with pytest.raises(BenchmarkCaseError, match=r"catalog 'missing\.yaml' names no file"):
        load_case_file(path)


def test_a_catalog_must_be_a_yaml_file(tmp_path):
    path = _file(tmp_path, "c.yaml", [VALID], catalog="../../../../etc/passwd")
    with pytest.raises(BenchmarkCaseError, match="is not a catalog YAML file") as error:
        load_case_file(path)
    assert "root:" not in str(error.value)


def test_files_naming_different_databases_cannot_share_a_run(tmp_path):
    _file(tmp_path, "a.yaml", [VALID], database="spdata")
    _file(tmp_path, "b.yaml", [_variant(id="airports-901")])
    loaded = load_cases(tmp_path)
    with pytest.raises(BenchmarkCaseError, match="different catalogs or databases") as error:
        run_target(loaded)
    assert "a.yaml: catalog the configured one, database spdata" in str(error.value)
    assert run_target(loaded[:1]) == CaseTarget(None, "spdata")
    assert run_target([]) == CaseTarget()


def test_target_settings_replace_catalog_and_database_name_only(tmp_path):
    settings = get_settings().model_copy(update={
        "database_url": "postgresql://reader:pw@db.example:5433/geoask"})
    assert settings_for_target(settings, CaseTarget()) is settings
    moved = settings_for_target(settings, CaseTarget(tmp_path / "c.yaml", "spdata"))
    assert moved.catalog_path == tmp_path / "c.yaml"
    parts = psycopg.conninfo.conninfo_to_dict(moved.database_url)
    assert parts == {"user": "reader", "password": "pw", "host": "db.example", "port": "5433",
                     "dbname": "spdata"}


@pytest.mark.db
@pytest.mark.sandbox
def test_verify_runs_on_the_database_the_file_names(database, tmp_path):
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    shutil.copy(CATALOG_PATH, tmp_path / "catalog.yaml")
    shipped = yaml.safe_load((DEFAULT_CASES_DIR / "airports.yaml").read_text())["cases"][0]
    here = _file(tmp_path, "here.yaml", [shipped], catalog="catalog.yaml", database="geoask")
    result = CliRunner().invoke(app, ["bench", "verify", "--tasks-file", str(here)])
    assert "1/1 cases verified" in result.output, result.output
    elsewhere = _file(tmp_path, "elsewhere.yaml", [shipped], database="no_such_database")
    result = CliRunner().invoke(app, ["bench", "verify", "--tasks-file", str(elsewhere)])
    assert result.exit_code != 0
    assert "no_such_database" in str(result.exception or result.output)
