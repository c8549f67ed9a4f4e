"""Bounded statistics of a relation's data: row count, ranges, few distinct values, geometry.

Cost is bounded: a relation of at most ``threshold`` rows (default 100,000) is read in full;
a bigger one is never scanned whole: its row count is the planner estimate (``reltuples``),
ranges come from ``pg_stats`` (histogram bounds and most common values) or a ``TABLESAMPLE``,
and distinct values and geometry validity from a sample of at most ``sample_rows`` rows. Every
query is parameterised; failures of one statistic (e.g. a timeout) leave it unknown (None)
inside a savepoint instead of aborting the draft. Inside :func:`time_budget` (the draft opens
one per relation) all of a relation's queries share one time budget, enforced by
``statement_timeout``: a slow view (an aggregate such as ``ST_Union`` per group) stops being
sampled after a few seconds, and the draft notes it rather than failing.
"""

from __future__ import annotations

import datetime as dt
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import psycopg
from psycopg import sql

from geoask.catalog.introspect import LiveColumn, Relation, SpatialColumn
from geoask.settings.database import DatabaseSettings

ROW_THRESHOLD = 100_000
"""Relations with at most this many rows are profiled exactly (full scans)."""

SAMPLE_ROWS = 10_000
"""Rows sampled from a bigger relation (and for geometry validity: at most 2,000)."""

RELATION_BUDGET_S: float = DatabaseSettings.model_fields["catalog_sample_budget_s"].default
"""Seconds the statistics of one relation may take in all: the default of
``GEOASK_CATALOG_SAMPLE_BUDGET_S`` (the CLI passes it, or ``--sample-budget``)."""

MAX_VALUES = 50
"""A text or year column with at most this many distinct values gets a ``values`` list."""

_YEAR_NAME = re.compile(r"^(year|yr|.*_year|year_.*)$", re.IGNORECASE)
_TIME_OF_DAY = {"time", "timetz", "interval"}

Scalar = float | int | str


@dataclass
class Profile:
    """What the data says about one relation.

    ``rows`` is exact unless ``estimated``; ``sampled`` tells whether statistics came from a
    sample (big relation) rather than every row.
    """

    rows: int
    estimated: bool
    sampled: bool


@dataclass
class Budget:
    """The time left for the sampling queries of one relation (see :func:`time_budget`).

    ``stopped`` turns true when a query was cancelled by the budget's ``statement_timeout`` or
    skipped because the budget was spent; ``restore_ms`` is the draft's own statement timeout.
    """

    seconds: float
    restore_ms: int
    deadline: float
    stopped: bool = False

    def remaining_ms(self) -> int:
        """Milliseconds left, capped by the draft's statement timeout (0: spent)."""
        left = max(0, int((self.deadline - time.monotonic()) * 1000))
        return min(left, self.restore_ms) if self.restore_ms > 0 else left

    @property
    def note(self) -> str:
        """The draft note of a relation whose sampling stopped."""
        return (f"sampling stopped after {self.seconds:g} s (the per-relation budget, "
                "--sample-budget); statistics it did not reach are left out or TODO")


_BUDGET: ContextVar[Budget | None] = ContextVar("geoask_sampling_budget", default=None)


@contextmanager
def time_budget(seconds: float, timeout_s: int) -> Iterator[Budget]:
    """Bound every statistic query run inside by ``seconds`` in all (``statement_timeout``).

    Queries read it through :func:`safe_rows`; ``timeout_s`` is the statement timeout restored
    after each one. A spent budget makes the remaining queries return [] at once.
    """
    budget = Budget(seconds, timeout_s * 1000, time.monotonic() + seconds)
    token = _BUDGET.set(budget)
    try:
        yield budget
    finally:
        _BUDGET.reset(token)


def safe_rows(conn: psycopg.Connection, query: sql.Composed | sql.SQL,
              params: Any = None) -> list[Any]:
    """Rows of ``query``, or [] if it fails (inside a savepoint, so the transaction lives).

    Inside :func:`time_budget` the query runs with ``statement_timeout`` set to the time left.
    """
    budget = _BUDGET.get()
    if budget is None:
        try:
            with conn.transaction():
                return conn.execute(query, params).fetchall()
        except psycopg.Error:
            return []
    left = budget.remaining_ms()
    if left <= 0:
        budget.stopped = True
        return []
    try:
        with conn.transaction():
            conn.execute(_SET_TIMEOUT, (str(left),))
            rows = conn.execute(query, params).fetchall()
            conn.execute(_SET_TIMEOUT, (str(budget.restore_ms),))
            return rows
    except psycopg.errors.QueryCanceled:
        budget.stopped = True
        return []
    except psycopg.Error:
        return []


_SET_TIMEOUT = "SELECT set_config('statement_timeout', %s, true)"
_safely = safe_rows


