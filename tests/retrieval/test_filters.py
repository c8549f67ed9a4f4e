from datetime import date

import pytest
from pydantic import ValidationError

from geoask.catalog.model import TemporalGranularity as T
from geoask.retrieval.filters import (
    RetrievalIntent,
    passes_coverage,
    passes_intent,
    passes_time_step,
    period_bounds,
)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1999", (date(1999, 1, 1), date(1999, 12, 31))),
        ("1999-09", (date(1999, 9, 1), date(1999, 9, 30))),
        ("2000-02", (date(2000, 2, 1), date(2000, 2, 29))),
        ("2014-09-15", (date(2014, 9, 15), date(2014, 9, 15))),
    ],
)
def test_period_bounds(value, expected):
    assert period_bounds(value) == expected


@pytest.mark.parametrize("value", ["99", "1999-9", "September 1999", "1999/09", ""])
def test_period_bounds_rejects(value):
    with pytest.raises(ValueError, match="not YYYY"):
        period_bounds(value)


@pytest.mark.parametrize(
    ("table", "needed", "expected"),
    [
        ("state_income_annual", T.MONTHLY, False),
        ("state_income_annual", T.ANNUAL, True),
        ("state_income_annual", T.DECADAL, True),
        ("climate_grid_monthly", T.MONTHLY, True),
        ("climate_grid_monthly", T.DAILY, False),
        ("us_states", T.DAILY, True),  # static tables have no time step to conflict
        ("city_incidents", T.MONTHLY, True),
    ],
)
def test_passes_time_step(catalog, table, needed, expected):
    assert passes_time_step(catalog.table(table), needed) is expected


@pytest.mark.parametrize(
    ("table", "period", "expected"),
    [
        ("climate_grid_monthly", "1999-09", True),
        ("climate_grid_monthly", "2000", False),
        ("state_income_annual", "1929", True),
        ("state_income_annual", "2010", False),
        ("city_incidents", "2014-09-30", True),
        ("city_incidents", "2014-10", False),
        ("us_states", "1700", True),
    ],
)
def test_passes_coverage(catalog, table, period, expected):
    assert passes_coverage(catalog.table(table), period_bounds(period)) is expected


def test_september_1999_question_excludes_annual_and_2014_tables(catalog):
    intent = RetrievalIntent(temporal_granularity=T.MONTHLY, period_start="1999-09")
    kept = [t.name for t in catalog.tables if passes_intent(t, intent)]
    assert kept == ["us_states", "climate_grid_cells", "climate_grid_monthly"]


def test_intent_period_spans_start_and_end():
    intent = RetrievalIntent(period_start="1990", period_end="1995-06")
    assert intent.period() == (date(1990, 1, 1), date(1995, 6, 30))
    assert RetrievalIntent().period() is None


def test_intent_has_no_spatial_filter():
    # the answer's unit does not say which other tables a question reads (see filters.py)
    with pytest.raises(ValidationError, match="spatial_granularity"):
        RetrievalIntent(spatial_granularity="state")


def test_intent_rejects_malformed_period():
    with pytest.raises(ValidationError):
        RetrievalIntent(period_start="Sept 1999")


def test_single_year_annual_question_may_use_a_decadal_table(catalog):
    decadal = catalog.table("state_income_annual").model_copy(
        update={"temporal_granularity": T.DECADAL}
    )
    snapshot = RetrievalIntent(temporal_granularity=T.ANNUAL, period_start="1990")
    series = RetrievalIntent(temporal_granularity=T.ANNUAL, period_start="1980",
                             period_end="1990")
    assert passes_intent(decadal, snapshot)
    assert not passes_intent(decadal, series)
    # a monthly question is never a snapshot: the annual table stays out
    monthly = RetrievalIntent(temporal_granularity=T.MONTHLY, period_start="1990")
    assert not passes_intent(catalog.table("state_income_annual"), monthly)
