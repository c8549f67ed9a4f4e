"""Geometry values decoded a column at a time, and the preview's vectorised feature summary."""

from __future__ import annotations

import pytest
import shapely

from geoask.sql.export import feature_summary
from geoask.sql.geometry_values import approximate_size, decode_geometry_columns


def _ewkb(geometry: shapely.Geometry, srid: int) -> bytes:
    return shapely.to_wkb(shapely.set_srid(geometry, srid), include_srid=True)


def test_a_column_decodes_with_each_values_srid_and_nulls_kept():
    rows = [(1, _ewkb(shapely.Point(1, 2), 4326), b"raw"),
            (2, None, None),
            (3, _ewkb(shapely.box(0, 0, 10, 10), 32617), b"x")]
    decoded = decode_geometry_columns(rows, [1])
    assert [row[0] for row in decoded] == [1, 2, 3]
    assert decoded[1][1] is None
    assert [int(shapely.get_srid(row[1])) for row in (decoded[0], decoded[2])] == [4326, 32617]
    assert decoded[2][1].equals(shapely.box(0, 0, 10, 10))
    assert [row[2] for row in decoded] == [b"raw", None, b"x"]  # a bytea column stays bytes


def test_nothing_to_decode_returns_the_rows():
    rows = [(1, "a")]
    assert decode_geometry_columns(rows, []) is rows
    assert decode_geometry_columns([], [0]) == []


def test_streamed_wkb_counts_about_as_the_decoded_geometry():
    square = shapely.box(0, 0, 1, 1)  # 5 coordinates: 80 B as coordinates, 93 B as WKB
    streamed = approximate_size((shapely.to_wkb(square),))
    assert approximate_size((square,)) == 80
    assert 80 <= streamed <= 100


def test_feature_summary_reprojects_foreign_srids_and_skips_empties():
    utm = shapely.set_srid(shapely.Point(500000, 0), 32631)  # 3 E on the equator
    types, box = feature_summary([utm, shapely.Point(), None, shapely.Point(4, 1)])
    assert types == ["Point"]
    assert box == pytest.approx([3.0, 0.0, 4.0, 1.0], abs=1e-9)
    assert feature_summary([None, shapely.Polygon()]) == ([], None)