def profile(conn: psycopg.Connection, rel: Relation, threshold: int = ROW_THRESHOLD) -> Profile:
    """Row count of ``rel``: exact up to ``threshold`` rows, else the planner estimate.

    A relation the planner already estimates above ``threshold`` rows (``pg_class.reltuples``,
    from ANALYZE or autovacuum) is not counted at all: its count is that estimate, marked
    ``estimated`` (the catalog's ``rows_estimated``), so a 10^7-row table costs no scan. Else
    at most ``threshold + 1`` rows are counted. 0 (unknown, estimated) when the count fails
    and the planner has no estimate either.
    """
    if rel.reltuples > threshold:
        return Profile(int(rel.reltuples), estimated=True, sampled=True)
    query = sql.SQL("SELECT count(*) FROM (SELECT 1 FROM {} LIMIT %s) s").format(rel.identifier)
    rows = _safely(conn, query, (threshold + 1,))
    if not rows and rel.reltuples <= 0:  # the count failed (e.g. a slow view): rows unknown
        return Profile(0, estimated=True, sampled=True)
    counted = int(rows[0][0]) if rows else threshold + 1
    if counted <= threshold:
        return Profile(counted, estimated=False, sampled=False)
    return Profile(max(int(rel.reltuples), counted), estimated=True, sampled=True)


def source(rel: Relation, prof: Profile,
           rows: int = SAMPLE_ROWS) -> tuple[sql.Composed, list[Any]]:
    """The FROM item to compute statistics over, and its parameters.

    All rows for a small relation; for a big one a ``TABLESAMPLE SYSTEM`` of about ``rows``
    rows (tables, materialized views) or the first ``rows`` rows (views), as subquery ``s``.
    """
    if not prof.sampled:
        return sql.SQL("{} AS s").format(rel.identifier), []
    if rel.kind in ("table", "materialized_view"):
        percent = min(100.0, 100.0 * rows / max(prof.rows, 1) * 2)
        return (sql.SQL("(SELECT * FROM {} TABLESAMPLE SYSTEM (%s) LIMIT %s) AS s")
                .format(rel.identifier), [percent, rows])
    return sql.SQL("(SELECT * FROM {} LIMIT %s) AS s").format(rel.identifier), [rows]


def _scalar(value: Any) -> Scalar | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float | str):
        return value
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    return None


def is_ranged(column: LiveColumn) -> bool:
    """True for numeric and date/timestamp columns (a ``range`` is measured)."""
    return column.category == "N" or (column.category == "D"
                                      and column.type_name not in _TIME_OF_DAY)


def is_temporal(column: LiveColumn) -> bool:
    """True for date/timestamp columns and integer columns named like a year (``year``...)."""
    if column.category == "D" and column.type_name not in _TIME_OF_DAY:
        return True
    return column.type_name in ("int2", "int4", "int8") and bool(_YEAR_NAME.match(column.name))


def value_range(conn: psycopg.Connection, rel: Relation, column: LiveColumn,
                prof: Profile) -> tuple[Scalar, Scalar] | None:
    """Inclusive ``(min, max)`` of a numeric or date column; None if unknown or all NULL.

    Exact for a small relation. For a big one, the extremes of ``pg_stats`` histogram bounds
    and most common values (as ANALYZE saw them), else of a sample: approximate.
    Dates and timestamps are ISO strings; numerics are int or float.
    """
    col = sql.Identifier(column.name)
    if prof.sampled:
        bounds = _stats_bounds(conn, rel, column)
        if bounds is not None:
            return bounds
    from_item, params = source(rel, prof)
    rows = _safely(conn, sql.SQL("SELECT min({c}), max({c}) FROM {s}").format(c=col, s=from_item),
                   params)
    if not rows or rows[0][0] is None:
        return None
    low, high = _scalar(rows[0][0]), _scalar(rows[0][1])
    return None if low is None or high is None else (low, high)


def _stats_bounds(conn: psycopg.Connection, rel: Relation,
                  column: LiveColumn) -> tuple[Scalar, Scalar] | None:
    rows = _safely(conn, sql.SQL(
        "SELECT histogram_bounds::text::text[], most_common_vals::text::text[] FROM pg_stats "
        "WHERE schemaname = %s AND tablename = %s AND attname = %s"), (rel.schema, rel.name,
                                                                       column.name))
    if not rows:
        return None
    texts = [v for v in (rows[0][0] or []) + (rows[0][1] or []) if v is not None]
    if not texts:
        return None
    if column.category == "N":
        numbers = [float(v) for v in texts]
        low, high = min(numbers), max(numbers)
        return (int(low) if low.is_integer() else low, int(high) if high.is_integer() else high)
    return min(texts), max(texts)  # ISO dates and timestamps sort as text


