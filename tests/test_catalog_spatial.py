"""The one notion of a spatial column (geoask.catalog.spatial) and who asks it, table-driven."""

from __future__ import annotations

import pytest

from geoask.catalog.columns import declared_srids, spatial_column_names
from geoask.catalog.model import Catalog, Column, GeoInfo
from geoask.catalog.spatial import (
    CONVENTIONAL_COLUMN_NAMES,
    VECTOR_KINDS,
    SpatialKind,
    names_vector_column,
    postgis_type_name,
    spatial_kind,
)
from geoask.settings import Settings
from geoask.sql.context import DEFAULT_GEOMETRY_COLUMNS, GuardContext, SpatialPolicy, catalog_names
from geoask.sql.executor import holds_geometry
from geoask.sql.functions import SPATIAL_TYPE_NAMES
from geoask.sql.geometry_values import GEOMETRY_TYPE_NAMES
from geoask.sql.guard import find_violation

G, GG, R = SpatialKind.GEOMETRY, SpatialKind.GEOGRAPHY, SpatialKind.RASTER

# (PostgreSQL type name, expected kind)
KIND_CASES = [
    ("geometry(Point,4326)", G),
    ("geometry(MultiPolygon,4326)", G),
    ("geometry(LineString,4326)", G),
    ("geometry", G),
    ("geography(MultiPolygon,4326)", GG),
    ("geography(Point)", GG),
    ("geography", GG),
    ("raster", R),
    # case variations and spacing
    ("GEOMETRY(POINT,4326)", G),
    ("Geometry(Point, 4326)", G),
    ("GeoGraphy(MultiPolygon,4326)", GG),
    ("RASTER", R),
    ("  geometry ( PointZ , 3857 )  ", G),
    # schema-qualified and quoted, as format_type may report them
    ("public.geometry", G),
    ("postgis.Geography(Point,4326)", GG),
    ('"public"."raster"', R),
    ('"geometry"', G),
    # plain types
    ("text", None),
    ("integer", None),
    ("bigint", None),
    ("double precision", None),
    ("char(2)", None),
    ("numeric(10,2)", None),
    ("date", None),
    ("jsonb", None),
    ("bytea", None),
    ("", None),
    # arrays are not spatial columns
    ("geometry[]", None),
    ("geometry(Point,4326)[]", None),
    ("geography[][]", None),
    ("raster[]", None),
    ("_geometry", None),
    ("geometry ARRAY", None),
    # near misses: other PostGIS types and look-alike names
    ("box2d", None),
    ("box3d", None),
    ("gidx", None),
    ("geometry_dump", None),
    ("geometrytype", None),
    ("geom", None),
    ("geography_columns", None),
    ("my.schema.geometry", None),
    ("geometry((Point))", None),
    ("geometry(Point,4326) not null", None),
]


@pytest.mark.parametrize(("type_name", "expected"), KIND_CASES)
def test_spatial_kind(type_name: str, expected: SpatialKind | None) -> None:
    assert spatial_kind(type_name) is expected


@pytest.mark.parametrize(("type_name", "expected"), KIND_CASES)
def test_column_spatial_follows_spatial_kind(type_name: str, expected: SpatialKind | None):
    column = Column(name="c", type=type_name, description="A column for tests.")
    assert column.spatial is expected
    assert column.is_geometry is (expected is G)


@pytest.mark.parametrize(
    ("type_name", "expected"),
    [
        ("box2d", "box2d"), ("BOX3D", "box3d"), ("box2df", "box2df"), ("public.gidx", "gidx"),
        ("geometry(Point,4326)", "geometry"), ("Geography", "geography"), ("raster", "raster"),
        ("text", None), ("geometry[]", None), ("box2d[]", None), ("geometry_dump", None),
    ],
)
def test_postgis_type_name(type_name: str, expected: str | None) -> None:
    assert postgis_type_name(type_name) == expected


@pytest.mark.parametrize(
    ("kind", "vector"), [(G, True), (GG, True), (R, False)],
)
def test_vector_kinds(kind: SpatialKind, vector: bool) -> None:
    assert kind.is_vector is vector
    assert (kind in VECTOR_KINDS) is vector


@pytest.mark.parametrize(
    ("type_name", "expected"),
    [
        ("geometry", True), ("geography", True), ("public.geometry", True),
        ("geometry(Point,4326)", True), ("raster", False), ("geometry[]", False),
        ("box2d", False), ("text", False), ("integer", False), ("23", False),
    ],
)
def test_executor_loads_vector_kinds_as_geometry(type_name: str, expected: bool) -> None:
    assert holds_geometry(type_name) is expected


def test_derived_constants_keep_their_old_values() -> None:
    assert {"geom", "geog", "geometry", "the_geom", "wkb_geometry"} == DEFAULT_GEOMETRY_COLUMNS
    assert spatial_column_names(None) == DEFAULT_GEOMETRY_COLUMNS
    assert GuardContext().geometry_columns == DEFAULT_GEOMETRY_COLUMNS
    assert set(GEOMETRY_TYPE_NAMES) == {"geometry", "geography"}
    assert {"geometry", "geography", "box2d", "box3d", "box2df", "gidx"} <= SPATIAL_TYPE_NAMES
    assert "raster" in SPATIAL_TYPE_NAMES


def _column(name: str, type_: str) -> dict:
    return {"name": name, "type": type_, "description": f"Column {name} for tests."}


