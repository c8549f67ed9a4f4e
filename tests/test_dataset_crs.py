"""A dataset manifest's own CRSs (``spatial_ref_sys``) and SRID 0: declared, validated, checked
against each GeoParquet file's CRS (geoask/db/dataset.py, geoask/db/loading.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import geopandas as gpd
import pyarrow.parquet as pq
import pyproj
import pytest
import yaml
from shapely.geometry import Point

from geoask.db.dataset import DatasetSrs, define_srs, load_dataset, srs_conflict
from geoask.db.loading import read_rows
from geoask.errors import DatasetError, DataValidationError

ANYCRS = Path(__file__).resolve().parents[1] / "benchmark" / "databases" / "anycrs"
UTM30_KM = "+proj=utm +zone=30 +ellps=airy +units=km +no_defs"


def test_the_anycrs_manifest_declares_its_own_crs_and_two_srid_0_tables():
    dataset = load_dataset(ANYCRS)
    srids = {t.name: t.geometry.srid for t in dataset.tables if t.geometry}
    assert srids == {"eire_counties": 990030, "columbus_neighbourhoods": 0,
                     "bh_municipalities": 4674, "lansing_trees": 0}
    assert dataset.schemas == ["regions", "forest"]
    (own,) = dataset.spatial_ref_sys
    assert (own.srid, own.auth_name) == (990030, "spdep")
    crs = dataset.definitions[990030]
    assert crs.name == "UTM zone 30N in kilometres (Airy)"
    assert crs.axis_info[0].unit_name == "kilometre" and crs.to_epsg() is None
    assert pyproj.CRS.from_wkt(own.srtext).equals(pyproj.CRS.from_proj4(UTM30_KM))


def _manifest(tmp_path: Path, change) -> Path:
    raw = yaml.safe_load((ANYCRS / "dataset.yaml").read_text())
    shutil.copytree(ANYCRS / "data", tmp_path / "data")
    change(raw)
    path = tmp_path / "dataset.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def _srs(**change):
    def apply(raw):
        raw["spatial_ref_sys"][0].update(change)
    return apply


def _drop_srs(raw):
    del raw["spatial_ref_sys"]


def _twice(raw):
    raw["spatial_ref_sys"].append(dict(raw["spatial_ref_sys"][0]))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (_drop_srs, "table eire_counties: SRID 990030 is not an EPSG code; declare it under "
                    "spatial_ref_sys"),
        (_srs(auth_name="EPSG"), "EPSG codes come with PostGIS"),
        (_srs(proj4text="+proj=nonsense"), "proj4text is not a CRS pyproj reads"),
        (_srs(srid=999000), "spatial_ref_sys.0.srid"),
        (_twice, "spatial_ref_sys declares an SRID twice"),
    ],
)
def test_a_bad_crs_declaration_is_one_clear_error(tmp_path, change, message):
    with pytest.raises(DatasetError, match=r"^dataset manifest .* is invalid") as error:
        load_dataset(_manifest(tmp_path, change))
    assert message in str(error.value)
    assert "\n" not in str(error.value)


def test_the_row_inserted_is_the_declared_one_and_a_different_one_is_a_conflict():
    srs = DatasetSrs(srid=990030, auth_name="spdep", auth_srid=990030, proj4text=UTM30_KM)
    insert, read = define_srs(srs)
    text = insert.as_string(None)
    assert "INSERT INTO spatial_ref_sys" in text and "ON CONFLICT (srid) DO NOTHING" in text
    assert "990030" in read.as_string(None)
    same = (srs.auth_name, srs.auth_srid, srs.srtext, srs.proj4text)
    assert srs_conflict(srs, same) is None
    other = ("local", 1, srs.srtext, "+proj=utm +zone=29 +units=km")
    problem = srs_conflict(srs, other)
    assert problem is not None and "already defined otherwise" in problem
    assert "declare another SRID" in problem
    assert srs_conflict(srs, None) is not None


def _points(tmp_path: Path, crs) -> Path:
    path = tmp_path / "p.parquet"
    gpd.GeoDataFrame({"k": [1]}, geometry=[Point(1, 2)], crs=crs).to_parquet(path)
    return path


def test_srid_0_wants_a_file_without_crs_and_keeps_the_coordinates(tmp_path):
    rows = read_rows(_points(tmp_path, None), ["k", "geometry"], {"geometry": 0})
    assert rows[0][0] == 1 and isinstance(rows[0][1], str)
    with pytest.raises(DataValidationError, match="geometry CRS of geometry is set, "
                                                  r"expected none \(SRID 0\)"):
        read_rows(_points(tmp_path, "EPSG:4326"), ["k", "geometry"], {"geometry": 0})
    with pytest.raises(DataValidationError, match="is none, expected SRID 4326"):
        read_rows(_points(tmp_path, None), ["k", "geometry"], {"geometry": 4326})


def test_an_own_srid_wants_the_file_in_its_declared_crs(tmp_path):
    own = {990030: pyproj.CRS.from_proj4(UTM30_KM)}
    path = _points(tmp_path, pyproj.CRS.from_proj4(UTM30_KM))
    assert len(read_rows(path, ["geometry"], {"geometry": 990030}, own)) == 1
    with pytest.raises(DataValidationError, match="expected SRID 990030"):
        read_rows(_points(tmp_path, "EPSG:32630"), ["geometry"], {"geometry": 990030}, own)


def test_the_committed_files_carry_the_crs_the_manifest_declares():
    dataset = load_dataset(ANYCRS)
    for table in dataset.tables:
        if table.geometry is None:
            continue
        meta = pq.read_schema(ANYCRS / table.file).metadata
        frame = gpd.read_parquet(ANYCRS / table.file)
        srid = table.geometry.srid
        if srid == 0:
            assert frame.crs is None, table.name
        elif srid in dataset.definitions:
            assert frame.crs.equals(dataset.definitions[srid]), table.name
        else:
            assert frame.crs.to_epsg() == srid, table.name
        assert b"geo" in meta
