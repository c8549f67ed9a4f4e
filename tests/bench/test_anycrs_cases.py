"""The anycrs benchmark cases (benchmark/databases/anycrs/cases): valid, about the anycrs catalog,
covering every kind of CRS it holds, and two sandbox cases recomputed on a freshly loaded anycrs
(its own spatial_ref_sys row created by the loader, SRID 0 in feet)."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import psycopg
import pytest
import sqlglot
import yaml
from sqlglot import exp
from typer.testing import CliRunner

from flows.load_dataset import load_dataset
from geoask.app.cli import app
from geoask.cases.loader import load_cases, run_target
from geoask.cases.model import Category
from geoask.catalog.model import load_catalog
from geoask.db.urls import uses_external_database
from geoask.errors import DatasetError

ANYCRS = Path(__file__).resolve().parents[2] / "benchmark" / "databases" / "anycrs"
CASES = ANYCRS / "cases"
# the geometry table of each kind of CRS the database holds
CRS_KINDS = {"own spatial_ref_sys (990030, km)": "regions.eire_counties",
             "SRID 0, unknown units": "regions.columbus_neighbourhoods",
             "EPSG:4674, degrees": "regions.bh_municipalities",
             "SRID 0, feet": "forest.lansing_trees"}


@pytest.fixture(scope="module")
def loaded():
    """Every anycrs case, validated by the case model (the loader raises on any error)."""
    return load_cases(CASES)


def test_every_file_names_the_anycrs_catalog_and_database(loaded):
    for path in sorted(CASES.glob("*.yaml")):
        top = yaml.safe_load(path.read_text())
        assert top["database"] == "anycrs", path.name
        assert (path.parent / top["catalog"]).resolve() == (ANYCRS / "catalog.yaml").resolve()
    target = run_target(loaded)
    assert target.catalog == (ANYCRS / "catalog.yaml").resolve() and target.database == "anycrs"


def test_at_least_twenty_filled_cases_and_every_spatial_one_is_cross_checked(loaded):
    cases = [item.case for item in loaded]
    assert len(cases) >= 20 and len({case.id for case in cases}) == len(cases)
    assert sum(case.requires_sandbox for case in cases) >= 15
    for case in cases:
        assert case.expected.value is not None, f"{case.id}: run geoask bench fill"
        if case.category in (Category.SPATIAL, Category.STATISTICS):
            assert case.cross_check is not None and case.cross_check.policy == "postgis", case.id


def _tables(sql: str) -> set[str]:
    return {f"{t.db}.{t.name}" for t in sqlglot.parse_one(sql, read="postgres").find_all(exp.Table)}


def test_every_crs_kind_has_sandbox_cases_and_the_non_key_joins_are_used(loaded):
    catalog = load_catalog(ANYCRS / "catalog.yaml")
    known = {catalog.qualified_name(table) for table in catalog.tables}
    sandboxed: dict[str, int] = {}
    joined: set[frozenset[str]] = set()
    for item in loaded:
        for step in item.case.reference.steps:
            for statement in getattr(step, "statements", ()):
                tables = _tables(statement.sql)
                assert tables <= known, f"{item.case.id}: {sorted(tables - known)}"
                if item.case.requires_sandbox:
                    for table in tables:
                        sandboxed[table] = sandboxed.get(table, 0) + 1
                if len(tables) == 2:
                    joined.add(frozenset(tables))
    for kind, table in CRS_KINDS.items():
        assert sandboxed.get(table, 0) >= 4, kind
    assert frozenset({"regions.eire_counties", "regions.eire_county_statistics"}) in joined
    assert any("forest.lansing_species" in _tables(s.sql) for item in loaded
               for step in item.case.reference.steps for s in getattr(step, "statements", ()))


@pytest.mark.db
@pytest.mark.sandbox
def test_own_crs_and_feet_cases_verify_on_a_fresh_anycrs(database, tmp_path):
    """eire-003 (SRID 990030 created by the loader) and lan-002 (SRID 0 in feet), then a
    manifest redefining 990030 is refused."""
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    if uses_external_database(database.settings):
        pytest.skip("loads into a new database of the embedded cluster")
    name = f"anycrs_c{uuid.uuid4().hex[:8]}"
    raw = yaml.safe_load((ANYCRS / "dataset.yaml").read_text())
    raw["database"] = name
    manifest = tmp_path / "dataset.yaml"
    shutil.copytree(ANYCRS / "data", tmp_path / "data")
    manifest.write_text(yaml.safe_dump(raw))
    try:
        load_dataset(manifest)
        cases = [case for file in ("ireland.yaml", "lansing.yaml")
                 for case in yaml.safe_load((CASES / file).read_text())["cases"]
                 if case["id"] in ("eire-003", "lan-002")]
        here = tmp_path / "two.yaml"
        top = {"catalog": str(ANYCRS / "catalog.yaml"), "database": name}
        here.write_text(yaml.safe_dump({**top, "cases": cases}))
        result = CliRunner().invoke(app, ["bench", "verify", "--tasks-file", str(here)])
        assert "2/2 cases verified (2 with a cross-check, 2 need the sandbox)" in result.output, \
            result.output
        cases[1]["expected"]["value"] += 1  # a wrong count in feet must fail
        here.write_text(yaml.safe_dump({**top, "cases": cases}))
        result = CliRunner().invoke(app, ["bench", "verify", "--tasks-file", str(here)])
        assert result.exit_code == 1 and "FAIL lan-002" in result.output, result.output
        raw["spatial_ref_sys"][0]["proj4text"] = "+proj=utm +zone=29 +ellps=airy +units=km"
        manifest.write_text(yaml.safe_dump(raw))
        with pytest.raises(DatasetError, match="SRID 990030 is already defined otherwise"):
            load_dataset(manifest, force=True)
    finally:
        with psycopg.connect(database.owner_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
