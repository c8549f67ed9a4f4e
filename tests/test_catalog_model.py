"""Catalog model validation and DDL generation, table-driven."""

from __future__ import annotations

import copy

import pytest
import yaml
from psycopg import sql
from pydantic import ValidationError

from geoask.catalog.ddl import column_comment, column_type, create_table
from geoask.catalog.model import (
    CATALOG_PATH,
    COMMON_SPATIAL_GRANULARITIES,
    Catalog,
    Column,
    GeoInfo,
    load_catalog,
)
from geoask.catalog.spatial import SpatialKind
from geoask.errors import CatalogError

VALID = {
    "version": 1,
    "schema": "demo",
    "description": "Test catalog.",
    "tables": [
        {"name": "a", "title": "A", "theme": "A table about states for tests.",
         "spatial_granularity": "state", "temporal_granularity": "static", "source": "test",
         "expected_rows": 1, "primary_key": ["id"],
         "columns": [{"name": "id", "type": "char(2)", "description": "Identifier of a."},
                     {"name": "geom", "type": "geometry(MultiPolygon,4326)",
                      "description": "Boundary in EPSG:4326."}]},
        {"name": "b", "title": "B", "theme": "Annual values of table a for tests.",
         "spatial_granularity": "state", "temporal_granularity": "annual", "source": "test",
         "expected_rows": 2, "primary_key": ["id", "year"],
         "foreign_keys": [{"columns": ["id"], "ref_table": "a", "ref_columns": ["id"]}],
         "columns": [{"name": "id", "type": "char(2)", "description": "Identifier of a."},
                     {"name": "year", "type": "integer", "description": "Calendar year."}]},
    ],
    "join_paths": [{"left": "b.id", "right": "a.id", "kind": "foreign_key",
                    "description": "b belongs to a."}],
}


def _mutated(path: list, value) -> dict:
    data = copy.deepcopy(VALID)
    target = data
    for key in path[:-1]:
        target = target[key]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return data


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (["tables", 1, "foreign_keys", 0, "ref_table"], "zz", "unknown table zz"),
        (["tables", 1, "foreign_keys", 0, "ref_columns"], ["nope"], "a.nope"),
        (["tables", 0, "primary_key"], ["missing"], "key columns ['missing']"),
        (["join_paths", 0, "right"], "a.nope", "a.nope"),
        (["join_paths", 0, "left"], "zz.id", "unknown table zz"),
        (["join_paths", 0, "kind"], "magic", "kind"),
        (["tables", 0, "spatial_granularity"], "Census Tract", "spatial_granularity"),
        (["tables", 0, "spatial_granularity"], "tract-level", "spatial_granularity"),
        (["tables", 0, "temporal_granularity"], "fortnightly", "temporal_granularity"),
        (["tables", 1, "name"], "a", "unique across schemas: ['a']"),
        (["tables", 0, "expected_rows"], 0, "expected_rows"),
        (["tables", 0, "theme"], "short", "theme"),
        (["tables", 0, "columns", 0, "description"], "x", "description"),
        (["tables", 0, "columns", 0, "colour"], "red", "colour"),
        (["version"], KeyError, "version"),
        (["tables", 0, "unique"], [["nope"]], "key columns ['nope']"),
        (["join_paths", 0, "predicate"], "ST_Within", "a predicate is for spatial joins only"),
        (["join_paths", 0, "match_share"], 0.5, "match_share is for spatial and attribute"),
    ],
)
def test_invalid_catalogs_are_rejected(tmp_path, path, value, message):
    file = tmp_path / "catalog.yaml"
    file.write_text(yaml.safe_dump(_mutated(path, value)))
    with pytest.raises(CatalogError, match="invalid") as error:
        load_catalog(file)
    assert message in str(error.value)
    assert "\n" not in str(error.value) and "errors.pydantic.dev" not in str(error.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [("root:x:0:0:secret-hash:/root:/bin/bash\n",
      "(top level): Input should be a valid dictionary"),
     ("- secret-hash\n- b\n", "Input should be a valid dictionary"),
     ("tables: [secret-hash, b\n", "is not YAML"),
     ("", "Input should be a valid dictionary")],
)
def test_a_file_that_is_no_catalog_is_one_line_that_never_echoes_its_content(tmp_path, text,
                                                                              message):
    file = tmp_path / "passwd"
    file.write_text(text)
    with pytest.raises(CatalogError) as error:
        load_catalog(file)
    assert message in str(error.value)
    assert "secret-hash" not in str(error.value) and "\n" not in str(error.value)


def test_valid_catalog_loads(tmp_path):
    file = tmp_path / "catalog.yaml"
    file.write_text(yaml.safe_dump(VALID))
    catalog = load_catalog(file)
    assert catalog.table("a").geometry_column.name == "geom"
    assert catalog.table("b").geometry_column is None
    with pytest.raises(CatalogError, match="known tables: a, b"):
        catalog.table("c")


