import pytest

from geoask.retrieval.joins import SelectedTable, complete_join_paths, fk_closure


def test_fk_closure_follows_foreign_keys(catalog):
    assert fk_closure(catalog, "climate_grid_monthly") == [
        ("climate_grid_cells", "climate_grid_monthly")
    ]
    assert fk_closure(catalog, "us_states") == []


def test_fk_closure_respects_depth(catalog):
    assert fk_closure(catalog, "state_income_annual", max_depth=0) == []


@pytest.mark.parametrize(
    ("ranked", "max_tables", "expected"),
    [
        (["state_income_annual"], 8,
         [SelectedTable("state_income_annual"),
          SelectedTable("us_states", "state_income_annual")]),
        # a ranked table already joined in is upgraded to retrieved
        (["state_income_annual", "us_states"], 8,
         [SelectedTable("state_income_annual"), SelectedTable("us_states")]),
        # the first table keeps what fits of its closure
        (["climate_grid_monthly", "us_states"], 1, [SelectedTable("climate_grid_monthly")]),
        # a table whose closure does not fit is skipped; a later one that fits is taken
        (["city_incidents", "climate_grid_monthly", "us_states"], 2,
         [SelectedTable("city_incidents"), SelectedTable("us_states")]),
    ],
)
def test_complete_join_paths(catalog, ranked, max_tables, expected):
    assert complete_join_paths(catalog, ranked, max_tables) == expected


def test_joined_in_flag():
    assert SelectedTable("a", "b").joined_in
    assert not SelectedTable("a").joined_in
