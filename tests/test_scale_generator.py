"""The scale benchmark's generator at a tiny size: row counts, CRSs, reproducible seeds."""

from __future__ import annotations

import sys
from pathlib import Path

import geopandas as gpd
import pandas as pd
import pytest

from geoask.db.dataset import load_dataset

SCALE = Path(__file__).resolve().parents[1] / "benchmark" / "databases" / "scale"
sys.path.insert(0, str(SCALE))
import generate  # noqa: E402


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("scale")
    generate.write(out, 2000, 7, 30, "geoask_scale_test")
    return out


def test_manifest_lists_every_table_with_its_file(build: Path) -> None:
    dataset = load_dataset(build)
    assert len(dataset.tables) == 30
    assert dataset.database == "geoask_scale_test"
    assert {"scale", "utilities"} <= set(dataset.schemas)


def test_big_tables_scale_with_size_and_keep_their_crs(build: Path) -> None:
    poi = gpd.read_parquet(build / "data/scale.poi.parquet")
    parcels = gpd.read_parquet(build / "data/scale.parcels.parquet")
    roads = gpd.read_parquet(build / "data/scale.roads.parquet")
    assert (len(poi), len(parcels), len(roads)) == (2000, 200, 100)
    assert (poi.crs.to_epsg(), parcels.crs.to_epsg(), roads.crs.to_epsg()) == (4326, 32617, 2264)
    xmin, ymin, xmax, ymax = poi.total_bounds
    assert xmin >= -84.3 and xmax <= -75.5 and ymin >= 33.9 and ymax <= 36.55
    assert poi["category"].value_counts().index[0] == "restaurant"
    assert poi["poi_id"].is_unique and parcels.geometry.is_valid.all()


def test_same_seed_same_rows_other_seed_other_rows(build: Path, tmp_path: Path) -> None:
    generate.write(tmp_path / "again", 2000, 7, 30, "geoask_scale_test")
    generate.write(tmp_path / "other", 2000, 8, 30, "geoask_scale_test")
    first = gpd.read_parquet(build / "data/scale.poi.parquet")
    again = gpd.read_parquet(tmp_path / "again/data/scale.poi.parquet")
    other = gpd.read_parquet(tmp_path / "other/data/scale.poi.parquet")
    pd.testing.assert_frame_equal(pd.DataFrame(first.to_wkb()), pd.DataFrame(again.to_wkb()))
    assert not first.geometry.geom_equals(other.geometry).all()


def test_size_below_minimum_is_a_clear_error() -> None:
    with pytest.raises(SystemExit, match="at least 100 points"):
        generate.sizes(10)
