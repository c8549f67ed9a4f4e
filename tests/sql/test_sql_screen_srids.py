"""A screen's box and column share one SRID (&& compares raw coordinates), table-driven."""

from __future__ import annotations

import dataclasses

import pytest

from geoask.errors import QueryRejectedError
from geoask.sql import GuardContext, check_sql

DECLARED = {"demo.airports.geom": 4326, "city.parcels.geom": 32617, "city.roads.geom": 2264}
CONTEXT = dataclasses.replace(GuardContext(), declared_srids=DECLARED)
BOX = "ST_MakeEnvelope(-79, 35, -78, 36, {})"

ALLOWED = [
    f"SELECT iata, geom FROM demo.airports WHERE geom && {BOX.format(4326)}",
    "SELECT a.iata, a.geom FROM demo.airports AS a WHERE a.geom && "
    "ST_Expand((SELECT geom FROM demo.airports WHERE iata = 'RDU'), 0.3)",
    f"SELECT p.id, p.geom FROM city.parcels p WHERE p.geom && ST_Transform({BOX.format(4326)}, "
    "32617)",
    "SELECT id, geom FROM city.parcels WHERE geom && ST_MakeEnvelope(700000, 3960000, 710000, "
    "3970000, 32617)",
]
REFUSED = [
    (f"SELECT iata, geom FROM demo.airports WHERE geom && ST_Transform({BOX.format(4326)}, 3857)",
     "box is in SRID 3857 but demo.airports.geom in SRID 4326"),
    (f"SELECT iata, geom FROM demo.airports WHERE geom && {BOX.format(3857)}",
     "box is in SRID 3857"),
    ("SELECT id, geom FROM city.parcels WHERE geom && "
     "ST_Expand((SELECT geom FROM demo.airports WHERE iata = 'RDU'), 0.3)",
     "box is in SRID 4326 but city.parcels.geom in SRID 32617"),
    ("SELECT p.id, p.geom, r.geom FROM city.parcels p JOIN city.roads r ON p.geom && r.geom",
     "in SRID 32617 but city.roads.geom in SRID 2264"),
    (f"SELECT id, geom FROM city.unknown WHERE geom && {BOX.format(4326)}",
     "not declared in the catalog"),
]


@pytest.mark.parametrize("sql", ALLOWED)
def test_a_box_in_its_columns_srid_passes(sql):
    assert check_sql(sql, CONTEXT).sql


@pytest.mark.parametrize(("sql", "message"), REFUSED)
def test_a_box_in_another_srid_is_refused_with_the_srids(sql, message):
    with pytest.raises(QueryRejectedError) as caught:
        check_sql(sql, CONTEXT)
    assert caught.value.rule == "spatial_policy" and message in str(caught.value)


def test_without_a_catalog_nothing_is_checked():
    assert check_sql(REFUSED[1][0], GuardContext()).sql


@pytest.mark.parametrize("sql", [
    "SELECT iata, geom && ST_MakeEnvelope(-79, 35, -78, 36, 4326) AS inbox FROM demo.airports",
    "SELECT iata, geom FROM demo.airports WHERE geom && ST_MakeEnvelope(-79, 35, -78, 36, 4326) "
    "OR iata = 'RDU'",
])
def test_a_misplaced_screen_is_told_where_screens_go(sql):
    with pytest.raises(QueryRejectedError) as caught:
        check_sql(sql, GuardContext())
    assert "builds a bounding-box screen" in str(caught.value)
    assert "only as a geom && <box> conjunct" in str(caught.value)