def distinct_values(conn: psycopg.Connection, rel: Relation, column: LiveColumn,
                    prof: Profile, limit: int = MAX_VALUES) -> list[str] | None:
    """The sorted distinct values of a text column if there are at most ``limit`` (else None).

    Read from the whole of a small relation, from a sample of a big one; values must repeat
    (fewer distinct values than half the non-NULL rows) to count as a closed vocabulary.
    """
    col = sql.Identifier(column.name)
    from_item, params = source(rel, prof)
    rows = _safely(conn, sql.SQL(
        "SELECT {c}::text, count(*) FROM {s} WHERE {c} IS NOT NULL GROUP BY {c} ORDER BY {c} "
        "LIMIT %s").format(c=col, s=from_item), [*params, limit + 1])
    if not rows or len(rows) > limit:
        return None
    total = sum(int(r[1]) for r in rows)
    return [str(r[0]) for r in rows] if len(rows) * 2 <= total else None


def distinct_numbers(conn: psycopg.Connection, rel: Relation, column: LiveColumn,
                     prof: Profile, limit: int = 400) -> list[Any]:
    """Up to ``limit`` sorted distinct non-NULL values of a column (to judge a time step)."""
    col = sql.Identifier(column.name)
    from_item, params = source(rel, prof)
    rows = _safely(conn, sql.SQL("SELECT DISTINCT {c} FROM {s} WHERE {c} IS NOT NULL "
                                 "ORDER BY {c} LIMIT %s").format(c=col, s=from_item),
                   [*params, limit])
    return [r[0] for r in rows]


@dataclass
class GeometryProfile:
    """Measured facts of a spatial column: ``extent`` in its CRS units, validity share."""

    geometry_type: str
    srid: int
    extent: tuple[float, float, float, float] | None
    valid_share: float | None
    sampled: int


def geometry_profile(conn: psycopg.Connection, rel: Relation, column: str, info: SpatialColumn,
                     prof: Profile, postgis: str) -> GeometryProfile:
    """Type, SRID, extent and validity of a geometry/geography column (bounded cost).

    An unconstrained column (``geometry`` without type modifier) gets the most frequent type
    and SRID of a sample. The extent is ``ST_Extent`` of a small relation, else
    ``ST_EstimatedExtent`` (needs ANALYZE) or ``ST_Extent`` of a sample; validity is
    ``ST_IsValid`` over at most 2,000 non-NULL values.
    """
    col = sql.Identifier(column)
    geom = col if info.kind == "geometry" else sql.SQL("{}::geometry").format(col)
    gtype, srid = info.geometry_type, info.srid
    sample = sql.SQL("(SELECT {g} AS g FROM {t} WHERE {c} IS NOT NULL LIMIT %s) AS v").format(
        g=geom, t=rel.identifier, c=col)
    if gtype == "GEOMETRY" or srid == 0:
        rows = _safely(conn, sql.SQL("SELECT upper(GeometryType(g)), ST_SRID(g), count(*) FROM {} "
                                     "GROUP BY 1, 2 ORDER BY 3 DESC LIMIT 1").format(sample),
                       (1000,))
        if rows:
            gtype = gtype if gtype != "GEOMETRY" else str(rows[0][0])
            srid = srid or int(rows[0][1])
    extent_rows: list[Any] = []
    if prof.sampled and info.kind == "geometry":
        extent_rows = _safely(conn, sql.SQL(
            "SELECT ST_XMin(e), ST_YMin(e), ST_XMax(e), ST_YMax(e) FROM "
            "(SELECT {}.ST_EstimatedExtent(%s, %s, %s) AS e) x").format(sql.Identifier(postgis)),
            (rel.schema, rel.name, column))
    if not extent_rows or extent_rows[0][0] is None:
        from_item, params = source(rel, prof)
        extent_rows = _safely(conn, sql.SQL(
            "SELECT ST_XMin(e), ST_YMin(e), ST_XMax(e), ST_YMax(e) FROM "
            "(SELECT ST_Extent({g}) AS e FROM {s}) x").format(g=geom, s=from_item), params)
    extent = None
    if extent_rows and extent_rows[0][0] is not None:
        xmin, ymin, xmax, ymax = (float(v) for v in extent_rows[0])
        extent = (xmin, ymin, xmax, ymax)
    valid = _safely(conn, sql.SQL("SELECT count(*) FILTER (WHERE ST_IsValid(g)), count(*) "
                                  "FROM {}").format(sample), (2000,))
    share, sampled = None, 0
    if valid and valid[0][1]:
        sampled = int(valid[0][1])
        share = round(int(valid[0][0]) / sampled, 4)
    return GeometryProfile(gtype, srid, extent, share, sampled)