def test_missing_catalog_file(tmp_path):
    with pytest.raises(CatalogError, match="does not exist"):
        load_catalog(tmp_path / "nope.yaml")


@pytest.mark.parametrize(
    "bad_type",
    ["text); DROP TABLE x; --", "geometry(Point,3857)", "serial", "int[]", "text collate x"],
)
def test_unsupported_column_types_are_refused(bad_type):
    with pytest.raises(CatalogError, match="unsupported type"):
        column_type(Column(name="c", type=bad_type, description="A test column."))


def test_create_table_and_comment_texts():
    table = Catalog.model_validate(VALID).table("b")
    statement = create_table("demo", table).as_string(None)
    assert statement == 'CREATE TABLE "demo"."b" ("id" char(2), "year" integer)'
    column = Column(name="p", type="double precision", description="Precipitation total.",
                    unit="mm", range=(0.0, 512.5), abbreviations={"pr": "precipitation"})
    assert column_comment(column) == (
        "Precipitation total. Unit: mm. Range: 0.0 to 512.5. Abbreviations: pr = precipitation.")
    assert isinstance(column_type(column), sql.SQL)


def test_todo_markers_load_and_are_listed(tmp_path):
    data = _mutated(["tables", 0, "theme"], "TODO")
    table = data["tables"][0]
    table["spatial_granularity"] = "TODO"
    table["temporal_granularity"] = "TODO"
    table["expected_rows"] = "TODO"
    table["columns"][0]["description"] = "TODO"
    table["columns"][0]["unit"] = "TODO"
    data["join_paths"][0]["inferred"] = True
    file = tmp_path / "catalog.yaml"
    file.write_text(yaml.safe_dump(data))
    catalog = load_catalog(file)
    name, column = table["name"], table["columns"][0]["name"]
    path = data["join_paths"][0]
    assert catalog.todos() == [
        f"{name}: theme is TODO",
        f"{name}: spatial_granularity is TODO",
        f"{name}: temporal_granularity is TODO",
        f"{name}: expected_rows is TODO",
        f"{name}.{column}: description is TODO",
        f"{name}.{column}: unit is TODO",
        f"{path['left']} ~ {path['right']}: inferred join path; confirm it (inferred: false) "
        "or delete it",
    ]


def test_demo_catalog_has_no_todos_and_loads_as_before():
    catalog = load_catalog()
    assert catalog.todos() == []
    assert all(t.kind == "table" and t.schema_name is None and not t.rows_estimated
               for t in catalog.tables)
    assert {t.spatial_granularity for t in catalog.tables} <= set(COMMON_SPATIAL_GRANULARITIES)
    assert not any(j.inferred for j in catalog.join_paths)


@pytest.mark.parametrize("label", ["parcel", "census_tract", "canton", "grid_cell_5km"])
def test_any_lower_snake_case_spatial_granularity_is_accepted(label):
    catalog = Catalog.model_validate(_mutated(["tables", 0, "spatial_granularity"], label))
    assert catalog.tables[0].spatial_granularity == label


def test_tables_are_qualified_by_their_own_schema():
    raw = _mutated(["tables", 1, "schema"], "annual")
    catalog = Catalog.model_validate(raw)
    assert [catalog.qualified_name(t) for t in catalog.tables] == ["demo.a", "annual.b"]


@pytest.mark.parametrize("value", ["todo", "TODO later", "short"])
def test_only_the_exact_todo_marker_stands_in_for_a_theme(tmp_path, value):
    file = tmp_path / "catalog.yaml"
    file.write_text(yaml.safe_dump(_mutated(["tables", 0, "theme"], value)))
    with pytest.raises(CatalogError, match="theme"):
        load_catalog(file)


def test_raster_columns_carry_bands_crs_and_resolution():
    table = load_catalog().table("lux_elevation")
    rast = table.raster_column
    assert rast is not None and rast.spatial is SpatialKind.RASTER and not rast.is_geometry
    assert table.geometry_column is None and table.spatial_columns == [rast]
    assert rast.raster is not None and rast.raster.srid == 4326
    assert [(b.index, b.unit, b.nodata) for b in rast.raster.bands] == [(1, "m", -32768)]
    assert len(load_catalog().table("landsat_etm").raster_column.raster.bands) == 6


def test_raster_facts_on_a_geometry_column_are_refused():
    data = yaml.safe_load(CATALOG_PATH.read_text(encoding="utf-8"))
    table = next(t for t in data["tables"] if t["name"] == "lux_cantons")
    raster = next(t for t in data["tables"] if t["name"] == "lux_elevation")["columns"][1]["raster"]
    table["columns"][-1]["raster"] = raster
    with pytest.raises(ValidationError, match="raster facts on a geometry"):
        Catalog.model_validate(data)