def _catalog(*columns: tuple[str, str]) -> Catalog:
    return Catalog.model_validate({
        "version": 1, "schema": "demo", "description": "Test catalog.",
        "tables": [{
            "name": "t", "title": "T", "theme": "A table of test features.",
            "spatial_granularity": "point", "temporal_granularity": "static",
            "source": "test", "expected_rows": 1, "primary_key": ["id"],
            "columns": [_column("id", "integer"), *(_column(n, t) for n, t in columns)],
        }],
    })


MIXED = _catalog(("Shape", "geometry(Polygon,4326)"), ("site", "geography(Point,4326)"),
                 ("rast", "raster"), ("label", "text"), ("tracks", "geometry[]"))


@pytest.mark.parametrize(
    ("catalog", "kinds", "expected"),
    [
        (MIXED, tuple(SpatialKind), {"shape", "site", "rast"}),
        (MIXED, VECTOR_KINDS, {"shape", "site"}),
        (MIXED, [G], {"shape"}),
        (MIXED, [R], {"rast"}),
        # no column of the kinds asked: the conventional names of those kinds stand in
        (_catalog(("label", "text")), tuple(SpatialKind), set(CONVENTIONAL_COLUMN_NAMES)),
        (_catalog(("Shape", "geometry")), [GG], {"geog"}),
        (None, [G], {"geom", "geometry", "the_geom", "wkb_geometry"}),
        (None, [R], set()),
    ],
)
def test_spatial_column_names(catalog, kinds, expected) -> None:
    assert spatial_column_names(catalog, kinds) == expected


def test_guard_context_from_catalog_uses_the_notion() -> None:
    case_sensitive, geometry = catalog_names(MIXED)
    assert case_sensitive == {"Shape"}
    assert geometry == {"shape", "site", "rast"}
    context = GuardContext(geometry_columns=geometry)
    assert find_violation('SELECT rast + 1 FROM demo.t', context).rule == "spatial_policy"
    assert find_violation('SELECT a."Shape" && b.site FROM demo.t a, demo.t b',
                          context).rule == "spatial_policy"
    assert find_violation("SELECT tracks || tracks FROM demo.t", context) is None


@pytest.mark.parametrize(
    ("sql", "rejected"),
    [
        ("SELECT x::geography FROM t", True),
        ("SELECT CAST(x AS geometry(Point,4326)) FROM t", True),
        ("SELECT x::box3d FROM t", True),
        ("SELECT x::geometry_dump FROM t", False),
        ("SELECT x::text FROM t", False),
    ],
)
def test_spatial_casts_follow_the_notion(sql: str, rejected: bool) -> None:
    violation = find_violation(sql, GuardContext())
    assert (violation is not None and violation.rule == "spatial_policy") is rejected
    assert find_violation(sql, GuardContext(policy=SpatialPolicy.POSTGIS)) is None


@pytest.mark.parametrize("sql", ["SELECT x::raster FROM t", "SELECT x::Public.Raster FROM t"])
@pytest.mark.parametrize("policy", list(SpatialPolicy))
def test_a_computed_value_cast_to_raster_is_refused_under_every_policy(sql: str,
                                                                       policy: SpatialPolicy
                                                                       ) -> None:
    # its bytes may declare an out-of-database band naming a server file (issue 31, item 5)
    violation = find_violation(sql, GuardContext(policy=policy))
    assert violation is not None and violation.rule == "no_outdb_rasters"


@pytest.mark.parametrize(
    ("name", "known", "expected"),
    [
        ("geom", None, True), ("GEOM", None, True), ("the_geom", None, True),
        ("wkb_geometry", None, True), ("geog", None, True), ("centroid_geom", None, True),
        ("Route_Geom", None, True), ("geometry", None, True),
        ("id", None, False), ("geometry_type", None, False), ("geo", None, False),
        ("shape", None, False), ("shape", {"shape"}, True), ("geog", {"shape"}, False),
        ("rast", None, False),
    ],
)
def test_names_vector_column(name: str, known: set[str] | None, expected: bool) -> None:
    assert names_vector_column(name, known) is expected


def test_table_spatial_columns_in_order() -> None:
    table = MIXED.table("t")
    assert [c.name for c in table.spatial_columns] == ["Shape", "site", "rast"]
    assert [c.spatial for c in table.spatial_columns] == [G, GG, R]
    assert table.geometry_column is not None and table.geometry_column.name == "Shape"
    assert _catalog(("label", "text")).table("t").spatial_columns == []


def test_declared_srids_per_vector_column_from_type_or_draft_geo():
    catalog = _catalog(("parcel", "geometry(Polygon,2263)"), ("site", "geography(Point)"),
                       ("plain", "geometry"), ("drafted", "geometry"), ("rast", "raster"),
                       ("label", "text"))
    table = catalog.tables[0]
    drafted = table.column("drafted").model_copy(
        update={"geo": GeoInfo(geometry_type="POINT", srid=32618)})
    table.columns[table.columns.index(table.column("drafted"))] = drafted
    assert declared_srids(catalog) == {"demo.t.parcel": 2263, "demo.t.site": 4326,
                                       "demo.t.drafted": 32618}
    assert declared_srids(None) == {}
    context = GuardContext.from_settings(Settings(), catalog=catalog)
    assert context.declared_srids == declared_srids(catalog)
