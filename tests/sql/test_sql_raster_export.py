"""Rasters: the PostGIS WKB codec, tiling and mosaicking, and the GeoTIFF export of a result."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest
import rasterio

from geoask.base.raster import RasterTile, from_wkb, mosaic, read_geotiff, tile_raster, to_wkb
from geoask.errors import ArtifactWriteError, DataValidationError
from geoask.sql.executor import QueryResult, ResultColumn
from geoask.sql.export import export_result
from geoask.sql.raster_export import raster_column_indexes

DEM = Path(__file__).parents[2] / "geoask" / "demo_data" / "lux_elevation.tif"
NODATA = -32768


def _grid(height: int = 7, width: int = 9, srid: int = 32632) -> RasterTile:
    values = np.arange(height * width, dtype="int16").reshape(1, height, width)
    values[0, 0, :3] = NODATA
    return RasterTile(values, (500000.0, 30.0, 0.0, 5200000.0, 0.0, -30.0), srid, (NODATA,))


def _result(values: list[object], type_name: str = "raster") -> QueryResult:
    return QueryResult(
        columns=(ResultColumn("rid", "integer"), ResultColumn("rast", type_name)),
        rows=[(i, v) for i, v in enumerate(values, start=1)],
        row_cap=100, executed_sql="SELECT rid, rast FROM t")


def test_wkb_round_trip_keeps_pixels_georeference_and_nodata():
    grid = _grid()
    back = from_wkb(to_wkb(grid).hex())
    assert np.array_equal(back.bands, grid.bands)
    assert back.transform == grid.transform and back.srid == 32632
    assert back.nodata == (NODATA,)


def test_wkb_header_is_postgis_layout():
    raw = to_wkb(_grid(height=2, width=3))
    endian, version, bands = struct.unpack_from("<BHH", raw)
    srid, width, height = struct.unpack_from("<iHH", raw, 5 + 6 * 8)
    assert (endian, version, bands, srid, width, height) == (1, 0, 1, 32632, 3, 2)
    assert raw[5 + 6 * 8 + 8] == 5 | 0x40  # 16BSI with nodata


@pytest.mark.parametrize("raw", [b"", b"\x00" * 61, b"\x01" + b"\x00" * 10])
def test_wkb_decoder_refuses_what_it_cannot_read(raw):
    with pytest.raises(DataValidationError):
        from_wkb(raw)


def test_tiles_mosaic_back_into_the_grid():
    grid = _grid()
    tiles = tile_raster(grid, 4)
    assert [(t.height, t.width) for t in tiles] == [(4, 4), (4, 4), (4, 1), (3, 4), (3, 4),
                                                     (3, 1)]
    merged = mosaic(list(reversed(tiles)))
    assert np.array_equal(merged.bands, grid.bands)
    assert [(t.height, t.width) for t in tile_raster(grid, 5, 3)] == [
        (3, 5), (3, 4), (3, 5), (3, 4), (1, 5), (1, 4)]
    assert merged.transform == grid.transform and merged.nodata == (NODATA,)


def test_mosaic_fills_gaps_with_nodata_and_declares_it():
    values = np.ones((1, 2, 2), "uint8")
    left = RasterTile(values, (0.0, 1.0, 0.0, 2.0, 0.0, -1.0), 3857, (None,))
    right = RasterTile(values * 2, (3.0, 1.0, 0.0, 2.0, 0.0, -1.0), 3857, (None,))
    merged = mosaic([left, right])
    assert merged.bands[0].tolist() == [[1, 1, 0, 2, 2], [1, 1, 0, 2, 2]]
    assert merged.nodata == (0.0,)
    assert mosaic([left]).nodata == (None,)  # fully covered: no nodata invented


@pytest.mark.parametrize("other", [
    RasterTile(np.ones((1, 2, 2), "int16"), (0.5, 30.0, 0.0, 0.0, 0.0, -30.0), 32632, (None,)),
    RasterTile(np.ones((1, 2, 2), "int16"), (0.0, 30.0, 0.0, 0.0, 0.0, -30.0), 4326, (None,)),
    RasterTile(np.ones((2, 2, 2), "int16"), (0.0, 30.0, 0.0, 0.0, 0.0, -30.0), 32632,
               (None, None)),
])
def test_mosaic_refuses_rasters_of_another_grid(other):
    first = RasterTile(np.ones((1, 2, 2), "int16"), (0.0, 30.0, 0.0, 0.0, 0.0, -30.0), 32632,
                       (None,))
    with pytest.raises(DataValidationError):
        mosaic([first, other])


def test_export_writes_one_geotiff_with_crs_nodata_and_a_preview(tmp_path):
    dem = read_geotiff(DEM)
    tiles = [to_wkb(t).hex() for t in tile_raster(dem, 25)]
    exported = export_result(_result([*tiles, None]), str(tmp_path), name="dem")
    assert exported.format == "geotiff" and exported.data_path.endswith("dem.tif")
    with rasterio.open(exported.data_path) as src:
        assert src.crs.to_epsg() == 4326 and src.nodata == NODATA
        with rasterio.open(DEM) as original:
            assert np.array_equal(src.read(), original.read())
            assert src.transform.almost_equals(original.transform)
    preview = json.loads(Path(exported.preview_path).read_text())
    assert preview["raster"]["tiles"] == 16 and preview["raster"]["srid"] == 4326
    assert preview["first_rows"][0] == {"rid": 1, "rast": "<raster>"}
    text = exported.preview.to_text()
    assert '"rast" exported as GeoTIFF' in text and "EPSG:4326" in text
    assert "95 x 90 pixels" in text and "nodata [-32768]" in text


def test_geotiff_bytes_from_st_astiff_are_recognised(tmp_path):
    tiff = DEM.read_bytes()
    result = _result([tiff], type_name="bytea")
    assert raster_column_indexes(result) == [1]
    exported = export_result(result, str(tmp_path), name="tiff")
    assert exported.format == "geotiff"
    assert raster_column_indexes(_result([b"not a tiff"], type_name="bytea")) == []


def test_export_refuses_two_raster_columns_and_writes_nothing(tmp_path):
    hexed = to_wkb(_grid()).hex()
    result = QueryResult(
        columns=(ResultColumn("a", "raster"), ResultColumn("b", "raster")),
        rows=[(hexed, hexed)], row_cap=10, executed_sql="SELECT a, b")
    with pytest.raises(ArtifactWriteError, match="2 raster columns"):
        export_result(result, str(tmp_path), name="two")
    assert list(tmp_path.iterdir()) == []


def test_export_of_only_null_rasters_says_so(tmp_path):
    with pytest.raises(ArtifactWriteError, match="holds no raster"):
        export_result(_result([None, None]), str(tmp_path), name="empty")


def test_preview_names_the_catalog_bands_of_a_raster_read_straight_from_its_table(tmp_path):
    from geoask.catalog.columns import declared_raster_bands
    from geoask.catalog.model import load_catalog

    bands = declared_raster_bands(load_catalog())
    assert bands["demo.landsat_etm.rast"][3].startswith("4 nir (DN): ETM+ band 4")
    hexed = [to_wkb(t).hex() for t in tile_raster(read_geotiff(DEM), 25)]
    straight = QueryResult(
        columns=(ResultColumn("rast", "raster", source="demo.lux_elevation.rast"),),
        rows=[(h,) for h in hexed], row_cap=100, executed_sql="SELECT rast")
    text = export_result(straight, str(tmp_path), name="a", raster_bands=bands).preview.to_text()
    assert "bands: 1 elevation (m): Elevation above sea level" in text
    clipped = QueryResult(columns=(ResultColumn("rast", "raster"),), rows=[(h,) for h in hexed],
                          row_cap=100, executed_sql="SELECT ST_Clip(...)")
    text = export_result(clipped, str(tmp_path), name="b", raster_bands=bands).preview.to_text()
    assert "bands:" not in text  # a computed raster has no table column to describe it


def test_evidence_of_a_geotiff_export_is_the_raster_facts_not_the_file(tmp_path):
    from geoask.vocabulary.evidence import exported_records

    hexed = [to_wkb(t).hex() for t in tile_raster(read_geotiff(DEM), 25)]
    exported = export_result(_result(hexed), str(tmp_path), name="dem")

    def unreadable(url: str) -> str:
        raise AssertionError(f"{url} is binary and must not be read as text")

    [record] = exported_records(exported, unreadable)
    assert record["srid"] == 4326 and record["band_count"] == 1 and record["tiles"] == 16
