"""Raster caps (issue 31): checked on headers before decoding and on the grid before mosaicking."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from rasterio.io import MemoryFile
from rasterio.transform import from_origin

from geoask.base.raster import RasterCaps, RasterTile, from_wkb, mosaic, read_geotiff, to_wkb
from geoask.errors import QueryExecutionError, RasterTooLargeError
from geoask.sql.executor import QueryResult, ResultColumn
from geoask.sql.export import export_result

ROOT = Path(__file__).resolve().parents[2]
ATTACKS = ROOT / "tests" / "fixtures" / "raster_attacks"
CAPS = RasterCaps(max_bytes=256 * 2**20)


def _fixture_tiffs(name: str) -> list[bytes]:
    """The GeoTIFF bytes of an attack fixture's ``'\\x...'::bytea`` constants."""
    text = (ATTACKS / f"{name}.sql").read_text()
    return [bytes.fromhex(part.split("'", 1)[0]) for part in text.split("'\\x")[1:]]


def _tile(col: int, row: int, size: int = 1) -> RasterTile:
    return RasterTile(np.ones((1, size, size), "u1"), (col * 1.0, 1.0, 0.0, -row * 1.0, 0.0,
                                                        -1.0), 4326, (0,))


def test_the_bomb_fixture_is_small_and_declares_60000_squared_pixels():
    (bomb,) = _fixture_tiffs("geotiff_60000")
    assert len(bomb) < 400
    with MemoryFile(bomb) as memory, memory.open() as source:
        assert (source.width, source.height) == (60000, 60000)


def test_a_geotiff_past_the_caps_is_refused_before_decoding():
    (bomb,) = _fixture_tiffs("geotiff_60000")
    with pytest.raises(RasterTooLargeError, match="60000 x 60000 pixels"):
        read_geotiff(bomb, CAPS)


def test_a_raster_value_past_the_caps_is_refused_before_decoding():
    tile = RasterTile(np.zeros((1, 200, 300), "u1"), (0, 1, 0, 0, 0, -1), 4326, (None,))
    with pytest.raises(RasterTooLargeError, match="300 x 200 pixels"):
        from_wkb(to_wkb(tile), RasterCaps(max_bytes=1000))
    assert from_wkb(to_wkb(tile), RasterCaps(max_bytes=10**6)).bands.shape == (1, 200, 300)


def test_far_apart_tiles_are_refused_before_the_mosaic_is_allocated():
    with pytest.raises(RasterTooLargeError, match="100001 x 100001 pixels"):
        mosaic([_tile(0, 0), _tile(100_000, 100_000)], CAPS)


def test_a_sparse_mosaic_under_the_byte_cap_is_refused_as_sparse():
    with pytest.raises(RasterTooLargeError, match="lie far apart"):
        mosaic([_tile(0, 0, 10), _tile(5_000, 5_000, 10)], CAPS)


def test_adjacent_tiles_within_the_caps_still_mosaic():
    merged = mosaic([_tile(0, 0, 10), _tile(10, 0, 10), _tile(0, 10, 10)], CAPS)
    assert merged.bands.shape == (1, 20, 20)


@pytest.mark.parametrize("name", ["geotiff_60000", "far_tiles"])
def test_export_of_an_attack_is_a_result_too_large_step_failure(name, tmp_path):
    rows = [(tiff,) for tiff in _fixture_tiffs(name)]
    result = QueryResult((ResultColumn("r", "bytea"),), rows, 100, "SELECT ...")
    with pytest.raises(QueryExecutionError) as caught:
        export_result(result, str(tmp_path), name="r")
    assert caught.value.kind == "result_too_large"
    assert "\n" not in str(caught.value) and "GEOASK_SQL_MAX_RESULT_MIB" in str(caught.value)
    assert not list(tmp_path.iterdir())


def test_the_result_cap_setting_scales_the_raster_caps(tmp_path):
    with MemoryFile() as memory:
        with memory.open(driver="GTiff", width=2000, height=1000, count=1, dtype="uint8",
                         crs="EPSG:4326", transform=from_origin(10, 20, 1, 1)) as sink:
            sink.write(np.ones((1, 1000, 2000), "u1"))
        tiff = bytes(memory.read())
    result = QueryResult((ResultColumn("r", "bytea"),), [(tiff,)], 100, "SELECT ...")
    with pytest.raises(QueryExecutionError, match="2000 x 1000 pixels"):
        export_result(result, str(tmp_path), name="small", max_result_mib=1)
    assert export_result(result, str(tmp_path), name="big", max_result_mib=8).format == "geotiff"


@pytest.mark.parametrize("name", ["geotiff_60000", "far_tiles"])
def test_sql_run_of_an_attack_ends_in_one_line(name, tmp_path, reader_url):
    done = subprocess.run(
        [sys.executable, "-m", "geoask", "sql", "run", str(ATTACKS / f"{name}.sql"), "--out",
         str(tmp_path)], capture_output=True, text=True, timeout=300, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, check=False)
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip().count("\n") == 0, done.stderr
    assert "result_too_large" in done.stderr and "Traceback" not in done.stderr
