"""Check the committed demo data files in geoask/demo_data/ against the semantic catalog.

No database: pandas, geopandas and pyarrow only. Each check is table-driven over the catalog, so
adding a table to catalog.yaml adds its checks. Run:

    .venv/bin/pytest tests/test_demo_data_files.py
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import re
import sys
from functools import cache
from pathlib import Path
from types import ModuleType

import geopandas as gpd
import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import shapely

from geoask.catalog.model import Catalog, Column, JoinPath, Table, load_catalog

REPO = Path(__file__).resolve().parents[1]
DATA_DIR = REPO / "geoask" / "demo_data"
MAX_FOLDER_BYTES = 15 * 1024 * 1024
SPATIAL_JOIN_DEGREES = 0.001  # about 100 m: points near lines count for a spatial join path
RANGE_SLACK = 0.01  # catalog ranges are rounded outward to at most 2 decimals

# PostgreSQL type (without length) -> Arrow types the file may hold for it.
ARROW_TYPES_FOR_PG = {
    "text": {"string", "large_string"},
    "char": {"string", "large_string"},
    "smallint": {"int16"},
    "integer": {"int32"},
    "bigint": {"int64"},
    "real": {"float"},
    "double precision": {"double"},
    "boolean": {"bool"},
    "date": {"date32[day]"},
    "time": {"time64[us]", "time64[ns]", "time32[s]", "time32[ms]"},
    "geometry": {"binary", "large_binary"},
}


# ------------------------------------------------------------------ pure helpers


def arrow_type_matches(pg_type: str, arrow_type: str) -> bool:
    """True if a Parquet column of ``arrow_type`` can be loaded as PostgreSQL ``pg_type``."""
    base = re.sub(r"\(.*\)$", "", pg_type.strip().lower()).strip()
    return arrow_type in ARROW_TYPES_FOR_PG.get(base, set())


def char_length(pg_type: str) -> int | None:
    """The fixed length n of ``char(n)``, else None."""
    match = re.fullmatch(r"char\((\d+)\)", pg_type.strip().lower())
    return int(match.group(1)) if match else None


def geometry_type(pg_type: str) -> tuple[str, int] | None:
    """(type, srid) of ``geometry(Type,srid)``, else None."""
    match = re.fullmatch(r"geometry\((\w+),\s*(\d+)\)", pg_type.strip(), flags=re.IGNORECASE)
    return (match.group(1), int(match.group(2))) if match else None


def numeric_range_problem(
    declared: tuple[float, float], observed: tuple[float, float], slack: float = RANGE_SLACK
) -> str | None:
    """Describe why a declared [lo, hi] does not tightly contain the observed [min, max]."""
    (lo, hi), (low, high) = declared, observed
    if low < lo or high > hi:
        return f"data [{low}, {high}] outside declared [{lo}, {hi}]"
    if low - lo > slack or hi - high > slack:
        return f"declared [{lo}, {hi}] is looser than data [{low}, {high}] by more than {slack}"
    return None


def as_text(value: object) -> str:
    """Render a date, time or string the way the catalog writes it (ISO 8601 for dates/times)."""
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    return str(value)


def boxes_intersect(a: np.ndarray, b: np.ndarray) -> bool:
    """True if two (minx, miny, maxx, maxy) boxes overlap or touch."""
    return bool(a[0] <= b[2] and b[0] <= a[2] and a[1] <= b[3] and b[1] <= a[3])


# ------------------------------------------------------------------ data access


@cache
def catalog() -> Catalog:
    return load_catalog()


@cache
def frame(name: str) -> pd.DataFrame:
    table = catalog().table(name)
    path = DATA_DIR / f"{name}.parquet"
    if table.geometry_column is not None:
        return gpd.read_parquet(path)
    return pd.read_parquet(path)


def arrow_schema(name: str) -> dict[str, str]:
    schema = pq.read_schema(DATA_DIR / f"{name}.parquet")
    return {field.name: str(field.type) for field in schema}


TABLES = [t.name for t in load_catalog().tables if t.raster_column is None]
RASTER_TABLES = [t.name for t in load_catalog().tables if t.raster_column is not None]
COLUMNS = [(t.name, c.name) for t in load_catalog().tables for c in t.columns
           if t.raster_column is None]


def column_def(table: str, column: str) -> tuple[Table, Column]:
    t = catalog().table(table)
    return t, t.column(column)


# ------------------------------------------------------------------ tests of the helpers


@pytest.mark.parametrize(
    ("pg_type", "arrow_type", "expected"),
    [
        ("char(2)", "large_string", True),
        ("text", "string", True),
        ("integer", "int32", True),
        ("integer", "int64", False),
        ("bigint", "int64", True),
        ("double precision", "double", True),
        ("double precision", "float", False),
        ("real", "float", True),
        ("date", "date32[day]", True),
        ("date", "timestamp[ns]", False),
        ("time", "time64[us]", True),
        ("time", "large_string", False),
        ("geometry(Point,4326)", "binary", True),
        ("numeric(12,2)", "double", False),
    ],
)
def test_arrow_type_matches(pg_type: str, arrow_type: str, expected: bool) -> None:
    assert arrow_type_matches(pg_type, arrow_type) is expected


@pytest.mark.parametrize(
    ("declared", "observed", "problem"),
    [
        ((0, 10), (0, 10), None),
        ((0.59, 848.55), (0.5900000334, 848.5499878), None),
        ((0, 10), (-0.5, 10), "outside"),
        ((0, 10), (0, 10.2), "outside"),
        ((0, 100), (0, 10), "looser"),
        ((-5, 10), (0, 10), "looser"),
    ],
)
def test_numeric_range_problem(
    declared: tuple[float, float], observed: tuple[float, float], problem: str | None
) -> None:
    result = numeric_range_problem(declared, observed)
    if problem is None:
        assert result is None
    else:
        assert result is not None and problem in result


@pytest.mark.parametrize(
    ("pg_type", "length", "geometry"),
    [
        ("char(5)", 5, None),
        ("text", None, None),
        ("geometry(MultiPolygon,4326)", None, ("MultiPolygon", 4326)),
        ("geometry(Point, 4326)", None, ("Point", 4326)),
    ],
)
def test_type_parsers(pg_type: str, length: int | None, geometry: tuple[str, int] | None) -> None:
    assert char_length(pg_type) == length
    assert geometry_type(pg_type) == geometry


def test_boxes_intersect() -> None:
    assert boxes_intersect(np.array([0, 0, 2, 2]), np.array([1, 1, 3, 3]))
    assert not boxes_intersect(np.array([0, 0, 1, 1]), np.array([2, 2, 3, 3]))


# ------------------------------------------------------------------ the files themselves


def test_catalog_names_schema_demo_and_every_file() -> None:
    assert catalog().schema_name == "demo"
    files = {p.stem for p in DATA_DIR.glob("*.parquet")}
    assert files == set(TABLES)
    assert {p.stem for p in DATA_DIR.glob("*.tif")} == set(RASTER_TABLES)


@pytest.mark.parametrize("name", RASTER_TABLES)
def test_raster_file_matches_catalog_facts(name: str) -> None:
    """The GeoTIFF's CRS, size, pixel size, extent, bands, types and nodata are the catalog's."""
    from geoask.base.raster import describe, read_geotiff, tile_raster

    info = catalog().table(name).raster_column.raster
    raster = read_geotiff(DATA_DIR / f"{name}.tif")
    facts = describe(raster)
    assert facts["srid"] == info.srid
    assert (facts["width"], facts["height"]) == (info.width, info.height)
    assert facts["pixel_size"] == pytest.approx(list(info.pixel_size), rel=1e-12)
    assert facts["extent"] == pytest.approx(list(info.extent), rel=1e-12)
    assert facts["band_count"] == len(info.bands)
    assert [b.index for b in info.bands] == list(range(1, len(info.bands) + 1))
    assert {b.pixel_type for b in info.bands} == {facts["pixel_type"]}
    assert list(raster.nodata) == [b.nodata for b in info.bands]
    tiles = tile_raster(raster, *info.tile_size)
    assert len(tiles) == catalog().table(name).expected_rows


def test_folder_is_small() -> None:
    total = sum(p.stat().st_size for p in DATA_DIR.iterdir() if p.is_file())
    assert total < MAX_FOLDER_BYTES, f"demo_data is {total} bytes"


def test_provenance_has_a_section_per_table() -> None:
    text = (DATA_DIR / "PROVENANCE.md").read_text(encoding="utf-8")
    headings = set(re.findall(r"^## `?(\w+)`?", text, flags=re.MULTILINE))
    missing = set(TABLES + RASTER_TABLES) - headings
    assert not missing, f"PROVENANCE.md has no section for {sorted(missing)}"


@pytest.mark.parametrize("name", TABLES)
def test_columns_in_catalog_order(name: str) -> None:
    assert list(frame(name).columns) == [c.name for c in catalog().table(name).columns]


@pytest.mark.parametrize("name", TABLES)
def test_row_count_is_expected_rows(name: str) -> None:
    assert len(frame(name)) == catalog().table(name).expected_rows


@pytest.mark.parametrize("name", TABLES)
def test_primary_key_is_unique(name: str) -> None:
    key = catalog().table(name).primary_key
    duplicated = frame(name).duplicated(subset=key)
    assert not duplicated.any(), frame(name)[duplicated].head()


@pytest.mark.parametrize("name", TABLES)
def test_foreign_keys_hold(name: str) -> None:
    table = catalog().table(name)
    for fk in table.foreign_keys:
        child = frame(name)[fk.columns].drop_duplicates()
        parent = frame(fk.ref_table)[fk.ref_columns].drop_duplicates()
        parent.columns = fk.columns
        orphans = child.merge(parent, how="left", indicator=True).query("_merge == 'left_only'")
        assert orphans.empty, f"{name}{fk.columns} not in {fk.ref_table}: {orphans.head()}"


@pytest.mark.parametrize(("name", "column"), COLUMNS)
def test_column_type(name: str, column: str) -> None:
    _, col = column_def(name, column)
    arrow = arrow_schema(name)[column]
    assert arrow_type_matches(col.type, arrow), f"{name}.{column}: {arrow} cannot be {col.type}"
    length = char_length(col.type)
    if length is not None:
        lengths = frame(name)[column].dropna().str.len()
        assert (lengths == length).all(), f"{name}.{column}: lengths {sorted(set(lengths))}"


@pytest.mark.parametrize(("name", "column"), COLUMNS)
def test_nulls_only_where_nullable(name: str, column: str) -> None:
    _, col = column_def(name, column)
    nulls = int(frame(name)[column].isna().sum())
    if col.nullable:
        assert nulls > 0, f"{name}.{column} has no NULLs: declare it nullable: false"
    else:
        assert nulls == 0, f"{name}.{column} has {nulls} NULLs but is declared NOT NULL"


@pytest.mark.parametrize(("name", "column"), COLUMNS)
def test_values_and_range_measured(name: str, column: str) -> None:
    _, col = column_def(name, column)
    if col.is_geometry:
        return
    present = frame(name)[column].dropna()
    if col.values is not None:
        assert {as_text(v) for v in present.unique()} == {str(v) for v in col.values}
    if col.range is not None:
        lo, hi = col.range
        if isinstance(lo, str) or isinstance(hi, str):
            observed = (as_text(present.min()), as_text(present.max()))
            assert observed == (str(lo), str(hi)), f"{name}.{column}: data range {observed}"
        else:
            problem = numeric_range_problem(
                (float(lo), float(hi)), (float(present.min()), float(present.max()))
            )
            assert problem is None, f"{name}.{column}: {problem}"


@pytest.mark.parametrize(
    "name", [t.name for t in load_catalog().tables if t.geometry_column is not None]
)
def test_geometry_type_srid_and_validity(name: str) -> None:
    table = catalog().table(name)
    geom_col = table.geometry_column
    assert geom_col is not None
    parsed = geometry_type(geom_col.type)
    assert parsed is not None, geom_col.type
    expected_type, srid = parsed
    gdf = frame(name)
    assert isinstance(gdf, gpd.GeoDataFrame)
    assert gdf.geometry.name == geom_col.name
    assert gdf.crs is not None and gdf.crs.to_epsg() == srid
    assert set(gdf.geom_type) == {expected_type}
    geoms = gdf.geometry.to_numpy()
    invalid = ~shapely.is_valid(geoms)
    assert not invalid.any(), shapely.is_valid_reason(geoms[invalid])[:5]
    assert not shapely.is_empty(geoms).any()
    minx, miny, maxx, maxy = gdf.total_bounds
    assert -180 <= minx <= maxx <= 180 and -90 <= miny <= maxy <= 90


@pytest.mark.parametrize("join", load_catalog().join_paths, ids=lambda j: f"{j.left}~{j.right}")
def test_join_path_connects_data(join: JoinPath) -> None:
    left_table, _, left_col = join.left.partition(".")
    right_table, _, right_col = join.right.partition(".")
    if join.kind == "spatial":
        left, right = frame(left_table), frame(right_table)
        assert isinstance(left, gpd.GeoDataFrame) and isinstance(right, gpd.GeoDataFrame)
        assert boxes_intersect(left.total_bounds, right.total_bounds)
        sample = left.geometry.iloc[:: max(1, len(left) // 200)]
        near = gpd.GeoDataFrame(geometry=sample, crs=left.crs)
        hits = gpd.sjoin(
            near, right[[right.geometry.name]], predicate="dwithin", distance=SPATIAL_JOIN_DEGREES
        )
        assert len(hits) > 0, f"no sampled {left_table} geometry is near {right_table}"
        return
    assert left_col and right_col, "key and attribute join paths name columns"
    left_values = set(frame(left_table)[left_col].dropna())
    right_values = set(frame(right_table)[right_col].dropna())
    if join.kind == "foreign_key":
        assert left_values <= right_values
    else:
        assert left_values & right_values


# ------------------------------------------------------------------ the preparation script


@cache
def prepare_script() -> ModuleType:
    path = REPO / "scripts" / "prepare_demo_data.py"
    spec = importlib.util.spec_from_file_location("prepare_demo_data", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Thu, Sept. 18th 2014", dt.date(2014, 9, 18)),
        ("Mon, Sept. 1st 2014", dt.date(2014, 9, 1)),
        ("Tue, Sept. 2nd 2014", dt.date(2014, 9, 2)),
        ("Wed, Sept. 3rd 2014", dt.date(2014, 9, 3)),
    ],
)
def test_parse_incident_date(text: str, expected: dt.date) -> None:
    assert prepare_script().parse_incident_date(text) == expected


def test_parse_incident_date_rejects_other_months() -> None:
    module = prepare_script()
    with pytest.raises(module.PrepareError):
        module.parse_incident_date("Wed, Oct. 1st 2014")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("01:53 p.m.", dt.time(13, 53)),
        ("12:05 a.m.", dt.time(0, 5)),
        ("12:30 p.m.", dt.time(12, 30)),
        ("09:12 a.m.", dt.time(9, 12)),
    ],
)
def test_parse_incident_time(text: str, expected: dt.time) -> None:
    assert prepare_script().parse_incident_time(text) == expected


def test_as_multipolygons_promotes_polygons_only() -> None:
    module = prepare_script()
    square = shapely.box(0, 0, 1, 1)
    two = shapely.MultiPolygon([square, shapely.box(2, 2, 3, 3)])
    out = module.as_multipolygons(np.array([square, two], dtype=object))
    assert [g.geom_type for g in out] == ["MultiPolygon", "MultiPolygon"]
    assert out[0].equals(square) and out[1] is two
    with pytest.raises(module.PrepareError):
        module.as_multipolygons(np.array([shapely.Point(0, 0)], dtype=object))


def test_valid_geometries_repairs_a_bow_tie() -> None:
    bow_tie = shapely.Polygon([(0, 0), (1, 1), (1, 0), (0, 1)])
    geoms = np.array([bow_tie, shapely.box(0, 0, 1, 1)])
    fixed, repaired = prepare_script().valid_geometries(geoms)
    assert repaired == 1
    assert shapely.is_valid(fixed).all()


def test_missing_debian_file_names_the_apt_package(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    module = prepare_script()
    monkeypatch.setattr(
        module, "DEBIAN_SOURCES", {"bcsd": ("r-cran-stars", tmp_path / "absent.nc")}
    )
    with pytest.raises(module.PrepareError, match="apt-get install r-cran-stars"):
        module.debian_sources()
