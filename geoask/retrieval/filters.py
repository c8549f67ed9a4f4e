"""Hard filters from a question's intent: temporal granularity and coverage.

Pure functions over catalog tables. A filtered-out table is never ranked; tables brought in by
join-path completion (geometry and lookup tables) are exempt.

Examples:
    A question about September 1999 (intent: monthly, 1999-09) excludes ``state_income_annual``
    (annual) and ``new_haven_incidents`` (covers 2014 only).

There is deliberately no spatial-granularity filter: the answer's unit says nothing about the
other tables a question reads. Grid cells near Wake County need ``nc_counties``, airports per
state need ``us_states``, state rainfall needs the grid. On the benchmark's reference programs
such a filter missed 48 of the 280 tables they read, in 44 of 200 questions
(``benchmark/schema_recall.py``: table recall 0.829 with it, 1.000 without).

"""

from __future__ import annotations

import calendar
import re
from datetime import date

from pydantic import BaseModel, ConfigDict, Field, field_validator

from geoask.catalog.model import Table, TemporalCoverage, TemporalGranularity

T = TemporalGranularity

TIME_STEP_RANK: dict[TemporalGranularity, int] = {
    T.HOURLY: 1, T.DAILY: 2, T.WEEKLY: 3, T.MONTHLY: 4, T.QUARTERLY: 5, T.ANNUAL: 6, T.DECADAL: 7,
}
"""Finer time steps rank lower; a table can answer any step at least as coarse as its own."""

_PERIOD = re.compile(r"^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?$")


def period_bounds(value: str) -> tuple[date, date]:
    """First and last day of an ISO period: '1999', '1999-09' or '1999-09-15'.

    >>> period_bounds("1999-09")
    (datetime.date(1999, 9, 1), datetime.date(1999, 9, 30))

    Raises:
        ValueError: ``value`` is none of these forms.

    """
    match = _PERIOD.match(value.strip())
    if not match:
        raise ValueError(f"period {value!r} is not YYYY, YYYY-MM or YYYY-MM-DD")
    year, month, day = (int(g) if g else None for g in match.groups())
    assert year is not None
    if month is None:
        return date(year, 1, 1), date(year, 12, 31)
    if day is None:
        return date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1])
    return date(year, month, day), date(year, month, day)


class RetrievalIntent(BaseModel):
    """What a question or planner subtask needs; every field optional (None: no filter).

    ``period_start``/``period_end`` are ISO periods (YYYY, YYYY-MM or YYYY-MM-DD), inclusive.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    temporal_granularity: TemporalGranularity | None = Field(
        default=None, description="Time step the answer needs, e.g. 'monthly'."
    )
    period_start: str | None = Field(default=None, description="First period needed (ISO).")
    period_end: str | None = Field(default=None, description="Last period needed (ISO).")

    @field_validator("period_start", "period_end")
    @classmethod
    def _iso_period(cls, value: str | None) -> str | None:
        if value is not None:
            period_bounds(value)
        return value

    def period(self) -> tuple[date, date] | None:
        """The requested period as (first day, last day), or None if no period was given."""
        if self.period_start is None and self.period_end is None:
            return None
        start = period_bounds(self.period_start or self.period_end or "")[0]
        end = period_bounds(self.period_end or self.period_start or "")[1]
        return start, end


def passes_time_step(table: Table, needed: TemporalGranularity | None) -> bool:
    """True if ``table`` is static or its time step is at least as fine as ``needed``."""
    step = table.temporal_granularity
    if needed is None or needed is T.STATIC or not isinstance(step, T) or step is T.STATIC:
        return True  # a draft's TODO time step filters nothing out
    return TIME_STEP_RANK[step] <= TIME_STEP_RANK[needed]


def coverage_bounds(coverage: TemporalCoverage) -> tuple[date, date]:
    """(first day, last day) of a table's temporal coverage."""
    return period_bounds(coverage.start)[0], period_bounds(coverage.end)[1]


def passes_coverage(table: Table, period: tuple[date, date] | None) -> bool:
    """True if ``table`` is static or its coverage overlaps ``period`` (None: no filter)."""
    if period is None or table.temporal_coverage is None:
        return True
    first, last = coverage_bounds(table.temporal_coverage)
    return first <= period[1] and period[0] <= last


def is_single_year(period: tuple[date, date] | None) -> bool:
    """True for a period inside one calendar year (a snapshot, not a series)."""
    return period is not None and period[0].year == period[1].year


def passes_intent(table: Table, intent: RetrievalIntent | None) -> bool:
    """True if ``table`` passes every hard filter of ``intent``.

    The time-step filter guards series ("monthly rainfall in 1999" must not get an annual
    table); an annual or decadal question about a single year is a snapshot that any table
    covering that year may answer (a census-year row of a decadal table), so it is not applied.
    """
    if intent is None:
        return True
    period = intent.period()
    snapshot = is_single_year(period) and intent.temporal_granularity in (T.ANNUAL, T.DECADAL)
    return ((snapshot or passes_time_step(table, intent.temporal_granularity))
            and passes_coverage(table, period))
