"""The export formats registry (:mod:`geoask.base.formats`): one entry per format, table-driven."""

from __future__ import annotations

import doctest
import io
import mimetypes
from decimal import Decimal

import geopandas
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from shapely.geometry import Point

import sandbox.artifacts  # noqa: F401  (registers the formats' media types with mimetypes)
from geoask.base import formats
from geoask.base.formats import (
    EXPORT_FORMATS,
    GEOJSON,
    GEOPARQUET,
    GEOTIFF,
    JSON,
    PARQUET,
    Content,
    UnknownFormatError,
    export_format,
    format_of,
    format_of_file,
    formats_holding,
    holds,
    stored_format,
)

# name, suffix, media type, content, reads records: the values artifacts already store.
TABLE = [
    ("geojson", ".geojson", "application/geo+json", Content.FEATURES, True),
    ("json", ".json", "application/json", Content.TABLE, True),
    ("geotiff", ".tif", "image/tiff", Content.RASTER, False),
    ("geoparquet", ".parquet", "application/vnd.apache.parquet", Content.FEATURES, True),
    ("parquet", ".parquet", "application/vnd.apache.parquet", Content.TABLE, True),
]


def _first_declaring(attribute: str, value: str) -> formats.ExportFormat:
    return next(f for f in EXPORT_FORMATS if getattr(f, attribute) == value)


def test_the_table_lists_every_format():
    assert [row[0] for row in TABLE] == [f.name for f in EXPORT_FORMATS]


@pytest.mark.parametrize(("name", "suffix", "media_type", "content", "records"), TABLE)
def test_a_format_is_declared_once(name, suffix, media_type, content, records):
    found = export_format(name)
    assert (found.suffix, found.media_type, found.content) == (suffix, media_type, content)
    assert (found.read_records is not None) is records
    assert found.file_name("cells") == f"cells{suffix}"


@pytest.mark.parametrize(("name", "suffix", "media_type", "content", "records"), TABLE)
def test_name_media_type_and_suffix_round_trip(name, suffix, media_type, content, records):
    found = export_format(name)
    assert format_of(name) is found
    # a media type two formats share (GeoParquet, a table's Parquet) names the first declared
    assert format_of(media_type) is _first_declaring("media_type", media_type)
    assert stored_format(name) is found
    assert holds(name, content)
    assert holds(media_type, _first_declaring("media_type", media_type).content)
    # a script's file of this suffix is stored with the format's media type (sandbox.artifacts)
    assert mimetypes.guess_type(f"x{suffix}")[0] == media_type


def test_names_are_unique_and_only_the_two_parquets_share_suffix_and_media_type():
    names = [f.name for f in EXPORT_FORMATS]
    assert len(set(names)) == len(names)
    for attribute in ("suffix", "media_type"):
        values = [getattr(f, attribute) for f in EXPORT_FORMATS if f is not PARQUET]
        assert len(set(values)) == len(values), attribute
    assert (PARQUET.suffix, PARQUET.media_type) == (GEOPARQUET.suffix, GEOPARQUET.media_type)
    assert EXPORT_FORMATS.index(GEOPARQUET) < EXPORT_FORMATS.index(PARQUET)


def test_an_unknown_format_is_a_clear_error():
    with pytest.raises(UnknownFormatError, match=r"unknown export format 'csv' \(known: "
                                                 r"geojson, json, geotiff, geoparquet, parquet\)"):
        export_format("csv")
    assert isinstance(UnknownFormatError("x"), ValueError)


def test_a_media_type_is_no_stored_name():
    assert stored_format("application/geo+json") is None
    assert format_of("text/csv") is None
    assert not holds("text/csv", Content.TABLE)
    assert not holds("application/json", Content.FEATURES)


def test_records_readers():
    collection = '{"type": "FeatureCollection", "features": [{"properties": {"id": 1}}]}'
    assert GEOJSON.read_records is not None and JSON.read_records is not None
    assert GEOJSON.read_records(collection) == [{"id": 1}]
    assert JSON.read_records(collection) == [{"id": 1}]
    assert JSON.read_records('{"a": 1}') == [{"a": 1}]
    assert JSON.read_records("3") == [{"value": 3}]
    assert GEOTIFF.read_records is None


def test_a_file_name_says_its_format_by_suffix():
    for fmt in EXPORT_FORMATS:
        assert format_of_file(f"memory://run/sql-1/{fmt.file_name('cells')}") is (
            _first_declaring("suffix", fmt.suffix))
    assert format_of_file("/run/notes.csv") is None
    assert format_of_file("/run.d/README") is None


def test_feature_formats_are_geojson_and_geoparquet():
    assert formats_holding(Content.FEATURES) == (GEOJSON, GEOPARQUET)
    assert formats_holding(Content.RASTER) == (GEOTIFF,)


def test_parquet_records_drop_the_geometry_and_read_decimals_as_numbers():
    frame = geopandas.GeoDataFrame(
        {"id": [1, 2], "share": [Decimal("0.25"), None]},
        geometry=[Point(1, 2), Point(3, 4)], crs=4326)
    buffer = io.BytesIO()
    frame.to_parquet(buffer)
    assert GEOPARQUET.read_records is not None
    assert GEOPARQUET.read_records(buffer.getvalue()) == [{"id": 1, "share": 0.25},
                                                          {"id": 2, "share": None}]
    plain = io.BytesIO()
    pq.write_table(pa.table({"n": [3]}), plain)
    assert GEOPARQUET.read_records(plain.getvalue()) == [{"n": 3}]


def test_doctests():
    assert doctest.testmod(formats).failed == 0
