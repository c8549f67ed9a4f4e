"""SRID 0 columns: ``catalog draft`` writes ``geo.crs: TODO``, ``catalog check`` takes a declared
``geo.crs`` and the export uses it (never a guess from the coordinates)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

from geoask.catalog.check import check_catalog
from geoask.catalog.columns import declared_planar, declared_srids
from geoask.catalog.draft import draft_catalog
from geoask.catalog.model import TODO, Catalog
from geoask.db.cluster import READER_ROLE
from geoask.sql.context import GuardContext
from geoask.sql.executor import PostgresSqlRunner
from geoask.sql.step import run_statement

pytestmark = pytest.mark.db

SCHEMA = "srid0_test"
_DDL = """
CREATE SCHEMA {s};
CREATE TABLE {s}.plan_ft (id integer PRIMARY KEY, geom geometry(Polygon));
INSERT INTO {s}.plan_ft SELECT i, ST_MakeEnvelope(1000 * i, 0, 1000 * i + 500, 400)
FROM generate_series(1, 3) i;
CREATE TABLE {s}.plan_ll (id integer PRIMARY KEY, geom geometry(Point));
INSERT INTO {s}.plan_ll VALUES (1, ST_Point(-73.98, 40.75)), (2, ST_Point(-73.9, 40.8));
CREATE TABLE {s}.located (id integer PRIMARY KEY, geom geometry(Point, 4326));
INSERT INTO {s}.located VALUES (1, ST_Point(-73.98, 40.75, 4326));
GRANT USAGE ON SCHEMA {s} TO {reader};
GRANT SELECT ON ALL TABLES IN SCHEMA {s} TO {reader};
"""


@pytest.fixture(scope="module")
def srid0(database) -> Iterator[str]:
    """Schema ``srid0_test`` created as the owner role; dropped afterwards."""
    with psycopg.connect(database.owner_url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(SCHEMA)))
        conn.execute(sql.SQL(_DDL).format(s=sql.Identifier(SCHEMA),
                                          reader=sql.Identifier(READER_ROLE)))
        yield database.reader_url
        conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(SCHEMA)))


def _declare(catalog: Catalog, crs: dict[str, dict[str, Any]]) -> Catalog:
    """``catalog`` with ``geo`` fields of ``table -> {field: value}`` replaced."""
    data = catalog.model_dump(by_alias=True)
    for table in data["tables"]:
        for column in table["columns"]:
            if column["name"] == "geom" and table["name"] in crs:
                column["geo"].update(crs[table["name"]])
    return Catalog.model_validate(data)


def test_draft_writes_crs_todo_with_the_coordinates_as_a_hint_not_a_decision(srid0: str):
    catalog = draft_catalog(srid0, [SCHEMA])
    geo = {t.name: t.column("geom").geo for t in catalog.tables}
    assert geo["plan_ft"].crs == TODO and "are not longitude/latitude" in geo["plan_ft"].crs_note
    assert geo["plan_ll"].crs == TODO
    assert "lie within longitude/latitude range" in geo["plan_ll"].crs_note
    assert geo["located"].crs is None and geo["located"].crs_note is None
    assert declared_srids(catalog) == {f"{SCHEMA}.located.geom": 4326}  # no guessed 4326
    todos = catalog.todos()
    assert any(line.startswith("plan_ll.geom: geo.crs is TODO (SRID 0: coordinates")
               for line in todos)
    assert check_catalog(srid0, catalog, todos=False) == []


@pytest.mark.parametrize(("declared", "problems"), [
    ({"plan_ft": {"crs": "planar", "units": "foot"}, "plan_ll": {"crs": "EPSG:4326"}}, []),
    ({"plan_ft": {"crs": None}, "plan_ll": {"crs": "EPSG:4326"},
      "located": {"crs": "EPSG:4326"}},
     ["located.geom: geo.crs EPSG:4326 in the catalog, but the database has SRID 4326: "
      "declare a CRS only for SRID 0 columns",
      "plan_ft.geom: SRID 0 in the database and no geo.crs in the catalog: the export refuses "
      "it until geo.crs is EPSG:<code> or planar (with geo.units metre|foot|unknown)"]),
], ids=["declared", "misdeclared and undeclared"])
def test_check_accepts_a_declared_crs_on_srid_0_only(srid0: str, declared, problems):
    catalog = _declare(draft_catalog(srid0, [SCHEMA]), declared)
    assert sorted(check_catalog(srid0, catalog, todos=False)) == sorted(problems)


def test_the_export_uses_the_catalogs_declarations(srid0: str, tmp_path: Path):
    catalog = _declare(draft_catalog(srid0, [SCHEMA]), {
        "plan_ft": {"crs": "planar", "units": "foot"}, "plan_ll": {"crs": "EPSG:4326"}})
    assert declared_planar(catalog) == {f"{SCHEMA}.plan_ft.geom": "foot"}
    context = GuardContext(declared_srids=declared_srids(catalog),
                           declared_planar=declared_planar(catalog))
    runner = PostgresSqlRunner(srid0)
    planar = run_statement(f"SELECT id, geom FROM {SCHEMA}.plan_ft ORDER BY id", context,
                           runner, str(tmp_path), name="plan")
    collection = json.loads(Path(planar.exported.data_path).read_text())
    assert collection["features"][0]["geometry"]["coordinates"][0][0] == [1000.0, 0.0]
    assert collection["native_crs"]["geom"]["crs"] == "planar"
    lonlat = run_statement(f"SELECT id, geom FROM {SCHEMA}.plan_ll ORDER BY id", context,
                           runner, str(tmp_path), name="points")
    recorded = lonlat.exported.preview.native_crs[0]
    assert recorded["crs"] == "EPSG:4326" and "as the catalog declares" in recorded["note"]