def test_ddl_adds_raster_constraints_and_a_convex_hull_index():
    from geoask.catalog.ddl import constraints

    table = load_catalog().table("landsat_etm")
    statements = [s.as_string(None) for s in constraints("demo", table)]
    assert any("USING gist (ST_ConvexHull(\"rast\"))" in s for s in statements)
    assert any(s.startswith("SELECT AddRasterConstraints('demo'::name, 'landsat_etm'::name")
               for s in statements)


@pytest.mark.parametrize(("loaded", "shown"), [
    ([1, 10], "Range: 1 to 10."), ([0.5, 12.25], "Range: 0.5 to 12.25."),
    (["1999-01-01", "2020-12-31"], "Range: 1999-01-01 to 2020-12-31."),
])
def test_a_range_keeps_the_type_of_its_values(loaded, shown):
    """Integer ranges stay integers (catalog show printed 1.0 to 10.0)."""
    from geoask.catalog.ddl import column_comment

    column = Column.model_validate({"name": "n", "type": "integer", "range": loaded,
                                    "description": "how many of them were counted"})
    assert list(column.range) == loaded
    assert shown in column_comment(column)


@pytest.mark.parametrize(("geo", "problem"), [
    ({"crs": "EPSG:2248"}, None),
    ({"crs": "planar", "units": "foot"}, None),
    ({"crs": "planar", "units": "unknown"}, None),
    ({"crs": "TODO", "crs_note": "SRID 0: coordinates ..."}, None),
    ({"crs": "planar"}, "geo.units is required with geo.crs: planar"),
    ({"crs": "EPSG:2248", "units": "foot"}, "allowed only then"),
    ({"units": "metre"}, "allowed only then"),
    ({"crs": "planar", "units": "yard"}, "units"),
    ({"crs": "2248"}, "crs"),
    ({"crs": "EPSG:0"}, "crs"),
], ids=["epsg", "planar feet", "planar unknown", "todo", "planar without units",
        "units with epsg", "units alone", "unknown unit", "bare code", "epsg 0"])
def test_a_declared_crs_is_epsg_or_planar_with_units(geo, problem):
    facts = {"geometry_type": "POLYGON", "srid": 0, **geo}
    if problem is None:
        info = GeoInfo.model_validate(facts)
        assert info.declared_epsg == (2248 if geo.get("crs") == "EPSG:2248" else None)
        return
    with pytest.raises(ValidationError, match=problem):
        GeoInfo.model_validate(facts)


def test_unique_keys_and_notes_load_and_give_join_cardinality(tmp_path):
    data = copy.deepcopy(VALID)
    data["tables"][1]["unique"] = [["year"]]
    data["tables"][1]["notes"] = ["sampling stopped after 5 s"]
    data["join_paths"] += [
        {"left": "a.id", "right": "b.id", "kind": "attribute", "description": "Same id.",
         "inferred": True, "match_share": 1.0, "sampled": 1},
        {"left": "b.year", "right": "b.year", "kind": "attribute", "description": "Itself."},
        {"left": "b.id", "right": "b.id", "kind": "attribute", "description": "Itself.",
         "cardinality": "one_to_one"},
    ]
    file = tmp_path / "catalog.yaml"
    file.write_text(yaml.safe_dump(data))
    catalog = load_catalog(file)
    assert catalog.table("b").unique == [["year"]]
    assert catalog.table("b").is_unique(["year"]) and catalog.table("b").is_unique(["id", "year"])
    assert not catalog.table("b").is_unique(["id"])
    assert [catalog.join_cardinality(p) for p in catalog.join_paths] == [
        "many_to_one", "one_to_many", "one_to_one", "one_to_one"]
    assert "b: sampling stopped after 5 s" in catalog.todos()


def test_a_spatial_path_has_no_cardinality():
    path = {"left": "a.geom", "right": "a.geom", "kind": "spatial", "description": "Self."}
    with pytest.raises(ValidationError, match="cardinality is for key and attribute joins"):
        Catalog.model_validate({**VALID, "join_paths": [{**path, "cardinality": "one_to_one"}]})
    assert Catalog.model_validate({**VALID, "join_paths": [path]}).join_cardinality(
        Catalog.model_validate({**VALID, "join_paths": [path]}).join_paths[0]) is None


def test_catalog_show_says_which_column_names_which_codes():
    """A table's labels are shown (catalog show said nothing of them: a reader could not tell
    why the answer table named 'CT' Connecticut, nor check a catalog's labels)."""
    from geoask.app.commands.catalog import describe
    from geoask.catalog.model import load_catalog

    assert "\n  labels: state_name names state_fips, state_abbr\n" in describe(
        load_catalog().table("us_states"))
